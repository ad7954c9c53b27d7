"""`keras-bert finetune --layer-decay`: the rate reaches the optimizer, the record and resume's check; bad uses are
refused before anything is written. The update itself is checked against transformers on every backend in
tests/test_optimizer_parity.py."""

import argparse
import json

import pytest

from keras_bert.jobs.checkpointing import load_checkpoint
from keras_bert.jobs.finetune import finetune
from task_helpers import classify_rows, save_tiny_init, write_rows

pytestmark = pytest.mark.only_backend("torch", reason="the option's way to the optimizer and the record is job "
                                      "plumbing, the same on every backend")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("layer_decay")
    header, rows = classify_rows()
    write_rows(folder / "train.tsv", header, rows[:32])
    save_tiny_init(folder, num_layers=2)
    return folder


def run(files, out, **overrides):
    options = dict(sequence_length=16, batch_size=16, epochs=1, learning_rate=1e-2, verbose=0, tensorboard=False,
                   keep_checkpoints=True)
    return finetune("classify", files / "backbone.keras", files / "train.tsv", out, **{**options, **overrides})


def test_the_cli_flag_reaches_the_optimizer_the_record_and_the_resume_check(files, tmp_path):
    from keras_bert.cli.finetune import add_finetune_arguments, run_finetune

    parser = argparse.ArgumentParser()
    add_finetune_arguments(parser)
    out = tmp_path / "decayed"
    args = parser.parse_args([
        "--task", "classify", "--init", str(files / "backbone.keras"), "--train", str(files / "train.tsv"),
        "--sequence-length", "16", "--epochs", "1", "--batch-size", "16", "--layer-decay", "0.8",
        "--keep-checkpoints", "--no-tensorboard", "--out", str(out), "--quiet",
    ])  # fmt: skip
    assert run_finetune(args) == 0
    assert json.loads((out / "finetune.json").read_text())["job"]["layer_decay"] == 0.8
    model, _ = load_checkpoint(out / "checkpoints")
    assert model.optimizer.layer_decay == 0.8  # the resumable state trains on at the same rates
    with pytest.raises(ValueError, match="layer_decay: checkpoint 0.8 vs now None"):
        run(files, out, resume=True)
    assert "layer_decay" not in vars(parser.parse_args(["--task", "classify", "--init", "x", "--train", "x",
                                                        "--out", "x"]))


def test_out_of_range_or_with_a_frozen_backbone_is_refused_before_anything_is_written(files, tmp_path):
    with pytest.raises(ValueError, match=r"layer_decay.*\(0, 1\]"):
        run(files, tmp_path / "big", layer_decay=1.5)
    with pytest.raises(ValueError, match="--freeze-backbone trains none"):
        run(files, tmp_path / "frozen", layer_decay=0.8, freeze_backbone=True)
    assert not (tmp_path / "big").exists() and not (tmp_path / "frozen").exists()
