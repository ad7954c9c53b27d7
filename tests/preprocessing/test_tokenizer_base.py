"""What the three tokenizers share through their base (`Tokenizer`): batching, accessors, special tokens, decoding.

Each tokenizer's own algorithm and its parity with transformers are tested in its own file; here the
same checks run on all three, so the one shared implementation answers alike for each.
"""

import collections

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_bert.preprocessing import BertTokenizer, BytePairTokenizer, SentencePieceTokenizer, Tokenizer
from preprocessing_helpers import family_folder, toy_vocabulary

# Text preprocessing does the same thing whatever KERAS_BACKEND is; one pass keeps the suite in budget.
pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)

MAKERS = {
    "wordpiece": lambda: BertTokenizer(toy_vocabulary()),
    "sentence_piece": lambda: SentencePieceTokenizer.from_pretrained(family_folder("albert")),
    "byte_pair": lambda: BytePairTokenizer.from_pretrained(family_folder("roberta")),
}
SPECIAL = {
    "wordpiece": {"pad": "[PAD]", "unk": "[UNK]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"},
    "sentence_piece": {"pad": "<pad>", "unk": "<unk>", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"},
    "byte_pair": {"pad": "<pad>", "unk": "<unk>", "cls": "<s>", "sep": "</s>", "mask": "<mask>"},
}
TEXTS = ["the cat sat on the mat", "a cat, a dog!", ""]


@pytest.fixture(scope="module", params=list(MAKERS))
def kind_and_tokenizer(request):
    return request.param, MAKERS[request.param]()


def test_inputs_scalar_list_array_tensor_and_call(kind_and_tokenizer):
    _, tok = kind_and_tokenizer
    assert isinstance(tok, Tokenizer) and isinstance(tok, tf.Module)
    batch = tok.tokenize(TEXTS)
    assert isinstance(batch, tf.RaggedTensor) and batch.dtype == tf.int32 and batch.shape.as_list() == [3, None]
    assert batch.to_list()[2] == []
    scalar = tok.tokenize(TEXTS[0])
    assert isinstance(scalar, tf.Tensor) and scalar.dtype == tf.int32 and scalar.shape.rank == 1
    assert scalar.numpy().tolist() == batch.to_list()[0]
    assert tok(TEXTS).to_list() == batch.to_list()
    assert tok.tokenize(np.array(TEXTS)).to_list() == tok.tokenize(tf.constant(TEXTS)).to_list() == batch.to_list()
    with pytest.raises(ValueError, match="1-D batch of strings; received shape"):
        tok.tokenize([TEXTS, TEXTS])
    with pytest.raises(ValueError, match="1-D batch of strings; received a RaggedTensor"):
        tok.tokenize(tf.ragged.constant([["a"], ["b", "c"]]))


def test_vocabulary_accessors_and_special_tokens(kind_and_tokenizer):
    kind, tok = kind_and_tokenizer
    vocabulary = tok.get_vocabulary()
    assert tok.vocabulary_size() == len(vocabulary) == tok._vocabulary_tensor.shape[0]
    for role, token in SPECIAL[kind].items():
        token_id = getattr(tok, f"{role}_token_id")
        assert tok.id_to_token(token_id) == vocabulary[token_id] == token
        assert tok.token_to_id(token) == token_id
    assert tok.special_token_ids == sorted(tok.token_to_id(t) for t in SPECIAL[kind].values())
    some_id = tok.tokenize("cat").numpy()[0]
    assert tok.token_to_id(tok.id_to_token(some_id)) == some_id
    with pytest.raises(ValueError, match=rf"`id` must be an id of the vocabulary, in \[0, {len(vocabulary)}\)"):
        tok.id_to_token(len(vocabulary))
    with pytest.raises(ValueError, match="`id` must be"):
        tok.id_to_token(-1)
    with pytest.raises(ValueError, match="is not in the vocabulary"):
        tok.token_to_id("no-such-token-anywhere")


def test_detokenize_takes_lists_dense_and_ragged_and_skips_special_tokens(kind_and_tokenizer):
    _, tok = kind_and_tokenizer
    rows = tok.tokenize(TEXTS[:2]).to_list()
    text = tok.detokenize(tf.ragged.constant(rows)).numpy().tolist()
    assert tok.detokenize(rows).numpy().tolist() == text  # a ragged Python list
    assert [tok.detokenize(row).numpy() for row in rows] == text  # one row: a scalar string
    width = max(map(len, rows)) + 3
    packed = [[tok.cls_token_id, *row, tok.sep_token_id] + [tok.pad_token_id] * (width - len(row) - 2) for row in rows]
    assert tok.detokenize(np.array(packed)).numpy().tolist() == text  # dense and padded
    kept = tok.detokenize(packed, skip_special_tokens=False).numpy().tolist()
    assert all(tok.id_to_token(tok.cls_token_id).encode() in row for row in kept)
    with pytest.raises(tf.errors.InvalidArgumentError, match="smaller than the vocabulary size"):
        tok.detokenize([tok.vocabulary_size()])


def test_config_round_trips_and_equal_configs_share_eager_graphs(kind_and_tokenizer, monkeypatch):
    from keras_bert.preprocessing import _shared_graphs

    _, tok = kind_and_tokenizer
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(tok))
    assert type(restored) is type(tok) and restored.get_config() == tok.get_config()
    assert restored.tokenize(TEXTS).to_list() == tok.tokenize(TEXTS).to_list()
    # The sharing key is the class and the config: equal tokenizers run the first one's eager graphs.
    monkeypatch.setattr(_shared_graphs, "_graphs_by_key", collections.OrderedDict())
    first, second = (keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(tok)) for _ in "ab")
    assert first._traced() is first._graphs
    assert second._traced() is first._graphs
    other = type(tok).from_config({**tok.get_config(), "special_tokens_in_strings": False})
    assert other._traced() is other._graphs


def test_pair_layout_for_the_input_packer(kind_and_tokenizer):
    kind, tok = kind_and_tokenizer
    expected = {"wordpiece": (1, True), "sentence_piece": (1, True), "byte_pair": (2, False)}[kind]
    assert (tok.separators_between, tok.typed_segments) == expected


def test_an_id_without_a_token_counts_but_names_nothing():
    tok = BytePairTokenizer.from_pretrained(family_folder("roberta"))
    config = tok.get_config()
    vocabulary = {token: i for token, i in config["vocabulary"].items() if i != 10}
    gapped = BytePairTokenizer(vocabulary, config["merges"])
    assert gapped.vocabulary_size() == tok.vocabulary_size()
    assert gapped.get_vocabulary()[10] == "" and gapped.get_vocabulary()[11] == tok.get_vocabulary()[11]
    with pytest.raises(ValueError, match="`id` must be an id of the vocabulary"):
        gapped.id_to_token(10)


def _albert_model_without(piece):
    """The test spiece.model without `piece`, serialized."""
    from sentencepiece import sentencepiece_model_pb2  # edits the test's model

    model = sentencepiece_model_pb2.ModelProto()
    with open(f"{family_folder('albert')}/spiece.model", "rb") as f:
        model.ParseFromString(f.read())
    kept = [p for p in model.pieces if p.piece != piece]
    del model.pieces[:]
    model.pieces.extend(kept)
    return model.SerializeToString()


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: BertTokenizer(["[PAD]", "[UNK]", "a"]), r"the vocabulary lacks the special token\(s\) "
         r"\['\[CLS\]', '\[SEP\]', '\[MASK\]'\]; a BERT vocabulary must contain all of"),
        (lambda: SentencePieceTokenizer(_albert_model_without("[MASK]")), r"The SentencePiece model lacks the "
         r"special token\(s\) \['\[MASK\]'\]; ALBERT's must contain all of"),
        (lambda: BytePairTokenizer({"<s>": 0, "a": 1}, []), r"The vocabulary lacks the special token\(s\) "
         r"\['<pad>', '</s>', '<unk>', '<mask>'\]; RoBERTa's must contain all of"),
    ],
    ids=list(MAKERS),
)
def test_a_missing_special_token_is_named(make, message):
    with pytest.raises(ValueError, match=message):
        make()
