"""`keras-bert distill`: a teacher run folder in, a student run folder that loads and serves out."""

import json

import keras
import pytest

from harness import tiny_backbone
from keras_bert import BertClassifier
from keras_bert.cli.main import main
from task_helpers import FIXTURES


@pytest.mark.only_backend("torch", reason="the command's flags, output and run folder are the same on every backend; "
                          "the distillation job itself runs on all three in tests/jobs/test_distill_job.py")
def test_distill_writes_a_loadable_student_and_reports_both_models(tmp_path, capsys):
    keras.utils.set_random_seed(0)
    teacher = tmp_path / "teacher.keras"
    BertClassifier(tiny_backbone(num_layers=2, max_sequence_length=32), num_classes=2,
                   label_names=["negative", "positive"]).save(teacher)
    out = tmp_path / "student"
    argv = ["distill", "--teacher", str(teacher), "--vocab", str(FIXTURES / "vocab.txt"),
            "--train", str(FIXTURES / "classify_train.tsv"), "--eval", str(FIXTURES / "classify_dev.tsv"),
            "--student-layers", "1", "--temperature", "2", "--alpha", "0.5", "--sequence-length", "16",
            "--epochs", "1", "--out", str(out), "--no-tensorboard", "--quiet"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(printed) == {"student", "teacher", "model"} and 0 <= printed["student"]["accuracy"] <= 1
    # The student folder serves like a fine-tuning run's.
    from keras_bert.pipelines import load_pipeline

    pipeline = load_pipeline(out)
    assert type(pipeline.model) is BertClassifier and pipeline.model.backbone.num_layers == 1
    assert pipeline(["superb ending , really charming ."])[0]["label"] in ("negative", "positive")
    # A deeper student than the teacher is a user error naming both depths.
    assert main([*argv[:-6], "--student-layers", "3", "--out", str(tmp_path / "deeper")]) == 2
    assert "num_layers=3, the teacher has num_layers=2" in capsys.readouterr().err
