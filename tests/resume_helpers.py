"""A torch job stopped after a training step and resumed: the stop and the seeded batches both resume tests use.

tests/jobs/test_torch_resume_dropout.py (eager) and tests/torch_training/test_compiled_resume.py (the compiled
step) run the same tiny JobRunner job twice, once through and once stopped after step INTERRUPT_AFTER and resumed.
"""

import keras
import numpy as np

from harness import FIXTURE_VOCABULARY_SIZE

STEPS, EVERY, INTERRUPT_AFTER, BATCH, LENGTH, SEED = 6, 2, 3, 4, 16, 7


class Interrupted(Exception):
    pass


class InterruptAfter(keras.callbacks.Callback):
    """Raises at the end of training step `step` of this `fit` (before that epoch's checkpoint)."""

    def __init__(self, step):
        super().__init__()
        self.step, self.seen = step, 0

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen == self.step:
            raise Interrupted(f"after step {self.step}")


def batches(start_step):
    """The job's one seeded stream of batches, past the `start_step` trained on before (as the jobs skip them)."""
    import tensorflow as tf  # the jobs' input pipelines are tf.data on every backend

    rng = np.random.RandomState(0)
    n = BATCH * STEPS
    token_ids = rng.randint(5, FIXTURE_VOCABULARY_SIZE, (n, LENGTH)).astype("int32")
    x = {"token_ids": token_ids, "segment_ids": np.zeros_like(token_ids), "padding_mask": np.ones_like(token_ids)}
    y = rng.randint(0, 3, (n,)).astype("int32")
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).repeat().skip(start_step)
