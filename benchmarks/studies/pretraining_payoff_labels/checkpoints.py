"""What makes the study resumable: the pretraining state on disk, its finished weights, and results.json read back.

A CPU run pretrains for up to an hour: `study.py --checkpoint-minutes 5` writes the whole pretraining state
(weights, optimizer state, PRNG key, step, curve, the half-way snapshot once taken) into `--out` every five
minutes, and `--resume` continues from it. Because the schedule depends on the step alone and the batches and
masks on the PRNG key in the state, a resumed run takes the steps the uninterrupted one would have taken.
Fine-tuning is resumed by group: a (init, label budget, seed) whose chosen run is in results.json is not run
again (a group stopped half-way is run again whole: the test split is scored only on the weights a group
chooses, and a stopped group's weights are gone).

Files in `--out`: pretraining_state.npz + pretraining_state.json (while pretraining), pretrained.npz (the
finished snapshots' trainable weights) beside results.json.
"""

import json
import os
import sys
import time

import jax.numpy as jnp
import numpy as np

from keras_bert.atomic_files import write_atomically, write_json_atomically

STATE = "pretraining_state"
PRETRAINED = "pretrained.npz"


def _write_npz(path, arrays):
    """Writes `arrays` ({name: array}) to `path` through a temporary file, so a kill never leaves half a file."""
    stored = {name: np.asarray(value, np.float32) if _is_bfloat16(value) else np.asarray(value)
              for name, value in arrays.items()}
    write_atomically(path, lambda tmp: np.savez(tmp, **stored), suffix=".npz")  # savez adds .npz to other names


def _is_bfloat16(value):
    return str(getattr(value, "dtype", "")) == "bfloat16"  # NumPy files cannot hold it: stored as float32


def _flat(state, snapshots):
    trainable, non_trainable, optimizer, key = state
    arrays = {"key": key}
    for group, values in (("trainable", trainable), ("non_trainable", non_trainable), ("optimizer", optimizer)):
        arrays.update({f"{group}_{i}": v for i, v in enumerate(values)})
    for step, values in snapshots.items():
        arrays.update({f"snapshot_{step}_{i}": v for i, v in enumerate(values)})
    return arrays


def _restored(stored, template):
    """`stored` as a device array of `template`'s dtype and shape (a mismatch is another model: refused)."""
    if tuple(stored.shape) != tuple(template.shape):
        raise ValueError(f"the saved pretraining state has shape {stored.shape} where this model has "
                         f"{template.shape}: --resume needs the study's own settings")
    return jnp.asarray(stored, dtype=template.dtype)


class PretrainingCheckpoints:
    """`Pretraining.run`'s checkpoint callback: writes the state every `every_seconds` of pretraining."""

    def __init__(self, out, info, every_seconds, seconds_before, started):
        self.out, self.info, self.every = out, info, every_seconds
        self.seconds_before, self.started = seconds_before, started
        self.last = started

    def __call__(self, state, step, snapshots, curve):
        now = time.time()
        if now - self.last < self.every:
            return
        self.last = now
        _write_npz(os.path.join(self.out, f"{STATE}.npz"), _flat(state, snapshots))
        write_json_atomically({
            "step": step, "snapshot_steps": sorted(snapshots), "curve": curve, "info": self.info,
            "seconds": round(self.seconds_before + now - self.started, 2)}, os.path.join(self.out, f"{STATE}.json"))


def save_pretrained(out, info, trainable):
    """The finished run: the trainable weights of each snapshot ({name: list}) and its info; the state goes."""
    arrays = {f"{name}_{i}": v for name, values in trainable.items() for i, v in enumerate(values)}
    _write_npz(os.path.join(out, PRETRAINED), arrays)
    write_json_atomically({"info": info, "snapshots": {k: len(v) for k, v in trainable.items()}},
                          os.path.join(out, "pretrained.json"))
    for suffix in (".npz", ".json"):
        path = os.path.join(out, STATE + suffix)
        if os.path.exists(path):
            os.remove(path)


def load_pretraining(out, state):
    """What an earlier run of the study left in `out`, shaped like `state` (the fresh model's), or None.

    Returns `{"finished": True, "info", "weights": {snapshot name: trainable values}}` for a finished
    pretraining, `{"finished": False, "info", "state", "step", "snapshots", "curve", "seconds"}` for an
    interrupted one.
    """
    trainable = state[0]
    if os.path.exists(os.path.join(out, PRETRAINED)):
        with np.load(os.path.join(out, PRETRAINED)) as stored, open(os.path.join(out, "pretrained.json")) as f:
            record = json.load(f)
            weights = {name: [_restored(stored[f"{name}_{i}"], trainable[i]) for i in range(count)]
                       for name, count in record["snapshots"].items()}
        return {"finished": True, "info": record["info"], "weights": weights}
    if not os.path.exists(os.path.join(out, f"{STATE}.json")):
        return None
    with open(os.path.join(out, f"{STATE}.json"), encoding="utf-8") as f:
        record = json.load(f)
    with np.load(os.path.join(out, f"{STATE}.npz")) as stored:
        restored = [[_restored(stored[f"{group}_{i}"], template) for i, template in enumerate(values)]
                    for group, values in zip(("trainable", "non_trainable", "optimizer"), state[:3])]
        key = jnp.asarray(stored["key"], dtype=state[3].dtype)
        snapshots = {step: [_restored(stored[f"snapshot_{step}_{i}"], t) for i, t in enumerate(trainable)]
                     for step in record["snapshot_steps"]}
    return {"finished": False, "info": record["info"], "state": [*restored, key], "step": record["step"],
            "snapshots": snapshots, "curve": record["curve"], "seconds": record["seconds"]}


def resume_results(args, results):
    """`results` for this run: the earlier run's (its runs, skips, errors, pretraining) with `--resume`.

    An `--out` that holds a study is never overwritten without `--resume`: a run of an hour or more
    would be lost to a repeated command.
    """
    path = os.path.join(args.out, "results.json")
    if not os.path.exists(path):
        return results
    if not args.resume:
        sys.exit(f"error: {args.out} holds a study (results.json): --resume continues it; give another --out "
                 "for a new one")
    with open(path, encoding="utf-8") as f:
        earlier = json.load(f)
    # Studies written before --objective existed pretrained with MLM.
    held = {"seed": earlier["settings"].get("seed"), "size": earlier["settings"].get("size"),
            "objective": earlier["settings"].get("objective", "mlm")}
    if held != {name: getattr(args, name) for name in held}:
        sys.exit(f"error: {args.out} holds a study of " + ", ".join(f"{k} {v}" for k, v in held.items())
                 + "; --resume needs the same settings")
    resumed = {**results, "runs": earlier.get("runs", [])}
    if "pretraining" in earlier:
        resumed["pretraining"] = earlier["pretraining"]
    # What each earlier process of this study ran on and left out (its skips were its own time guard's).
    resumed["earlier_commands"] = earlier.get("earlier_commands", []) + [
        {key: earlier.get(key) for key in ("command", "environment", "wall_seconds", "skipped", "errors")}]
    return resumed
