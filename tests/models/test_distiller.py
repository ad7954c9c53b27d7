"""Distiller and student_from_teacher: the loss against numpy, the copied layers, training, refusals, learning."""

import keras
import numpy as np
import pytest

from harness import random_bert_inputs, tiny_backbone
from keras_bert import BertClassifier, BertTokenClassifier, Distiller, student_from_teacher
from keras_bert.models.distiller import distillation_loss, hidden_cosine_loss
from keras_bert.models.student_from_teacher import teacher_layer_indices

VOCABULARY = 147


def _numpy_log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def test_loss_is_kl_times_t_squared_plus_cross_entropy():
    rng = np.random.default_rng(0)
    student, teacher = rng.normal(size=(2, 6, 4)).astype("float32") * 3
    labels = rng.integers(0, 4, size=6)
    for temperature, alpha in ((2.0, 0.5), (1.0, 1.0), (4.0, 0.0), (3.0, 0.3)):
        t_log = _numpy_log_softmax(teacher / temperature)
        kl = (np.exp(t_log) * (t_log - _numpy_log_softmax(student / temperature))).sum(-1)
        ce = -_numpy_log_softmax(student)[np.arange(6), labels]
        expected = np.mean(alpha * temperature**2 * kl + (1 - alpha) * ce)
        got = distillation_loss(student, teacher, labels, temperature, alpha)
        np.testing.assert_allclose(keras.ops.convert_to_numpy(got), expected, rtol=1e-5)
    # Weights: a weighted mean over positions (a tagger's unlabelled tokens get 0).
    weights = np.array([1, 0, 1, 1, 0, 2], "float32")
    t_log = _numpy_log_softmax(teacher / 2)
    per = 0.5 * 4 * (np.exp(t_log) * (t_log - _numpy_log_softmax(student / 2))).sum(-1)
    per += 0.5 * -_numpy_log_softmax(student)[np.arange(6), labels]
    got = distillation_loss(student, teacher, labels, 2.0, 0.5, weights=weights)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(got), (per * weights).sum() / weights.sum(), rtol=1e-5)


def test_hidden_cosine_loss_against_numpy():
    rng = np.random.default_rng(1)
    s, t = rng.normal(size=(2, 2, 3, 5, 8)).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], "float32")
    expected = []
    for a, b in zip(s, t):
        cosine = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
        expected.append(((1 - cosine) * mask).sum() / mask.sum())
    got = hidden_cosine_loss(list(s), list(t), mask)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(got), np.mean(expected), rtol=1e-5)


def _weights(layer):
    return [keras.ops.convert_to_numpy(w) for w in layer.weights]


def _same(a, b):
    return len(a.weights) == len(b.weights) and all(np.array_equal(x, y) for x, y in zip(_weights(a), _weights(b)))


def test_student_takes_every_other_teacher_layer_with_its_weights():
    assert teacher_layer_indices(12, 6) == [0, 2, 4, 7, 9, 11]  # DistilBERT's choice
    assert teacher_layer_indices(6, 3) == [0, 2, 5] and teacher_layer_indices(6, 2) == [0, 5]
    teacher = BertClassifier(tiny_backbone(num_layers=4), num_classes=3, label_names=["a", "b", "c"])
    student = student_from_teacher(teacher, num_layers=2)
    assert type(student) is BertClassifier and student.backbone.num_layers == 2
    assert student.label_names == ["a", "b", "c"] and student.backbone.hidden_dim == teacher.backbone.hidden_dim
    t, s = teacher.backbone, student.backbone
    assert _same(t.embeddings, s.embeddings) and _same(t.pooler, s.pooler)
    assert _same(teacher.output_dense, student.output_dense)
    assert _same(t.transformer_layers[0], s.transformer_layers[0])
    assert _same(t.transformer_layers[3], s.transformer_layers[1])
    assert not _same(t.transformer_layers[1], s.transformer_layers[1])  # the check can fail
    chosen = student_from_teacher(teacher, num_layers=2, layer_indices=[2, 1])
    assert _same(t.transformer_layers[2], chosen.backbone.transformer_layers[0])
    assert _same(t.transformer_layers[1], chosen.backbone.transformer_layers[1])
    # Same outputs as the teacher when the student keeps every layer.
    inputs = random_bert_inputs(3, 8, VOCABULARY)
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(student_from_teacher(teacher, num_layers=4)(inputs)),
        keras.ops.convert_to_numpy(teacher(inputs)), atol=1e-6,
    )


def test_bad_students_and_arguments_are_refused():
    teacher = BertClassifier(tiny_backbone(num_layers=2), num_classes=2)
    with pytest.raises(ValueError, match=r"num_layers=3.*num_layers=2"):
        student_from_teacher(teacher, num_layers=3)
    with pytest.raises(ValueError, match=r"hidden_dim=32.*hidden_dim=16"):
        student_from_teacher(teacher, num_layers=1, hidden_dim=32)
    with pytest.raises(ValueError, match=r"layer_indices.*\[0, 5\]"):
        student_from_teacher(teacher, num_layers=2, layer_indices=[0, 5])
    with pytest.raises(ValueError, match="Received: BertBackbone|Received: str"):
        student_from_teacher("runs/sst", num_layers=1)
    student = student_from_teacher(teacher, num_layers=1)
    with pytest.raises(ValueError, match="temperature=0"):
        Distiller(teacher, student, temperature=0)
    with pytest.raises(ValueError, match="alpha=1.5"):
        Distiller(teacher, student, alpha=1.5)
    with pytest.raises(ValueError, match="teacher num_classes=2, student num_classes=3"):
        Distiller(teacher, BertClassifier(tiny_backbone(num_layers=1), num_classes=3))
    with pytest.raises(ValueError, match="BertTokenClassifier student"):
        Distiller(teacher, BertTokenClassifier(tiny_backbone(num_layers=1), num_classes=2))
    wide = BertClassifier(tiny_backbone(num_layers=1, hidden_dim=32), num_classes=2)
    with pytest.raises(ValueError, match="teacher hidden_dim=16, student hidden_dim=32"):
        Distiller(teacher, wide, hidden_loss_weight=1.0)
    with pytest.raises(ValueError, match="vocabulary_size: teacher 147, student 99"):
        Distiller(teacher, BertClassifier(tiny_backbone(num_layers=1, vocabulary_size=99), num_classes=2))
    with pytest.raises(ValueError, match="precomputed teacher logits"):
        Distiller(teacher, student, hidden_loss_weight=1.0, precomputed_teacher_logits=True)
    with pytest.raises(ValueError, match="takes no `loss`"):
        Distiller(teacher, student).compile(loss="mse")


def _snapshot(model):
    return [keras.ops.convert_to_numpy(w).copy() for w in model.weights]


def test_a_fit_step_changes_the_student_and_not_the_teacher():
    teacher = BertClassifier(tiny_backbone(num_layers=2), num_classes=3, dropout=0.0)
    x = random_bert_inputs(4, 8, VOCABULARY)
    y = np.array([0, 1, 2, 1])
    for precomputed in (False, True):
        distiller = Distiller(
            teacher, student_from_teacher(teacher, num_layers=1), hidden_loss_weight=0.0 if precomputed else 0.5,
            precomputed_teacher_logits=precomputed,
        )
        distiller.compile(optimizer=keras.optimizers.SGD(0.5))
        teacher_before, student_before = _snapshot(teacher), _snapshot(distiller.student)
        labels = {"labels": y, "teacher_logits": teacher.predict(x, verbose=0)} if precomputed else y
        history = distiller.fit(x, labels, batch_size=4, epochs=1, verbose=0).history
        assert np.isfinite(history["loss"][0]) and "accuracy" in history
        assert all(np.array_equal(a, b) for a, b in zip(teacher_before, _snapshot(teacher)))
        assert any(not np.array_equal(a, b) for a, b in zip(student_before, _snapshot(distiller.student)))
    assert len(distiller.trainable_weights) == len(distiller.student.trainable_weights)


def _mean_kl(teacher_logits, student_logits):
    t, s = _numpy_log_softmax(np.asarray(teacher_logits)), _numpy_log_softmax(np.asarray(student_logits))
    return float(np.mean((np.exp(t) * (t - s)).sum(-1)))


def test_soft_targets_teach_the_teachers_probabilities_that_hard_labels_do_not():
    """A 4-class teacher's probabilities on 16 inputs: what its soft targets carry beyond its argmax.

    Two students start from the same weights and see the same inputs, one
    trained on the soft targets alone (alpha=1), one on the teacher's hard
    labels alone (alpha=0). The first must come to reproduce the teacher's
    distribution (KL under 0.3 of where it started: a soft-target term that
    teaches nothing fails here), and be closer to it than the second.
    """
    keras.utils.set_random_seed(3)
    teacher = BertClassifier(tiny_backbone(num_layers=2, max_sequence_length=16), num_classes=4, dropout=0.0)
    inputs = random_bert_inputs(16, 8, VOCABULARY, seed=1)
    # Teacher logits with a spread of 2.5 around 0: confident, not one-hot.
    kernel, bias = teacher.output_dense.get_weights()
    logits = keras.ops.convert_to_numpy(teacher.predict(inputs, verbose=0))
    scale = 2.5 / (logits - logits.mean(0)).std()
    teacher.output_dense.set_weights([kernel * scale, (bias - logits.mean(0)) * scale])
    target = keras.ops.convert_to_numpy(teacher.predict(inputs, verbose=0))
    hard_labels = np.argmax(target, -1)
    start = BertClassifier(tiny_backbone(num_layers=1, max_sequence_length=16), num_classes=4, dropout=0.0)
    before = _mean_kl(target, keras.ops.convert_to_numpy(start.predict(inputs, verbose=0)))
    kl = {}
    for alpha in (1.0, 0.0):
        student = BertClassifier.from_config(start.get_config())
        student.set_weights(start.get_weights())
        distiller = Distiller(teacher, student, temperature=2.0, alpha=alpha)
        distiller.compile(optimizer=keras.optimizers.Adam(3e-3))
        distiller.fit(inputs, hard_labels, batch_size=16, epochs=40, verbose=0)
        kl[alpha] = _mean_kl(target, distiller.predict(inputs, verbose=0)["logits"])
    assert kl[1.0] < 0.3 * before and kl[1.0] < kl[0.0], (kl, before)
