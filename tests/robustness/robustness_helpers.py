"""Shared pieces of the robustness suite: data, the CLI runner, child processes (comparing a resumed run's
weights: tests/resume_helpers.py)."""

import contextlib
import io
import os
import subprocess
import sys

from harness import REPO_ROOT, SHARED_DATA

TASK_FIXTURES = REPO_ROOT / "tests" / "fixtures" / "tasks"
FIXTURE_VOCAB = TASK_FIXTURES / "vocab.txt"
AUSTEN = SHARED_DATA / "austen"


def run_cli(argv):
    """`keras_bert.cli.main(argv)` in this process: (exit status, stdout, stderr).

    argparse errors exit through SystemExit; its code is the status.
    """
    from keras_bert.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main([str(a) for a in argv])
        except SystemExit as exit:
            status = exit.code
    return status, out.getvalue(), err.getvalue()


def run_child(script, *args, timeout=300):
    """Runs `script` in a fresh Python on this backend; returns the CompletedProcess."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return subprocess.run(
        [sys.executable, "-c", script, *[str(a) for a in args]],
        env=env, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT,
    )
