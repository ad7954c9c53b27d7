"""`keras-bert finetune --pooling mean`: the flag reaches the saved classifier, its record, and resume's check."""

import argparse
import json
import shutil
import warnings

import keras
import pytest

from keras_bert.jobs.finetune import finetune
from task_helpers import classify_rows, save_tiny_init, write_rows

EXAMPLES = 64


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pooling")
    header, rows = classify_rows()
    write_rows(folder / "train.tsv", header, rows[:EXAMPLES])
    save_tiny_init(folder, num_layers=1)
    return folder


def run(files, out, init=None, **overrides):
    options = dict(eval=files / "train.tsv", sequence_length=16, batch_size=16, epochs=1, learning_rate=1e-2,
                   verbose=0, tensorboard=False)
    init = files / "backbone.keras" if init is None else init
    return finetune("classify", init, files / "train.tsv", out, **{**options, **overrides})


@pytest.mark.only_backend("torch", reason="the flag's way to the saved model is job plumbing; the mean-pooled classifier "
                          "itself runs on every backend in tests/models/test_classifier_pooling.py")
def test_the_cli_flag_trains_and_saves_a_mean_pooled_classifier(files, tmp_path):
    from keras_bert.cli.finetune import add_finetune_arguments, run_finetune
    from keras_bert.jobs.finetune_options import FinetuneOptions

    parser = argparse.ArgumentParser()
    add_finetune_arguments(parser)
    out = tmp_path / "mean"
    args = parser.parse_args([
        "--task", "classify", "--init", str(files / "backbone.keras"), "--train", str(files / "train.tsv"),
        "--eval", str(files / "train.tsv"), "--sequence-length", "16", "--epochs", "1", "--batch-size", "16",
        "--pooling", "mean", "--out", str(out), "--quiet",
    ])
    assert run_finetune(args) == 0
    model = keras.saving.load_model(str(out / "model.keras"))
    assert model.pooling == "mean"
    assert json.loads((out / "finetune.json").read_text())["job"]["pooling"] == "mean"
    # Left out, the option is not passed: the job's default (FinetuneOptions) holds.
    assert "pooling" not in vars(parser.parse_args(["--task", "classify", "--init", "x", "--train", "x", "--out", "x"]))
    assert FinetuneOptions.defaults("pooling") == {"pooling": "cls"}
    with pytest.raises(SystemExit):
        parser.parse_args(["--task", "classify", "--init", "x", "--train", "x", "--out", "x", "--pooling", "max"])


@pytest.mark.only_backend("torch", reason="resume's job check is job plumbing, the same on every backend")
def test_resume_refuses_another_pooling(files, tmp_path):
    out = tmp_path / "cls"
    run(files, out)  # checkpoints hold the job with pooling "cls"
    with pytest.raises(ValueError, match="pooling: checkpoint 'cls' vs now 'mean'"):
        run(files, out, pooling="mean", resume=True)
    assert keras.saving.load_model(str(out / "model.keras")).pooling == "cls"


def pretraining_folder(files, folder, **job):
    """A `keras-bert pretrain --out` folder as the job leaves it: model.keras, vocab.txt, config.json's record."""
    folder.mkdir()
    shutil.copy(files / "backbone.keras", folder / "model.keras")
    shutil.copy(files / "vocab.txt", folder / "vocab.txt")
    (folder / "config.json").write_text(json.dumps({"job": {"lowercase": True, **job}}), encoding="utf-8")
    return folder


def test_pooler_never_trained_reads_the_pretraining_record(files, tmp_path):
    from keras_bert.loading import pooler_never_trained

    roberta = pretraining_folder(files, tmp_path / "roberta", objective="bert", sentence_task="none")
    electra = pretraining_folder(files, tmp_path / "electra", objective="electra", sentence_task="nsp")
    bert = pretraining_folder(files, tmp_path / "bert", objective="bert", sentence_task="nsp")
    assert "without a sentence task" in pooler_never_trained(str(roberta))
    assert "--objective electra" in pooler_never_trained(str(electra / "model.keras"))
    assert pooler_never_trained(str(bert)) is None
    assert pooler_never_trained(str(files / "backbone.keras")) is None  # no record: nothing known
    assert pooler_never_trained("tiny") is None


@pytest.mark.only_backend("torch", reason="which warning the job gives is job plumbing, the same on every backend")
def test_a_cls_head_on_an_untrained_pooler_warns_and_names_the_mean(files, tmp_path):
    roberta = pretraining_folder(files, tmp_path / "roberta", objective="bert", sentence_task="none")
    with pytest.warns(UserWarning, match="pooler .* never trained: pretrained without a sentence task.*--pooling mean"):
        run(files, tmp_path / "cls", init=roberta)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*never trained.*")
        run(files, tmp_path / "mean", init=roberta, pooling="mean")


@pytest.mark.only_backend("torch", reason="argument checks are backend-independent")
def test_a_bad_pooling_or_one_for_another_task_is_refused_before_anything_is_written(files, tmp_path):
    with pytest.raises(ValueError, match=r"--pooling must be one of \('cls', 'mean'\). Received: 'max'"):
        run(files, tmp_path / "max", pooling="max")
    with pytest.raises(ValueError, match="--pooling mean: the pooling choice is the classifier's and regressor's; "
                                         "the token_classifier head has none"):
        finetune("ner", files / "backbone.keras", files / "train.tsv", tmp_path / "ner", pooling="mean", verbose=0)
    assert not (tmp_path / "max").exists() and not (tmp_path / "ner").exists()
