"""Issue 49: `keras-bert pretrain` ended by printing a raw Python dict.

It prints a few readable lines instead and names the run's config.json, which keeps the whole record for
programs (the command has no `--quiet` JSON line, as `finetune` has).
"""

import pytest

import keras_bert.jobs.pretrain
import keras_bert.jobs.pretrain_budget
from keras_bert.cli.main import main

# What `pretrain` returned for a tiny run with a held-out corpus (numbers rounded, structure as is).
SUMMARY = {
    "final_metrics": {"loss": 6.8312, "mlm_accuracy": 0.0512, "nsp_accuracy": 0.55, "val_loss": 6.9031,
                      "val_mlm_accuracy": 0.0478, "val_nsp_accuracy": 0.5},
    "baselines": {"val_mlm_accuracy_most_frequent_token": 0.0625, "val_nsp_accuracy_majority_label": 0.5},
    "heldout": {"mlm_accuracy": 0.0478, "nsp_accuracy": 0.5},
    "wall_seconds": 12.3,
    "steps": 20,
    "resumed_from_step": 0,
}


@pytest.mark.only_backend("torch", reason="the command's report of the job's summary is the same on every backend")
def test_pretrain_ends_with_readable_lines_not_a_dict(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(keras_bert.jobs.pretrain, "pretrain", lambda **kw: dict(SUMMARY))
    budget = {"minutes": 5, "calibration_seconds": 20.1, "setup_seconds": 8.2, "step_seconds": 0.0412,
              "evaluation_seconds": 0.5, "steps": 6000, "job_minutes": 4.81, "recipe": {"size": "tiny"}}
    monkeypatch.setattr(keras_bert.jobs.pretrain_budget, "pretrain_within_budget",
                        lambda **kw: {**SUMMARY, "budget": budget})
    (tmp_path / "vocab.txt").write_text("[PAD]\n")
    argv = ["pretrain", "--corpus", str(tmp_path / "vocab.txt"), "--vocab", str(tmp_path / "vocab.txt"),
            "--out", str(tmp_path / "run")]

    assert main([*argv, "--steps", "20"]) == 0
    out = capsys.readouterr().out
    assert "{" not in out and "final_metrics" not in out, out
    assert "20 steps" in out and "loss 6.831" in out and "mlm_accuracy 0.0512" in out, out
    assert str(tmp_path / "run" / "config.json") in out

    assert main([*argv, "--budget-minutes", "5"]) == 0
    out = capsys.readouterr().out
    assert "{" not in out and "budget 5 min: 6000 steps" in out, out

