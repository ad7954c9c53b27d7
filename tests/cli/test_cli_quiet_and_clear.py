"""Issue 20, second part: the command line prints what a user needs and nothing else.

TensorFlow's start-up notices are filtered out of the `keras-bert` command (never out of a
library user's process, never a line that is not a known notice); a pretraining run folder is a
model wherever one is expected, also by `convert`; `export` of a pretraining model says which flag
exports it.
"""

import json
import os
import subprocess
import sys

import pytest

import keras_bert
from harness import REPO_ROOT, tiny_backbone
from keras_bert import _command_line_startup as startup
from keras_bert.cli.main import main
from keras_bert.models import BertPretrainer
from task_helpers import FIXTURES

PLUMBING = "command-line plumbing is the same on every backend"
# Lines TensorFlow 2.21 printed on this machine when `keras-bert --version` imported it.
TENSORFLOW_STARTUP_LINES = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1795455492.727999   31942 port.cc:153] oneDNN custom operations are on. You may see slightly "
    "different numerical results due to floating-point round-off errors from different computation orders.",
    "I0000 00:00:1795455492.728451   31942 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will "
    "not be used.",
    "I0000 00:00:1795455493.019989   31942 cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use "
    "available CPU instructions in performance-critical operations.",
    "To enable the following instructions: AVX2 AVX512F AVX512_VNNI AVX512_BF16 AVX512_FP16 AVX_VNNI FMA, in other "
    "operations, rebuild TensorFlow with the appropriate compiler flags.",
    "E0000 00:00:1714668459.875897  381002 cuda_executor.cc:1228] failed call to cuInit: UNKNOWN ERROR (303)",
]


def _command(*args, **env_changes):
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "KERAS_BERT_SHOW_TF_LOGS")}
    env.update(env_changes)
    script = os.path.join(os.path.dirname(sys.executable), "keras-bert")
    command = [script, *args] if os.path.isfile(script) else [sys.executable, "-m", "keras_bert", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=REPO_ROOT, env=env, timeout=300)


@pytest.mark.only_backend("tensorflow", reason="TensorFlow prints its notices when it loads: under KERAS_BACKEND=tensorflow `import keras_bert` loads it")
def test_the_command_prints_no_tensorflow_startup_notices(tmp_path):
    # A command whose arguments parse and whose files exist loads TensorFlow before it runs (and here fails: the
    # model file is no .keras archive; a missing file would be reported before TensorFlow loads).
    model = tmp_path / "broken.keras"
    model.write_bytes(b"not a zip archive")
    quiet = _command("predict", str(model), "a text")
    assert quiet.returncode == 2
    assert quiet.stderr == f"keras-bert predict: error: {model}: not a .keras file (not a zip archive: truncated or corrupt?)\n"
    # The same command with the filter off shows them: the assertion above is not vacuous.
    loud = _command("predict", str(model), "a text", KERAS_BERT_SHOW_TF_LOGS="1")
    assert any(startup.is_startup_noise(line) for line in loud.stderr.splitlines()), loud.stderr
    assert _command("--version").stderr == ""


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_python_dash_m_is_quiet_too():
    """`python -m keras_bert` runs the command line (what it prints), and quietly (nothing on stderr)."""
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    done = subprocess.run([sys.executable, "-m", "keras_bert", "--version"], capture_output=True, text=True,
                          cwd=REPO_ROOT, env=env, timeout=300)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.strip() == f"keras-bert {keras_bert.__version__}"


@pytest.mark.only_backend("tensorflow", reason="TensorFlow prints its notices when it loads: under KERAS_BACKEND=tensorflow `import keras_bert` loads it")
def test_a_python_program_opts_in_with_an_environment_variable():
    script = "import os; os.environ['KERAS_BERT_QUIET_TF'] = '1'; import keras_bert"
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    quiet = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert quiet.returncode == 0 and quiet.stderr == ""
    # A library user who did not ask keeps TensorFlow's own behaviour.
    plain = subprocess.run([sys.executable, "-c", "import keras_bert"], capture_output=True, text=True, env=env,
                           timeout=300)
    assert any(startup.is_startup_noise(line) for line in plain.stderr.splitlines()), plain.stderr


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_startup_notices_are_recognised_and_nothing_else():
    assert all(startup.is_startup_noise(line) for line in TENSORFLOW_STARTUP_LINES)
    for line in [
        "E0000 00:00:1795455675.079848    2573 op_kernel.cc:1830] OP_REQUIRES failed at save_restore: NOT_FOUND",
        "Traceback (most recent call last):",
        "keras-bert pretrain: error: --steps must be positive",
        "ImportError: libcudart.so.12: cannot open shared object file",
    ]:
        assert not startup.is_startup_noise(line), line


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_the_filter_passes_every_other_line_through(capfd):
    with startup.filtered_stderr():
        os.write(2, ("\n".join(TENSORFLOW_STARTUP_LINES[:3]) + "\n").encode())
        os.write(2, b"a real problem\n")
        os.write(2, TENSORFLOW_STARTUP_LINES[-1].encode())  # the last line may lack its newline
    assert capfd.readouterr().err == "a real problem\n"


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_only_the_command_line_is_filtered():
    assert startup.running_as_command_line(["/venv/bin/keras-bert", "--version"], [])
    assert startup.running_as_command_line(["-m"], ["python", "-m", "keras_bert", "predict"])
    assert startup.running_as_command_line(["-m"], ["python3", "-X", "dev", "-m", "keras_bert.cli"])
    assert not startup.running_as_command_line(["train.py"], ["python", "train.py"])
    assert not startup.running_as_command_line(["-c"], ["python", "-c", "import keras_bert"])
    assert not startup.running_as_command_line(["-m"], ["python", "-m", "pytest", "keras_bert"])


def _pretraining_run_folder(folder, lowercase):
    folder.mkdir(parents=True, exist_ok=True)
    BertPretrainer(tiny_backbone()).save(folder / "model.keras")
    (folder / "vocab.txt").write_bytes((FIXTURES / "vocab.txt").read_bytes())
    (folder / "config.json").write_text(json.dumps({"job": {"lowercase": lowercase}}))
    return folder


@pytest.mark.only_backend("torch", reason=PLUMBING)
@pytest.mark.parametrize("name", ["folder", "model.keras"])
def test_convert_takes_a_pretraining_run_folder_with_its_vocabulary_and_casing(tmp_path, capsys, name):
    run = _pretraining_run_folder(tmp_path / "runs" / "cased", lowercase=False)
    source = run if name == "folder" else run / "model.keras"
    destination = tmp_path / "hf"
    assert main(["convert", str(source), str(destination), "--to", "hf"]) == 0, capsys.readouterr().err
    assert "with vocab.txt" in capsys.readouterr().out
    assert (destination / "vocab.txt").read_bytes() == (FIXTURES / "vocab.txt").read_bytes()
    assert json.loads((destination / "tokenizer_config.json").read_text())["do_lower_case"] is False


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_convert_points_at_a_checkpoint_one_folder_down(tmp_path, capsys):
    package = tmp_path / "some_checkpoint_package"
    _pretraining_run_folder(package / "model", lowercase=True)
    (package / "__init__.py").write_text("")
    assert main(["convert", str(package), str(tmp_path / "out.keras")]) == 1
    assert f"Did you mean {package / 'model'}?" in capsys.readouterr().err


@pytest.mark.only_backend("tensorflow", reason="the SavedModel is written by TensorFlow on every backend")
def test_export_of_a_pretraining_run_names_the_flag_that_exports_it(tmp_path, capsys):
    run = _pretraining_run_folder(tmp_path / "runs" / "p", lowercase=True)
    assert main(["export", str(run), "--out", str(tmp_path / "sm")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "add --backbone" in err and f"keras-bert finetune --init {run}" in err
    assert not (tmp_path / "sm").exists()
    assert main(["export", str(run), "--backbone", "--out", str(tmp_path / "sm"), "--sequence-length", "16"]) == 0
    assert (tmp_path / "sm" / "saved_model.pb").is_file()
