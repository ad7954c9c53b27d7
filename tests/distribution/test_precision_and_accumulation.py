"""Mixed precision and gradient accumulation reach the pretraining job's model and optimizer."""

import keras
import numpy as np
import pytest

from keras_bert.optimizers import BertAdamW
from keras_bert.jobs.pretrain import pretrain


class StopBeforeTraining(Exception):
    pass


class Watch(keras.callbacks.Callback):
    """The optimizer and policy fit runs with, and the trainable weights after every training step.

    With `stop=True` it ends the job when `fit` starts, once the model and
    optimizer are set up, for tests that need no training step.
    """

    def __init__(self, stop=False):
        super().__init__()
        self.stop = stop

    def on_train_begin(self, logs=None):
        self.optimizer, self.policy = self.model.optimizer, self.model.dtype_policy
        self.dtypes = {v.dtype for v in self.model.trainable_variables}
        self.snapshots, self.losses = [self.weights()], []
        if self.stop:
            raise StopBeforeTraining

    def on_train_batch_end(self, batch, logs=None):  # one batch per call: the job's steps_per_execution is 1
        self.snapshots.append(self.weights())
        self.losses.append(float(logs["loss"]))

    def weights(self):
        return [np.array(keras.ops.convert_to_numpy(v.value)) for v in self.model.trainable_variables]


def run(corpus, tmp_path, watch, **options):
    # One checkpoint, at the end: what is watched happens step by step, and each checkpoint
    # written is a .keras save that would add time and nothing to check.
    pretrain(
        corpus=[str(corpus / "train.txt")], vocabulary=str(corpus / "vocab.txt"), output_dir=str(tmp_path),
        size="tiny", sequence_length=32, batch_size=8, checkpoint_every=options["steps"], learning_rate=1e-2, seed=0,
        tensorboard=False, verbose=0, callbacks=[watch], **options,
    )


def test_gradient_accumulation_updates_every_second_batch(corpus, tmp_path):
    watch = Watch()
    run(corpus, tmp_path, watch, steps=4, gradient_accumulation_steps=2)
    assert watch.optimizer.gradient_accumulation_steps == 2
    changed = [
        any(not np.array_equal(a, b) for a, b in zip(before, after))
        for before, after in zip(watch.snapshots, watch.snapshots[1:])
    ]
    # Batches 1 and 3 only add to the accumulators; 2 and 4 apply the update.
    assert changed == [False, True, False, True]
    assert all(np.isfinite(watch.losses))


@pytest.mark.parametrize("precision", ["float16", "bfloat16"])
def test_mixed_precision_reaches_model_and_optimizer(corpus, tmp_path, precision):
    # Stopped before the first step: this checks the set-up. Mixed-precision
    # training steps run in tests/models/test_bert_pretrainer.py (float16 not
    # on JAX/CPU, whose XLA has no float16 x float16 -> float32 dot_general).
    watch = Watch(stop=True)
    with pytest.raises(StopBeforeTraining):
        run(corpus, tmp_path, watch, steps=4, gradient_accumulation_steps=2, dtype=f"mixed_{precision}")
    assert watch.policy.name == f"mixed_{precision}" and watch.policy.compute_dtype == precision
    assert watch.dtypes == {"float32"}
    if precision == "float16":
        # Keras wraps the optimizer of a float16 model (loss scaling); accumulation stays on ours inside.
        assert isinstance(watch.optimizer, keras.optimizers.LossScaleOptimizer)
        optimizer = watch.optimizer.inner_optimizer
    else:  # bfloat16 has float32's range: no loss scaling
        optimizer = watch.optimizer
    assert type(optimizer) is BertAdamW and optimizer.gradient_accumulation_steps == 2
