"""Writing files and folders so that a reader sees the old version or the new one, never half of either.

Checkpoints, job records and exports are all written the same way: into a
temporary name beside the target, flushed to disk (`fsync`), then renamed over
the target. A rename inside one folder is atomic on POSIX, so a kill or a power
loss at any moment leaves either the previous file or the finished new one.
Temporary names contain ".tmp-" (files) or ".partial-" (folders), which is how
the jobs' cleanup recognises leftovers of a killed process.

This module imports nothing of the package: the jobs (checkpoints, records)
and every export target use it.
"""

import contextlib
import json
import os
import shutil
import tempfile


def fsync_directory(directory):
    """Flushes `directory`'s entries: a rename lives in the folder, and without this a power loss could forget it.

    Not every platform can open a folder; there it does nothing.
    """
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(root):
    """Flushes every file below `root` to disk."""
    for folder, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                os.fsync(f.fileno())


def write_atomically(path, write, suffix=""):
    """Calls `write(tmp_path)`, then renames the finished file to `path`.

    Args:
        path: the file to (re)place.
        write: a function that writes the whole file at the path it is given
            (`model.save`, `model.save_weights`, ...).
        suffix: the ending the temporary name needs (Keras wants `.keras` /
            `.weights.h5`); the temporary name is `<path stem>.tmp-<pid><suffix>`.
    """
    folder, name = os.path.split(os.fspath(path))
    stem = name[: -len(suffix)] if suffix and name.endswith(suffix) else name
    tmp = os.path.join(folder, f"{stem}.tmp-{os.getpid()}{suffix}")
    try:
        write(tmp)
        _replace_file(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _replace_file(tmp, path):
    """Flushes the finished file `tmp`, renames it over `path` and flushes the folder's entry."""
    with open(tmp, "rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_directory(os.path.dirname(os.path.abspath(path)))


def write_text_atomically(text, path):
    """Writes `text` (UTF-8) to `path` through a temporary file and a rename."""

    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)

    write_atomically(path, write)


def write_json_atomically(data, path):
    """`json.dump(data)` to `path`, indented, through a temporary file and a rename."""
    write_text_atomically(json.dumps(data, indent=2, ensure_ascii=False), path)


def replace_atomically(destination, overwrite, write):
    """Runs `write(temporary path)`, which creates a file or a folder there, then renames it to `destination`.

    The temporary path lies beside `destination` (same file system), so the
    rename is atomic; on any error it is removed and `destination` is as
    before. A folder replaces an existing one through `staging_folder`'s swap.

    Args:
        destination: final path of a file or folder.
        overwrite: bool, whether an existing destination may be replaced (an
            empty folder counts as none).
        write: function(temporary path) that creates the file or folder there.

    Returns:
        The absolute destination.

    Raises:
        FileExistsError: `destination` exists and `overwrite` is False.
    """
    destination = os.path.abspath(os.fspath(destination))
    exists = os.path.exists(destination)
    if exists and os.path.isdir(destination) and not os.listdir(destination):
        exists = False  # an empty folder is as good as none
    if exists and not overwrite:
        raise FileExistsError(f"{destination} exists; pass overwrite=True (--overwrite) to replace it.")
    parent, base = os.path.split(destination)
    os.makedirs(parent, exist_ok=True)
    suffix = ".keras" if base.endswith(".keras") else ""  # keras insists on the extension
    fd, temporary = tempfile.mkstemp(prefix=f".{base}.tmp-", suffix=suffix, dir=parent)
    os.close(fd)
    os.remove(temporary)
    try:
        write(temporary)
        if os.path.isdir(temporary):
            fsync_tree(temporary)
            _move_into_place(temporary, destination, overwrite=True)
        else:
            _replace_file(temporary, destination)
    except BaseException:
        if os.path.isdir(temporary):
            shutil.rmtree(temporary, ignore_errors=True)
        elif os.path.exists(temporary):
            os.remove(temporary)
        raise
    return destination


@contextlib.contextmanager
def staging_folder(directory, overwrite):
    """Yields an empty folder beside `directory`; when the block succeeds it becomes `directory`.

    The block writes the whole export into the yielded folder. On success its
    files are flushed and it is renamed to `directory`; an existing
    `directory` (allowed only with `overwrite`) is first renamed aside and
    deleted after, so readers see the old folder or the new one. On an error
    the staging folder is removed and `directory` is untouched.

    Raises:
        ValueError: `directory` exists (or appeared while writing) and `overwrite` is False.
    """
    directory = os.fspath(directory)
    if os.path.exists(directory) and not overwrite:
        raise ValueError(f"{directory} already exists; pass overwrite=True to replace it.")
    parent, name = os.path.dirname(directory), os.path.basename(directory)
    os.makedirs(parent or ".", exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{name}.partial-", dir=parent)
    # mkdtemp makes a private (0700) folder; an export is an ordinary folder (0777 less the umask).
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)
    try:
        yield staging
        fsync_tree(staging)
        _move_into_place(staging, directory, overwrite)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _move_into_place(staging, directory, overwrite):
    """Renames the finished folder to `directory`; an old one is swapped out first, then deleted."""
    if not os.path.exists(directory):
        os.rename(staging, directory)
    elif not overwrite:
        raise ValueError(f"{directory} appeared while it was being written; not replacing it.")
    else:
        old = tempfile.mkdtemp(prefix=f".{os.path.basename(directory)}.old-", dir=os.path.dirname(directory))
        os.rmdir(old)
        os.rename(directory, old)
        os.rename(staging, directory)
        shutil.rmtree(old, ignore_errors=True)
    fsync_directory(os.path.dirname(directory))
