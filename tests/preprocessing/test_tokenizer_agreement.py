"""Real-data parity with transformers: every 20th line of Austen and the sentiment sets.

The full run over every line is `benchmarks/studies/tokenizer_agreement/tokenizer_agreement.py`; this
test reuses its reader and comparison on a sample.
"""

import importlib.util
from pathlib import Path

import pytest

from preprocessing_helpers import DATA_DIR, ONE_BACKEND_REASON, hf_fast, hf_ids, hf_legacy, tokenizer

_SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "studies" / "tokenizer_agreement" / "tokenizer_agreement.py"


def _benchmark_module():
    spec = importlib.util.spec_from_file_location("tokenizer_agreement", _SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.only_backend("tensorflow", reason=ONE_BACKEND_REASON)
def test_real_data_sample_is_identical_to_transformers():
    bench = _benchmark_module()
    pairs = bench.read_lines(DATA_DIR, every=20)
    texts = [text for _, text in pairs]
    sources = {source for source, _ in pairs}
    assert len(texts) > 3500 and len(sources) == 8  # six novels, two sentiment sets
    id_diffs, offset_diffs = bench.compare(texts, tokenizer(), hf_fast(), with_offsets=True)
    assert [texts[i] for i in id_diffs] == []
    assert [texts[i] for i in offset_diffs] == []
    legacy = hf_legacy()
    ours = tokenizer().tokenize(texts[::5]).to_list()
    assert ours == [legacy(t, add_special_tokens=False)["input_ids"] for t in texts[::5]]


@pytest.mark.only_backend("tensorflow", reason=ONE_BACKEND_REASON)
@pytest.mark.parametrize("lowercase", [True, False])
def test_every_ascii_and_latin1_character_splits_as_in_transformers(lowercase):
    """Every character from U+0000 to U+00FF, alone and between two letters ("a~b": `~` is punctuation, so three
    tokens, where a table that missed it gives `a ##~ ##b`), against transformers' fast tokenizer, uncased and
    cased: the punctuation, whitespace, control and accent tables over the range a user types most."""
    characters = [chr(c) for c in range(0x100)]
    texts = characters + [f"a{c}b" for c in characters] + [f"{c}{c}x{c}" for c in characters]
    ours = tokenizer(lowercase).tokenize(texts).to_list()
    theirs = hf_ids(hf_fast(lowercase), texts)
    assert [repr(t) for t, a, b in zip(texts, ours, theirs) if a != b] == []
