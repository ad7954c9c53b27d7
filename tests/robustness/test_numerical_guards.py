"""Numerical guards: a non-finite loss stops training with the step and the last good checkpoint; float16 does not overflow.

A learning rate of 1e30 makes step 1's update overflow the weights, so the
loss of step 2 is NaN on every backend (measured); the guard must stop there,
before the epoch-end checkpoint can save the broken weights.
"""

import json
import math

import keras
import numpy as np
import pytest

from keras_bert.jobs.checkpointing import load_checkpoint
from robustness_helpers import AUSTEN, FIXTURE_VOCAB, TASK_FIXTURES, run_cli


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "train.txt"
    path.write_text("\n".join((AUSTEN / "persuasion.txt").read_text(encoding="utf-8").splitlines()[200:500]))
    return path


def pretrain_argv(corpus, out, *extra):
    return ["pretrain", "--corpus", corpus, "--vocab", FIXTURE_VOCAB, "--size", "tiny", "--sequence-length", "32",
            "--batch-size", "8", "--no-tensorboard", "--out", out, *extra]


def test_pretrain_stops_at_a_nan_loss_naming_the_step_and_the_last_good_checkpoint(corpus, tmp_path):
    status, _, err = run_cli(pretrain_argv(corpus, tmp_path, "--steps", "4", "--checkpoint-every", "1",
                                           "--learning-rate", "1e30"))
    assert status == 2
    [line] = err.strip().splitlines()
    assert "the training loss became nan at step 2" in line
    assert f"Last good checkpoint: {tmp_path / 'checkpoints'} (step 1" in line
    model, state = load_checkpoint(tmp_path / "checkpoints")
    assert state["step"] == 1
    assert all(np.all(np.isfinite(keras.ops.convert_to_numpy(w))) for w in model.weights)
    assert not (tmp_path / "model.keras").exists()


@pytest.mark.only_backend("jax", reason="the same guard as pretrain's, which runs on every backend; wiring checked once")
def test_finetune_stops_at_a_nan_loss_and_says_when_no_checkpoint_exists_yet(tmp_path):
    status, _, err = run_cli([
        "finetune", "--task", "classify", "--init", "tiny", "--vocab", FIXTURE_VOCAB, "--train",
        TASK_FIXTURES / "classify_train.tsv", "--sequence-length", "16", "--epochs", "2", "--learning-rate", "1e30",
        "--quiet", "--out", tmp_path,
    ])
    assert status == 2
    [line] = err.strip().splitlines()
    # Step 1 trains at rate 0 (the warmup's first step, as in transformers), step 2 at 1e30 makes the weights
    # overflow, and step 3's loss is the first nan.
    assert "the training loss became nan at step 3" in line and "Last good checkpoint: none was written" in line
    assert not (tmp_path / "model.keras").exists() and not (tmp_path / "checkpoints" / "checkpoint.json").exists()


@pytest.mark.not_backend("jax", reason="XLA:CPU cannot train in float16")
def test_float16_pretraining_with_loss_scaling_does_not_overflow(corpus, tmp_path):
    steps = 4
    status, out, err = run_cli(pretrain_argv(corpus, tmp_path, "--steps", steps, "--checkpoint-every", "2",
                                             "--mixed-precision", "float16", "--learning-rate", "1e-3"))
    assert status == 0, err
    # model.keras holds what predicting needs; the optimizer state is the last checkpoint's.
    checkpoint = json.loads((tmp_path / "checkpoints" / "checkpoint.json").read_text())
    model = keras.saving.load_model(tmp_path / "checkpoints" / checkpoint["model_file"])
    assert model.backbone.dtype_policy.name == "mixed_float16"
    assert isinstance(model.optimizer, keras.optimizers.LossScaleOptimizer)
    # An overflowing step is skipped (the inner optimizer does not count it) and halves the scale.
    assert int(keras.ops.convert_to_numpy(model.optimizer.inner_optimizer.iterations)) == steps
    # ... so an unchanged scale means no step overflowed.
    assert float(keras.ops.convert_to_numpy(model.optimizer.dynamic_scale)) == model.optimizer.initial_scale
    assert all(np.all(np.isfinite(keras.ops.convert_to_numpy(w))) for w in model.weights)
    history = (tmp_path / "history.csv").read_text().splitlines()[1:]
    assert len(history) == steps // 2 and all(math.isfinite(float(row.split(",")[1])) for row in history)
