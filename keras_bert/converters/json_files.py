"""Reading the JSON files of checkpoint folders (configs, indexes, module lists) with errors that name the file."""

import json

_KINDS = {dict: "object", list: "array"}


def read_json(file, what, expected=dict):
    """The parsed JSON of `file`, which must hold a JSON object (or, with `expected=list`, an array).

    Args:
        file: the JSON file.
        what: what the file is, for messages ("config", "shard index", ...).
        expected: `dict` or `list`, the type of the value it must hold.

    Returns:
        The parsed value.

    Raises:
        ValueError: the file cannot be read or parsed, or holds another type
            of value; the message names the file.
    """
    try:
        with open(file, encoding="utf-8") as f:
            value = json.load(f)
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"Cannot read the {what} {file}: {error}") from None
    if not isinstance(value, expected):
        raise ValueError(f"{file} must hold a JSON {_KINDS[expected]}. Received: {type(value).__name__}")
    return value
