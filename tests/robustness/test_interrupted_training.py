"""Interrupted training loses nothing.

`keras-bert pretrain` and `keras-bert finetune` run in a child process that is
killed with SIGKILL (no cleanup, no `finally`) at a seeded random step, or in
the middle of writing a checkpoint; `--resume` in this process then finishes
the run, and its final weights are compared with an uninterrupted run's.
The kill is injected by the child script (a patched hook that calls
`os.kill(os.getpid(), SIGKILL)`), so the step is exact and reproducible.
"""

import json
import random

import keras
import pytest

from harness import tiny_backbone
from keras_bert.jobs.checkpointing import STATE_FILE, load_checkpoint, save_checkpoint
from resume_helpers import assert_resumed_equal, max_weight_delta
from robustness_helpers import AUSTEN, FIXTURE_VOCAB, run_child, run_cli
from task_helpers import classify_rows, write_rows

KILL_SEED = 10  # picks the steps the children die at

CHILD = r"""
import os, signal, sys

import keras_bert.jobs.checkpointing as checkpointing

mode, at, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]


def die():
    os.kill(os.getpid(), signal.SIGKILL)


if mode == "step":
    # Dies at the end of training step `at` (counted from this process's start).
    seen = [0]

    def on_train_batch_end(self, batch, logs=None):
        seen[0] += 1
        if seen[0] == at:
            die()

    checkpointing.ResumableCheckpoint.on_train_batch_end = on_train_batch_end
elif mode == "commit":
    # Dies after checkpoint number `at` has its .keras file in place, just
    # before checkpoint.json would name it: the most delicate moment of a write.
    writes, original = [0], checkpointing.write_json_atomically

    def write_json_atomically(data, path):
        if os.path.basename(path) == checkpointing.STATE_FILE:
            writes[0] += 1
            if writes[0] == at:
                die()
        original(data, path)

    checkpointing.write_json_atomically = write_json_atomically

from keras_bert.cli import main

sys.exit(main(argv))
"""


# ----------------------------------------------------------------------------- pretrain
PRETRAIN_STEPS, PRETRAIN_EVERY = 6, 2


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    lines = (AUSTEN / "persuasion.txt").read_text(encoding="utf-8").splitlines()[200:500]
    (folder / "train.txt").write_text("\n".join(lines), encoding="utf-8")
    return folder


def pretrain_argv(corpus, out):
    return [
        "pretrain", "--corpus", corpus / "train.txt", "--vocab", FIXTURE_VOCAB, "--size", "tiny",
        "--sequence-length", "32", "--batch-size", "8", "--steps", PRETRAIN_STEPS, "--checkpoint-every",
        PRETRAIN_EVERY, "--masking", "whole-word", "--learning-rate", "1e-3", "--seed", "3", "--no-tensorboard",
        "--out", out,
    ]


@pytest.fixture(scope="module")
def straight_pretrain(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("straight_pretrain")
    status, _, err = run_cli(pretrain_argv(corpus, out))
    assert status == 0, err
    return out


def test_pretrain_killed_at_a_random_step_resumes_to_the_same_weights(corpus, straight_pretrain, tmp_path):
    kill_step = random.Random(KILL_SEED).randint(PRETRAIN_EVERY + 1, PRETRAIN_STEPS - 1)
    child = run_child(CHILD, "step", kill_step, *pretrain_argv(corpus, tmp_path))
    assert child.returncode == -9, child.stderr[-2000:]
    state = json.loads((tmp_path / "checkpoints" / STATE_FILE).read_text())
    # Killed at the end of step k, before that epoch's checkpoint could be written.
    assert state["step"] == (kill_step - 1) // PRETRAIN_EVERY * PRETRAIN_EVERY
    assert not (tmp_path / "model.keras").exists()

    status, out, err = run_cli([*pretrain_argv(corpus, tmp_path), "--resume"])
    assert status == 0, err
    assert f"(resumed from step {state['step']})" in out
    delta = max_weight_delta(straight_pretrain / "model.keras", tmp_path / "model.keras")
    assert_resumed_equal(delta, f"pretrain killed at step {kill_step}")


# A pretraining objective with another model (MLM only, `BertPretrainer(sentence_head=False)`)
# and the span masker's own seeded rounds: RoBERTa's full-sentence rows with SpanBERT's masking.
MLM_ONLY = ["--sentence-task", "none", "--masking", "span"]


@pytest.fixture(scope="module")
def straight_mlm_only_pretrain(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("straight_mlm_only_pretrain")
    status, _, err = run_cli([*pretrain_argv(corpus, out), *MLM_ONLY])
    assert status == 0, err
    return out


@pytest.mark.only_backend(
    "tensorflow",
    reason="resuming is backend code that test_pretrain_killed_at_a_random_step checks on every backend; this adds "
    "the MLM-only model and the span masker's seeded rounds (tf.data), and costs three runs",
)
def test_mlm_only_span_pretrain_killed_resumes_to_the_same_weights(corpus, straight_mlm_only_pretrain, tmp_path):
    kill_step = PRETRAIN_EVERY + 1  # after the first checkpoint, before the second
    child = run_child(CHILD, "step", kill_step, *pretrain_argv(corpus, tmp_path), *MLM_ONLY)
    assert child.returncode == -9, child.stderr[-2000:]
    assert json.loads((tmp_path / "checkpoints" / STATE_FILE).read_text())["step"] == PRETRAIN_EVERY
    status, out, err = run_cli([*pretrain_argv(corpus, tmp_path), *MLM_ONLY, "--resume"])
    assert status == 0, err
    assert f"(resumed from step {PRETRAIN_EVERY})" in out
    assert keras.saving.load_model(str(tmp_path / "model.keras")).next_sentence_head is None
    delta = max_weight_delta(straight_mlm_only_pretrain / "model.keras", tmp_path / "model.keras")
    assert_resumed_equal(delta, "MLM-only span pretrain killed at step 3")


# ----------------------------------------------------------------------------- finetune
FINETUNE_EPOCHS, FINETUNE_BATCH, FINETUNE_EXAMPLES = 3, 16, 64  # 4 steps per epoch, 12 in all


@pytest.fixture(scope="module")
def finetune_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("finetune_data")
    header, rows = classify_rows()
    write_rows(folder / "train.tsv", header, rows[:FINETUNE_EXAMPLES])
    return folder


def finetune_argv(files, out):
    return [
        "finetune", "--task", "classify", "--init", "tiny", "--vocab", FIXTURE_VOCAB, "--train", files / "train.tsv",
        "--sequence-length", "16", "--batch-size", FINETUNE_BATCH, "--epochs", FINETUNE_EPOCHS,
        "--learning-rate", "1e-3", "--seed", "5", "--quiet", "--out", out,
    ]


@pytest.fixture(scope="module")
def straight_finetune(finetune_files, tmp_path_factory):
    out = tmp_path_factory.mktemp("straight_finetune")
    status, _, err = run_cli(finetune_argv(finetune_files, out))
    assert status == 0, err
    return out


def test_finetune_killed_while_committing_a_random_checkpoint_resumes_to_the_same_weights(
    finetune_files, straight_finetune, tmp_path
):
    """The kill comes after checkpoint k's model file is fully written, just before checkpoint.json names it."""
    steps_per_epoch = FINETUNE_EXAMPLES // FINETUNE_BATCH
    k = random.Random(KILL_SEED + 1).randint(2, FINETUNE_EPOCHS)
    child = run_child(CHILD, "commit", k, *finetune_argv(finetune_files, tmp_path))
    assert child.returncode == -9, child.stderr[-2000:]
    folder = tmp_path / "checkpoints"
    assert (folder / f"checkpoint-{k * steps_per_epoch:08d}.keras").exists()  # written, never committed
    model, state = load_checkpoint(folder)
    assert state["step"] == (k - 1) * steps_per_epoch
    assert state["model_file"] == f"checkpoint-{(k - 1) * steps_per_epoch:08d}.keras"
    assert int(keras.ops.convert_to_numpy(model.optimizer.iterations)) == state["step"]

    status, _, err = run_cli([*finetune_argv(finetune_files, tmp_path), "--resume"])
    assert status == 0, err
    assert json.loads((tmp_path / "finetune.json").read_text())["resumed_from_step"] == state["step"]
    delta = max_weight_delta(straight_finetune / "model.keras", tmp_path / "model.keras")
    assert_resumed_equal(delta, f"finetune killed while committing checkpoint {k} (step {k * steps_per_epoch})")
    final = f"checkpoint-{FINETUNE_EPOCHS * steps_per_epoch:08d}.keras"
    assert sorted(p.name for p in folder.iterdir()) == [final, "checkpoint.json", "checkpoint.keras"]


def test_a_half_written_checkpoint_file_is_ignored_and_cleaned_up(tmp_path):
    """What SIGKILL in the middle of `model.save` leaves: a truncated temporary file beside the last checkpoint."""
    backbone = tiny_backbone()
    save_checkpoint(backbone, tmp_path, 2)
    complete = (tmp_path / "checkpoint-00000002.keras").read_bytes()
    half = tmp_path / "checkpoint-00000004.keras.tmp-4242.keras"
    half.write_bytes(complete[: len(complete) // 2])
    model, state = load_checkpoint(tmp_path)
    assert state["step"] == 2 and model.count_params() == backbone.count_params()
    save_checkpoint(backbone, tmp_path, 4)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint-00000004.keras", "checkpoint.json", "checkpoint.keras"]


def test_resume_refuses_a_checkpoint_of_a_different_job(finetune_files, straight_finetune, tmp_path):
    status, _, err = run_cli([*finetune_argv(finetune_files, straight_finetune), "--resume", "--learning-rate", "2e-3"])
    assert status == 2
    assert "different job" in err and "learning_rate" in err and len(err.strip().splitlines()) == 1


def test_a_checkpoint_record_naming_a_missing_file_is_refused(tmp_path):
    save_checkpoint(tiny_backbone(), tmp_path, 3)
    (tmp_path / "checkpoint-00000003.keras").unlink()
    with pytest.raises(FileNotFoundError, match="checkpoint-00000003.keras"):
        load_checkpoint(tmp_path)
