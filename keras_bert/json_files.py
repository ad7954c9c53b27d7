"""Reading JSON files with errors that name the file and what it is: checkpoint configs, indexes, job records.

One reader for the whole package: the converters read checkpoint folders'
config.json, shard indexes and module lists with it, and the jobs their
records (finetune.json, checkpoint.json, best.json). It imports nothing of
the package, so every part can use it.
"""

import json
import os

_KINDS = {dict: "object", list: "array"}
_REQUIRED = object()


def read_json(file, what, expected=dict, if_missing=_REQUIRED):
    """The parsed JSON of `file`, which must hold a JSON object (or, with `expected=list`, an array).

    Args:
        file: the JSON file.
        what: what the file is, for messages ("config", "shard index", "job record", ...).
        expected: `dict` or `list`, the type of the value it must hold; None for any JSON value.
        if_missing: what to return when there is no such file (a job folder's
            records are optional); without it a missing file is an error.

    Returns:
        The parsed value.

    Raises:
        ValueError: the file cannot be read or parsed, or holds another type
            of value; the message names the file.
    """
    if if_missing is not _REQUIRED and not os.path.isfile(file):
        return if_missing
    try:
        with open(file, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"Cannot read the {what} {file}: {error}") from None
    if expected is not None and not isinstance(value, expected):
        raise ValueError(f"{file} must hold a JSON {_KINDS[expected]}. Received: {type(value).__name__}")
    return value
