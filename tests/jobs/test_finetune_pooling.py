"""`keras-bert finetune --pooling mean`: the flag reaches the saved classifier, its record, and resume's check."""

import argparse
import json
import shutil

import keras
import pytest

from harness import tiny_backbone
from keras_bert.jobs.finetune import finetune
from task_helpers import FIXTURES

EXAMPLES = 64


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pooling")
    header, *rows = (FIXTURES / "classify_train.tsv").read_text(encoding="utf-8").splitlines()[: EXAMPLES + 1]
    (folder / "train.tsv").write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    keras.utils.set_random_seed(0)
    tiny_backbone(max_sequence_length=16, num_layers=1).save(folder / "backbone.keras")
    shutil.copy(FIXTURES / "vocab.txt", folder / "vocab.txt")
    return folder


def run(files, out, **overrides):
    options = dict(eval=files / "train.tsv", sequence_length=16, batch_size=16, epochs=1, learning_rate=1e-2,
                   verbose=0, tensorboard=False)
    return finetune("classify", files / "backbone.keras", files / "train.tsv", out, **{**options, **overrides})


def test_the_cli_flag_trains_and_saves_a_mean_pooled_classifier(files, tmp_path):
    from keras_bert.cli.finetune import add_finetune_arguments, run_finetune

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
    assert parser.parse_args(["--task", "classify", "--init", "x", "--train", "x", "--out", "x"]).pooling == "cls"
    with pytest.raises(SystemExit):
        parser.parse_args(["--task", "classify", "--init", "x", "--train", "x", "--out", "x", "--pooling", "max"])


@pytest.mark.only_backend("torch", reason="resume's job check is job plumbing, the same on every backend")
def test_resume_refuses_another_pooling(files, tmp_path):
    out = tmp_path / "cls"
    run(files, out)  # checkpoints hold the job with pooling "cls"
    with pytest.raises(ValueError, match="pooling: checkpoint 'cls' vs now 'mean'"):
        run(files, out, pooling="mean", resume=True)
    assert keras.saving.load_model(str(out / "model.keras")).pooling == "cls"
