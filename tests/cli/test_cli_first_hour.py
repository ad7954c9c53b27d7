"""What a new user types by habit (issue 20): --version, texts after options, a broken .keras file,
an --out folder whose parent does not exist, a pretraining run folder given where a model is expected."""

import inspect
import os
import re
import stat

import pytest

import keras_bert
import keras_bert.cli.finetune
import keras_bert.cli.predict
import keras_bert.cli.pretrain
import keras_bert.jobs.pretrain
import keras_bert.jobs.pretrain_budget
from harness import tiny_backbone
from keras_bert.cli.main import main
from keras_bert.loading import load_init
from keras_bert.models import BertClassifier, BertPretrainer
from keras_bert.run_folders import read_run_folder
from task_helpers import FIXTURES

PLUMBING = "command-line plumbing is the same on every backend"


@pytest.mark.only_backend("tensorflow", reason=PLUMBING)
def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"keras-bert {keras_bert.__version__}"


# `python -m keras_bert --version` (a child process, 7-9 s) runs once, in
# test_cli_quiet_and_clear.py::test_python_dash_m_is_quiet_too, which checks what it prints too.


@pytest.mark.only_backend("tensorflow", reason=PLUMBING)
def test_predict_takes_texts_before_and_after_options(tmp_path, monkeypatch):
    seen = {}
    monkeypatch.chdir(tmp_path)  # the files the command names exist (it checks them before it runs)
    for name in ("model.keras", "vocab.txt"):
        (tmp_path / name).write_text("")

    def run_predict(args):
        seen.update(texts=args.texts, tokenizer=args.tokenizer)
        return 0

    monkeypatch.setattr(keras_bert.cli.predict, "run_predict", run_predict)  # the parser is built per call
    assert main(["predict", "model.keras", "first text", "--tokenizer", "vocab.txt", "second text", "third"]) == 0
    assert seen == {"texts": ["first text", "second text", "third"], "tokenizer": "vocab.txt"}


@pytest.mark.only_backend("tensorflow", reason=PLUMBING)
def test_unknown_options_are_still_refused(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["predict", "model.keras", "text", "--tokeniser", "vocab.txt"])
    assert exit_.value.code == 2
    assert "unrecognized arguments: --tokeniser vocab.txt" in capsys.readouterr().err


@pytest.mark.only_backend("tensorflow", reason=PLUMBING)
@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 truncated", b"not a model at all"])
def test_a_broken_keras_file_is_named_as_broken_first(tmp_path, capsys, content):
    model = tmp_path / "model.keras"
    model.write_bytes(content)
    assert main(["predict", str(model), "some text"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"keras-bert predict: error: {model}: not a .keras file (not a zip archive: truncated or corrupt?)"]


@pytest.mark.only_backend("tensorflow", reason="the SavedModel is written by TensorFlow on every backend")
def test_export_creates_missing_parents_with_ordinary_permissions(tmp_path, capsys):
    model_file = tmp_path / "clf.keras"
    BertClassifier(tiny_backbone(), num_classes=2).save(model_file)
    out = tmp_path / "a" / "b" / "sentiment"
    code = main(["export", str(model_file), "--tokenizer", str(FIXTURES / "vocab.txt"), "--out", str(out),
                 "--sequence-length", "16"])
    assert code == 0, capsys.readouterr().err
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~umask
    assert (out / "saved_model.pb").is_file()


def test_a_pretraining_run_folder_is_a_valid_init(tmp_path):
    """`finetune --init runs/x` (a pretrain --out folder) starts from its model.keras and vocab.txt."""
    BertPretrainer(tiny_backbone()).save(tmp_path / "model.keras")
    (tmp_path / "vocab.txt").write_bytes((FIXTURES / "vocab.txt").read_bytes())
    (tmp_path / "config.json").write_text('{"job": {"lowercase": true}}')
    assert read_run_folder(tmp_path).kind == "pretrain"
    backbone, tokenizer, description = load_init(str(tmp_path))
    assert description == f".keras file {tmp_path / 'model.keras'}"
    assert backbone.vocabulary_size == tokenizer.vocabulary_size() == 147


@pytest.mark.only_backend("tensorflow", reason=PLUMBING)
def test_an_interrupted_job_names_its_last_checkpoint_and_the_resume_command(tmp_path, monkeypatch, capsys):
    out = tmp_path / "runs x"

    def interrupted_after_a_checkpoint(args):
        (out / "checkpoints").mkdir(parents=True)
        (out / "checkpoints" / "checkpoint.json").write_text('{"step": 20, "model_file": "checkpoint-20.keras"}')
        raise KeyboardInterrupt

    monkeypatch.setattr(keras_bert.cli.pretrain, "run_pretrain", interrupted_after_a_checkpoint)
    monkeypatch.chdir(tmp_path)  # the files the command names exist (it checks them before it runs)
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "a.txt").write_text("A sentence.\n")
    (tmp_path / "vocab.txt").write_text("[PAD]\n")
    argv = ["pretrain", "--corpus", "texts/", "--vocab", "vocab.txt", "--steps", "200", "--out", str(out)]
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert f"keras-bert: interrupted. The last checkpoint is step 20 in {out / 'checkpoints'}; continue with:" in err
    assert f"keras-bert pretrain --corpus texts/ --vocab vocab.txt --steps 200 --out '{out}' --resume" in err


@pytest.mark.only_backend("tensorflow", reason=PLUMBING)
def test_an_interrupted_job_without_a_checkpoint_says_so(tmp_path, monkeypatch, capsys):
    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(keras_bert.cli.finetune, "run_finetune", interrupted)
    monkeypatch.chdir(tmp_path)  # the files the command names exist (it checks them before it runs)
    (tmp_path / "t.tsv").write_text("sentence\tlabel\n")
    argv = ["finetune", "--task", "classify", "--init", "tiny", "--train", "t.tsv", "--out", str(tmp_path / "x")]
    assert main(argv) == 130
    assert capsys.readouterr().err.strip() == (
        f"keras-bert: interrupted; no checkpoint was written to {tmp_path / 'x' / 'checkpoints'} yet"
    )


@pytest.mark.only_backend("tensorflow", reason=PLUMBING)
def test_help_shows_the_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["finetune", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    # Each default comes from the job's options (FinetuneOptions), after the option's help.
    for option, default in (("--batch-size BATCH_SIZE", "32"), ("--epochs EPOCHS", "3"),
                            ("--learning-rate LEARNING_RATE", "3e-05")):
        assert re.search(rf"{option} [^(]*(\([^)]*\)[^(]*)?\(default: {default}\)", text), option
    with pytest.raises(SystemExit):
        main(["vocab", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "vocabulary size (default 8000)" in text and "(default: 8000)" not in text  # said once


@pytest.mark.only_backend("tensorflow", reason=PLUMBING)
def test_a_budget_run_leaves_unset_settings_to_the_recipe_and_a_step_run_keeps_its_defaults(tmp_path, monkeypatch):
    seen, job = {}, keras_bert.jobs.pretrain.pretrain
    # The command imports the jobs when it runs (so that `--help` need not load keras): patch them where they live.
    summary = {"final_metrics": {}, "steps": 10}  # what the command reports of a run
    monkeypatch.setattr(keras_bert.jobs.pretrain_budget, "pretrain_within_budget",
                        lambda **kw: seen.update(budget=kw) or summary)
    monkeypatch.setattr(keras_bert.jobs.pretrain, "pretrain", lambda **kw: seen.update(steps=kw) or summary)
    (tmp_path / "vocab.txt").write_text("[PAD]\n")
    argv = ["pretrain", "--corpus", str(tmp_path / "vocab.txt"), "--vocab", str(tmp_path / "vocab.txt"),
            "--out", str(tmp_path / "run")]
    recipe = ("size", "learning_rate", "pack_sequences", "masking")
    assert main([*argv, "--budget-minutes", "5", "--sequence-length", "96"]) == 0
    budget = seen["budget"]
    assert not set(recipe) & set(budget)  # left out: the recipe fills them
    assert budget["sequence_length"] == 96 and budget["budget_minutes"] == 5
    assert main([*argv, "--steps", "10", "--no-pack-sequences"]) == 0
    steps = seen["steps"]
    assert steps["pack_sequences"] is False and steps["steps"] == 10
    assert not {"size", "learning_rate", "masking", "sequence_length"} & set(steps)  # left out: pretrain's defaults
    defaults = inspect.signature(job).parameters  # the job's keywords: `PretrainOptions`' fields
    assert (defaults["size"].default, defaults["learning_rate"].default) == ("mini", 1e-4)
