"""Jobs stopped and resumed: the stops the resume tests stand in for a kill with, and how they compare weights.

- `InterruptAfter` and `batches`: tests/jobs/test_torch_resume_dropout.py (eager) and
  tests/torch_training/test_compiled_resume.py (the compiled step) run the same tiny JobRunner job twice, once
  through and once stopped after step INTERRUPT_AFTER and resumed; tests/distribution/shard_runs.py stops its
  multi-worker pretraining runs with `InterruptAfter` too.
- `interrupted_at_checkpoint_commit`: a fine-tuning job stopped where a checkpoint's state file would be written
  (tests/jobs/test_finetune_best_epoch.py, tests/jobs/test_finetune_lora.py).
- `model_weights`, `max_weight_delta`, `assert_resumed_equal`: a resumed run's weights against the
  uninterrupted run's (those and tests/robustness/).
"""

import contextlib

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


@contextlib.contextmanager
def interrupted_at_checkpoint_commit(monkeypatch, commit=2):
    """Inside: the job raises `Interrupted` where it would write its `commit`-th checkpoint state file (that
    checkpoint is then not committed, as after a kill there); the patch is undone on leaving."""
    from keras_bert.jobs import checkpointing

    writes, original = [0], checkpointing.write_json_atomically

    def write_json_atomically(data, path):
        if path.endswith(checkpointing.STATE_FILE):
            writes[0] += 1
            if writes[0] == commit:
                raise Interrupted(path)
        original(data, path)

    with monkeypatch.context() as patch:
        patch.setattr(checkpointing, "write_json_atomically", write_json_atomically)
        yield


def model_weights(path_or_model):
    """The weights of a `.keras` file (or of a model) as float64 arrays."""
    import keras_bert.models  # noqa: F401  (registers the classes)

    model = path_or_model if isinstance(path_or_model, keras.Model) else keras.saving.load_model(str(path_or_model))
    return [keras.ops.convert_to_numpy(w).astype("float64") for w in model.weights]


def max_weight_delta(a, b):
    """The largest absolute difference between two models' weights (each a `.keras` path or a model)."""
    a, b = model_weights(a), model_weights(b)
    assert len(a) == len(b) and all(x.shape == y.shape for x, y in zip(a, b))
    return float(max(np.max(np.abs(x - y)) for x, y in zip(a, b)))


def assert_resumed_equal(delta, what):
    """Exact on every backend (on torch since checkpoints carry torch's generator: `keras_bert.jobs.random_state`)."""
    print(f"{keras.backend.backend()} {what}: max |Δ| resumed vs uninterrupted = {delta:.3g}")
    assert delta == 0.0, delta
