"""Every task head on every family backbone (ALBERT, DistilBERT, ELECTRA, RoBERTa), and `.keras` round trips.

Each family builds one tiny backbone; the four heads sit on it in turn. The
inputs always carry all three BERT features: a DistilBERT head drops
`segment_ids` itself (`BertTask.drop_unused_features`), so callers never
need to know the family. Every head x family pair is saved to `.keras` and
reloaded. `fit` is not run here: the heads' training code does not depend
on the backbone and tests/models/test_task_models.py fits each head (a fit
costs ~10x a `.keras` round trip on this machine).
"""

import keras
import numpy as np
import pytest

from harness import numpy_tree, run_saving_test
from keras_bert.models import (
    AlbertBackbone,
    BertClassifier,
    BertMultipleChoice,
    BertQuestionAnswerer,
    BertTokenClassifier,
    DistilBertBackbone,
    ElectraBackbone,
    RobertaBackbone,
)

VOCAB, BATCH, SEQ, CHOICES = 40, 2, 8, 3
SIZES = dict(vocabulary_size=VOCAB, num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32, dropout=0.0)
FAMILIES = {
    "albert": lambda: AlbertBackbone(**SIZES, embedding_dim=8, max_sequence_length=16),
    "distilbert": lambda: DistilBertBackbone(**SIZES, max_sequence_length=16),
    "electra": lambda: ElectraBackbone(**SIZES, embedding_dim=8, max_sequence_length=16),
    # RoBERTa's positions start after padding_id (1): 16 positions leave room for 14 tokens.
    "roberta": lambda: RobertaBackbone(**SIZES, max_sequence_length=16),
}
HEADS = {
    "classifier": lambda backbone: BertClassifier(backbone, num_classes=3),
    "token_classifier": lambda backbone: BertTokenClassifier(backbone, num_classes=5),
    "question_answerer": lambda backbone: BertQuestionAnswerer(backbone),
    "multiple_choice": lambda backbone: BertMultipleChoice(backbone),
}
def _inputs(family, shape):
    rng = np.random.default_rng(0)
    token_ids = rng.integers(2, VOCAB, size=shape).astype("int32")
    padding_mask = np.ones(shape, "int32")
    padding_mask[..., -2:] = 0
    token_ids = np.where(padding_mask == 1, token_ids, 1 if family == "roberta" else 0).astype("int32")
    # RoBERTa has one token type; the others get a second segment.
    segment_ids = np.zeros(shape, "int32") if family == "roberta" else (np.arange(shape[-1]) >= 4).astype("int32")
    return {"token_ids": token_ids, "segment_ids": np.broadcast_to(segment_ids, shape).copy(), "padding_mask": padding_mask}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_head_takes_the_family_and_round_trips_keras(family, tmp_path):
    backbone = FAMILIES[family]()
    expected_inputs = {"token_ids", "padding_mask"} if family == "distilbert" else {"token_ids", "segment_ids", "padding_mask"}
    for name, make_head in HEADS.items():
        head = make_head(backbone)
        inputs = _inputs(family, (BATCH, CHOICES, SEQ) if name == "multiple_choice" else (BATCH, SEQ))
        assert set(head.input) == expected_inputs, (family, name)
        outputs = numpy_tree(head(inputs))
        assert all(np.isfinite(x).all() for x in keras.tree.flatten(outputs)), (family, name)
        (tmp_path / name).mkdir()
        restored = run_saving_test(head, inputs, tmp_path / name, atol=1e-5)
        assert type(restored.backbone) is type(backbone), (family, name)


def test_distilbert_heads_name_a_missing_feature_but_ignore_segment_ids():
    head = BertClassifier(FAMILIES["distilbert"](), num_classes=2)
    inputs = _inputs("distilbert", (BATCH, SEQ))
    with_segments = numpy_tree(head(inputs))
    without = numpy_tree(head({k: v for k, v in inputs.items() if k != "segment_ids"}))
    np.testing.assert_allclose(with_segments, without)
    # The batch methods drop it too (JAX read the wrong arrays as inputs when they did not).
    np.testing.assert_allclose(head.predict_on_batch(inputs), without, atol=1e-6)
    head.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="sgd")
    labels = np.array([0, 1])
    features = {k: v for k, v in inputs.items() if k != "segment_ids"}
    np.testing.assert_allclose(head.test_on_batch(inputs, labels), head.test_on_batch(features, labels), rtol=1e-6)
    assert np.all(np.isfinite(head.train_on_batch(inputs, labels)))
    assert head.unused_features == ("segment_ids",)
    with pytest.raises(ValueError, match="Missing: \\['padding_mask'\\]"):
        head({"token_ids": inputs["token_ids"], "segment_ids": inputs["segment_ids"]})
    # What fit/predict/evaluate get from a preprocessor's dataset: the feature dicts lose segment_ids.
    import tensorflow as tf  # tf.data feeds every backend

    dataset = tf.data.Dataset.from_tensor_slices((inputs, np.array([0, 1]))).batch(2)
    features, labels = head.drop_unused_features(dataset).element_spec
    assert sorted(features) == ["padding_mask", "token_ids"] and labels.shape.as_list() == [None]
    assert BertClassifier(FAMILIES["albert"](), num_classes=2).drop_unused_features(dataset) is dataset
