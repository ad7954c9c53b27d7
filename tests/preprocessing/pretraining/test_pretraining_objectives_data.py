"""Pretraining objectives as data options: span and n-gram masking, sentence order, full sentences.

The span-length check compares with SpanBERT's distribution computed here from
its definition (geometric, p = 0.2, lengths 1..10, renormalised: the paper's
mean span length 3.8), with tolerances of 4 standard errors of that
distribution for the number of spans drawn.
"""

import functools

import numpy as np
import pytest

from keras_bert.preprocessing import pretraining
from keras_bert.preprocessing.pretraining.config import OBJECTIVES, PretrainingDataConfig, pretrain_objective_options
from keras_bert.preprocessing.pretraining.masking import _maskable_and_wanted
from keras_bert.preprocessing.pretraining.sentence_pairs import create_sentence_rows, create_sop_pairs
from keras_bert.preprocessing.pretraining.span_masking import choose_spans, span_length_probabilities
from preprocessing_helpers import AUSTEN, ONE_BACKEND_REASON, tokenizer

T = 128
P = 19  # default_max_predictions(128)


@functools.lru_cache(maxsize=None)
def austen_pairs():
    """NSP pairs of length 128 from the first 8 chapters of Persuasion (238 rows), MiniLM vocabulary."""
    tok = tokenizer()
    documents, stats = pretraining.read_documents(str(AUSTEN / "persuasion.txt"))
    token_docs, start_docs, _ = pretraining.tokenize_documents(
        documents[:8], tok, max_sentence_tokens=T - 3, stats=stats
    )
    return pretraining.create_nsp_pairs(
        token_docs, T, tok.cls_token_id, tok.sep_token_id, tok.pad_token_id, word_starts=start_docs, seed=0
    )


def synthetic_documents(num_documents=6, sentences=12, seed=0):
    """Documents whose ids are 1000 * (document + 1) + position, so order and origin can be read back."""
    rng = np.random.default_rng(seed)
    documents = []
    for d in range(num_documents):
        lengths = rng.integers(1, 9, size=sentences)
        ids = 1000 * (d + 1) + np.arange(lengths.sum())
        documents.append(np.split(ids.astype(np.int32), np.cumsum(lengths)[:-1]))
    return documents


def special_ids(tok):
    return (tok.cls_token_id, tok.sep_token_id, tok.pad_token_id, tok.mask_token_id)


@pytest.mark.parametrize(
    "field, value",
    [("span_p", 0.0), ("span_p", 1.5), ("max_span_length", 0), ("max_ngram", 0), ("sentence_task", "order"),
     ("masking", "spans")],
)
def test_config_rejects_objective_values_out_of_range(field, value):
    with pytest.raises(ValueError, match=f"`{field}`.*received {value!r}"):
        PretrainingDataConfig(**{field: value})


def test_objectives_are_valid_configs():
    assert set(OBJECTIVES) == {"mlm_nsp", "span", "ngram", "sop", "roberta"}
    for name in OBJECTIVES:
        config = PretrainingDataConfig(**pretrain_objective_options(name))
        assert config.sentence_task in ("nsp", "sop", "none")
    assert PretrainingDataConfig(**pretrain_objective_options("roberta")).sentence_task == "none"
    with pytest.raises(ValueError, match="received 'electra'"):
        pretrain_objective_options("electra")


def test_span_length_distributions():
    probabilities = span_length_probabilities("span", span_p=0.2, max_span_length=10)
    lengths = np.arange(1, 11)
    geometric = 0.2 * 0.8 ** (lengths - 1)
    np.testing.assert_allclose(probabilities, geometric / geometric.sum())
    assert abs((lengths * probabilities).sum() - 3.8) < 0.01  # SpanBERT's reported mean span length
    np.testing.assert_allclose(span_length_probabilities("ngram", max_ngram=3), [6 / 11, 3 / 11, 2 / 11])
    np.testing.assert_allclose(span_length_probabilities("span", span_p=1.0), [1.0] + [0.0] * 9)


@pytest.mark.only_backend("tensorflow", reason=ONE_BACKEND_REASON)
@pytest.mark.parametrize("masking", ["span", "ngram"])
def test_span_masking_on_austen(masking):
    tok = tokenizer()
    pairs = austen_pairs()
    probabilities = span_length_probabilities(masking)
    token_ids, word_starts = pairs["token_ids"], pairs["word_starts"].astype(np.int32)
    maskable, wanted = _maskable_and_wanted(token_ids, special_ids(tok), 0.15, P)
    chosen, drawn, placed = (
        v.numpy() for v in choose_spans(word_starts, maskable, wanted, np.array([3, 4]), probabilities, P)
    )
    # The 15% budget is filled: the share of real tokens chosen is 15% (to rounding).
    share = chosen.sum() / maskable.numpy().sum()
    assert abs(share - 0.15) < 0.01, share
    # No word is cut and nothing unmaskable is chosen.
    assert not (chosen & ~maskable.numpy()).any()
    word_ids = np.cumsum(word_starts, axis=1)
    for row_chosen, row_words in zip(chosen, word_ids):
        for word in np.unique(row_words[row_chosen]):
            assert row_chosen[row_words == word].all(), "a span cut a word"
    # Drawn lengths follow the distribution (by Wald's identity, the stopping
    # at a full budget does not bias them): mean and every bin within 4 SE.
    values = np.arange(1, len(probabilities) + 1)
    mean = (values * probabilities).sum()
    sd = np.sqrt(((values - mean) ** 2 * probabilities).sum())
    lengths = drawn[drawn > 0]
    assert abs(lengths.mean() - mean) < 4 * sd / np.sqrt(len(lengths)), (lengths.mean(), mean)
    frequencies = np.bincount(lengths, minlength=len(values) + 1)[1:] / len(lengths)
    bin_se = np.sqrt(probabilities * (1 - probabilities) / len(lengths))
    assert np.all(np.abs(frequencies - probabilities) < 4 * bin_se + 1e-12), (frequencies, probabilities)
    # Every span is placed whole but the one that ends a row's budget
    # (measured: 0.3% of the others cut by lack of room, in short rows).
    last = (placed > 0).cumsum(1) == (placed > 0).sum(1, keepdims=True)
    others = (placed > 0) & ~last
    assert np.mean(placed[others] != drawn[others]) < 0.02
    if masking == "span":
        assert (placed == 10).any() and len(lengths) > 500


@pytest.mark.only_backend("tensorflow", reason=ONE_BACKEND_REASON)
def test_span_masking_through_mask_tokens_is_seeded_and_keeps_80_10_10():
    tok = tokenizer()
    pairs = austen_pairs()
    kwargs = dict(
        mask_token_id=tok.mask_token_id, unmaskable_token_ids=special_ids(tok),
        random_token_ids=pretraining.random_token_pool(tok), word_starts=pairs["word_starts"],
        max_predictions_per_seq=P, span_lengths=span_length_probabilities("span"),
    )
    first = {k: v.numpy() for k, v in pretraining.mask_tokens(pairs["token_ids"], [5, 6], **kwargs).items()}
    again = pretraining.mask_tokens(pairs["token_ids"], [5, 6], **kwargs)
    other = pretraining.mask_tokens(pairs["token_ids"], [5, 7], **kwargs)
    assert all(np.array_equal(first[k], again[k]) for k in first)
    assert not np.array_equal(first["mask_positions"], other["mask_positions"])
    chosen = first["mlm_weights"] > 0
    rows = np.repeat(np.arange(len(chosen)), P).reshape(chosen.shape)
    corrupted = first["token_ids"][rows, first["mask_positions"]][chosen]
    assert abs(np.mean(corrupted == tok.mask_token_id) - 0.8) < 0.04
    assert abs(np.mean(corrupted == first["mlm_ids"][chosen]) - 0.1) < 0.03
    with pytest.raises(ValueError, match="needs `word_starts`"):
        pretraining.mask_tokens(pairs["token_ids"], [5, 6], **{**kwargs, "word_starts": None})


def test_sop_pairs_are_consecutive_segments_in_or_out_of_order():
    pairs = create_sop_pairs(synthetic_documents(20), 24, cls_token_id=1, sep_token_id=2, pad_token_id=0, seed=0)
    assert len(pairs["nsp"]) > 20 and 0.3 < pairs["nsp"].mean() < 0.7
    for ids, segments, label in zip(pairs["token_ids"], pairs["segment_ids"], pairs["nsp"]):
        sep = np.flatnonzero(ids == 2)
        first, second = ids[1 : sep[0]], ids[sep[0] + 1 : sep[1]]
        assert len(first) and len(second) and np.all(segments[sep[0] + 1 : sep[1] + 1] == 1)
        assert first[0] // 1000 == second[0] // 1000, "both segments come from one document"
        a, b = (first, second) if label == 0 else (second, first)
        assert np.all(np.diff(a) == 1) and np.all(np.diff(b) == 1) and b[0] > a[-1]
    same = create_sop_pairs(synthetic_documents(20), 24, 1, 2, 0, seed=0)
    assert all(np.array_equal(pairs[k], same[k]) for k in pairs)
    # A document of one two-word sentence still gives a pair: cut at a word start inside it.
    single = create_sop_pairs([[np.array([10, 11, 12], np.int32)]], 8, 1, 2, 0, word_starts=[[[1, 0, 1]]])
    assert single["token_ids"][0].tolist()[:6] in ([1, 10, 11, 2, 12, 2], [1, 12, 2, 10, 11, 2])


def test_full_sentence_rows_pack_whole_sentences_across_documents():
    documents = synthetic_documents()
    rows = create_sentence_rows(documents, 24, 1, 2, 0, sentence_task="none", seed=0)
    assert not rows["segment_ids"].any() and not rows["nsp"].any()
    sentences = {tuple(s) for doc in documents for s in doc}
    found, lengths = [], []
    for ids in rows["token_ids"]:
        real = ids[ids != 0]
        assert real[0] == 1 and real[-1] == 2 and len(real) <= 24
        lengths.append(len(real))
        for part in np.split(real[1:-1], np.flatnonzero(real[1:-1] == 2)):
            part = part[part != 2]
            # Within a document part, sentences follow each other in order.
            assert np.all(np.diff(part) == 1) and len({v // 1000 for v in part}) == 1
            found.extend(part.tolist())
    # Every token once, so every sentence once and whole; rows are nearly full.
    assert sorted(found) == sorted(v for s in sentences for v in s)
    assert np.mean(lengths) > 0.8 * 24
    crossing = sum(((ids == 2).sum() > 1) for ids in rows["token_ids"])
    assert crossing > 0, "no row crossed a document boundary"
    other = create_sentence_rows(documents, 24, 1, 2, 0, sentence_task="none", seed=1)
    assert not np.array_equal(rows["token_ids"], other["token_ids"])


@pytest.mark.only_backend("tensorflow", reason=ONE_BACKEND_REASON)
@pytest.mark.parametrize(
    "options",
    [
        dict(mode="dynamic", sentence_task="none", masking="span", pack_sequences=True),
        dict(mode="static", sentence_task="none", masking="ngram"),
        dict(mode="static", sentence_task="sop", masking="span", pack_sequences=True, dupe_factor=1),
    ],
)
def test_dataset_batches_of_the_objectives(options, tmp_path):
    tok = tokenizer()
    text = (AUSTEN / "persuasion.txt").read_text(encoding="utf-8").splitlines()[200:600]
    (tmp_path / "train.txt").write_text("\n".join(text), encoding="utf-8")
    config = PretrainingDataConfig(sequence_length=32, batch_size=8, seed=3, output_dir=str(tmp_path / "records"))
    files = str(tmp_path / "train.txt")
    x, y, weights = next(iter(pretraining.pretraining_dataset(files, tok, config, verbose=0, **options)))
    if options["sentence_task"] == "none":
        assert set(y) == set(weights) == {"mlm"} and "nsp_positions" not in x
        assert not x["segment_ids"].numpy().any()
    else:
        assert set(y) == {"mlm", "nsp"} and y["nsp"].shape == (8, 3)
    assert ("sequence_ids" in x) == options.get("pack_sequences", False)
    assert x["mask_positions"].shape == (8, 5)
    again = next(iter(pretraining.pretraining_dataset(files, tok, config, verbose=0, **options)))
    assert np.array_equal(x["token_ids"], again[0]["token_ids"])
