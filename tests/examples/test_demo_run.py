"""`make demo` end to end on a few sentences: quiet, it names each set, and every path it prints is still there.

A new user's demo printed TensorFlow's CUDA/absl start-up lines, two "majority" baselines for the same set, and
ended by naming a model.keras in a temporary folder it had already deleted (issue 49). This runs the same module
`make demo` runs (`python -m keras_bert.examples.demo`), on the real all-MiniLM-L6-v2 and the first sentences of
each set, with the data cache filled from the shared data folder (no download).
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

from harness import SHARED_DATA
from keras_bert.examples.sentiment_data import GROUND_TRUTH


def data_cache(folder):
    """The demo's download cache, filled from ../shared/data: the movie reviews it reads, the other sets empty."""
    target = folder / "vader_sentiment"
    target.mkdir(parents=True)
    for name, filename in GROUND_TRUTH.items():
        if name == "movie_reviews":
            shutil.copy(SHARED_DATA / "sentiment" / filename, target / filename)
        else:
            (target / filename).write_text("")
    return folder


@pytest.mark.only_backend("torch", reason="the demo runs in a child process on TensorFlow, whatever the pass; once")
def test_the_demo_is_quiet_reports_test_and_validation_and_every_printed_path_exists(tmp_path):
    run_dir, out = tmp_path / "runs" / "demo", tmp_path / "saved_models" / "sentiment"
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_BERT_QUIET_TF")}
    env.update(KERAS_BACKEND="tensorflow", HF_HUB_OFFLINE="1")
    result = subprocess.run(
        [sys.executable, "-m", "keras_bert.examples.demo", "--limit", "40", "--run-dir", str(run_dir),
         "--out", str(out), "--cache-dir", str(data_cache(tmp_path / "cache"))],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    # Quiet: none of TensorFlow's start-up notices (they come from C++ before TF_CPP_MIN_LOG_LEVEL is read).
    for noise in ("absl::InitializeLog", "cuda drivers", "cudart_stub", "oneDNN custom operations"):
        assert noise not in result.stderr + result.stdout, noise
    # Each set named for what it did: validation chose, the test set is the reported figure.
    assert re.search(r"^test accuracy \d\.\d{4}, F1 \d\.\d{4} on the 40 test sentences, which chose nothing",
                     result.stdout, re.M), result.stdout
    assert "held-out" not in result.stdout
    # One baseline per set: the job's test line and the demo's closing line give the same one.
    job_test = re.search(r"^test \(--test, chose nothing\): accuracy [\d.]+ \(majority-class baseline ([\d.]+)",
                         result.stdout, re.M)
    closing = re.search(r"which chose nothing \(majority-class baseline ([\d.]+)\)", result.stdout)
    assert job_test and closing and job_test.group(1) == closing.group(1), result.stdout
    # Every path it printed is still there once it has finished.
    printed = set(re.findall(rf"{re.escape(str(tmp_path))}[^\s:,;)'\"]*", result.stdout))
    assert any(path.endswith("model.keras") for path in printed), result.stdout
    assert str(out) in printed
    missing = sorted(path for path in printed if not os.path.exists(path))
    assert not missing, f"printed but gone: {missing}"
