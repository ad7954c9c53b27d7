"""On torch, a run interrupted and resumed with dropout on ends with the uninterrupted run's weights, bit for bit.

Keras' unseeded `Dropout` and the fused attention dropout draw from torch's
default generator there, which a resumed run re-seeds from the job's seed;
the checkpoint now carries that generator's state (`keras_bert.jobs.random_state`).
Before, a resumed run drew other dropout masks: max |Δ| 1.1e-3 after four
steps of pretraining (TensorFlow and JAX draw dropout from seed generators the
checkpoint already held, and resume exactly: tests/robustness/test_interrupted_training.py).

The interruption is an exception from a callback after step k, in this
process: a kill leaves the same files (the last epoch end's checkpoint), and
the resumed run re-seeds every generator as a new process would.
"""

import random

import keras
import numpy as np
import pytest

from harness import tiny_backbone
from keras_bert import BertClassifier
from keras_bert.jobs.random_state import global_random_state, set_global_random_state
from keras_bert.jobs.runner import JobRunner
from resume_helpers import EVERY, INTERRUPT_AFTER, LENGTH, SEED, STEPS, InterruptAfter, Interrupted, batches

pytestmark = pytest.mark.only_backend(
    "torch", reason="dropout draws from torch's global generator on torch only; TensorFlow and JAX draw from the "
    "model's seed generators, whose exact resume the kill-and-resume tests check on every backend"
)

def train(out, resume=False, callbacks=()):
    """A tiny classifier with dropout 0.1 everywhere, `STEPS` steps with a checkpoint every `EVERY`."""
    keras.utils.set_random_seed(SEED)  # as every job does, before building or resuming
    runner = JobRunner(out, {"steps": STEPS}, ("steps",), resume=resume, tensorboard=False, verbose=0,
                       callbacks=callbacks)

    def build():
        model = BertClassifier(tiny_backbone(dropout=0.1, max_sequence_length=LENGTH), num_classes=3, dropout=0.1)
        model.compile(optimizer=keras.optimizers.AdamW(1e-2))
        return model

    model = runner.build_or_resume(build)
    runner.fit(model, batches(runner.start_step), epochs=STEPS // EVERY, steps_per_epoch=EVERY)
    return runner, [keras.ops.convert_to_numpy(w) for w in model.weights]


def test_interrupted_and_resumed_with_dropout_gives_the_uninterrupted_weights_exactly(tmp_path):
    _, straight = train(tmp_path / "straight")
    with pytest.raises(Interrupted):
        train(tmp_path / "resumed", callbacks=[InterruptAfter(INTERRUPT_AFTER)])
    runner, resumed = train(tmp_path / "resumed", resume=True)
    assert runner.start_step == EVERY  # the checkpoint of step 2; step 3 is trained again
    assert len(resumed) == len(straight)
    different = [i for i, (a, b) in enumerate(zip(straight, resumed)) if not np.array_equal(a, b)]
    delta = max((float(np.max(np.abs(straight[i] - resumed[i]))) for i in different), default=0.0)
    assert not different, f"{len(different)} of {len(straight)} weights differ, max |Δ| {delta:.3g}"


def test_the_global_random_state_round_trips_through_json(tmp_path):
    import json

    import torch

    keras.utils.set_random_seed(3)
    random.random(), np.random.normal(), torch.rand(3)  # a cached numpy gaussian, generators moved on
    state = json.loads(json.dumps(global_random_state()))
    expected = random.random(), np.random.normal(size=4).tolist(), torch.rand(5).tolist()
    keras.utils.set_random_seed(4)
    set_global_random_state(state)
    assert (random.random(), np.random.normal(size=4).tolist(), torch.rand(5).tolist()) == expected
