"""Keeps TensorFlow's start-up chatter out of the `keras-bert` command's output.

Importing TensorFlow writes 6-9 lines to stderr before anything can configure
it: absl's "All log messages before absl::InitializeLog() ..." banner, oneDNN
and CPU-feature notices, "Could not find cuda drivers", and on machines with
the CUDA build but no GPU an "E0000 ... failed call to cuInit" line. They come
from C++ straight to file descriptor 2, before `TF_CPP_MIN_LOG_LEVEL` is read,
so neither Python's `logging` nor that variable removes them.

For the command line and `python -m keras_bert.examples.*` only (library
users keep whatever their process does), TensorFlow is imported here with
descriptor 2 pointed at a temporary file;
afterwards the lines that match known start-up notices are dropped and every
other line is written to the real stderr, so a genuine error is never hidden.
`TF_CPP_MIN_LOG_LEVEL=3` (unless the user set it) then quiets TensorFlow's
later C++ logs: the "oneDNN supports DT_INT64 only ..." line at the first
training step, and the FAILED_PRECONDITION / "Local rendezvous is aborting"
lines when Ctrl-C stops an input pipeline. Their ERROR level hides nothing a
user needs: a failing TensorFlow op raises a Python exception, which the
command reports.

`KERAS_BERT_SHOW_TF_LOGS=1` turns all of this off. A Python program gets
the same filtering by setting `KERAS_BERT_QUIET_TF=1` in its environment (or
in `os.environ` before its first import of keras_bert, keras or tensorflow).

This module must not import keras or tensorflow at module level: it runs
before them.
"""

import contextlib
import os
import re
import sys
import tempfile

# Start-up notices that say nothing to a user of this command. Anything else
# written while TensorFlow loads is passed through.
_NOISE = re.compile(
    r"|".join(
        [
            r"^WARNING: All log messages before absl::InitializeLog\(\) is called",
            r"^[IW]\d{4} [\d:. ]+\d+ \S+:\d+\]",  # absl INFO/WARNING lines: I1123 12:00:00.000 123 file.cc:45]
            r"^E\d{4} [\d:. ]+\d+ \S+:\d+\] failed call to cuInit",
            r"^To enable the following instructions: .* rebuild TensorFlow",
        ]
    )
)


def is_startup_noise(line):
    """True for a line TensorFlow prints while loading that a command-line user need not see."""
    return bool(_NOISE.match(line))


def running_as_command_line(argv=None, orig_argv=None):
    """True when this process is `keras-bert ...` or `python -m keras_bert[.cli] ...`."""
    argv = sys.argv if argv is None else argv
    orig_argv = getattr(sys, "orig_argv", []) if orig_argv is None else orig_argv
    if argv and os.path.basename(argv[0]) in ("keras-bert", "keras-bert.exe"):
        return True
    # During `python -m keras_bert`, sys.argv[0] is "-m" until the package has been imported;
    # sys.orig_argv (Python 3.10+) keeps the interpreter's own arguments.
    for flag, module in zip(orig_argv, orig_argv[1:]):
        if flag == "-m" and module in ("keras_bert", "keras_bert.cli"):
            return True
    return False


@contextlib.contextmanager
def filtered_stderr(keep=lambda line: not is_startup_noise(line)):
    """Collects what is written to file descriptor 2 inside the block; replays the lines `keep` accepts."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            text = captured.read().decode("utf-8", errors="replace")
            kept = [line for line in text.splitlines(keepends=True) if keep(line.rstrip("\n"))]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()


def running_an_example(orig_argv=None):
    """True when this process is `python -m keras_bert.examples.<name>` (`make demo`): a command as well,
    whose README promises the same quiet start, but a program that imports the model classes as a library does."""
    orig_argv = getattr(sys, "orig_argv", []) if orig_argv is None else orig_argv
    return any(flag == "-m" and module.startswith("keras_bert.examples.")
               for flag, module in zip(orig_argv, orig_argv[1:]))


def quiet_tensorflow_startup():
    """For the command line and the examples (or with KERAS_BERT_QUIET_TF=1): loads TensorFlow without its
    start-up notices."""
    if os.environ.get("KERAS_BERT_SHOW_TF_LOGS"):
        return
    if not (running_as_command_line() or running_an_example() or os.environ.get("KERAS_BERT_QUIET_TF") == "1"):
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    with filtered_stderr():
        try:
            # Every subcommand but `--help` needs TensorFlow (the tokenizer runs on TF ops,
            # whatever the Keras backend); importing it here is what lets us filter its notices.
            import tensorflow as tf  # noqa: F401  (import inside a function: only for the CLI)

            tf.config.list_physical_devices()  # device discovery prints the CUDA notices
        except ImportError:
            pass  # `pip install keras-bert` without the tensorflow extra: commands say what is missing
