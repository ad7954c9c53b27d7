"""`keras-bert export MODEL --format hub-encoder`: the command reaches export_hub_encoder.

The export itself (encoder + preprocessor SavedModels) is tested in
tests/export/test_hub_export.py; here only what the command adds, cheaply:
it takes a pretraining run (its backbone) without --backbone, and passes
--sequence-length on as the preprocessor's seq_length, checked before
anything is written.
"""

import json

from harness import tiny_backbone
from keras_bert.cli.main import main
from keras_bert.models import BertPretrainer
from task_helpers import FIXTURES


def test_hub_encoder_format_takes_a_pretraining_run_and_checks_the_length(tmp_path, capsys):
    run = tmp_path / "runs" / "p"
    run.mkdir(parents=True)
    BertPretrainer(tiny_backbone()).save(run / "model.keras")
    (run / "vocab.txt").write_bytes((FIXTURES / "vocab.txt").read_bytes())
    (run / "config.json").write_text(json.dumps({"job": {"lowercase": True}}))
    out = tmp_path / "hub"
    code = main(["export", str(run), "--format", "hub-encoder", "--out", str(out), "--sequence-length", "64"])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert "`seq_length` must be an int in [3, 32]" in err and "received 64" in err
    assert "--backbone" not in err  # a pretraining run's backbone is what hub-encoder exports
    assert not out.exists()
