"""Paths given on the command line: folders of text files expand to the files inside them."""

import os

from keras_bert.cli.errors import UserError


def expand_paths(paths):
    """Folders become the files inside them (hidden ones skipped, sorted); files and globs pass through.

    Raises:
        UserError: a folder holds no files.
    """
    expanded = []
    for path in paths:
        if os.path.isdir(path):
            found = sorted(
                os.path.join(root, name) for root, _, names in os.walk(path) for name in names if not name.startswith(".")
            )
            if not found:
                raise UserError(f"{path}: the folder holds no files")
            expanded.extend(found)
        else:
            expanded.append(path)
    return expanded
