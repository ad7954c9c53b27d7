"""Starting distribution_worker.py's scenarios as processes and reading what they print."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).with_name("distribution_worker.py")
ONE_PROCESS = "starts its own process with forced CPU devices; runs once, in this backend's pass"
# A scenario process runs the pretraining, fine-tuning (and on TensorFlow shard) checks of its layout in turn.
TIMEOUT_SECONDS = 600
SHARD_BOOKS = ("emma", "persuasion")  # sorted: in streaming mode worker i reads SHARD_BOOKS[i]


def run_worker(*args, env=None):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})}
    return subprocess.Popen(
        [sys.executable, str(WORKER), *map(str, args)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def result_of(process, timeout=TIMEOUT_SECONDS):
    out, err = process.communicate(timeout=timeout)
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert process.returncode == 0 and lines, err[-3000:]
    return json.loads(lines[-1][len("RESULT ") :])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
