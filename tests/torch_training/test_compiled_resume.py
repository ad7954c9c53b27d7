"""A compiled run (`jit_compile=True` on torch) interrupted and resumed ends with the uninterrupted run's weights.

The job runner's own path: `JobRunner` checkpoints the `.keras` model (weights
and optimizer state, which the compiled step updates in place) and torch's
generator state (the compiled dropout draws from it) at every epoch end; the
run is interrupted after step 3 by an exception from a callback (a kill leaves
the same files), resumed from the checkpoint of step 2, and compiled again.
Dropout is on everywhere, so the resumed run must draw the same masks.
"""

import keras
import numpy as np
import pytest

from harness import tiny_backbone
from keras_bert import BertClassifier
from keras_bert.jobs.runner import JobRunner
from keras_bert.optimizers import create_optimizer
from keras_bert.torch_training import CompiledTrainStep, compiled_train_step
from resume_helpers import EVERY, INTERRUPT_AFTER, LENGTH, SEED, STEPS, InterruptAfter, Interrupted, batches

pytestmark = pytest.mark.only_backend(
    "torch", reason="the compiled step is the torch backend's `jit_compile=True`; TensorFlow and JAX compile with XLA"
)

def train(out, resume=False, callbacks=()):
    keras.utils.set_random_seed(SEED)
    runner = JobRunner(out, {"steps": STEPS}, ("steps",), resume=resume, tensorboard=False, verbose=0,
                       callbacks=callbacks)

    def build():
        model = BertClassifier(tiny_backbone(dropout=0.1, max_sequence_length=LENGTH), num_classes=3, dropout=0.1,
                               pooling="mean")
        model.compile(optimizer=create_optimizer(learning_rate=1e-2, warmup_steps=2, total_steps=STEPS))
        return model

    model = runner.build_or_resume(build)
    # A `.keras` file restores `jit_compile="auto"` (eager on torch): the job asks for the compiled step again.
    model.jit_compile = True
    runner.fit(model, batches(runner.start_step), epochs=STEPS // EVERY, steps_per_epoch=EVERY)
    assert isinstance(model.train_function, CompiledTrainStep) and model.train_function.fallback_reason is None
    return runner, [keras.ops.convert_to_numpy(w) for w in model.weights]


def test_interrupted_and_resumed_compiled_run_gives_the_uninterrupted_weights(tmp_path, monkeypatch):
    monkeypatch.setattr(compiled_train_step, "COMPILER", "aot_eager")  # the same graphs, built in seconds
    _, straight = train(tmp_path / "straight")
    with pytest.raises(Interrupted):
        train(tmp_path / "resumed", callbacks=[InterruptAfter(INTERRUPT_AFTER)])
    runner, resumed = train(tmp_path / "resumed", resume=True)
    assert runner.start_step == EVERY
    different = [i for i, (a, b) in enumerate(zip(straight, resumed)) if not np.array_equal(a, b)]
    delta = max((float(np.max(np.abs(straight[i] - resumed[i]))) for i in different), default=0.0)
    assert not different, f"{len(different)} of {len(straight)} weights differ, max |Δ| {delta:.3g}"
