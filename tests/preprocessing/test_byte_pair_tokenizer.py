"""BytePairTokenizer (RoBERTa): ids equal to transformers' RobertaTokenizer, tf.data, packing, files.

Backend-independent (TensorFlow ops in tf.data, the same whatever KERAS_BACKEND is): tested once, as
the BertTokenizer tests are.
The full-data figure is benchmarks/studies/family_tokenizer_agreement/family_tokenizer_agreement.py.
"""

import json
import os

import keras
import pytest
import tensorflow as tf

from keras_bert.preprocessing.byte_pair_tokenizer import BytePairTokenizer
from keras_bert.preprocessing.input_packer import BertInputPacker
from preprocessing_helpers import (
    FAMILY_HARD_CASES,
    check_eager_graphs_are_shared,
    family_folder,
    family_tokenizers,
    hf_ids,
    real_lines_per_file,
)

# Text preprocessing does the same thing whatever KERAS_BACKEND is; one pass keeps the suite in budget.
pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)


def test_real_lines_and_hard_cases_equal_transformers():
    ours, reference = family_tokenizers("roberta")
    texts = list(real_lines_per_file()) + FAMILY_HARD_CASES
    assert len(texts) > 800
    mine = ours.tokenize(texts).to_list()
    theirs = hf_ids(reference, texts)
    assert [t for t, a, b in zip(texts, mine, theirs) if a != b] == []
    assert sum(map(len, mine)) > 10000  # real text went through, not empty rows


def test_tf_data_and_tf_function_equal_eager():
    ours, _ = family_tokenizers("roberta")
    texts = FAMILY_HARD_CASES[:6]
    eager = ours.tokenize(texts).to_list()
    # Batched, as a pipeline maps it: one trace inside the dataset's graph.
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(3).map(ours.tokenize)
    assert [row for batch in dataset for row in batch.to_list()] == eager
    assert ours.tokenize(texts[0]).numpy().tolist() == eager[0]



def test_equal_tokenizers_share_eager_graphs_and_keep_their_own_in_graphs(monkeypatch):
    folder = family_folder("roberta")
    check_eager_graphs_are_shared(
        lambda: BytePairTokenizer.from_pretrained(folder), lambda: BytePairTokenizer.from_pretrained(folder, special_tokens_in_strings=False),
        FAMILY_HARD_CASES[:6], monkeypatch,
    )

def test_detokenize_gives_the_text_back_and_config_round_trips():
    ours, reference = family_tokenizers("roberta")
    texts = [t for t in FAMILY_HARD_CASES if "\x00" not in t]
    ids = ours.tokenize(texts).to_list()
    decoded = ours.detokenize(tf.ragged.constant(ids), skip_special_tokens=False).numpy()
    assert [t.decode() for t in decoded] == texts
    with_specials = reference("Hello <mask> world")["input_ids"]
    assert ours.detokenize(with_specials, skip_special_tokens=False).numpy().decode() == reference.decode(with_specials)
    assert (ours.cls_token_id, ours.sep_token_id, ours.pad_token_id, ours.unk_token_id, ours.mask_token_id) == (
        reference.cls_token_id, reference.sep_token_id, reference.pad_token_id,
        reference.unk_token_id, reference.mask_token_id,
    )  # fmt: skip
    assert ours.vocabulary_size() == len(reference)
    config = json.loads(json.dumps(keras.saving.serialize_keras_object(ours)))
    restored = keras.saving.deserialize_keras_object(config)
    assert isinstance(restored, BytePairTokenizer) and restored.get_config() == ours.get_config()


def test_pairs_pack_like_transformers():
    ours, reference = family_tokenizers("roberta")
    packer = BertInputPacker.from_tokenizer(ours, sequence_length=16)
    first, second = ["Emma Woodhouse, handsome, clever, and rich", "A"], ["with a comfortable home", "B c"]
    packed = packer(first, second)
    expected = reference(first, second, truncation="longest_first", max_length=16, padding="max_length")
    assert packed["token_ids"].numpy().tolist() == expected["input_ids"]
    assert packed["padding_mask"].numpy().tolist() == expected["attention_mask"]
    assert packed["segment_ids"].numpy().tolist() == [[0] * 16, [0] * 16]  # RoBERTa has one segment type
    single = BertInputPacker.from_tokenizer(ours, sequence_length=8)(first)
    assert single["token_ids"].numpy().tolist() == reference(first, truncation=True, max_length=8, padding="max_length")["input_ids"]


def test_tokenizer_json_alone_is_enough(tmp_path):
    _, reference = family_tokenizers("roberta")
    reference.backend_tokenizer.save(str(tmp_path / "tokenizer.json"))
    from_json = BytePairTokenizer.from_pretrained(tmp_path).get_config()
    assert from_json == family_tokenizers("roberta")[0].get_config()  # same vocabulary and merges, in order


def test_tokenizer_json_added_token_flags_are_followed(tmp_path):
    """roberta-base's own tokenizer.json marks <mask> lstrip ("a <mask>" is "a" + "<mask>"); from that file the
    ids follow the `tokenizers` library, which transformers runs on it."""
    from tokenizers import Tokenizer as RustTokenizer

    _, reference = family_tokenizers("roberta")
    # Without the truncation and padding that transformers' earlier calls left set in its backend.
    spec = json.loads(reference.backend_tokenizer.to_str()) | {"truncation": None, "padding": None}
    for token in spec["added_tokens"]:
        token["lstrip"] = token["content"] == "<mask>"
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    texts = FAMILY_HARD_CASES + ["a <mask> b\t\t<mask>\n<mask>", "   <mask>"]
    ours = BytePairTokenizer.from_pretrained(tmp_path)
    expected = [e.ids for e in RustTokenizer.from_file(str(tmp_path / "tokenizer.json")).encode_batch(
        texts, add_special_tokens=False)]
    assert ours.tokenize(texts).to_list() == expected
    assert ours.get_config()["added_tokens"][-1] == {
        "content": "<mask>", "special": True, "lstrip": True, "rstrip": False, "normalized": False
    }


def test_missing_files_and_bad_input_are_named(tmp_path):
    with pytest.raises(ValueError, match="missing vocab.json, merges.txt"):
        BytePairTokenizer.from_pretrained(tmp_path)
    with open(os.path.join(family_folder("roberta"), "vocab.json"), encoding="utf-8") as f:
        (tmp_path / "vocab.json").write_text(f.read(), encoding="utf-8")
    with pytest.raises(ValueError, match="missing merges.txt"):
        BytePairTokenizer.from_pretrained(tmp_path)
    with pytest.raises(ValueError, match="lacks the special token"):
        BytePairTokenizer({"a": 0}, [])
    with pytest.raises(ValueError, match="'a b c'"):
        BytePairTokenizer({"a": 0}, ["a b c"])
    ours, _ = family_tokenizers("roberta")
    with pytest.raises(tf.errors.InvalidArgumentError, match="U\\+FFFE or U\\+FFFF"):
        ours.tokenize(["fine", "not \uffff fine"])


def test_byte_map_is_gpt2s_for_all_256_bytes_and_text_of_every_utf8_byte_round_trips():
    """The byte -> character map is transformers' `bytes_to_unicode` for every one of the 256 values (a byte left
    out, e.g. 0xFF, which no UTF-8 text contains, would show only here), and text of every printable ASCII byte,
    continuation byte and two-byte lead tokenizes as transformers does and decodes back to itself."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    from keras_bert.preprocessing.byte_pair_tokenizer import byte_to_unicode

    assert byte_to_unicode() == bytes_to_unicode()
    ours, reference = family_tokenizers("roberta")
    # Every non-space code point below 0x800 (one and two UTF-8 bytes: every continuation byte and two-byte lead)
    # plus samples of three and four bytes.
    characters = [chr(c) for c in range(1, 0x800) if not chr(c).isspace()] + ["\u0800", "\uffef", "\U00010000",
                                                                              "\U0010fff0"]
    texts = ["".join(characters[i:i + 40]) for i in range(0, len(characters), 40)]
    used = {b for text in texts for b in text.encode("utf-8")}
    assert set(range(0x21, 0x7F)) | set(range(0x80, 0xC0)) | set(range(0xC2, 0xE0)) <= used
    ids = ours.tokenize(texts).to_list()
    assert ids == hf_ids(reference, texts)
    decoded = ours.detokenize(tf.ragged.constant(ids), skip_special_tokens=False).numpy()
    assert [t.decode() for t in decoded] == texts
