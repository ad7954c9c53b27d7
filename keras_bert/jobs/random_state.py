"""The process-wide random generators a resumed run must continue, saved with each checkpoint.

Keras' `SeedGenerator`s are state variables of the model (`checkpointing`
saves them beside the weights). What they do not cover are the generators
`keras.utils.set_random_seed` seeds for the whole process: Python's `random`,
numpy's global one and, on the torch backend, torch's default CPU and CUDA
generators. Those matter on torch: Keras' unseeded `Dropout` calls
`torch.nn.functional.dropout`, and the package's fused attention dropout
`scaled_dot_product_attention(dropout_p=...)`; both draw from torch's default
generator (TensorFlow and JAX draw dropout masks from the seed generators).

When to restore: not when the checkpoint is read. Between that and the first
training step, a resumed `fit` sets itself up, and that draws from torch's
generator too (each new `torch.utils.data.DataLoader` iterator draws its
base seed from it: Keras' symbolic build opens one, the epoch another),
where the uninterrupted run, already past them, draws nothing. The state
saved at the end of step k is what the uninterrupted run has at the start of
step k + 1, so a resumed run sets it right before its first step
(`restore_before_first_step`, then `restore_held` from a callback's
`on_train_batch_begin`). The data pipelines draw from their own seeded
generators, not from these.

Held-out evaluation inside `fit` draws from them too: on torch, each
validation pass opens a new `DataLoader` iterator, one base seed from torch's
generator. Training after it would then get other dropout masks than the
same run without held-out data (so a run resumed without its held-out data
could not end where the uninterrupted run with it did).
`KeepRandomStateThroughEvaluation` sets the generators back at the end of
every evaluation pass, so evaluating leaves training's draws as they were.
"""

import base64
import random
import weakref

import keras
import numpy as np

# Models read from a checkpoint -> the state to set before their first training step.
_HELD = weakref.WeakKeyDictionary()


def _encode(data):
    return base64.b64encode(bytes(data)).decode("ascii")


def _decode(text, dtype):
    return np.frombuffer(base64.b64decode(text), dtype=dtype)


def global_random_state():
    """The process-wide generators' states as a JSON-ready dict.

    Returns:
        `python` (Python's `random`), `numpy` (numpy's global generator), and
        on the torch backend `torch` (the default CPU generator) and
        `torch_cuda` (one state per CUDA device; empty without CUDA). Byte
        states are base64 text.
    """
    version, words, gauss = random.getstate()
    kind, keys, position, has_gauss, cached_gaussian = np.random.get_state()
    state = {
        "python": {"version": version, "words": _encode(np.asarray(words, np.uint32)), "gauss": gauss},
        "numpy": {"kind": kind, "keys": _encode(np.asarray(keys, np.uint32)), "position": int(position),
                  "has_gauss": int(has_gauss), "cached_gaussian": float(cached_gaussian)},
    }
    if keras.backend.backend() == "torch":
        import torch  # only on the torch backend

        state["torch"] = _encode(torch.get_rng_state().numpy())
        cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_available() else []
        state["torch_cuda"] = [_encode(s.numpy()) for s in cuda]
    return state


def set_global_random_state(state):
    """Sets the generators of `state` (from `global_random_state`).

    Parts it lacks are left as they are, and so are the torch ones on another
    backend, and the CUDA ones when this process has another number of CUDA
    devices (dropout masks on other devices could not match anyway).
    """
    if "python" in state:
        python = state["python"]
        words = tuple(int(w) for w in _decode(python["words"], np.uint32))
        random.setstate((python["version"], words, python["gauss"]))
    if "numpy" in state:
        saved = state["numpy"]
        keys = _decode(saved["keys"], np.uint32)
        np.random.set_state((saved["kind"], keys, saved["position"], saved["has_gauss"], saved["cached_gaussian"]))
    if "torch" in state and keras.backend.backend() == "torch":
        import torch  # only on the torch backend

        torch.set_rng_state(torch.from_numpy(_decode(state["torch"], np.uint8).copy()))
        cuda = state.get("torch_cuda") or []
        if cuda and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all([torch.from_numpy(_decode(s, np.uint8).copy()) for s in cuda])


def restore_before_first_step(model, state):
    """Holds `state` (or None: nothing) until `restore_held(model)`, called as `model`'s training starts."""
    if state is None:
        _HELD.pop(model, None)
    else:
        _HELD[model] = state


def restore_held(model):
    """Sets the state held for `model` by `restore_before_first_step`, once; later calls do nothing."""
    state = _HELD.pop(model, None)
    if state is not None:
        set_global_random_state(state)


class KeepRandomStateThroughEvaluation(keras.callbacks.Callback):
    """Gives the process-wide generators back their state from before each evaluation pass of `fit`.

    Without it, on torch, a run with held-out data trains with other dropout
    masks than the same run without (see the module docstring). Keras calls
    `on_test_begin` before the evaluation opens its data iterator and
    `on_test_end` after its last batch.
    """

    def __init__(self):
        super().__init__()
        self._state = None

    def on_test_begin(self, logs=None):
        self._state = global_random_state()

    def on_test_end(self, logs=None):
        if self._state is not None:
            set_global_random_state(self._state)
            self._state = None
