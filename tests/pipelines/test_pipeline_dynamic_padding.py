"""Pipelines pad each batch only to its longest row: same outputs as full-length padding."""

import types

import numpy as np
import pytest

from harness import tiny_backbone
from keras_bert.models import BertClassifier, BertTokenClassifier
from keras_bert.pipelines import TextClassifierPipeline, TokenClassifierPipeline


def _rows(lengths, sequence_length, vocabulary_size=100, seed=0):
    rng = np.random.default_rng(seed)
    n = len(lengths)
    x = {name: np.zeros((n, sequence_length), "int32") for name in ("token_ids", "segment_ids", "padding_mask")}
    for i, length in enumerate(lengths):
        x["token_ids"][i, :length] = rng.integers(1, vocabulary_size, length)
        x["padding_mask"][i, :length] = 1
    return x


def test_classifier_pipeline_trimmed_batches_match_full_length():
    model = BertClassifier(tiny_backbone(max_sequence_length=64), num_classes=3)
    pipeline = TextClassifierPipeline(model, tokenizer=None, sequence_length=64, batch_size=4)
    x = _rows([5, 60, 17, 2, 33, 9, 64, 1, 40, 12, 3], 64)  # 11 rows: 3 batches, the last one short
    full = model.predict(x, verbose=0)
    trimmed = pipeline._predict_trimmed(x)
    assert trimmed.shape == full.shape
    np.testing.assert_allclose(trimmed, full, atol=1e-5)


def test_token_classifier_pipeline_pads_outputs_back():
    model = BertTokenClassifier(tiny_backbone(max_sequence_length=64), num_classes=5, label_names=["O", "B-X", "I-X", "B-Y", "I-Y"])
    pipeline = TokenClassifierPipeline(model, tokenizer=None, sequence_length=64, batch_size=2)
    lengths = [5, 30, 7, 2, 20]
    x = _rows(lengths, 64)
    full = model.predict(x, verbose=0)
    trimmed = pipeline._predict_trimmed(x, per_token=True)
    assert trimmed.shape == full.shape
    for i, length in enumerate(lengths):  # positions past the row's length are padding, their logits unused
        np.testing.assert_allclose(trimmed[i, :length], full[i, :length], atol=1e-5)


class _WidthRecorder:
    """A stand-in model: records the length of every batch it is given and returns each row's token count."""

    backbone = types.SimpleNamespace(max_sequence_length=64)

    def __init__(self, length_multiple=None, jit_compile=True):
        if length_multiple is not None:
            self.length_multiple = length_multiple
        self.jit_compile = jit_compile  # as a compiled Keras model: every new length a new trace
        self.widths = []

    def predict_on_batch(self, x):
        self.widths.append(x["token_ids"].shape[1])
        return np.asarray(x["padding_mask"], "float32").sum(axis=1, keepdims=True)


def test_batches_round_to_eight_unless_the_model_runs_any_length():
    # A traced predict step (TensorFlow, JAX, or torch with jit_compile) rounds to multiples of 8; a model that
    # declares `length_multiple` (RuntimeModel: onnxruntime) is cut to each batch's longest row exactly.
    lengths = [5, 60, 17, 2, 33, 9, 64, 1, 40, 12, 3]
    x = _rows(lengths, 64)
    # Sorted: [1 2 3 5] [9 12 17 33] [40 60 64] -> longest rows 5, 33, 64.
    keras_like = _WidthRecorder()
    out = TextClassifierPipeline(keras_like, tokenizer=None, sequence_length=64, batch_size=4)._predict_trimmed(x)
    assert keras_like.widths == [8, 40, 64]
    np.testing.assert_array_equal(out[:, 0], lengths)  # each row's output back in its place
    any_length = _WidthRecorder(length_multiple=1)  # as `RuntimeModel` (onnxruntime) declares
    out = TextClassifierPipeline(any_length, tokenizer=None, sequence_length=64, batch_size=4)._predict_trimmed(x)
    assert any_length.widths == [5, 33, 64]
    np.testing.assert_array_equal(out[:, 0], lengths)


@pytest.mark.only_backend("torch", reason="eager torch traces nothing, so only there is a Keras model cut exactly")
def test_eager_torch_model_batches_are_cut_exactly():
    x = _rows([5, 60, 17, 2, 33, 9, 64, 1, 40, 12, 3], 64)
    eager = _WidthRecorder(jit_compile=False)
    TextClassifierPipeline(eager, tokenizer=None, sequence_length=64, batch_size=4)._predict_trimmed(x)
    assert eager.widths == [5, 33, 64]
