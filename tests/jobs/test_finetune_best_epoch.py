"""The fine-tuning job's best epoch and early stopping, and resuming with them on.

The held-out file holds the training sentences with their labels swapped: the
better the model fits the training labels, the worse its held-out loss, so
the first epoch is the best, and with a patience of 2 the run stops after
epoch 3 of 8. That makes the best epoch differ from the last one, which is
what the selection is about, on every backend and seed.
"""

import json
import shutil

import keras
import numpy as np
import pytest

from keras_bert.jobs.best_epoch import default_mode
from keras_bert.jobs.finetune import finetune
from resume_helpers import Interrupted, assert_resumed_equal, interrupted_at_checkpoint_commit, max_weight_delta
from task_helpers import classify_rows, save_tiny_init, swapped, write_rows

EXAMPLES, BATCH, EPOCHS, PATIENCE = 64, 16, 8, 2  # 4 steps per epoch

# Choosing the epoch, stopping early and resuming with both are callbacks and records around `fit`, the same Python
# on every backend; that each backend's `fit` resumes to the same weights is tests/robustness/test_interrupted_training.py's.
pytestmark = pytest.mark.only_backend("torch", reason="epoch selection and early stopping are the job's callbacks, the "
                                      "same on every backend; once, on torch, whose tiny models run eagerly")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("best_epoch")
    header, rows = classify_rows()
    write_rows(folder / "train.tsv", header, rows[:EXAMPLES])
    write_rows(folder / "flipped.tsv", header, swapped(rows[:EXAMPLES]))
    save_tiny_init(folder, num_layers=1)
    return folder


def run(files, out, **overrides):
    options = dict(
        eval=files / "flipped.tsv", sequence_length=16, batch_size=BATCH, epochs=EPOCHS, learning_rate=3e-3,
        early_stopping_patience=PATIENCE, seed=5, verbose=0, tensorboard=False,
        # Dropout 0: this file checks the best-epoch record; a resumed run's exactness with dropout on
        # torch (whose global generator dropout draws from) is tests/jobs/test_torch_resume_dropout.py's.
        dropout=0.0,
    )
    return finetune("classify", files / "backbone.keras", files / "train.tsv", out, **{**options, **overrides})


@pytest.fixture(scope="module")
def straight(files, tmp_path_factory):
    out = tmp_path_factory.mktemp("straight")
    return run(files, out), out


def test_model_keras_is_the_best_epoch_and_the_run_stops_after_the_patience(straight):
    summary, out = straight
    history = summary["history"]
    assert len(history["loss"]) == 1 + PATIENCE  # stopped after epoch 3 of 8
    assert int(np.argmin(history["val_loss"])) == 0, history["val_loss"]
    assert summary["best_epoch"] == {
        "epoch": 1, "step": 4, "monitor": "val_loss", "value": pytest.approx(history["val_loss"][0], rel=1e-6),
        "epochs_run": 3, "stopped_early": True, "model_keras": "best epoch",
    }
    assert json.loads((out / "finetune.json").read_text())["best_epoch"] == summary["best_epoch"]
    # The last epoch's weights stay in the checkpoint (resume continues from them); model.keras is epoch 1's.
    assert json.loads((out / "checkpoints" / "checkpoint.json").read_text())["step"] == 12
    last = keras.saving.load_model(out / "checkpoints" / "checkpoint.keras")
    assert max_weight_delta(out / "model.keras", last) > 1e-3
    last.load_weights(out / "checkpoints" / "best.weights.h5")
    assert max_weight_delta(out / "model.keras", last) == 0.0
    # The validation metrics are model.keras's: the epoch-1 figures fit computed.
    metrics = json.loads((out / "metrics.json").read_text())["validation"]
    assert metrics["accuracy"] == pytest.approx(history["val_accuracy"][0], abs=1e-6)


def test_keep_last_epoch_saves_the_last_epoch(files, tmp_path):
    summary = run(files, tmp_path, select_best=False, epochs=3, early_stopping_patience=None)
    assert summary["best_epoch"]["epoch"] == 1 and summary["best_epoch"]["model_keras"] == "last epoch"
    assert summary["best_epoch"]["stopped_early"] is False and summary["best_epoch"]["epochs_run"] == 3
    assert max_weight_delta(tmp_path / "model.keras", tmp_path / "checkpoints" / "checkpoint.keras") == 0.0


def test_interrupted_before_a_checkpoint_commit_resumes_to_the_same_best_epoch(files, straight, tmp_path, monkeypatch):
    """Epoch 2's best-epoch record is written, its checkpoint is not: the resumed run repeats epoch 2."""
    with interrupted_at_checkpoint_commit(monkeypatch, commit=2), pytest.raises(Interrupted):
        run(files, tmp_path)
    assert json.loads((tmp_path / "checkpoints" / "checkpoint.json").read_text())["step"] == 4
    assert json.loads((tmp_path / "checkpoints" / "best.json").read_text())["last_epoch"] == 2
    assert not (tmp_path / "model.keras").exists()

    summary = run(files, tmp_path, resume=True)
    expected, out = straight
    assert summary["resumed_from_step"] == 4 and len(summary["history"]["loss"]) == 2  # epochs 2 and 3
    assert {**summary["best_epoch"], "value": None} == {**expected["best_epoch"], "value": None}
    assert summary["best_epoch"]["value"] == pytest.approx(expected["best_epoch"]["value"], abs=1e-5)
    assert_resumed_equal(max_weight_delta(out / "model.keras", tmp_path / "model.keras"), "model.keras")
    assert_resumed_equal(
        max_weight_delta(out / "checkpoints" / "checkpoint.keras", tmp_path / "checkpoints" / "checkpoint.keras"),
        "the last epoch's checkpoint",
    )


def test_resuming_a_run_that_stopped_early_trains_only_with_a_longer_patience(files, straight, tmp_path):
    expected, out = straight
    shutil.copytree(out, tmp_path / "run")
    summary = run(files, tmp_path / "run", resume=True)
    assert summary["resumed_from_step"] == 12 and summary["history"] == {}
    assert summary["best_epoch"] == expected["best_epoch"]
    assert max_weight_delta(out / "model.keras", tmp_path / "run" / "model.keras") == 0.0
    # Two more epochs of patience: epochs 4 and 5 run, epoch 1 stays the best.
    summary = run(files, tmp_path / "run", resume=True, early_stopping_patience=PATIENCE + 2)
    assert summary["resumed_from_step"] == 12 and len(summary["history"]["loss"]) == 2
    assert summary["best_epoch"]["epoch"] == 1 and summary["best_epoch"]["epochs_run"] == 5


def test_monitor_and_patience_are_checked(files, tmp_path):
    with pytest.raises(ValueError, match="needs an --eval file"):
        run(files, tmp_path / "a", eval=None)
    with pytest.raises(ValueError, match="must be a validation metric such as 'val_loss'.*Received: 'accuracy'"):
        run(files, tmp_path / "b", monitor="accuracy")
    with pytest.raises(ValueError, match=r"'val_f1' is not among this run's epoch metrics \['val_accuracy', 'val_loss'\]"):
        run(files, tmp_path / "c", monitor="val_f1", epochs=1)
    assert not (tmp_path / "c" / "checkpoints" / "checkpoint.json").exists()  # refused before the first checkpoint
    # A larger-is-better metric picks by its maximum.
    summary = run(files, tmp_path / "d", monitor="val_accuracy", epochs=2, early_stopping_patience=None)
    history = summary["history"]["val_accuracy"]
    assert summary["best_epoch"]["epoch"] == 1 + int(np.argmax(history))
    # Each metric the task heads compile (loss, accuracy, a regressor's mae) picks by the right end (a mutation
    # that maximised val_mae passed the job tests, which monitor only losses and accuracies).
    assert [default_mode(m) for m in ("val_loss", "val_mae", "val_accuracy")] == ["min", "min", "max"]


def test_the_printout_names_the_best_epoch_and_the_early_stop(straight, capsys):
    from keras_bert.jobs.finetune import _report  # the job's summary printout, on the straight run's summary

    summary, out = straight
    _report(summary, str(out / "model.keras"), EPOCHS)
    printed = capsys.readouterr().out
    value = summary["best_epoch"]["value"]
    assert f"best epoch 1 by val_loss {value:.4f}; stopped early after epoch 3 of 8 (2 epochs without a better val_loss)" \
        in printed
    assert f"saved {out / 'model.keras'} (epoch 1, the best; the last epoch's weights are in checkpoints/ for --resume)" \
        in printed
    assert "majority-class baseline" in printed and "F1 of the positive class 'positive'" in printed
