"""BertTextEmbedder: the model contract, the tuple axis, the contrastive loss against sentence-transformers, learning."""

import keras
import numpy as np
import pytest

from embedding_helpers import TINY_SENTENCES
from harness import random_bert_inputs, run_model_test, tiny_backbone
from keras_bert import BertTextEmbedder, MultipleNegativesRankingLoss
from task_helpers import fixture_tokenizer


def test_model_contract(tmp_path):
    inputs = random_bert_inputs(4, 8, 147)
    model = run_model_test(
        lambda: BertTextEmbedder(tiny_backbone(), pooling="mean", normalize=True, sequence_length=16),
        inputs, (4, 16), tmp_path,
    )
    restored = keras.saving.load_model(tmp_path / "model.keras")
    assert (restored.pooling, restored.normalize, restored.sequence_length) == ("mean", True, 16)
    norms = np.linalg.norm(keras.ops.convert_to_numpy(model(inputs)), axis=-1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-5)


def test_tuple_axis_embeds_each_text_as_alone():
    model = BertTextEmbedder(tiny_backbone(), pooling="cls")
    first, second = random_bert_inputs(3, 8, 147, seed=1), random_bert_inputs(3, 8, 147, seed=2)
    tuples = {name: np.stack([first[name], second[name]], axis=1) for name in first}  # (3, 2, 8)
    out = keras.ops.convert_to_numpy(model(tuples))
    assert out.shape == (3, 2, 16)
    np.testing.assert_allclose(out[:, 0], keras.ops.convert_to_numpy(model(first)), atol=1e-5)
    np.testing.assert_allclose(out[:, 1], keras.ops.convert_to_numpy(model(second)), atol=1e-5)


@pytest.mark.parametrize("k", [2, 3])
def test_loss_matches_sentence_transformers(k):
    torch = pytest.importorskip("torch")
    losses = pytest.importorskip("sentence_transformers.sentence_transformer.losses")
    embeddings = np.random.default_rng(k).normal(size=(5, k, 8)).astype("float32")
    ours = keras.ops.convert_to_numpy(MultipleNegativesRankingLoss(scale=20.0)(np.zeros(5), embeddings))
    reference = losses.MultipleNegativesRankingLoss(model=None, scale=20.0).compute_loss_from_embeddings(
        [torch.tensor(embeddings[:, i]) for i in range(k)], None
    )
    np.testing.assert_allclose(ours, reference.item(), rtol=1e-5)


def _pair_similarity(model, tuples):
    """Mean cosine of each anchor with its own positive, and with the other positives."""
    out = keras.ops.convert_to_numpy(model.predict(tuples, verbose=0))
    unit = out / np.linalg.norm(out, axis=-1, keepdims=True)
    cosines = unit[:, 0] @ unit[:, 1].T
    own = np.diag(cosines).mean()
    return own, (cosines.sum() - np.trace(cosines)) / (cosines.size - len(cosines))


def test_contrastive_fit_lowers_the_loss_and_pulls_pairs_together():
    # Toy pairs: a sentence and the same words in reverse order; the other pairs are the negatives.
    tokenizer = fixture_tokenizer()
    anchors = TINY_SENTENCES
    positives = [" ".join(reversed(s.split())) for s in TINY_SENTENCES]
    ids = [tokenizer.tokenize([a, p]).to_list() for a, p in zip(anchors, positives)]
    width = 2 + max(len(t) for pair in ids for t in pair)
    tuples = {name: np.zeros((len(ids), 2, width), "int32") for name in ("token_ids", "segment_ids", "padding_mask")}
    for i, pair in enumerate(ids):
        for j, tokens in enumerate(pair):
            row = [tokenizer.cls_token_id, *tokens, tokenizer.sep_token_id]
            tuples["token_ids"][i, j, : len(row)] = row
            tuples["padding_mask"][i, j, : len(row)] = 1
    model = BertTextEmbedder(tiny_backbone(), pooling="mean")
    own_before, other_before = _pair_similarity(model, tuples)
    model.compile(optimizer=keras.optimizers.Adam(3e-3))
    history = model.fit(tuples, epochs=12, batch_size=len(ids), shuffle=False, verbose=0).history["loss"]
    own_after, other_after = _pair_similarity(model, tuples)
    assert history[-1] < 0.5 * history[0], history
    assert own_after - other_after > own_before - other_before + 0.1, (own_before, other_before, own_after, other_after)


@pytest.mark.parametrize(
    "kwargs, message",
    [({"pooling": "weightedmean"}, "mode='weightedmean'"), ({"sequence_length": 64}, "sequence_length=64"),
     ({"scale": 0}, "scale=0")],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BertTextEmbedder(tiny_backbone(), **kwargs)


def test_bad_tuple_inputs_are_named():
    model = BertTextEmbedder(tiny_backbone())
    tuples = {name: np.ones((2, 2, 40), "int32") for name in ("token_ids", "segment_ids", "padding_mask")}
    with pytest.raises(ValueError, match="max_sequence_length"):
        model.fit(tuples, epochs=1, verbose=0)
