"""`keras-bert pretrain --streaming`: a tiny job on a streamed corpus.

The streamed corpus is tf.data, handed to `fit` through Keras' dataset adapter
as the in-memory corpus is; each backend's pretraining run is
tests/jobs/test_pretraining_job.py's and its resume test_interrupted_training.py's,
so this one runs once, on torch."""

import json
import math

import pytest

from keras_bert.cli.main import main

pytestmark = pytest.mark.only_backend("torch", reason="streaming changes only the tf.data input; each backend's "
                                      "pretraining run is test_pretraining_job.py's")


def test_pretrain_streaming_trains_and_records_the_option(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    argv = [
        "pretrain", "--corpus", str(corpus / "train.txt"), "--vocab", str(corpus / "vocab.txt"), "--size", "tiny",
        "--sequence-length", "32", "--batch-size", "4", "--steps", "1", "--streaming", "--no-tensorboard",
        "--out", str(out),
    ]
    assert main(argv) == 0
    assert "pretraining_dataset: streaming 1 of 1 files" in capsys.readouterr().out
    config = json.loads((out / "config.json").read_text())
    assert config["job"]["streaming"] is True and config["job"]["num_workers"] == 1
    assert math.isfinite(config["final_metrics"]["loss"]) and (out / "model.keras").is_file()
