"""BertTokenizer: BERT's cleanup rules, offsets, tf.data/tf.function, and HF parity."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
from preprocessing_helpers import hf_fast, hf_ids, hf_legacy, minilm_folder, tokenizer, toy_vocabulary


# Text preprocessing and metrics are TensorFlow / NumPy code that does the
# same thing whatever KERAS_BACKEND is; one pass keeps the suite in budget.
pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)

# Strings where BERT's cleanup is easy to get wrong; tf-text's FastBertTokenizer
# folds several of them (… → ..., ² → 2, ß → ss, ς → σ, drops ´).
HARD_STRINGS = [
    "Wait… what?",
    "E = mc² and x₁",
    "Straße und Fuß",
    "λόγος ς σ final sigma",
    "It´s café´ time",
    "naïve résumé Ångström",
    "emoji 😀👍🏽 here",
    "family 👨‍👩‍👧 zwj",
    "zero\u200bwidth\u200djoiner\u200cnon",
    "RTL שלום עולם and عربي\u200f text",
    "combining e\u0301 a\u0300\u0316 o\u0308",
    "İstanbul ıi",
    "ﬁne ﬃ ligatures",
    "Ⅻ roman ① circled",
    "ａｂｃ fullwidth ＡＢＣ",
    "Ω ohm Kelvin K Å angstrom",
    "tab\there\nnew\r\nline",
    "no\u00a0break\u2009thin\u3000ideographic\u202fnarrow",
    "ctrl\x01\x07\x1b[0m chars\x7f",
    "bom\ufeffhere and soft\u00adhyphen",
    "中文字符 and 日本語 かな 한국어 ㄱ",
    "don't can't it's O'Neil",
    "$100 & 50% off!! #tag @user http://x.co/a?b=c",
    "U.S.A. e.g. i.e. ... ?! ¿Qué? ¡Sí!",
    "«quotes» „low“ ‘single’ – — dash",
    "hello [MASK] world [SEP] x[CLS]y",
    "[mask] [unk] [ UNK ]",
    "x" * 101,
    "é" * 101,
    "ab" * 50,
    "é" * 60,
    "\ufffd replacement \ufffd",
    "line\u2028sep\u2029para\x85nel",
    "Ǆ ǅ ǆ titlecase",
    "ᾼ ᾳ iota subscript \u0345",
    "",
    "   ",
]
# Python lowercases a word-final capital sigma to "ς"; transformers'
# default (Rust) tokenizer and ours give "σ". Compared separately below.
SIGMA_STRINGS = ["ΟΔΟΣ", "ΑΣ'Α ΑΣ.", "ΣΑΣ"]


def test_special_tokens_and_vocabulary_accessors():
    tok = tokenizer()
    assert (tok.pad_token_id, tok.unk_token_id, tok.cls_token_id, tok.sep_token_id, tok.mask_token_id) == (
        0, 100, 101, 102, 103,
    )  # fmt: skip
    assert tok.vocabulary_size() == 30522
    assert tok.get_vocabulary()[101] == "[CLS]"
    assert tok.id_to_token(7592) == "hello"
    assert tok.token_to_id("##able") == tok.get_vocabulary().index("##able")
    with pytest.raises(ValueError, match="not in the vocabulary"):
        tok.token_to_id("no-such-token")
    with pytest.raises(ValueError, match=r"\[0, 30522\)"):
        tok.id_to_token(30522)


def test_vocabulary_validation_names_tokens_and_file(tmp_path):
    missing = tmp_path / "missing.txt"
    missing.write_text("[PAD]\n[UNK]\n[CLS]\nhello\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"missing\.txt.*\['\[SEP\]', '\[MASK\]'\]"):
        BertTokenizer(str(missing))
    duplicated = tmp_path / "dup.txt"
    duplicated.write_text("\n".join(toy_vocabulary() + ["cat", "dog"]) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"dup\.txt.*2 duplicated.*'cat', 'dog'"):
        BertTokenizer(str(duplicated))
    with pytest.raises(ValueError, match="`vocabulary` must be"):
        BertTokenizer(42)


def test_from_pretrained_reads_folder_file_and_casing(tmp_path):
    (tmp_path / "vocab.txt").write_text("\n".join(toy_vocabulary()) + "\n", encoding="utf-8")
    assert BertTokenizer.from_pretrained(tmp_path).lowercase  # no config: uncased default
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"do_lower_case": False}))
    cased = BertTokenizer.from_pretrained(tmp_path)
    assert not cased.lowercase
    assert not BertTokenizer.from_pretrained(tmp_path / "vocab.txt").lowercase
    assert BertTokenizer.from_pretrained(tmp_path, lowercase=True).lowercase
    assert cased.tokenize("Cat cat").numpy().tolist() == [1, 6]
    with pytest.raises(ValueError, match="does not exist"):
        BertTokenizer.from_pretrained(tmp_path / "nowhere")


def test_cleanup_rules_on_a_toy_vocabulary():
    tok = BertTokenizer(toy_vocabulary())

    def tokens(text):
        return [tok.id_to_token(i) for i in tok.tokenize(text).numpy()]

    assert tokens("The Cat, unaffable!") == ["the", "cat", ",", "un", "##aff", "##able", "!"]
    assert tokens("Café") == ["cafe"]  # accent stripped (NFD, Mn dropped)
    assert tokens("Cafe\u0301") == ["cafe"]  # combining accent
    assert tokens("hello\u00a0world") == ["hello", "world"]  # no-break space
    assert tokens("hel\x00lo\u200b wor\x07ld") == ["hello", "world"]  # controls dropped
    assert tokens("中文cat") == ["中", "文", "cat"]  # CJK split off
    assert tokens("cat's") == ["cat", "'", "s"]
    assert tokens("zebra") == ["[UNK]"]  # not coverable
    assert tokens("a" + "b" * 100) == ["[UNK]"]  # 101 characters
    assert tokens("a" + "b" * 99) == ["a"] + ["##b"] * 99  # 100 characters: kept


def test_cased_keeps_case_and_accents():
    cased, uncased = tokenizer(lowercase=False), tokenizer(lowercase=True)
    text = "Héllo World"
    assert cased.tokenize(text).numpy().tolist() == hf_ids(hf_fast(False), [text])[0]
    assert cased.tokenize(text).numpy().tolist() != uncased.tokenize(text).numpy().tolist()
    assert uncased.tokenize(text).numpy().tolist() == hf_ids(hf_fast(True), [text])[0]


@pytest.mark.parametrize("lowercase", [True, False], ids=["uncased", "cased"])
def test_hard_strings_agree_with_transformers(lowercase):
    tok = tokenizer(lowercase)
    ours = tok.tokenize(HARD_STRINGS + SIGMA_STRINGS).to_list()
    assert ours == hf_ids(hf_fast(lowercase), HARD_STRINGS + SIGMA_STRINGS)
    if lowercase:
        # The Python reference agrees too, except on word-final capital sigma.
        assert ours[: len(HARD_STRINGS)] == hf_ids(hf_legacy(True), HARD_STRINGS)
        legacy = tok.detokenize(hf_ids(hf_legacy(True), ["ΟΔΟΣ"])[0]).numpy().decode()
        assert legacy == "οδος" and tok.detokenize(ours[len(HARD_STRINGS)]).numpy().decode() == "οδοσ"


def test_invalid_utf8_is_replaced_and_dropped():
    tok = tokenizer()
    raw = b"caf\xff\xc3 ok \xe2\x82"
    expected = hf_ids(hf_fast(), [raw.decode("utf-8", errors="replace")])[0]
    assert tok.tokenize(tf.constant(raw)).numpy().tolist() == expected
    ids, starts, ends = tok.tokenize_with_offsets(tf.constant([raw]), unit="byte")
    assert ids.to_list()[0] == expected
    assert [raw[s:e] for s, e in zip(starts.to_list()[0], ends.to_list()[0])] == [b"caf", b"ok"]


@pytest.mark.parametrize("lowercase", [True, False], ids=["uncased", "cased"])
def test_offsets_match_transformers_and_map_back(lowercase):
    tok = tokenizer(lowercase)
    texts = HARD_STRINGS + SIGMA_STRINGS
    ids, starts, ends = tok.tokenize_with_offsets(texts)
    reference = hf_fast(lowercase)(texts, add_special_tokens=False, return_offsets_mapping=True)
    assert ids.to_list() == reference["input_ids"]
    ours = [list(zip(s, e)) for s, e in zip(starts.to_list(), ends.to_list())]
    assert ours == [[tuple(o) for o in row] for row in reference["offset_mapping"]]
    # Byte offsets cut the same spans out of the UTF-8 encoding.
    _, byte_starts, byte_ends = tok.tokenize_with_offsets(texts, unit="byte")
    for text, cs, ce, bs, be in zip(texts, starts.to_list(), ends.to_list(), byte_starts.to_list(), byte_ends.to_list()):
        encoded = text.encode("utf-8")
        assert [text[a:b] for a, b in zip(cs, ce)] == [encoded[a:b].decode("utf-8") for a, b in zip(bs, be)]
    # Scalars give dense tensors; a bad unit is refused.
    ids, starts, ends = tok.tokenize_with_offsets("Héllo wörld")
    assert isinstance(ids, tf.Tensor) and starts.numpy().tolist() == [0, 6]
    with pytest.raises(ValueError, match="unit"):
        tok.tokenize_with_offsets("x", unit="word")


def test_offsets_of_accented_tokens_cover_the_original_characters():
    tok = tokenizer()
    text = "NAÏVE Ångström! İstanbul"
    ids, starts, ends = tok.tokenize_with_offsets(text)
    spans = [text[s:e] for s, e in zip(starts.numpy(), ends.numpy())]
    assert "".join(spans) == text.replace(" ", "")
    assert spans[0].startswith("NA") and "!" in spans


def test_shapes_scalar_list_tensor_and_errors():
    tok = tokenizer()
    scalar = tok.tokenize("hello world")
    assert isinstance(scalar, tf.Tensor) and scalar.dtype == tf.int32 and scalar.shape == (2,)
    batch = tok.tokenize(["hello world", "", "unbelievable"])
    assert isinstance(batch, tf.RaggedTensor) and batch.dtype == tf.int32
    assert batch.shape.as_list() == [3, None]
    assert tok.tokenize(tf.constant(["hello"])).to_list() == tok.tokenize(np.array(["hello"])).to_list()
    with pytest.raises(ValueError, match="1-D batch"):
        tok.tokenize([["a", "b"]])


def test_tokenize_words_groups_wordpieces():
    tok = tokenizer()
    words = tok.tokenize_words(["unaffable cats, [MASK]!"])
    pieces = [[tok.id_to_token(i) for i in word] for word in words.to_list()[0]]
    assert pieces == [["una", "##ffa", "##ble"], ["cats"], [","], ["[MASK]"], ["!"]]
    assert words.shape.rank == 3 and words.dtype == tf.int32
    assert tok.tokenize_words("a b").shape.rank == 2


def test_literal_special_tokens_can_be_plain_text():
    plain = BertTokenizer.from_pretrained(minilm_folder(), special_tokens_in_strings=False)
    tokens = [plain.id_to_token(i) for i in plain.tokenize("a [MASK] b").numpy()]
    assert tokens == ["a", "[", "mask", "]", "b"]


def test_inside_tf_data_and_tf_function():
    tok = tokenizer()
    texts = ["Hello, world!", "Ünïcödé text", "", "中文"]
    expected = tok.tokenize(texts).to_list()

    unbatched = tf.data.Dataset.from_tensor_slices(texts).map(tok.tokenize)
    assert [x.numpy().tolist() for x in unbatched] == expected
    batched = tf.data.Dataset.from_tensor_slices(texts).batch(3).map(tok.tokenize)
    assert [row for batch in batched for row in batch.to_list()] == expected
    with_offsets = tf.data.Dataset.from_tensor_slices(texts).batch(4).map(tok.tokenize_with_offsets)
    assert next(iter(with_offsets))[0].to_list() == expected

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def graph(x):
        return tok.tokenize(x), tok.tokenize_words(x), tok.detokenize(tok.tokenize(x))

    ids, words, text = graph(tf.constant(texts))
    assert ids.to_list() == expected and words.shape.rank == 3 and text.shape == (4,)


def test_detokenize_round_trip():
    tok = tokenizer()
    texts = ["Hello, World! Unbelievable.", "naïve café", ""]
    ids = tok.tokenize(texts)
    assert tok.detokenize(ids).numpy().tolist() == [b"hello , world ! unbelievable .", b"naive cafe", b""]
    padded = [[101, 7592, 1010, 2088, 102, 0, 0]]
    assert tok.detokenize(padded).numpy().tolist() == [b"hello , world"]
    assert tok.detokenize(padded, skip_special_tokens=False).numpy()[0].startswith(b"[CLS] hello")
    assert tok.detokenize([7592, 2088]).numpy() == b"hello world"
    assert tok.detokenize([[7592], [2088, 999]]).numpy().tolist() == [b"hello", b"world !"]
    # Normalized text is a fixed point: tokenize(detokenize(ids)) == ids.
    again = tok.tokenize(tok.detokenize(ids))
    assert again.to_list() == ids.to_list()


def test_get_config_round_trip():
    tok = BertTokenizer(toy_vocabulary(), lowercase=False, special_tokens_in_strings=False, max_chars_per_word=20)
    config = tok.get_config()
    clone = BertTokenizer.from_config(config)
    assert clone.get_config() == config
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(tok))
    assert isinstance(restored, BertTokenizer) and restored.get_config() == config


def test_equal_tokenizers_share_eager_graphs_and_keep_their_own_in_graphs():
    """An eager call runs the graphs an equal tokenizer traced first (same ids, no second trace); other options
    trace their own; a call in a graph (tf.data) traces the tokenizer's own, whose resources it captures."""
    vocabulary = toy_vocabulary() + ["shared", "##graph"]  # a vocabulary no other test traced
    first, second = BertTokenizer(vocabulary), BertTokenizer(list(vocabulary))
    texts = ["The cat sat, sharedgraph!", "[MASK] unaffable"]
    expected = first.tokenize(texts).to_list()
    assert second.tokenize(texts).to_list() == expected
    assert [x.to_list() for x in second.tokenize_with_offsets(texts)] == [
        x.to_list() for x in first.tokenize_with_offsets(texts)]
    assert first._graphs.words.experimental_get_tracing_count() == 1
    assert first._graphs.offsets.experimental_get_tracing_count() == 1
    assert second._graphs.words.experimental_get_tracing_count() == 0
    assert second._graphs.offsets.experimental_get_tracing_count() == 0

    cased = BertTokenizer(vocabulary, lowercase=False)
    assert cased.tokenize(["The cat"]).to_list() == [[1, 6]]  # "The" is not in the uncased vocabulary
    assert cased._graphs.words.experimental_get_tracing_count() == 1

    mapped = tf.data.Dataset.from_tensor_slices(texts).batch(2).map(second.tokenize)
    assert next(iter(mapped)).to_list() == expected
    assert second._graphs.words.experimental_get_tracing_count() == 1
