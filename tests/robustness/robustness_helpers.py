"""Shared pieces of the robustness suite: data, the CLI runner, child processes, weight comparison."""

import contextlib
import io
import os
import subprocess
import sys

import keras
import numpy as np

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


def model_weights(path):
    import keras_bert.models  # noqa: F401  (registers the classes)

    model = keras.saving.load_model(str(path))
    return [keras.ops.convert_to_numpy(w) for w in model.weights]


def max_weight_delta(path_a, path_b):
    a, b = model_weights(path_a), model_weights(path_b)
    assert len(a) == len(b) and all(x.shape == y.shape for x, y in zip(a, b))
    return float(max(np.max(np.abs(x.astype("float64") - y.astype("float64"))) for x, y in zip(a, b)))


def assert_resumed_equal(delta, what):
    """Exact on every backend (on torch since checkpoints carry torch's generator: `keras_bert.jobs.random_state`)."""
    print(f"{keras.backend.backend()} {what}: max |Δ| resumed vs uninterrupted = {delta:.3g}")
    assert delta == 0.0, delta
