"""Checkpoints that let an interrupted training run continue exactly.

A checkpoint is a `.keras` file (architecture, weights, optimizer state) plus
a JSON file with the step reached and every random seed generator's state
(Keras does not save those with the weights, and dropout masks after a resume
would otherwise differ from an uninterrupted run). Both are written under
temporary names, fsynced, then renamed, so a process killed mid-write leaves
the previous checkpoint intact and loadable.
"""

import json
import os

import keras
import numpy as np

MODEL_FILE = "checkpoint.keras"
STATE_FILE = "checkpoint.json"


def _seed_generators(model):
    generators = []
    for layer in model._flatten_layers(include_self=True):
        generators.extend(getattr(layer, "_seed_generators", []))
    return generators


def _fsync_replace(tmp_path, final_path):
    with open(tmp_path, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp_path, final_path)


def write_atomic_json(data, path):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def save_model_atomic(model, path):
    """`model.save(path)` through a temporary file and an atomic rename."""
    tmp = f"{path}.tmp-{os.getpid()}.keras"
    try:
        model.save(tmp)
        _fsync_replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def save_checkpoint(model, directory, step, extra=None):
    """Writes `model` (with optimizer state) and `step` to `directory`, atomically."""
    os.makedirs(directory, exist_ok=True)
    save_model_atomic(model, os.path.join(directory, MODEL_FILE))
    state = {
        "step": int(step),
        "seed_states": [keras.ops.convert_to_numpy(g.state).tolist() for g in _seed_generators(model)],
        **(extra or {}),
    }
    write_atomic_json(state, os.path.join(directory, STATE_FILE))


def has_checkpoint(directory):
    return os.path.exists(os.path.join(directory, MODEL_FILE)) and os.path.exists(os.path.join(directory, STATE_FILE))


def load_checkpoint(directory):
    """(model, state dict) from `directory`; the model has its optimizer state and seed states back."""
    model_path, state_path = os.path.join(directory, MODEL_FILE), os.path.join(directory, STATE_FILE)
    if not has_checkpoint(directory):
        raise FileNotFoundError(f"No checkpoint in {directory} (expected {MODEL_FILE} and {STATE_FILE}).")
    with open(state_path, encoding="utf-8") as f:
        state = json.load(f)
    model = keras.saving.load_model(model_path)
    generators = _seed_generators(model)
    if len(generators) != len(state["seed_states"]):
        raise ValueError(
            f"{state_path} has {len(state['seed_states'])} seed states but the model has {len(generators)}: "
            "the checkpoint does not belong to this model."
        )
    for generator, value in zip(generators, state["seed_states"]):
        generator.state.assign(np.asarray(value, dtype=keras.backend.standardize_dtype(generator.state.dtype)))
    return model, state


class ResumableCheckpoint(keras.callbacks.Callback):
    """Saves a resumable checkpoint at the end of every epoch.

    Use epochs of `steps_per_epoch` steps to checkpoint every N steps (the
    pretraining job does). State is written at epoch ends because that is
    where every backend has its variables synced back to the model.

    Args:
        directory: where `checkpoint.keras` and `checkpoint.json` go.
        steps_per_epoch: int, to record the global step.
        extra: dict written into checkpoint.json too (e.g. the job's arguments).
    """

    def __init__(self, directory, steps_per_epoch, extra=None):
        super().__init__()
        self.directory = directory
        self.steps_per_epoch = steps_per_epoch
        self.extra = extra or {}

    def on_epoch_end(self, epoch, logs=None):
        save_checkpoint(self.model, self.directory, (epoch + 1) * self.steps_per_epoch, self.extra)
