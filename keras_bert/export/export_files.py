"""What every export target writes beside its graph: the metadata file's name and record, and one-per-line assets.

Each export directory (SavedModel, TF Hub encoder and preprocessor, ONNX,
LiteRT) holds a `keras_bert_export.json` that says what it is and what wrote
it, and text assets such as `vocab.txt` and `labels.txt`, one entry a line.
No TensorFlow here: the versions of the graph libraries are read only when a
record is made, in the process that converts.
"""

import datetime
import importlib

import keras

from keras_bert._version import __version__

METADATA_FILE = "keras_bert_export.json"


def write_lines(lines, path):
    """Writes `lines` (strings without newlines) to `path`, UTF-8, each ended by `\\n`."""
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))


def library_versions(*packages):
    """`{"keras_bert", "keras", "tensorflow", *packages}` -> version; None for a package that is not installed.

    Args:
        *packages: the importable names of the graph libraries the export
            used besides TensorFlow (`"tensorflow_text"`, `"onnx"`, ...).
    """
    versions = {"keras_bert": __version__, "keras": keras.__version__}
    for package in ("tensorflow",) + packages:
        versions[package] = _version(package)
    return versions


def export_time():
    """The time of the export, as the metadata records it: UTC, ISO 8601, to the second."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _version(package):
    try:
        return importlib.import_module(package).__version__
    except (ImportError, AttributeError):
        return None
