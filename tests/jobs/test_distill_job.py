"""The distillation job: a teacher file in, a student run folder out; what it refuses."""

import json

import keras
import numpy as np
import pytest

from harness import tiny_backbone
from keras_bert import BertClassifier
from keras_bert.jobs.distill import distill
from task_helpers import FIXTURES

VOCAB = str(FIXTURES / "vocab.txt")
TRAIN, DEV = str(FIXTURES / "classify_train.tsv"), str(FIXTURES / "classify_dev.tsv")


@pytest.fixture(scope="module")
def teacher_file(tmp_path_factory):
    """A 3-layer classifier of the fixtures' labels, saved as .keras with its vocabulary as a sidecar."""
    folder = tmp_path_factory.mktemp("teacher")
    keras.utils.set_random_seed(0)
    backbone = tiny_backbone(num_layers=3, max_sequence_length=32)
    path = folder / "teacher.keras"
    BertClassifier(backbone, num_classes=2, label_names=["negative", "positive"]).save(path)
    (folder / "teacher.vocab.txt").write_text(open(VOCAB, encoding="utf-8").read(), encoding="utf-8")
    return path


@pytest.mark.only_backend("torch", reason="the job's records, scores and resume are the same Python on every backend; the "
                          "distiller's losses and training run on each in tests/models/test_distiller.py")
def test_hidden_loss_run_scores_student_and_teacher_and_resumes_to_the_same_end(teacher_file, tmp_path):
    out = tmp_path / "student"
    options = dict(eval=DEV, student_layers=2, hidden_loss_weight=0.5, sequence_length=16, epochs=1,
                   learning_rate=1e-3, verbose=0, tensorboard=False)
    summary = distill(teacher_file, TRAIN, out, **options)
    record = json.loads((out / "distill.json").read_text())
    assert record["job"]["layer_indices"] == [0, 2] and record["job"]["precompute_teacher_logits"] is False
    # The teacher's held-out figures are the teacher's own: recomputed here from its file.
    teacher = keras.saving.load_model(teacher_file)
    assert summary["teacher"]["accuracy"] == pytest.approx(_accuracy(teacher, DEV), abs=1e-9)
    student = keras.saving.load_model(out / "model.keras")
    assert type(student) is BertClassifier and student.backbone.num_layers == 2 and student.trainable
    assert summary["student"]["accuracy"] == pytest.approx(_accuracy(student, DEV), abs=1e-9)
    # A finished run resumed trains nothing more and keeps the student.
    again = distill(teacher_file, TRAIN, out, resume=True, **options)
    assert again["resumed_from_step"] == record["job"]["steps"] and again["history"] == {}
    assert again["student"] == summary["student"]


def _accuracy(model, path):
    from keras_bert.pipelines import predict_text
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
    from keras_bert.preprocessing.task_data.classification_data import read_classification_data

    examples = read_classification_data(path, "sentence", "label")
    rows = predict_text(model, BertTokenizer(VOCAB), [e.text for e in examples], sequence_length=16)
    return float(np.mean([row["label"] == e.label for row, e in zip(rows, examples)]))


def test_refused_teachers_and_students(teacher_file, tmp_path):
    with pytest.raises(ValueError, match="num_layers=4, the teacher has num_layers=3"):
        distill(teacher_file, TRAIN, tmp_path / "a", student_layers=4, verbose=0)
    with pytest.raises(ValueError, match="alpha=-0.1"):
        distill(teacher_file, TRAIN, tmp_path / "b", alpha=-0.1, verbose=0)
    regressor = tmp_path / "regressor.keras"
    BertClassifier(tiny_backbone(), num_classes=1).save(regressor)
    with pytest.raises(ValueError, match=r"classifier \(2\+ classes\).*BertClassifier \(regressor\)"):
        distill(regressor, TRAIN, tmp_path / "c", vocab=VOCAB, verbose=0)
    other_labels = tmp_path / "labels.tsv"
    other_labels.write_text("sentence\tlabel\ngood film .\tgood\nbad film .\tbad\n", encoding="utf-8")
    with pytest.raises(ValueError, match="good"):
        distill(teacher_file, str(other_labels), tmp_path / "d", student_layers=1, verbose=0)
    with pytest.raises(FileNotFoundError, match="--teacher: .*nowhere: no such file"):
        distill(tmp_path / "nowhere", TRAIN, tmp_path / "e", verbose=0)


def test_teacher_logits_computed_up_front_in_length_batches_are_the_teachers():
    from keras_bert.jobs.distill import _teacher_logits

    teacher = BertClassifier(tiny_backbone(max_sequence_length=40), num_classes=3)
    rng = np.random.default_rng(0)
    lengths = rng.integers(3, 41, size=21)
    mask = (np.arange(40) < lengths[:, None]).astype("int32")
    x = {"token_ids": rng.integers(1, 147, size=(21, 40)).astype("int32") * mask, "segment_ids": 0 * mask,
         "padding_mask": mask}
    np.testing.assert_allclose(_teacher_logits(teacher, x, 8), teacher.predict(x, verbose=0), atol=1e-5)
