"""What a command checks before it loads TensorFlow or a backend: the Keras backend, and the files it reads.

Loading TensorFlow (which every command whose arguments parse needs) takes 7-17 s, and with a backend
Keras cannot load it ends in Keras' traceback. These checks answer a wrong `KERAS_BACKEND` or a
missing input file in one line, at once. Each subcommand module names what it reads in `INPUTS`:

    INPUTS = {"train": ("--train", existing_file), "init": ("--init", model_reference)}

`{option: (how the message names it, check)}`; a check takes `(name, value)` and raises the
`FileNotFoundError` the job would raise later (`--debug` shows the same).
The job behind the command checks the same again (a Python caller has no command line); the files'
contents are checked there, once the readers load.

This module imports nothing heavy: it runs before keras, TensorFlow, torch or JAX.
"""

import difflib
import glob
import importlib.util
import json
import os
import sys

from keras_bert.cli.errors import UserError

# The Keras backends keras-bert runs on (Keras has more: numpy and openvino run no training).
BACKENDS = ("tensorflow", "jax", "torch")
# Backend names people type that Keras does not know, and the one they mean.
_MEANT = {"pytorch": "torch", "tf": "tensorflow", "tensorflow2": "tensorflow", "jaxlib": "jax", "flax": "jax"}


def check_backend():
    """Raises a `UserError` when Keras would load a backend keras-bert does not run on, or one not installed.

    The backend is `KERAS_BACKEND`, else `keras.json`'s "backend" (Keras' own order). Nothing is
    checked once keras is imported: the backend is loaded then.
    """
    if "keras" in sys.modules:
        return
    name, chosen = _chosen_backend()
    if name not in BACKENDS:
        close = _MEANT.get(name.lower()) or next(iter(difflib.get_close_matches(name.lower(), BACKENDS, n=1)), None)
        hint = f" (did you mean {close}?)" if close else ""
        raise UserError(f"{chosen} is not a backend keras-bert runs on; valid backends: {', '.join(BACKENDS)}{hint}")
    if importlib.util.find_spec(name) is None:
        raise UserError(f"the {name} backend ({chosen}) is not installed: pip install 'keras-bert[{name}]'")


def _chosen_backend():
    """`(backend name, where it was chosen, in words)`, as Keras reads them (keras/src/backend/config.py)."""
    name = os.environ.get("KERAS_BACKEND")
    if name:  # Keras ignores an empty variable
        return name, f"KERAS_BACKEND={name}"
    home = os.environ.get("KERAS_HOME")
    if home is None:
        base = os.path.expanduser("~")
        home = os.path.join(base if os.access(base, os.W_OK) else "/tmp", ".keras")
    config_file = os.path.join(os.path.expanduser(home), "keras.json")
    try:
        with open(config_file, encoding="utf-8") as f:
            name = json.load(f).get("backend")
    except (OSError, ValueError, AttributeError):  # no file, not JSON, not an object: Keras' default
        name = None
    if not name:
        return "tensorflow", "Keras' default"
    return str(name), f'"backend": "{name}" in {config_file}'


def check_inputs(args, inputs):
    """Runs the `INPUTS` checks of a command on the parsed `args` (options left out are not checked)."""
    for option, (name, check) in inputs.items():
        value = getattr(args, option, None)
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if item is not None and item != "-":  # "-": stdin
                check(name, os.fspath(item))


# --------------------------------------------------------------------------- checks (`INPUTS`)
def existing_file(flag, path):
    """A file that must exist (`--train`, `--vocab`, ...)."""
    if os.path.isdir(path):
        raise FileNotFoundError(f"{flag}: {path} is a folder; expected a file")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{flag}: no such file: {path}")


def local_model(flag, path):
    """A model on disk: a `.keras` file, a run folder, an export (`predict`, `export`, `embed`, `--teacher`)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{flag + ': ' if flag else ''}{path}: no such file or folder")


def model_reference(flag, reference):
    """A model or vocabulary that may also be a preset name, `hf://owner/name` or a size name (`--init`, `--vocab`).

    Refused only when `reference` is plainly a path (see `_names_a_path`) that does not exist; a name
    goes on to the loader, which knows the presets and sizes (and names the closest ones).
    """
    if os.path.exists(reference) or os.path.exists(reference + ".index") or reference.startswith("hf://"):
        return  # ".index": a TF1 checkpoint prefix names no file
    if _names_a_path(reference):
        raise FileNotFoundError(f"{flag}: {reference}: no such file or folder")


def pairs_source(flag, value):
    """A term-pairs file that must exist, or "builtin" (`bias-check --pairs`, `finetune --counterfactual-augmentation`)."""
    if value != "builtin":  # keras_bert.fairness.term_pairs.BUILTIN
        existing_file(flag, value)


def convert_source(_, reference):
    """`convert`'s source: as `model_reference`, in `convert`'s words."""
    try:
        model_reference("", reference)
    except FileNotFoundError:
        raise FileNotFoundError(f"No checkpoint at {reference}: no such file or folder") from None


def matching_files(flag, pattern):
    """A file, a folder of files or a glob that must name at least one file (`--corpus`)."""
    if os.path.isfile(pattern):
        return
    if os.path.isdir(pattern):
        for _, folders, names in os.walk(pattern):
            folders[:] = [name for name in folders if not name.startswith(".")]
            if any(not name.startswith(".") for name in names):
                return
        raise FileNotFoundError(f"{flag}: {pattern}: the folder holds no files")
    if not glob.glob(pattern):
        raise FileNotFoundError(f"{flag}: no file matches {pattern!r}")


def _names_a_path(reference):
    """Whether a reference that is not on disk can only be meant as a path, never as a preset or hub name.

    Preset names are bare words ("bert_base_en_uncased") or Hub ids with one slash ("google-bert/bert-base-uncased",
    "BAAI/bge-small-en-v1.5"). A path: absolute, from "~" or "./", ending in a separator or ".keras", a file
    name (a dot, no slash), two or more folders deep, or in a folder that exists ("runs/sst" when runs/ does).
    """
    separators = ("/", os.sep)
    if os.path.isabs(reference) or reference.startswith(("~", "./", "../", ".\\", "..\\")):
        return True
    if reference.endswith(separators) or reference.endswith(".keras"):
        return True
    slashes = sum(reference.count(s) for s in set(separators))
    if slashes == 0:
        return "." in reference.lstrip(".")
    parent = os.path.dirname(reference)
    return slashes > 1 or os.path.isdir(parent)
