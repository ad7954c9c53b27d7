"""BestEpoch keeps the earliest of equally good epochs, and never a non-finite one (issue 44's mutation run: a
tracker keeping the later of two tied epochs went unnoticed by the job tests, whose losses never tie)."""

import keras
import numpy as np
import pytest

from keras_bert.jobs.best_epoch import BestEpoch, read_best_record

PLUMBING = "epoch bookkeeping in Python, the same on every backend"


def tracker(tmp_path, monitor, **options):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    best = BestEpoch(str(tmp_path), monitor, steps_per_epoch=10, **options)
    best.set_model(model)
    best.set_params({"epochs": 5})
    best.on_train_begin()
    return best, model


@pytest.mark.only_backend("torch", reason=PLUMBING)
@pytest.mark.parametrize("monitor, values, expected", [
    ("val_loss", [0.5, 0.5, 0.7], 1),  # a tie at the minimum: the earlier epoch
    ("val_loss", [0.6, 0.4, 0.4, 0.4], 2),
    ("val_accuracy", [0.8, 0.9, 0.9], 2),  # larger is better; the tie keeps epoch 2
    ("val_loss", [float("nan"), 0.9, float("inf"), 0.9], 2),  # non-finite values are never the best
])
def test_the_earliest_of_tied_epochs_is_kept(tmp_path, monitor, values, expected):
    best, model = tracker(tmp_path, monitor)
    saved = {}
    for epoch, value in enumerate(values):
        model.layers[0].kernel.assign(np.full((2, 1), float(epoch), "float32"))  # weights that name the epoch
        best.on_epoch_end(epoch, {monitor: value})
        saved[epoch + 1] = value
    record = read_best_record(str(tmp_path))
    assert record["epoch"] == expected and record["step"] == 10 * expected and record["last_epoch"] == len(values)
    model.load_weights(str(tmp_path / "best.weights.h5"))
    assert float(keras.ops.convert_to_numpy(model.layers[0].kernel)[0, 0]) == expected - 1


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_patience_counts_a_tie_as_no_improvement(tmp_path):
    best, model = tracker(tmp_path, "val_loss", patience=2)
    for epoch, value in enumerate([0.5, 0.5, 0.5]):
        best.on_epoch_end(epoch, {"val_loss": value})
    assert model.stop_training and read_best_record(str(tmp_path))["stopped_early"] is True
