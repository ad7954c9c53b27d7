"""Shared pieces of the task tests: the fixture folder and its tokenizer (backbones: harness.tiny_backbone)."""

import functools
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "tasks"


@functools.lru_cache(maxsize=None)
def fixture_tokenizer():
    """The tokenizer of the fixtures' vocab.txt (uncased, ~150 tokens)."""
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    return BertTokenizer(str(FIXTURES / "vocab.txt"))


def write(path, text):
    """Writes `text` to `path` (a pathlib.Path) and returns its str path."""
    path.write_text(text, encoding="utf-8")
    return str(path)
