"""BertInputPacker: shapes, dtypes, HF-equal truncation, strings, tf.data."""

import random

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_bert.preprocessing.input_packer import BertInputPacker, longest_first_lengths
from preprocessing_helpers import hf_fast, tokenizer


# Text preprocessing and metrics are TensorFlow / NumPy code that does the
# same thing whatever KERAS_BACKEND is; one pass keeps the suite in budget.
pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)

KEYS = ("token_ids", "segment_ids", "padding_mask")


def test_pair_packing_layout_and_dtypes():
    packer = BertInputPacker(8, cls_token_id=101, sep_token_id=102, pad_token_id=0)
    out = packer(tf.ragged.constant([[5, 6], [7]]), tf.ragged.constant([[8], [9, 10, 11]]))
    assert set(out) == set(KEYS)
    for value in out.values():
        assert value.dtype == tf.int32 and value.shape == (2, 8)
    np.testing.assert_array_equal(out["token_ids"], [[101, 5, 6, 102, 8, 102, 0, 0], [101, 7, 102, 9, 10, 11, 102, 0]])
    np.testing.assert_array_equal(out["segment_ids"], [[0, 0, 0, 0, 1, 1, 0, 0], [0, 0, 0, 1, 1, 1, 1, 0]])
    np.testing.assert_array_equal(out["padding_mask"], [[1, 1, 1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1, 1, 0]])


def test_single_segment_unbatched_and_dense_inputs():
    packer = BertInputPacker(5, cls_token_id=2, sep_token_id=3, pad_token_id=0)
    out = packer(tf.constant([7, 8, 9, 10]))  # one example, truncated to 3
    assert {k: v.shape for k, v in out.items()} == {k: (5,) for k in KEYS}
    np.testing.assert_array_equal(out["token_ids"], [2, 7, 8, 9, 3])
    dense = packer(np.array([[7, 8], [9, 10]], "int64"))
    np.testing.assert_array_equal(dense["token_ids"], [[2, 7, 8, 3, 0], [2, 9, 10, 3, 0]])
    assert dense["token_ids"].dtype == tf.int32


def test_longest_first_matches_transformers():
    tok = tokenizer()
    rng = random.Random(0)
    words = "the cat sat on a mat and purred loudly while unbelievable dogs barked".split()
    first = [" ".join(rng.choices(words, k=rng.randint(0, 16))) for _ in range(200)]
    second = [" ".join(rng.choices(words, k=rng.randint(0, 16))) for _ in range(200)]
    for length in (4, 5, 6, 9, 12, 17, 40):
        packer = BertInputPacker.from_tokenizer(tok, length)
        ours = packer(first, second)
        theirs = hf_fast()(first, second, truncation="longest_first", max_length=length, padding="max_length")
        assert ours["token_ids"].numpy().tolist() == theirs["input_ids"], length
        assert ours["segment_ids"].numpy().tolist() == theirs["token_type_ids"], length
        assert ours["padding_mask"].numpy().tolist() == theirs["attention_mask"], length
        single = packer(first)
        theirs = hf_fast()(first, truncation=True, max_length=length, padding="max_length")
        assert single["token_ids"].numpy().tolist() == theirs["input_ids"], length


def test_longest_first_lengths_ties_go_to_the_second_segment():
    keep_a, keep_b = longest_first_lengths(tf.constant([6, 7, 9, 2, 20]), tf.constant([6, 6, 1, 3, 20]), 9)
    assert keep_a.numpy().tolist() == [4, 5, 8, 2, 4]
    assert keep_b.numpy().tolist() == [5, 4, 1, 3, 5]


def test_round_robin_and_validation():
    packer = BertInputPacker(7, 1, 2, 0, truncate="round_robin")
    out = packer(tf.ragged.constant([[5, 5, 5, 5]]), tf.ragged.constant([[6, 6, 6, 6]]))
    np.testing.assert_array_equal(out["token_ids"], [[1, 5, 5, 2, 6, 6, 2]])
    with pytest.raises(ValueError, match="`truncate` must be one of"):
        BertInputPacker(7, 1, 2, 0, truncate="longest")
    with pytest.raises(ValueError, match=r"`sequence_length` must be an int >= 3.*received 2"):
        BertInputPacker(2, 1, 2, 0)
    with pytest.raises(ValueError, match="`pad_token_id`"):
        BertInputPacker(8, 1, 2, -1)
    with pytest.raises(ValueError, match="no tokenizer"):
        BertInputPacker(8, 1, 2, 0)(["text"])
    with pytest.raises(ValueError, match="all be one example"):
        BertInputPacker(8, 1, 2, 0)(tf.constant([1, 2]), tf.ragged.constant([[1]]))


def test_strings_in_tf_data_batched_and_unbatched():
    tok = tokenizer()
    packer = BertInputPacker.from_tokenizer(tok, 16)
    first = ["The cat sat.", "Héllo, wörld!", ""]
    second = ["It purred.", "Unbelievable", "empty first"]
    expected = packer(first, second)
    unbatched = tf.data.Dataset.from_tensor_slices((first, second)).map(packer)
    rows = list(unbatched)
    for key in KEYS:
        np.testing.assert_array_equal(np.stack([r[key] for r in rows]), expected[key])
    batched = tf.data.Dataset.from_tensor_slices((first, second)).batch(2).map(packer)
    for key in KEYS:
        np.testing.assert_array_equal(np.concatenate([b[key] for b in batched]), expected[key])
    ids = tf.data.Dataset.from_tensor_slices(first).map(tok.tokenize).map(packer)
    assert next(iter(ids))["token_ids"].shape == (16,)
    assert packer("one string")["token_ids"].shape == (16,)


def test_get_config_round_trip():
    packer = BertInputPacker.from_tokenizer(tokenizer(), 12, truncate="round_robin")
    config = packer.get_config()
    clone = BertInputPacker.from_config(config)
    assert clone.get_config()["truncate"] == "round_robin"
    np.testing.assert_array_equal(clone(["a b c"])["token_ids"], packer(["a b c"])["token_ids"])
    plain = BertInputPacker(8, 1, 2, 0)
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(plain))
    assert restored.get_config() == plain.get_config()
