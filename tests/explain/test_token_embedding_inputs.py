"""`call_with_token_embeddings`: a task model fed its own token embeddings gives its own outputs (every task, and
families whose positions or inputs differ), so the gradients explanations take are the model's."""

import keras
import numpy as np
import pytest

from harness import numpy_tree
from keras_bert import DistilBertBackbone, RobertaBackbone
from pipelines.long_text_reference import task_model

pytestmark = pytest.mark.only_backend(
    "torch", reason="Keras code, the same on every backend; test_captum_parity.py runs it for every task on all three"
)


def _inputs(shape, vocabulary_size=147, seed=0):
    rng = np.random.default_rng(seed)
    padding_mask = np.ones(shape, "int32")
    padding_mask[..., -2:] = 0  # padding at the end of every row
    token_ids = np.where(padding_mask == 1, rng.integers(5, vocabulary_size, shape), 0).astype("int32")
    return {"token_ids": token_ids, "segment_ids": np.zeros(shape, "int32"), "padding_mask": padding_mask}


def _flat(outputs):
    values = outputs.values() if isinstance(outputs, dict) else [outputs]
    return np.concatenate([np.ravel(v) for v in values])


@pytest.mark.parametrize("kind", ["classifier", "token_classifier", "question_answerer", "multiple_choice"])
def test_task_models_give_their_own_outputs(kind):
    model = task_model(kind, seed=4, max_sequence_length=16)
    x = _inputs((2, 3, 9) if kind == "multiple_choice" else (2, 9))
    embeddings = model.backbone.token_embedding(x["token_ids"].reshape(-1, 9))  # (rows, length, hidden)
    ours = numpy_tree(model.call_with_token_embeddings(x, embeddings))
    np.testing.assert_allclose(_flat(ours), _flat(numpy_tree(model(x))), atol=1e-6)


@pytest.mark.parametrize("family", [RobertaBackbone, DistilBertBackbone])
def test_backbones_of_other_families(family):
    config = dict(vocabulary_size=147, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
                  max_sequence_length=16, dropout=0.0)
    backbone = family(**config)
    x = {k: v for k, v in _inputs((2, 7)).items() if k in backbone.input_names}
    reference = numpy_tree(backbone(x))
    looked_up = keras.ops.convert_to_numpy(backbone.token_embedding(x["token_ids"]))
    changed = looked_up + np.random.default_rng(1).normal(0, 0.5, looked_up.shape).astype("float32")
    moved = numpy_tree(backbone.call_with_token_embeddings(x, changed))
    same = numpy_tree(backbone.call_with_token_embeddings(x, backbone.token_embedding(x["token_ids"])))
    np.testing.assert_allclose(same["sequence_output"], reference["sequence_output"], atol=1e-6)
    assert np.abs(moved["sequence_output"] - reference["sequence_output"]).max() > 1e-3  # the embeddings are used
