"""The inference scope: a classifier's (and a multiple-choice model's) `predict` computes the last block at [CLS]
only, on every family backbone.

The logits must equal the full forward pass (a direct call, which runs every
position), the cut must really happen (the backbone's last output is one
position long inside the scope), and where the head reads more than [CLS]
(mean pooling) or a block runs more than once (ALBERT) nothing is cut.
"""

import warnings

import keras
import numpy as np
import pytest

from harness import random_bert_inputs, tiny_backbone
from keras_bert.models import (
    AlbertBackbone,
    BertClassifier,
    BertMultipleChoice,
    DistilBertBackbone,
    ElectraBackbone,
    RobertaBackbone,
)

VOCAB, BATCH, SEQ = 40, 4, 10
SIZES = dict(vocabulary_size=VOCAB, num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=32, dropout=0.0)
BACKBONES = {
    "bert": lambda: tiny_backbone(vocabulary_size=VOCAB),
    "bert_pre_ln": lambda: tiny_backbone(vocabulary_size=VOCAB, normalize_first=True),
    "distilbert": lambda: DistilBertBackbone(**SIZES, max_sequence_length=16),
    "electra": lambda: ElectraBackbone(**SIZES, embedding_dim=8, max_sequence_length=16),
    "roberta": lambda: RobertaBackbone(**SIZES, max_sequence_length=16),
}


def inputs():
    x = random_bert_inputs(BATCH, SEQ, VOCAB)  # odd rows end in two padded positions
    x["token_ids"] = np.maximum(x["token_ids"], 2)  # RoBERTa's padding id is 1: keep real tokens off it
    x["segment_ids"] = np.zeros_like(x["segment_ids"])  # RoBERTa has one segment type
    return x


def last_output_length(model, x):
    """The sequence length of the backbone's last output inside the model's inference scope."""
    with model.inference_scope():
        return int(keras.ops.shape(model.backbone(model.drop_unused_features(x))["sequence_output"])[1])


@pytest.mark.parametrize("family", sorted(BACKBONES))
def test_predict_cuts_the_last_block_to_cls_and_keeps_the_logits(family):
    keras.utils.set_random_seed(3)
    model = BertClassifier(BACKBONES[family](), num_classes=3, dropout=0.0)
    x = inputs()
    full = keras.ops.convert_to_numpy(model(x, training=False))  # a direct call: every position
    np.testing.assert_allclose(model.predict_on_batch(x), full, atol=1e-5)
    np.testing.assert_allclose(model.predict(x, batch_size=3, verbose=0), full, atol=1e-5)
    assert last_output_length(model, x) == 1
    assert int(keras.ops.shape(model.backbone(model.drop_unused_features(x))["sequence_output"])[1]) == SEQ


def test_nothing_is_cut_where_more_than_cls_is_read():
    keras.utils.set_random_seed(3)
    x = inputs()
    mean = BertClassifier(tiny_backbone(vocabulary_size=VOCAB), num_classes=2, pooling="mean")
    albert = BertClassifier(AlbertBackbone(**SIZES, embedding_dim=8, max_sequence_length=16), num_classes=2)
    for model in (mean, albert):
        assert last_output_length(model, x) == SEQ
        np.testing.assert_allclose(model.predict_on_batch(x), keras.ops.convert_to_numpy(model(x)), atol=1e-5)


def test_an_int8_classifier_predicts_its_own_logits_at_cls(frozen_gc):
    """Quantized projections go through their layers' own call inside the cut block too."""
    keras.utils.set_random_seed(3)
    model = BertClassifier(tiny_backbone(vocabulary_size=VOCAB), num_classes=3, dropout=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the once-per-process "int8 is slow here" warning is tested elsewhere
        model.quantize("int8")
    x = inputs()
    assert last_output_length(model, x) == 1
    np.testing.assert_allclose(model.predict_on_batch(x), keras.ops.convert_to_numpy(model(x)), atol=1e-5)



def test_multiple_choice_predict_cuts_the_last_block_to_cls_and_keeps_the_scores():
    keras.utils.set_random_seed(3)
    model = BertMultipleChoice(tiny_backbone(vocabulary_size=VOCAB), dropout=0.0)
    flat = inputs()  # 4 rows: 2 questions x 2 choices
    x = {k: v.reshape(2, 2, SEQ) for k, v in flat.items()}
    full = keras.ops.convert_to_numpy(model(x, training=False))
    assert full.shape == (2, 2)
    np.testing.assert_allclose(model.predict_on_batch(x), full, atol=1e-5)
    with model.inference_scope():
        assert int(keras.ops.shape(model.backbone(flat)["sequence_output"])[1]) == 1
