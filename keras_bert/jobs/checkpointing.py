"""Checkpoints that let an interrupted training run continue exactly, and survive a kill at any moment.

A checkpoint is a `.keras` file (architecture, weights, optimizer state) plus
`checkpoint.json`: the step reached, the name of that `.keras` file, and
every random seed generator's state (Keras does not save those with the
weights, and dropout masks after a resume would otherwise differ from an
uninterrupted run), and the process-wide generators' states that torch's
dropout draws from (`keras_bert.jobs.random_state`; set again right before
the resumed run's first step).

Crash safety: the model goes to a new file per step, `checkpoint-<step>.keras`
(written under a temporary name, fsynced, renamed: `keras_bert.atomic_files`); only then is
`checkpoint.json` replaced (temporary name, fsync, rename). That rename is
the commit: a process killed at any moment leaves a `checkpoint.json` that
names a complete `.keras` file of the same step, so the previous checkpoint
stays intact and loadable. Older `.keras` files are deleted after the commit.
`checkpoint.keras` is a hard link to the latest one, for people and tools
that want a fixed name.
"""

import glob
import math
import os
import shutil
import zipfile

import keras
import numpy as np

from keras_bert.atomic_files import write_atomically, write_json_atomically
from keras_bert.jobs.random_state import global_random_state, restore_before_first_step, restore_held
from keras_bert.json_files import read_json

MODEL_FILE = "checkpoint.keras"
STATE_FILE = "checkpoint.json"
_STEP_FILE = "checkpoint-{step:08d}.keras"


def _seed_generators(model):
    generators = []
    for layer in model._flatten_layers(include_self=True):
        generators.extend(getattr(layer, "_seed_generators", []))
    return generators


def _link_latest(directory, model_file, link_name=MODEL_FILE):
    """Points `link_name` (`checkpoint.keras`) at `model_file` (a hard link, else a copy), atomically."""
    source = os.path.join(directory, model_file)

    def link(tmp):
        try:
            os.link(source, tmp)
        except OSError:
            shutil.copyfile(source, tmp)

    write_atomically(os.path.join(directory, link_name), link)


def save_checkpoint(model, directory, step, extra=None, model_format=None):
    """Writes `model` (with optimizer state) and `step` to `directory`; a kill at any point keeps the last one.

    `model_format`: None for a `.keras` file, or an object with `suffix` and
    `write(model, path)` (e.g. `RawVariablesFormat` for LoRA runs).
    """
    os.makedirs(directory, exist_ok=True)
    suffix = ".keras" if model_format is None else model_format.suffix
    model_file = f"checkpoint-{int(step):08d}{suffix}"
    if model_format is None:
        write_atomically(os.path.join(directory, model_file), model.save, suffix=".keras")
    else:
        write_atomically(os.path.join(directory, model_file), lambda tmp: model_format.write(model, tmp))
    state = {
        "step": int(step),
        "model_file": model_file,
        "seed_states": [keras.ops.convert_to_numpy(g.state).tolist() for g in _seed_generators(model)],
        "random_state": global_random_state(),  # torch's dropout draws from its global generator
        **(extra or {}),
    }
    write_json_atomically(state, os.path.join(directory, STATE_FILE))  # the commit
    _link_latest(directory, model_file, "checkpoint" + suffix)
    # Earlier steps' files, and temporary files of a process killed mid-write.
    stale = set(glob.glob(os.path.join(directory, "checkpoint-*" + suffix)) + glob.glob(os.path.join(directory, "*.tmp-*")))
    for path in stale - {os.path.join(directory, model_file)}:
        os.remove(path)


def read_checkpoint_state(directory):
    """The committed `checkpoint.json` of `directory` as a dict, or None when there is none."""
    path = os.path.join(directory, STATE_FILE)
    state = read_json(path, "checkpoint record", expected=None, if_missing=None)
    if state is None:
        return None
    if not isinstance(state, dict) or not isinstance(state.get("step"), int):
        raise ValueError(f"{path} is not a checkpoint record (no integer 'step').")
    return state


def has_checkpoint(directory):
    state = read_checkpoint_state(directory)
    if state is None:
        return False
    return os.path.isfile(os.path.join(directory, state.get("model_file", MODEL_FILE)))


def load_checkpoint(directory, model_format=None, build=None):
    """(model, state dict) from `directory`; the model has its optimizer state and seed states back.

    The process-wide random state is held for the model's next training step
    (`ResumableCheckpoint` sets it then; `random_state` says why not now).

    With a `model_format` (see `save_checkpoint`), the model is its
    `read(path, build)`: `build()` makes the new compiled model it fills.
    """
    state_path = os.path.join(directory, STATE_FILE)
    state = read_checkpoint_state(directory)
    if state is None:
        raise FileNotFoundError(f"No checkpoint in {directory} (expected {STATE_FILE} and the .keras file it names).")
    # Checkpoints written before per-step files name no file: checkpoint.keras.
    model_path = os.path.join(directory, state.get("model_file", MODEL_FILE))
    if not os.path.isfile(model_path):
        raise FileNotFoundError(f"{state_path} names {model_path}, which does not exist.")
    if not zipfile.is_zipfile(model_path):
        raise ValueError(f"The checkpoint {model_path} is not a .keras file: not a zip archive (truncated?)")
    try:
        model = keras.saving.load_model(model_path) if model_format is None else model_format.read(model_path, build)
    except Exception as error:  # keras raises many types for a broken file
        raise ValueError(f"Cannot load the checkpoint {model_path}: {type(error).__name__}: {error}") from None
    generators = _seed_generators(model)
    if len(generators) != len(state["seed_states"]):
        raise ValueError(
            f"{state_path} has {len(state['seed_states'])} seed states but the model has {len(generators)}: "
            "the checkpoint does not belong to this model."
        )
    for generator, value in zip(generators, state["seed_states"]):
        generator.state.assign(np.asarray(value, dtype=keras.backend.standardize_dtype(generator.state.dtype)))
    restore_before_first_step(model, state.get("random_state"))  # set by ResumableCheckpoint, see random_state
    return model, state


class ResumableCheckpoint(keras.callbacks.Callback):
    """Saves a resumable checkpoint at the end of every epoch.

    Use epochs of `steps_per_epoch` steps to checkpoint every N steps (the
    pretraining job does). State is written at epoch ends because that is
    where every backend has its variables synced back to the model.

    Args:
        directory: where `checkpoint.json` and the `.keras` files go.
        steps_per_epoch: int, to record the global step.
        extra: dict written into checkpoint.json too (e.g. the job's arguments).
    """

    def __init__(self, directory, steps_per_epoch, extra=None, model_format=None):
        super().__init__()
        self.directory = directory
        self.steps_per_epoch = steps_per_epoch
        self.extra = extra or {}
        self.model_format = model_format

    def on_train_batch_begin(self, batch, logs=None):
        restore_held(self.model)  # a resumed model's process-wide random state (`random_state`), once

    def on_epoch_end(self, epoch, logs=None):
        save_checkpoint(self.model, self.directory, (epoch + 1) * self.steps_per_epoch, self.extra, self.model_format)


class NonFiniteLossError(ValueError):
    """Training produced a NaN or infinite loss (see `NonFiniteLossGuard`)."""


class NonFiniteLossGuard(keras.callbacks.Callback):
    """Stops training at the first step whose loss is NaN or infinite.

    Raises `NonFiniteLossError` from the end of that step, naming the step and
    the last checkpoint written (whose weights are from before the blow-up);
    raising there also keeps the epoch-end checkpoint from saving broken
    weights. Keras's own `TerminateOnNaN` stops quietly and lets the job save.

    The loss Keras reports per step is the epoch's running mean, so it turns
    non-finite exactly at the first bad step and stays so.

    Args:
        checkpoint_dir: the folder of `ResumableCheckpoint`, or None.
        steps_per_epoch: steps per epoch, to give the global step; default
            the `steps` Keras passes to callbacks.
    """

    def __init__(self, checkpoint_dir=None, steps_per_epoch=None):
        super().__init__()
        self.checkpoint_dir = checkpoint_dir
        self.steps_per_epoch = steps_per_epoch
        self._epoch = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None:
            return
        loss = float(np.asarray(keras.ops.convert_to_numpy(loss)))
        if math.isfinite(loss):
            return
        steps_per_epoch = self.steps_per_epoch or (self.params or {}).get("steps") or 0
        step = self._epoch * steps_per_epoch + batch + 1
        last = "none was written"
        if self.checkpoint_dir is not None:
            state = read_checkpoint_state(self.checkpoint_dir)
            if state is not None:
                last = f"{self.checkpoint_dir} (step {state['step']}; resume from it with a lower learning rate)"
        self.model.stop_training = True
        raise NonFiniteLossError(f"the training loss became {loss} at step {step}; training stopped. Last good checkpoint: {last}.")
