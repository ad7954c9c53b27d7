"""Shared pieces of the task tests: the fixture folder, its tokenizer, tiny backbones."""

import functools
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@functools.lru_cache(maxsize=None)
def fixture_tokenizer():
    """The tokenizer of the fixtures' vocab.txt (uncased, ~150 tokens)."""
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    return BertTokenizer(str(FIXTURES / "vocab.txt"))


def tiny_backbone(vocabulary_size=None, max_sequence_length=32, hidden_dim=32, num_layers=2, dropout=0.0, **kwargs):
    """A 2-layer BERT small enough to train in seconds."""
    from keras_bert import BertBackbone

    vocabulary_size = vocabulary_size or fixture_tokenizer().vocabulary_size()
    return BertBackbone(
        vocabulary_size=vocabulary_size,
        num_layers=num_layers,
        num_heads=2,
        hidden_dim=hidden_dim,
        intermediate_dim=2 * hidden_dim,
        max_sequence_length=max_sequence_length,
        dropout=dropout,
        **kwargs,
    )


def write(path, text):
    """Writes `text` to `path` (a pathlib.Path) and returns its str path."""
    path.write_text(text, encoding="utf-8")
    return str(path)
