"""BertClassifier(pooling="mean"): the head on the tokens' mean, saving, refusals, and the parts that rebuild it."""

import keras
import numpy as np
import pytest

from harness import random_bert_inputs, run_model_test, tiny_backbone
from keras_bert import BertClassifier, Distiller, student_from_teacher
from keras_bert.converters import save_hf_checkpoint

VOCAB, BATCH, SEQ = 40, 4, 10


def inputs():
    return random_bert_inputs(BATCH, SEQ, VOCAB)  # odd rows end in two padded positions


def test_mean_pooled_classifier_harness(tmp_path):
    model = run_model_test(
        lambda: BertClassifier(tiny_backbone(), num_classes=3, pooling="mean"),
        inputs(),
        (BATCH, 3),
        tmp_path,
        targets=np.array([0, 1, 2, 1]),
    )
    # No new weights: the head is the same dense layer, on another vector.
    assert model.count_params() == model.backbone.count_params() + 16 * 3 + 3
    restored = keras.saving.load_model(str(tmp_path / "model.keras"))
    assert restored.pooling == "mean" and restored.get_config()["pooling"] == "mean"


def test_logits_are_the_dense_layer_on_the_mean_of_the_real_tokens():
    keras.utils.set_random_seed(1)
    model = BertClassifier(tiny_backbone(), num_classes=2, pooling="mean", dropout=0.0)
    x = inputs()
    sequence = keras.ops.convert_to_numpy(model.backbone(x)["sequence_output"])
    mask = x["padding_mask"][:, :, None].astype("float32")
    mean = (sequence * mask).sum(1) / mask.sum(1)
    kernel, bias = (keras.ops.convert_to_numpy(w) for w in model.output_dense.weights)
    logits = keras.ops.convert_to_numpy(model(x))
    np.testing.assert_allclose(logits, mean @ kernel + bias, atol=1e-5)
    # The padded positions are left out: their mean would give other logits for the padded rows.
    with_padding = sequence.mean(1) @ kernel + bias
    assert np.abs(logits[1::2] - with_padding[1::2]).max() > 1e-4
    # The default reads the pooler's [CLS] vector, as BERT does.
    cls_model = BertClassifier(model.backbone, num_classes=2, dropout=0.0)
    cls_model.output_dense.set_weights(model.output_dense.get_weights())
    pooled = keras.ops.convert_to_numpy(model.backbone(x)["pooled_output"])
    np.testing.assert_allclose(keras.ops.convert_to_numpy(cls_model(x)), pooled @ kernel + bias, atol=1e-5)


def test_a_bad_pooling_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"`pooling` must be one of \('cls', 'mean'\). Received: pooling='max'"):
        BertClassifier(tiny_backbone(), num_classes=2, pooling="max")


@pytest.mark.only_backend("torch", reason="checkpoint writing and reading are numpy work, the same on every backend")
def test_hugging_face_export_and_task_checkpoints_refuse_the_mean_head(tmp_path):
    with pytest.raises(ValueError, match="pooling='mean', which no transformers BERT class computes"):
        save_hf_checkpoint(BertClassifier(tiny_backbone(), num_classes=2, pooling="mean"), tmp_path / "mean_hf")
    assert not (tmp_path / "mean_hf").exists()
    # A BertForSequenceClassification head was trained on the pooler: it is not put on the tokens' mean.
    save_hf_checkpoint(BertClassifier(tiny_backbone(), num_classes=2), tmp_path / "cls_hf")
    with pytest.raises(ValueError, match="its head cannot read pooling='mean'"):
        BertClassifier.from_pretrained(str(tmp_path / "cls_hf"), pooling="mean")
    # A new head on a plain backbone checkpoint may read the mean.
    save_hf_checkpoint(tiny_backbone(), tmp_path / "backbone_hf")
    model = BertClassifier.from_pretrained(str(tmp_path / "backbone_hf"), num_classes=2, pooling="mean")
    assert model.pooling == "mean"


def test_distillation_and_a_student_keep_the_mean_head():
    keras.utils.set_random_seed(2)
    teacher = BertClassifier(tiny_backbone(num_layers=2), num_classes=2, pooling="mean", dropout=0.0)
    student = student_from_teacher(teacher, num_layers=1)
    assert student.pooling == "mean"
    distiller = Distiller(teacher, student)
    x = inputs()
    # The distiller's logits are the models' own: the features model pools as the classifier does.
    for model, features in ((teacher, distiller.teacher_features), (student, distiller.student_features)):
        np.testing.assert_allclose(
            keras.ops.convert_to_numpy(features(x)["logits"]), keras.ops.convert_to_numpy(model(x)), atol=1e-5
        )
