"""SavedModel export of classifiers on the family backbones, with each family's tokenizer in the graph.

ALBERT ships with the SentencePiece tokenizer and RoBERTa with byte-level
BPE: `serve_text` must give what the Keras model gives on our tokenizer's
packed ids. DistilBERT and ELECTRA use WordPiece; for all four the
`serve_token_ids` signature must equal the Keras model on the same ids.
"""

import numpy as np
import pytest

from export_helpers import SHORT_TEXTS, sharpen, tokenizer
from keras_bert.export import export_saved_model, read_metadata
from keras_bert.models import (
    AlbertBackbone,
    BertClassifier,
    BertTokenClassifier,
    DistilBertBackbone,
    ElectraBackbone,
    RobertaBackbone,
)
from keras_bert.preprocessing.input_packer import BertInputPacker
from preprocessing_helpers import family_tokenizers

pytestmark = pytest.mark.only_backend(
    "tensorflow",
    reason="the served graph is TensorFlow whatever the backend; JAX/torch export through the same TensorFlow "
    "child process, covered for BertTokenizer in test_saved_model.py",
)
SEQUENCE_LENGTH = 40
SIZES = dict(num_layers=1, num_heads=2, hidden_dim=16, intermediate_dim=32, dropout=0.0, max_sequence_length=48)
TEXTS = SHORT_TEXTS + ["Emma Woodhouse, handsome, clever, and rich", "  it's 1,000 ``quoted''", ""]


def _backbone(family, vocabulary_size):
    return {
        "albert": lambda: AlbertBackbone(vocabulary_size=vocabulary_size, embedding_dim=8, **SIZES),
        "distilbert": lambda: DistilBertBackbone(vocabulary_size=vocabulary_size, **SIZES),
        "electra": lambda: ElectraBackbone(vocabulary_size=vocabulary_size, embedding_dim=8, **SIZES),
        "roberta": lambda: RobertaBackbone(vocabulary_size=vocabulary_size, **SIZES),
    }[family]()


def _tokenizer(family):
    return family_tokenizers(family)[0] if family in ("albert", "roberta") else tokenizer()


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("family", ["albert", "distilbert", "electra", "roberta"])
def test_classifier_serves_text_and_token_ids_like_keras(family, tmp_path):
    import tensorflow as tf  # loads the SavedModel in this process

    tok = _tokenizer(family)
    model = sharpen(BertClassifier(_backbone(family, tok.vocabulary_size()), num_classes=3))
    export_saved_model(model, tmp_path / "export", tok, sequence_length=SEQUENCE_LENGTH, verbose=False)
    assert read_metadata(tmp_path / "export")["tokenizer"]["class"] == type(tok).__name__
    served = tf.saved_model.load(str(tmp_path / "export"))

    inputs = {k: v.numpy() for k, v in BertInputPacker.from_tokenizer(tok, SEQUENCE_LENGTH)(TEXTS).items()}
    expected = np.asarray(model(inputs))
    from_ids = served.signatures["serve_token_ids"](**{k: tf.constant(v) for k, v in inputs.items()})
    np.testing.assert_allclose(from_ids["logits"].numpy(), expected, atol=1e-5)
    if family in ("albert", "roberta"):  # the family's own tokenizer inside the graph
        assert all(inputs["padding_mask"][:, -1] == 0)  # every text fits one window
        from_text = served.signatures["serve_text"](text=tf.constant(TEXTS))
        np.testing.assert_allclose(from_text["probabilities"].numpy(), _softmax(expected), atol=1e-5)
        tokens = served.tokenize(tf.constant(TEXTS[:2]))["token_ids"].numpy()
        assert [[i for i in row if i >= 0] for row in tokens] == tok.tokenize(TEXTS[:2]).to_list()


@pytest.mark.parametrize("family", ["roberta", "albert"])
def test_taggers_serve_the_pipelines_entities_or_say_what_their_tokenizer_lacks(family, tmp_path):
    import tensorflow as tf  # loads the SavedModel in this process

    from keras_bert.pipelines import TokenClassifierPipeline

    tok = _tokenizer(family)
    labels = ["O", "B-PER", "I-PER"]
    model = sharpen(BertTokenClassifier(_backbone(family, tok.vocabulary_size()), num_classes=3, label_names=labels))
    if family == "albert":  # SentencePiece: neither words nor offsets
        with pytest.raises(ValueError, match="reads entities word by word.*SentencePieceTokenizer lacks"):
            export_saved_model(model, tmp_path / "export", tok, sequence_length=SEQUENCE_LENGTH, verbose=False)
        assert not (tmp_path / "export").exists()
        return
    # Byte-level BPE: entities from its words and offsets, in the graph as in the pipeline.
    export_saved_model(model, tmp_path / "export", tok, sequence_length=SEQUENCE_LENGTH, verbose=False)
    texts = [t for t in TEXTS if t]  # the pipeline refuses empty texts
    served = tf.saved_model.load(str(tmp_path / "export")).signatures["serve_text"](text=tf.constant(texts))
    expected = TokenClassifierPipeline(model, tok, sequence_length=SEQUENCE_LENGTH)(texts)
    assert sum(map(len, expected)) > 0  # a random tagger tags something: there are spans to compare
    for row, entities in enumerate(expected):
        n = int(served["num_entities"][row])
        assert [t.decode() for t in served["entity_text"][row, :n].numpy()] == [e["text"] for e in entities]
        assert served["entity_start"][row, :n].numpy().tolist() == [e["start"] for e in entities]
        assert all(e["text"] == texts[row][e["start"] : e["end"]] == e["text"].strip() for e in entities)
