"""TextEmbedderPipeline against sentence-transformers' `encode`: all-MiniLM-L6-v2 on real sentences, every pooling mode."""

import numpy as np
import pytest

from embedding_helpers import TINY_SENTENCES, long_austen_text, movie_review_sentences, write_sentence_transformers_folder
from harness import tiny_backbone
from keras_bert import BertClassifier, BertTextEmbedder
from keras_bert.pipelines.text_embedder_pipeline import TextEmbedderPipeline
from task_helpers import fixture_tokenizer

sentence_transformers = pytest.importorskip("sentence_transformers")


@pytest.fixture(scope="module")
def minilm(minilm_path):
    """(our pipeline, sentence-transformers' model) of the real all-MiniLM-L6-v2 folder."""
    return TextEmbedderPipeline.from_pretrained(minilm_path), sentence_transformers.SentenceTransformer(
        str(minilm_path), device="cpu"
    )


@pytest.fixture(scope="module")
def texts(shared_data):
    # 19 movie-review sentences and a passage longer than max_seq_length=256 (truncated by both).
    return movie_review_sentences(shared_data) + [long_austen_text(shared_data)]


def test_minilm_matches_sentence_transformers_encode(minilm, texts):
    ours, reference = minilm
    assert (ours.sequence_length, ours.model.pooling, ours.model.normalize) == (256, "mean", True)
    assert ours.input_stats(texts)[-1]["truncated_tokens"] > 0  # the long passage is really cut
    np.testing.assert_allclose(ours(texts), reference.encode(texts), atol=1e-5)


def test_minilm_without_normalisation_matches_sentence_transformers(minilm, texts):
    ours, reference = minilm
    unnormalised = TextEmbedderPipeline(
        BertTextEmbedder(ours.model.backbone, normalize=False, sequence_length=256), ours.tokenizer
    )
    # The same modules without Normalize: Transformer, then Pooling (the short sentences: truncation is tested above).
    short = texts[:-1]
    expected = sentence_transformers.SentenceTransformer(modules=[reference[0], reference[1]], device="cpu").encode(short)
    assert np.linalg.norm(expected, axis=1).min() > 1.5  # really unnormalised (unit vectors have norm 1)
    np.testing.assert_allclose(unnormalised(short), expected, atol=1e-5)


def test_every_pooling_mode_matches_sentence_transformers(tmp_path):
    # One tiny random folder; each mode is its Transformer module followed by a Pooling of that mode.
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling

    path = write_sentence_transformers_folder(tmp_path, pooling="cls", normalize=True)
    transformer = sentence_transformers.SentenceTransformer(path, device="cpu")[0]
    ours = TextEmbedderPipeline.from_pretrained(path)
    assert (ours.model.pooling, ours.model.normalize) == ("cls", True)
    for pooling, normalize in [("cls", True), ("max", False), ("mean_sqrt_len_tokens", False)]:
        modules = [transformer, Pooling(16, pooling_mode=pooling)] + ([Normalize()] if normalize else [])
        expected = sentence_transformers.SentenceTransformer(modules=modules, device="cpu").encode(TINY_SENTENCES)
        embedder = BertTextEmbedder(ours.model.backbone, pooling=pooling, normalize=normalize)
        pipeline = TextEmbedderPipeline(embedder, ours.tokenizer)
        np.testing.assert_allclose(pipeline(TINY_SENTENCES), expected, atol=1e-5, err_msg=pooling)
    np.testing.assert_allclose(pipeline(TINY_SENTENCES[1]), expected[1], atol=1e-5)  # one string: one vector


def test_training_inputs_hold_anchors_positives_and_negatives():
    pipeline = TextEmbedderPipeline(BertTextEmbedder(tiny_backbone()), fixture_tokenizer(), sequence_length=16)
    x = pipeline.training_inputs(TINY_SENTENCES[:3], TINY_SENTENCES[3:], TINY_SENTENCES[::-1][:3])
    assert x["token_ids"].shape[:2] == (3, 3)
    np.testing.assert_array_equal(x["token_ids"][:, 1], pipeline.inputs(TINY_SENTENCES[3:])["token_ids"][:, : x["token_ids"].shape[2]])
    with pytest.raises(ValueError, match=r"one text per anchor. Received lengths \[3, 2\]"):
        pipeline.training_inputs(TINY_SENTENCES[:3], TINY_SENTENCES[:2])


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="needs a BertTextEmbedder or the RuntimeModel of its export. Received: BertClassifier"):
        TextEmbedderPipeline(BertClassifier(tiny_backbone(), num_classes=2), fixture_tokenizer())
    pipeline = TextEmbedderPipeline(BertTextEmbedder(tiny_backbone()), fixture_tokenizer())
    with pytest.raises(ValueError, match="text 1 is empty"):
        pipeline(["anna came", "  "])
    with pytest.raises(ValueError, match="Item 0 is a int"):
        pipeline([3])
