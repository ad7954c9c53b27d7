"""The best epoch of a training run by a validation metric, kept on disk so that a resumed run knows it too.

`BestEpoch` is a Keras callback: at every epoch end it compares the validation
metric with the best so far, saves the weights when they are better, and
(with a patience) stops the run after that many epochs without a better one.
Its record lives beside the resumable checkpoint (`keras_bert.jobs.checkpointing`):

    checkpoints/best.weights.h5   the best epoch's weights
    checkpoints/best.adapter.npz  a LoRA run's: its adapters and head (the .h5 holds merged kernels only)
    checkpoints/best.json         {"epoch", "step", "monitor", "mode", "value", "last_epoch", "stopped_early", "patience"}

Run it before the epoch's checkpoint is committed (`JobRunner(before_checkpoint=...)`):
a kill between the two then repeats the epoch from the previous checkpoint,
and the record, already written, is not lost. Both files are written
atomically (temporary name, fsync, rename), the weights first.
"""

import math
import os

import keras
import numpy as np

from keras_bert.atomic_files import write_atomically, write_json_atomically
from keras_bert.models.lora import lora_info, save_adapter
from keras_bert.json_files import read_json

WEIGHTS_FILE = "best.weights.h5"
ADAPTER_FILE = "best.adapter.npz"
RECORD_FILE = "best.json"
# Metric names whose smaller values are better; every other metric is better larger.
_SMALLER_IS_BETTER = ("loss", "error", "mae", "mse")


def default_mode(monitor):
    """"min" for losses and errors (`val_loss`, `val_mae`, ...), else "max" (`val_accuracy`, ...)."""
    return "min" if any(word in monitor for word in _SMALLER_IS_BETTER) else "max"


def read_best_record(directory):
    """The `best.json` of `directory` as a dict, or None when there is none."""
    return read_json(os.path.join(directory, RECORD_FILE), "best-epoch record", expected=None, if_missing=None)


def clear_best_record(directory):
    """Deletes a best-epoch record (of an earlier run) from `directory`."""
    for name in (RECORD_FILE, WEIGHTS_FILE, ADAPTER_FILE):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            os.remove(path)


class BestEpoch(keras.callbacks.Callback):
    """Saves the weights of the best epoch by `monitor`; with `patience`, stops when it stops improving.

    Better means strictly better, so among equal values the earliest epoch
    stays the best (as in `keras.callbacks.EarlyStopping` with `min_delta=0`).
    A non-finite value is never better.

    Args:
        directory: where `best.weights.h5` and `best.json` go.
        monitor: a key of `fit`'s epoch logs, e.g. "val_loss" or "val_accuracy".
        steps_per_epoch: to record the step of the best epoch.
        patience: None, or stop after this many epochs in a row without a better value.
        mode: "min" or "max"; default `default_mode(monitor)`.
        resume: continue the record in `directory` (a resumed run); else an
            earlier record there is deleted when training begins.

    Attributes:
        record: the `best.json` content so far (None before the first epoch ends).
    """

    def __init__(self, directory, monitor, steps_per_epoch, patience=None, mode=None, resume=False):
        super().__init__()
        mode = mode or default_mode(monitor)
        if mode not in ("min", "max"):
            raise ValueError(f"`mode` must be 'min' or 'max'. Received: mode={mode!r}")
        if patience is not None and (not isinstance(patience, int) or patience < 1):
            raise ValueError(f"`patience` must be a positive int or None. Received: patience={patience!r}")
        self.directory = directory
        self.monitor = monitor
        self.steps_per_epoch = steps_per_epoch
        self.patience = patience
        self.mode = mode
        self.resume = resume
        self.record = None

    def on_train_begin(self, logs=None):
        os.makedirs(self.directory, exist_ok=True)
        if self.resume:
            self.record = read_best_record(self.directory)
        else:
            clear_best_record(self.directory)

    def _better(self, value):
        if not math.isfinite(value):
            return False
        if self.record is None:
            return True
        return value < self.record["value"] if self.mode == "min" else value > self.record["value"]

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.monitor not in logs:
            raise ValueError(
                f"The monitored metric {self.monitor!r} is not among this run's epoch metrics "
                f"{sorted(k for k in logs if k.startswith('val_'))}; pick one of them (it needs a held-out file)."
            )
        value = float(np.asarray(keras.ops.convert_to_numpy(logs[self.monitor])))
        epoch = epoch + 1  # 1-based, as the progress bar counts
        if self._better(value):
            self._save_weights()
            self.record = {"epoch": epoch, "step": epoch * self.steps_per_epoch, "monitor": self.monitor,
                           "mode": self.mode, "value": value}
        if self.record is None:  # only non-finite values so far: nothing worth keeping
            return
        since_best = epoch - self.record["epoch"]
        stop = self.patience is not None and since_best >= self.patience
        epochs = (self.params or {}).get("epochs")
        self.record.update(last_epoch=epoch, patience=self.patience, stopped_early=bool(stop and epoch != epochs))
        write_json_atomically(self.record, os.path.join(self.directory, RECORD_FILE))
        if stop:
            self.model.stop_training = True

    def _save_weights(self):
        # Keras wants the .weights.h5 ending; checkpointing's cleanup removes `*.tmp-*` left by a kill.
        write_atomically(os.path.join(self.directory, WEIGHTS_FILE), self.model.save_weights, suffix=".weights.h5")
        if lora_info(self.model):
            save_adapter(self.model, os.path.join(self.directory, ADAPTER_FILE))
