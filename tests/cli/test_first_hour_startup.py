"""Issue 49, a first hour without surprises: a wrong backend or a missing input file is one line, and at once.

Every subcommand checks the Keras backend and the files it reads before it loads TensorFlow (7-17 s) or a
backend. One child process (0.5 s: nothing heavy loads) runs the command line on each mistake and reports,
per call, its exit status, what it wrote to stderr and which heavy modules had been imported by then.
"""

import json
import os
import subprocess
import sys

import pytest

from harness import REPO_ROOT
from task_helpers import FIXTURES

# The child runs `main` as the installed `keras-bert` does (sys.argv[0] decides what `import keras_bert` loads).
_CHILD = r"""
import contextlib, io, json, os, sys

sys.argv = ["keras-bert"]
from keras_bert.cli.main import main

results = []
for backend, missing_packages, argv in json.loads(sys.stdin.read()):
    os.environ["KERAS_BACKEND"] = backend
    saved = {name: sys.modules.pop(name, None) for name in missing_packages}
    sys.modules.update(dict.fromkeys(missing_packages))  # None: `import jax` fails, find_spec("jax") is None
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code
        except BaseException as error:
            code = f"raised {type(error).__name__}: {error}"
    for name, module in saved.items():
        del sys.modules[name]
        if module is not None:
            sys.modules[name] = module
    loaded = sorted(name for name in ("tensorflow", "keras", "torch", "jax") if sys.modules.get(name) is not None)
    results.append({"code": code, "err": err.getvalue(), "loaded": loaded})
print(json.dumps(results))
"""


def _run_cli_calls(calls, tmp_path):
    """`[{"code", "err", "loaded"}]` of `main(argv)` for each `(KERAS_BACKEND, missing packages, argv)`."""
    calls = [(backend, missing, [str(word) for word in argv]) for backend, missing, argv in calls]
    done = subprocess.run([sys.executable, "-c", _CHILD], input=json.dumps(calls), capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def files(tmp_path):
    """Files that exist: a vocabulary, a training file, a corpus, a model file, a runs/ folder."""
    (tmp_path / "vocab.txt").write_bytes((FIXTURES / "vocab.txt").read_bytes())
    (tmp_path / "train.tsv").write_bytes((FIXTURES / "classify_train.tsv").read_bytes())
    (tmp_path / "corpus.txt").write_text("A sentence. Another one.\n", encoding="utf-8")
    (tmp_path / "model.keras").write_bytes(b"PK\x03\x04 only its existence matters here")
    (tmp_path / "runs").mkdir()
    return tmp_path


def _every_command(f):
    """One call of each subcommand whose arguments parse and whose files exist."""
    vocab, train, out = f / "vocab.txt", f / "train.tsv", f / "out"
    return {
        "vocab": ["vocab", "--corpus", f / "corpus.txt", "--out", f / "v.txt"],
        "pretrain": ["pretrain", "--corpus", f / "corpus.txt", "--vocab", vocab, "--out", out],
        "finetune": ["finetune", "--task", "classify", "--init", "tiny", "--vocab", vocab, "--train", train, "--out", out],
        "distill": ["distill", "--teacher", f / "model.keras", "--train", train, "--out", out],
        "convert": ["convert", f / "model.keras", f / "hf", "--to", "hf"],
        "export": ["export", f / "model.keras", "--out", out],
        "predict": ["predict", f / "model.keras", "a text"],
        "embed": ["embed", f / "model.keras", "a text"],
        "bias-check": ["bias-check", f / "model.keras", "he ran"],
    }


@pytest.mark.only_backend("torch", reason="the child process picks its own backend: command-line plumbing, checked once")
def test_a_backend_keras_cannot_load_is_one_line_listing_the_valid_ones(files):
    commands = _every_command(files)
    calls = [("pytorch", [], argv) for argv in commands.values()] + [("jax", ["jax"], commands["predict"])]
    results = _run_cli_calls(calls, files)
    for command, result in zip([*commands, "predict"], results):
        assert result["code"] == 2, (command, result)
        assert result["loaded"] == [], (command, result)  # answered before TensorFlow or a backend loads
        assert result["err"].count("\n") == 1 and result["err"].startswith(f"keras-bert {command}: error: "), result
    for result in results[:-1]:
        assert "KERAS_BACKEND=pytorch" in result["err"] and "tensorflow, jax, torch" in result["err"], result
        assert "did you mean torch?" in result["err"], result
    # A valid backend whose package is not installed names the extra that installs it.
    assert "KERAS_BACKEND=jax" in results[-1]["err"] and "pip install 'keras-bert[jax]'" in results[-1]["err"]


@pytest.mark.only_backend("torch", reason="the child process loads no backend: command-line plumbing, checked once")
def test_a_missing_input_file_is_reported_before_tensorflow_loads(files):
    f, vocab, train, out = files, files / "vocab.txt", files / "train.tsv", files / "out"
    finetune = ["finetune", "--task", "classify", "--init", "tiny", "--vocab", vocab, "--train", train, "--out", out]
    pretrain = ["pretrain", "--corpus", f / "corpus.txt", "--vocab", vocab, "--out", out]
    cases = [
        (["predict", f / "nope.keras", "a text"], 2, f"{f / 'nope.keras'}: no such file or folder"),
        (["predict", f / "model.keras", "--file", f / "nope.txt"], 2, f"--file: no such file: {f / 'nope.txt'}"),
        (["predict", f / "model.keras", "--tokenizer", f / "nope.txt", "a"], 2,
         f"--tokenizer: {f / 'nope.txt'}: no such file or folder"),
        (["embed", f / "nope", "a text"], 2, f"{f / 'nope'}: no such file or folder"),
        (["export", f / "nope.keras", "--out", out], 2, f"{f / 'nope.keras'}: no such file or folder"),
        ([*finetune[:-4], "--train", f / "nope.tsv", "--out", out], 2, f"--train: no such file: {f / 'nope.tsv'}"),
        ([*finetune, "--eval", f / "nope.tsv"], 2, f"--eval: no such file: {f / 'nope.tsv'}"),
        ([*finetune, "--init", f / "runs" / "nope"], 2, f"--init: {f / 'runs' / 'nope'}: no such file or folder"),
        (["distill", "--teacher", f / "runs" / "nope", "--train", train, "--out", out], 2,
         f"--teacher: {f / 'runs' / 'nope'}: no such file or folder"),
        ([*pretrain, "--corpus", f"{f / 'nope'}/"], 2, f"--corpus: no file matches '{f / 'nope'}/'"),
        ([*pretrain, "--vocab", f / "nope.txt"], 2, f"--vocab: no such file: {f / 'nope.txt'}"),
        (["vocab", "--corpus", f / "nope*.txt", "--out", f / "v.txt"], 2, f"--corpus: no file matches '{f / 'nope*.txt'}'"),
        (["convert", f"{f / 'nope'}/", f / "x.keras"], 1, f"No checkpoint at {f / 'nope'}/: no such file or folder"),
        (["bias-check", f / "model.keras", "--pairs", f / "nope.tsv", "he ran"], 2, f"--pairs: no such file: {f / 'nope.tsv'}"),
        ([*finetune, "--counterfactual-augmentation", f / "nope.tsv"], 2,
         f"--counterfactual-augmentation: no such file: {f / 'nope.tsv'}"),
    ]
    results = _run_cli_calls([("torch", [], argv) for argv, _, _ in cases], files)
    for (argv, code, message), result in zip(cases, results):
        assert result["code"] == code, (argv, result)
        assert result["err"] == f"keras-bert {argv[0]}: error: {message}\n", (argv, result)
        assert result["loaded"] == [], (argv, result)
