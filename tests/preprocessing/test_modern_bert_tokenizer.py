"""ModernBertTokenizer: ids equal to the `tokenizers` library on a ModernBERT-style tokenizer.json, packing, graphs.

There is no ModernBERT download here, so the reference file is built the way ModernBERT's is laid out: a byte-level
BPE (trained on Austen by `tokenizers`' own trainer, with GPT-NeoX's <|endoftext|>/<|padding|> first), NFC, the
ByteLevel pre-tokenizer, runs of spaces and `|||IP_ADDRESS|||` as plain added tokens, [UNK] [CLS] [SEP] [PAD] [MASK]
last (its [MASK] takes the whitespace before it along), and the TemplateProcessing "[CLS] $A [SEP]" /
"[CLS] $A [SEP] $B [SEP]". `tokenizers.Tokenizer.from_file` of that file is the truth; transformers 5 runs the same
file for model_type "modernbert" (TokenizersBackend), which one test confirms.

Backend-independent (TensorFlow ops in tf.data, the same whatever KERAS_BACKEND is): tested once, as the other
tokenizers are.
"""

import json
import os
import shutil

import keras
import pytest
import tensorflow as tf

from keras_bert.preprocessing import (
    BertInputPacker,
    BertTokenizer,
    BytePairTokenizer,
    ModernBertTokenizer,
    SentencePieceTokenizer,
    Tokenizer,
)
from preprocessing_helpers import (
    FAMILY_HARD_CASES,
    MODERNBERT_SPECIALS as SPECIALS,
    family_folder,
    minilm_folder,
    real_lines_per_file,
    write_modernbert_tokenizer_folder as _write_modernbert_folder,
)

pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)

# Where ModernBERT's file differs from RoBERTa's: [MASK] with lstrip, added runs of spaces, NFC, its own specials.
MODERNBERT_HARD_CASES = [
    "a [MASK] b  [MASK]c\t[MASK]\u3000[MASK]\n\n[MASK]",
    "[MASK] takes ten spaces along, before the added runs of spaces see them:" + " " * 10 + "[MASK]",
    "[CLS][SEP][PAD][UNK][MASK][MASK][unused1] [unused2]",
    "[CLS x [SEP [mask] [Mask] [ MASK]",
    "   [SEP]   [CLS]",
    "words" + " " * 30 + "after thirty spaces, and two:  end  ",
    "line\n\n\n\nbreaks\r\n\r\n  indented\n\t\ttabs \n",
    "e\u0301 versus \u00e9, A\u030a versus \u212b versus \u00c5",
    "mail |||IP_ADDRESS||| at |||IP_ADDRESS|||x|||IP",
    "<|endoftext|>text<|padding|> <|endoftext|>",
    "🤖🧑🏿‍💻 ﷽ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \U0001F1FA\U0001F1F8 ⚡️",
    "日本語の文章、句読点。한국어 문장! 中文，标点。",
    "x" * 300,
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return _write_modernbert_folder(tmp_path_factory.mktemp("modernbert"))


@pytest.fixture(scope="module")
def ours(folder):
    return ModernBertTokenizer.from_pretrained(folder)


def _reference(path, encode_special_tokens=False):
    from tokenizers import Tokenizer as RustTokenizer

    reference = RustTokenizer.from_file(str(path))
    reference.encode_special_tokens = encode_special_tokens
    return reference


def _reference_ids(reference, texts):
    return [encoding.ids for encoding in reference.encode_batch(list(texts), add_special_tokens=False)]


def _variant(folder, tmp_path, edit):
    """A copy of the tokenizer.json changed by `edit(spec)`, as (path, reference)."""
    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    edit(spec)
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path, _reference(path)


def _added_id(spec, content):
    return next(token["id"] for token in spec["added_tokens"] if token["content"] == content)


def test_real_lines_and_hostile_strings_equal_tokenizers(folder, ours):
    texts = list(real_lines_per_file()) + FAMILY_HARD_CASES + MODERNBERT_HARD_CASES
    assert len(texts) > 800
    mine = ours.tokenize(texts).to_list()
    assert [t for t, a, b in zip(texts, mine, _reference_ids(_reference(folder / "tokenizer.json"), texts)) if a != b] == []
    assert sum(map(len, mine)) > 20000  # real text went through, not empty rows
    mask = ours.mask_token_id
    assert ours.tokenize("a [MASK] b").numpy().tolist()[1] == mask  # " [MASK]" is [MASK] alone: lstrip
    # transformers' split_special_tokens=True: special tokens are text, the other added tokens still cut out.
    literal = ModernBertTokenizer.from_pretrained(folder, special_tokens_in_strings=False)
    hard = FAMILY_HARD_CASES + MODERNBERT_HARD_CASES
    expected = _reference_ids(_reference(folder / "tokenizer.json", encode_special_tokens=True), hard)
    assert literal.tokenize(hard).to_list() == expected
    used = {i for row in expected for i in row}
    assert mask not in used and ours.token_to_id("|||IP_ADDRESS|||") in used


@pytest.mark.parametrize(
    "edit",
    [
        # add_prefix_space, whitespace taken along on both sides, a normalized token with lstrip
        lambda spec: (
            spec["pre_tokenizer"].update(add_prefix_space=True),
            [token.update(lstrip=True, rstrip=True) for token in spec["added_tokens"] if token["content"] == "[SEP]"],
            [token.update(normalized=True, lstrip=True) for token in spec["added_tokens"] if "IP" in token["content"]],
        ),
        # no GPT-2 split: each piece between added tokens is one word; NFKC
        lambda spec: (spec["pre_tokenizer"].update(use_regex=False), spec.update(normalizer={"type": "NFKC"})),
        # no normalizer at all
        lambda spec: spec.update(normalizer=None),
    ],
    ids=["prefix_space_and_strips", "no_regex_nfkc", "no_normalizer"],
)
def test_the_files_options_are_followed(folder, tmp_path, edit):
    path, reference = _variant(folder, tmp_path, edit)
    texts = list(real_lines_per_file(10)) + FAMILY_HARD_CASES + MODERNBERT_HARD_CASES
    mine = ModernBertTokenizer.from_pretrained(path).tokenize(texts).to_list()
    assert [t for t, a, b in zip(texts, mine, _reference_ids(reference, texts)) if a != b] == []


def test_singles_and_pairs_pack_as_the_template_says(folder, ours, tmp_path):
    from transformers import AutoTokenizer

    reference = _reference(folder / "tokenizer.json")
    first = ["Emma Woodhouse, handsome, clever, and rich", "A [MASK] b", "", "   "]
    second = ["with a comfortable home and happy disposition", "B  c", "x", "[SEP]"]
    for sequence_length, segments in ((16, [first, second]), (8, [first])):
        reference.enable_truncation(sequence_length, strategy="longest_first")
        reference.enable_padding(length=sequence_length, pad_id=ours.pad_token_id, pad_token="[PAD]")
        expected = reference.encode_batch(list(zip(*segments)) if len(segments) == 2 else first)
        packed = BertInputPacker.from_tokenizer(ours, sequence_length)(*segments)
        assert packed["token_ids"].numpy().tolist() == [e.ids for e in expected]
        assert packed["padding_mask"].numpy().tolist() == [e.attention_mask for e in expected]
        assert packed["segment_ids"].numpy().tolist() == [e.type_ids for e in expected]
    # transformers reads the folder (model_type "modernbert") into the same tokenizer.
    hf = AutoTokenizer.from_pretrained(str(folder))(first, second, truncation="longest_first", max_length=16,
                                                   padding="max_length")
    assert BertInputPacker.from_tokenizer(ours, 16)(first, second)["token_ids"].numpy().tolist() == hf["input_ids"]
    # A template that types B gives segment ids 1 there.
    path, typed_reference = _variant(folder, tmp_path, lambda spec: [
        item[kind].update(type_id=1) for item in spec["post_processor"]["pair"][3:] for kind in item
    ])
    typed = ModernBertTokenizer.from_pretrained(path)
    assert typed.typed_segments and not ours.typed_segments
    typed_reference.enable_truncation(16, strategy="longest_first")
    typed_reference.enable_padding(length=16, pad_id=ours.pad_token_id, pad_token="[PAD]")
    packed = BertInputPacker.from_tokenizer(typed, 16)(first, second)
    assert packed["segment_ids"].numpy().tolist() == [e.type_ids for e in typed_reference.encode_batch(list(zip(first, second)))]


def test_traced_graphs_tf_data_and_a_saved_model(ours, tmp_path):
    texts = MODERNBERT_HARD_CASES[:6]
    eager = ours.tokenize(texts).to_list()
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(3).map(ours.tokenize)
    assert [row for batch in dataset for row in batch.to_list()] == eager
    packer = BertInputPacker.from_tokenizer(ours, 32)

    class Serving(tf.Module):
        def __init__(self):
            super().__init__()
            self.tokenizer = ours  # tracked: its tables go into the SavedModel

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)] * 2)
        def serve(self, first, second):
            return packer(first, second)

    tf.saved_model.save(Serving(), str(tmp_path / "served"))
    loaded = tf.saved_model.load(str(tmp_path / "served"))
    served = loaded.serve(tf.constant(texts[:3]), tf.constant(texts[3:6]))
    assert served["token_ids"].numpy().tolist() == packer(texts[:3], texts[3:6])["token_ids"].numpy().tolist()


def test_vocabulary_decoding_and_config_round_trip(folder, ours):
    reference = _reference(folder / "tokenizer.json")
    assert ours.vocabulary_size() == reference.get_vocab_size(with_added_tokens=True)
    for role, token in ModernBertTokenizer.special_tokens.items():
        assert getattr(ours, f"{role}_token_id") == reference.token_to_id(token)
    texts = [t for t in FAMILY_HARD_CASES + MODERNBERT_HARD_CASES if "\x00" not in t]
    ids = ours.tokenize(texts).to_list()
    decoded = ours.detokenize(tf.ragged.constant(ids), skip_special_tokens=False).numpy()
    assert [t.decode() for t in decoded] == [reference.decode(row, skip_special_tokens=False) for row in ids]
    packed = BertInputPacker.from_tokenizer(ours, 64)(texts)["token_ids"].numpy().tolist()
    # [CLS], [SEP], [PAD] and the [unused] tokens are special: skipped, as the library skips them.
    assert ours.detokenize(packed).numpy().tolist() == [reference.decode(row).encode() for row in packed]
    config = json.loads(json.dumps(keras.saving.serialize_keras_object(ours)))
    restored = keras.saving.deserialize_keras_object(config)
    assert isinstance(restored, ModernBertTokenizer) and restored.get_config() == ours.get_config()
    assert restored.tokenize(texts).to_list() == ids


def test_a_folder_gets_the_tokenizer_its_model_type_names(folder, ours, tmp_path):
    assert type(Tokenizer.from_pretrained(folder)) is ModernBertTokenizer
    assert Tokenizer.from_pretrained(folder / "tokenizer.json").get_config() == ours.get_config()
    for model_type, source, cls in (("roberta", "roberta", BytePairTokenizer), ("albert", "albert", SentencePieceTokenizer)):
        shutil.copytree(family_folder(source), tmp_path / model_type)
        (tmp_path / model_type / "config.json").write_text(json.dumps({"model_type": model_type}), encoding="utf-8")
        assert type(Tokenizer.from_pretrained(tmp_path / model_type)) is cls
    assert type(Tokenizer.from_pretrained(minilm_folder())) is BertTokenizer  # model_type "bert"
    (tmp_path / "gpt2").mkdir()
    (tmp_path / "gpt2" / "config.json").write_text(json.dumps({"model_type": "gpt2"}), encoding="utf-8")
    with pytest.raises(ValueError, match="model_type 'gpt2' has no tokenizer in keras_bert; supported: albert, bert"):
        Tokenizer.from_pretrained(tmp_path / "gpt2")


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda s: s.update(post_processor={"type": "RobertaProcessing", "sep": ["[SEP]", _added_id(s, "[SEP]")],
                                            "cls": ["[CLS]", _added_id(s, "[CLS]")]}), "its post-processor lays out"),
        (lambda s: s["post_processor"].update(pair=s["post_processor"]["pair"][::-1]), "not a layout BertInputPacker"),
        (lambda s: s["model"].update(dropout=0.1), "its BPE model sets dropout=0.1"),
        (lambda s: s.update(pre_tokenizer={"type": "Whitespace"}), "its pre-tokenizer is Whitespace, not ByteLevel"),
        (lambda s: s.update(normalizer={"type": "Lowercase"}), "its normalizer is Lowercase"),
        (lambda s: s["added_tokens"][-1].update(single_word=True), "'\\[unused2\\]' is single_word"),
        # The library would load [unused2] as the id after [unused1], not as the file says.
        (lambda s: s["added_tokens"][-1].update(id=5000), "has id 5000 in the file, but the `tokenizers` library"),
    ],
    ids=["roberta_layout", "reversed_template", "dropout", "pre_tokenizer", "normalizer", "single_word", "added_id"],
)
def test_what_it_would_not_follow_exactly_is_refused_by_name(folder, tmp_path, edit, message):
    path, _ = _variant(folder, tmp_path, edit)
    with pytest.raises(ValueError, match=message):
        ModernBertTokenizer.from_pretrained(path)


def test_a_folder_without_tokenizer_json_is_named(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "modernbert"}), encoding="utf-8")
    with pytest.raises(ValueError, match="has no ModernBERT tokenizer: missing tokenizer.json"):
        Tokenizer.from_pretrained(tmp_path)
