"""The command line: user errors exit non-zero with a one-line reason (no traceback unless --debug), success exits 0.

Every case calls `keras_bert.cli.main` in this process (no subprocess start-up
per case). The exit status is 2 for user errors, except `convert`, which
reports a refused conversion with 1 (its existing contract).
The command-line plumbing does not depend on the backend, so this file runs on one.
"""

import pytest

from harness import tiny_backbone
from keras_bert.cli import main
from robustness_helpers import FIXTURE_VOCAB, TASK_FIXTURES, run_cli

pytestmark = pytest.mark.only_backend(
    "jax", reason="argument and file checks run before any backend work; checked once to keep the suite fast"
)

TRAIN = TASK_FIXTURES / "classify_train.tsv"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    (folder / "empty").mkdir()
    (folder / "corpus.txt").write_text("One sentence here. Another one there.\n\nA new paragraph.\n", encoding="utf-8")
    (folder / "duplicated_vocab.txt").write_text(FIXTURE_VOCAB.read_text(encoding="utf-8") + "the\n", encoding="utf-8")
    (folder / "ragged.tsv").write_text("sentence\tlabel\na\t1\nb\t0\tstray\n", encoding="utf-8")
    (folder / "broken.keras").write_bytes(b"PK\x03\x04 not really a zip archive")
    return folder


def cases(f):
    vocab, train = str(FIXTURE_VOCAB), str(TRAIN)
    pretrain = ["pretrain", "--corpus", f / "corpus.txt", "--vocab", vocab, "--out", f / "p", "--steps", "2"]
    finetune = ["finetune", "--task", "classify", "--init", "tiny", "--vocab", vocab, "--train", train, "--out", f / "f"]
    return {
        "no_command": ([], 2, "required: command"),
        "unknown_command": (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
        "not_an_int": ([*pretrain, "--steps", "many"], 2, "invalid int value: 'many'"),
        "pretrain_vocab_missing": ([*pretrain, "--vocab", f / "nope.txt"], 2, "--vocab: no such file"),
        "pretrain_corpus_missing": ([*pretrain, "--corpus", f / "nope.txt"], 2, "no file matches"),
        "pretrain_corpus_empty_folder": ([*pretrain, "--corpus", f / "empty"], 2, "the folder holds no files"),
        "pretrain_zero_steps": ([*pretrain, "--steps", "0"], 2, "`steps` must be a positive int"),
        "pretrain_budget_and_steps": ([*pretrain, "--budget-minutes", "5"], 2, "give it or --steps, not both"),
        "pretrain_zero_budget": ([*pretrain[:-2], "--budget-minutes", "0"], 2, "`budget_minutes` must be a positive"),
        "pretrain_bad_checkpoint_interval": ([*pretrain, "--steps", "6", "--checkpoint-every", "4"], 2,
                                             "must divide `steps`"),
        "pretrain_unknown_size": ([*pretrain, "--size", "gigantic"], 2, "Unknown BERT size 'gigantic'"),
        "pretrain_duplicated_vocab": ([*pretrain, "--vocab", f / "duplicated_vocab.txt"], 2, "duplicated token"),
        "finetune_train_missing": ([*finetune, "--train", f / "nope.tsv"], 2, "--train: no such file"),
        "finetune_init_missing": ([*finetune, "--init", f / "nope"], 2, "no such file or folder"),
        "finetune_size_without_vocab": (["finetune", "--task", "classify", "--init", "tiny", "--train", train,
                                         "--out", f / "f"], 2, "needs --vocab"),
        "finetune_ragged_file": ([*finetune, "--train", f / "ragged.tsv"], 2, "ragged.tsv:3: 3 fields"),
        "finetune_broken_keras": ([*finetune, "--init", f / "broken.keras"], 2, "not a zip archive"),
        "finetune_named_column_without_header": ([*finetune, "--no-header"], 2, "columns are 0-based numbers"),
        "finetune_missing_column": ([*finetune, "--text-column", "review"], 2, "classify_train.tsv:2: no column"),
        "finetune_too_long": ([*finetune, "--sequence-length", "1000"], 2, "longer than the model's"),
        "finetune_zero_epochs": ([*finetune, "--epochs", "0"], 2, "`epochs` must be a positive int"),
        "finetune_unknown_task": ([*finetune, "--task", "summarize"], 2, "invalid choice: 'summarize'"),
        "convert_source_missing": (["convert", f / "nope", f / "x.keras"], 1, "No checkpoint at"),
        "convert_not_a_checkpoint": (["convert", f / "empty", f / "x.keras"], 1, "is not a checkpoint"),
        "convert_broken_keras": (["convert", f / "broken.keras", f / "hf"], 1, "not a zip archive"),
        "vocab_too_small": (["vocab", "--corpus", f / "corpus.txt", "--size", "3", "--out", f / "v.txt"], 2,
                            "larger than the number of reserved tokens"),
    }


CASE_NAMES = sorted(cases(TASK_FIXTURES))


@pytest.mark.parametrize("case", CASE_NAMES)
def test_user_errors_exit_non_zero_with_one_line(files, case):
    argv, expected_status, reason = cases(files)[case]
    status, _, err = run_cli(argv)
    assert status == expected_status, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "error:" in lines[0], err
    assert reason in lines[0]
    assert "Traceback" not in err


def test_debug_shows_the_traceback(files):
    with pytest.raises(FileNotFoundError, match="--train: no such file"):
        main(["--debug", "finetune", "--task", "classify", "--init", "tiny", "--vocab", str(FIXTURE_VOCAB),
              "--train", str(files / "nope.tsv"), "--out", str(files / "f")])


def test_success_exits_zero(files, tmp_path):
    tiny_backbone().save(tmp_path / "tiny.keras")
    status, out, err = run_cli(["convert", tmp_path / "tiny.keras", tmp_path / "hf", "--vocabulary", FIXTURE_VOCAB])
    assert status == 0, err
    assert "Converted" in out and (tmp_path / "hf" / "model.safetensors").exists()
