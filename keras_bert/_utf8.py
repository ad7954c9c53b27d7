"""Reading UTF-8 text files so that a bad byte is reported as `file:line`, not as a bare UnicodeDecodeError.

Plain Python only: the converters (no TensorFlow) and the task data readers share it.
"""

import os
import re

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


def read_utf8(path, strip_bom=True):
    """The text of a UTF-8 file.

    Args:
        path: the file.
        strip_bom: drop a leading byte-order mark.

    Returns:
        A str with its line breaks as they are in the file.

    Raises:
        ValueError: the file is not valid UTF-8, naming `path:line` and the byte.
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8-sig" if strip_bom else "utf-8")
    except UnicodeDecodeError as error:
        # With "utf-8-sig", `error.start` counts from after a byte-order mark.
        offset = error.start + (3 if strip_bom and data.startswith(b"\xef\xbb\xbf") else 0)
        line = len(_LINE_BREAK.findall(data, 0, offset)) + 1
        raise ValueError(
            f"{path}:{line}: not UTF-8 text (byte 0x{data[offset]:02x} at byte offset {offset}: {error.reason}); "
            "save the file as UTF-8"
        ) from None
