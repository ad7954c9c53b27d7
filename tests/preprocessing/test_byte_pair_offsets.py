"""Byte-level BPE offsets and words: `tokenize_with_offsets` equal to the `tokenizers` library's `offsets`, option by
option, and `tokenize_words` its `word_ids` (blank words joined to the word before).

The truths: `tokenizers.Tokenizer` on a ModernBERT-style tokenizer.json (NFC, [MASK] with lstrip, runs of spaces as
normalized added tokens; see preprocessing_helpers) and copies of it changed one option at a time (other
normalization forms, add_prefix_space, no GPT-2 split, special tokens as text); transformers' RobertaTokenizer on
the RoBERTa test vocabulary, whose post-processor trims spaces from the offsets (`trim_offsets`), with and without
add_prefix_space. Each compares every token's character span on real lines and hostile strings (combining marks,
NFKC ligatures, Hangul jamo, emoji split into byte tokens, NUL, whitespace runs), checks the ids are `tokenize`'s
and that the byte offsets cut the same text out of the UTF-8 bytes.

Backend-independent (TensorFlow ops): tested once, as the other tokenizers are.
"""

import json

import pytest
import tensorflow as tf

from keras_bert.preprocessing import BytePairTokenizer, ModernBertTokenizer
from preprocessing_helpers import (
    FAMILY_HARD_CASES,
    family_folder,
    real_lines_per_file,
    write_modernbert_tokenizer_folder,
)

pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)

HARD_CASES = FAMILY_HARD_CASES + [
    "a [MASK] b  [MASK]c\t[MASK]\u3000[MASK]",
    "words" + " " * 30 + "after thirty spaces, and two:  end  ",
    "e\u0301 versus \u00e9, A\u030a versus \u212b; a\u0300\u0316 and a\u0316\u0300 and q\u0307\u0323",
    "\u1100\u1161\u11a8 \uac00\u11a8 \ud55c \ufb01ne \u2460 \uff21",
    "?x lead on  x   y",
    "\U0001F916\U0001F9D1\U0001F3FF\u200d\U0001F4BB \x00nul\x00 mail |||IP_ADDRESS|||x",
    " leading space and [SEP] [CLS]x",
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return write_modernbert_tokenizer_folder(tmp_path_factory.mktemp("modernbert"))


def _check(ours, reference_encode, texts):
    """Every text's ids and character spans equal the reference's; byte spans cut the same text."""
    ids, starts, ends = ours.tokenize_with_offsets(texts)
    _, byte_starts, byte_ends = ours.tokenize_with_offsets(texts, unit="byte")
    assert ids.to_list() == ours.tokenize(texts).to_list()
    wrong = []
    for text, row, a, b, byte_a, byte_b in zip(
        texts, ids.to_list(), starts.to_list(), ends.to_list(), byte_starts.to_list(), byte_ends.to_list()
    ):
        expected_ids, expected_spans = reference_encode(text)
        assert row == expected_ids, text
        spans = list(zip(a, b))
        if spans != [tuple(span) for span in expected_spans]:
            wrong.append((text, [(s, tuple(e)) for s, e in zip(spans, expected_spans) if s != tuple(e)][:3]))
        data = text.encode("utf-8")
        assert [data[x:y].decode("utf-8") for x, y in zip(byte_a, byte_b)] == [text[x:y] for x, y in spans]
    assert wrong == []
    assert sum(map(len, ids.to_list())) > len(texts)  # text went through, not empty rows


def _rust_encode(path, special_tokens_as_text=False):
    from tokenizers import Tokenizer as RustTokenizer

    reference = RustTokenizer.from_file(str(path))
    reference.encode_special_tokens = special_tokens_as_text

    def encode(text):
        encoding = reference.encode(text, add_special_tokens=False)
        return encoding.ids, encoding.offsets

    return encode


def test_modernbert_offsets_equal_tokenizers_on_real_lines(folder):
    texts = list(real_lines_per_file()) + HARD_CASES
    assert len(texts) > 800
    _check(ModernBertTokenizer.from_pretrained(folder), _rust_encode(folder / "tokenizer.json"), texts)


@pytest.mark.parametrize(
    "edit, options",
    [
        (lambda spec: spec.update(normalizer={"type": "NFKC"}), {}),
        (lambda spec: spec.update(normalizer={"type": "NFD"}), {}),
        (lambda spec: spec["pre_tokenizer"].update(add_prefix_space=True), {}),
        (lambda spec: spec["pre_tokenizer"].update(use_regex=False), {}),
        (lambda spec: None, {"special_tokens_in_strings": False}),
    ],
    ids=["NFKC", "NFD", "add_prefix_space", "no_regex", "special_tokens_as_text"],
)
def test_each_option_gives_the_offsets_tokenizers_gives(folder, tmp_path, edit, options):
    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    edit(spec)
    for name in ("config.json", "tokenizer_config.json"):
        (tmp_path / name).write_text((folder / name).read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    ours = ModernBertTokenizer.from_pretrained(tmp_path, **options)
    assert not ours.trim_offsets  # TemplateProcessing does not trim
    encode = _rust_encode(tmp_path / "tokenizer.json", special_tokens_as_text=bool(options))
    _check(ours, encode, list(real_lines_per_file(10)) + HARD_CASES)


@pytest.mark.parametrize("add_prefix_space", [False, True])
def test_roberta_offsets_are_trimmed_as_transformers_trims_them(add_prefix_space):
    from transformers import RobertaTokenizer

    folder = family_folder("roberta")
    ours = BytePairTokenizer.from_pretrained(folder, add_prefix_space=add_prefix_space)
    reference = RobertaTokenizer.from_pretrained(folder, add_prefix_space=add_prefix_space)
    assert ours.trim_offsets

    def encode(text):
        encoding = reference(text, add_special_tokens=False, return_offsets_mapping=True)
        return encoding["input_ids"], encoding["offset_mapping"]

    _check(ours, encode, list(real_lines_per_file(10)) + HARD_CASES)
    untrimmed = BytePairTokenizer.from_pretrained(folder, trim_offsets=False)
    _, starts, _ = untrimmed.tokenize_with_offsets("Hello world")
    assert starts.numpy().tolist()[-1] == 5  # "Ġworld" keeps its space: " world"


def test_offsets_in_a_graph_equal_eager_and_the_option_is_in_the_config(folder):
    ours = ModernBertTokenizer.from_pretrained(folder)
    texts = HARD_CASES[:4]
    eager = [t.to_list() for t in ours.tokenize_with_offsets(texts, unit="byte")]
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(4).map(lambda t: ours.tokenize_with_offsets(t, "byte"))
    assert [t.to_list() for t in next(iter(dataset))] == eager
    assert ours.get_config()["trim_offsets"] is False
    restored = ModernBertTokenizer.from_config(ours.get_config())
    assert [t.to_list() for t in restored.tokenize_with_offsets(texts, unit="byte")] == eager
    with pytest.raises(ValueError, match='"char" or "byte"'):
        ours.tokenize_with_offsets(texts, unit="token")


def _words_from_word_ids(ids, word_ids, blank):
    """`tokenizers`' words (tokens grouped by `word_ids`), a word of blank tokens joined to the word before."""
    words = []
    for token, word in zip(ids, word_ids):
        if words and word == words[-1][0]:
            words[-1][1].append(token)
        else:
            words.append((word, [token]))
    joined = []
    for _, tokens in words:
        if joined and all(blank[t] for t in tokens):
            joined[-1] += tokens
        else:
            joined.append(tokens)
    return joined


def test_words_are_the_pre_tokenizer_words_of_tokenizers_with_blank_runs_joined(folder):
    from tokenizers import Tokenizer as RustTokenizer
    from transformers import RobertaTokenizer

    texts = list(real_lines_per_file(20)) + HARD_CASES + ["Anna  met Ivan in New York .\n", "  Anna", "x\n\n\ny  "]
    modernbert = ModernBertTokenizer.from_pretrained(folder)
    rust = RustTokenizer.from_file(str(folder / "tokenizer.json"))
    roberta = BytePairTokenizer.from_pretrained(family_folder("roberta"))
    hf_roberta = RobertaTokenizer.from_pretrained(family_folder("roberta"))
    for ours, encode in (
        (modernbert, lambda t: (lambda e: (e.ids, e.word_ids))(rust.encode(t, add_special_tokens=False))),
        (roberta, lambda t: (lambda e: (e["input_ids"], e.word_ids()))(hf_roberta(t, add_special_tokens=False))),
    ):
        blank = ours._blank_ids.numpy()
        words = ours.tokenize_words(texts).to_list()
        assert [[i for word in row for i in word] for row in words] == ours.tokenize(texts).to_list()
        assert [_words_from_word_ids(*encode(t), blank) for t in texts] == words
    # "  " (an added run of spaces) and GPT-2's "Ċ" end the words before them; a text's leading blank stays a word.
    assert [len(row) for row in modernbert.tokenize_words(["Anna  met", "end .\n", "  Anna"]).to_list()] == [2, 2, 2]
