"""Streamed pretraining data: the same batches as the in-memory path's in shape, a fixed corpus share per
worker, seeded, static shards written batch by batch, and named errors for bad input."""

import json
import random

import numpy as np
import pytest

from keras_bert.preprocessing import pretraining
from keras_bert.preprocessing.pretraining.sentence_pairs import flat_document, window_pairs
from keras_bert.preprocessing.pretraining.streaming import worker_share
from preprocessing_helpers import AUSTEN, ONE_BACKEND_REASON, tokenizer

pytestmark = pytest.mark.only_backend("tensorflow", reason=ONE_BACKEND_REASON)

# Tiny settings: a small shuffle buffer and window so that the first batch comes after a few documents.
TINY = dict(sequence_length=32, batch_size=8, stream_shuffle_buffer=64, stream_window_documents=4, verbose=0)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Five files of 100 lines, one from each of five novels: blank-line documents (paragraphs)."""
    folder = tmp_path_factory.mktemp("streamed")
    for name in ("emma", "persuasion", "mansfieldpark", "northangerabbey", "prideprejudice"):
        lines = (AUSTEN / f"{name}.txt").read_text(encoding="utf-8").splitlines()[400:500]
        (folder / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def streamed(folder, **options):
    return pretraining.pretraining_dataset(
        str(folder), tokenizer(), streaming=True, document_boundary="blank_line", return_stats=True,
        **{**TINY, **options},
    )


def token_ids(dataset, count):
    return [x["token_ids"].numpy() for x, _, _ in dataset.take(count)]


def test_streamed_batches_match_the_in_memory_layout_and_are_seeded(folder):
    dataset, stats = streamed(folder, masking="whole-word")
    in_memory = pretraining.pretraining_dataset(
        str(folder), tokenizer(), document_boundary="blank_line", masking="whole-word", **TINY
    )
    assert dataset.element_spec == in_memory.element_spec
    first_epoch = token_ids(dataset, 3)
    assert not np.array_equal(token_ids(dataset, 1)[0], first_epoch[0])  # a second pass: new pairs and masks
    again, _ = streamed(folder, masking="whole-word")
    other_seed, _ = streamed(folder, masking="whole-word", seed=1)
    assert all(np.array_equal(a, b) for a, b in zip(first_epoch, token_ids(again, 3)))
    assert not np.array_equal(first_epoch[0], token_ids(other_seed, 1)[0])
    x, y, weights = next(iter(dataset))
    assert x["mask_positions"].shape == (8, 5) and y["nsp"].shape == (8,) and set(y["nsp"].numpy()) <= {0, 1}
    assert float(weights["mlm"].numpy().sum()) > 0
    assert stats["files"] >= 1 and stats["tokens"] > 0


def test_one_epoch_reads_every_document_once(folder):
    tok = tokenizer()
    documents, counts = pretraining.read_documents(str(folder), document_boundary="blank_line")
    token_docs, _, counts = pretraining.tokenize_documents(documents, tok, max_sentence_tokens=29, stats=counts)
    dataset, stats = streamed(folder, drop_remainder=False)
    rows = sum(len(y["nsp"]) for _, y, _ in dataset)
    for key in ("files", "lines", "documents", "sentences", "tokens"):
        assert stats[key] == counts[key], key
    assert rows >= len(token_docs)  # every document gives at least one pair


def test_random_next_segments_come_from_the_window():
    rng = random.Random(0)
    # Document d holds ids 100 * (d + 1) ...: a pair's ids say where each part came from.
    docs = [[np.arange(100 * (d + 1) + 10 * s, 100 * (d + 1) + 10 * s + 4, dtype=np.int32) for s in range(6)]
            for d in range(5)]
    window = [flat_document(doc) for doc in docs[2:]]
    pairs = window_pairs(window, 20, 1, 2, 0, rng, random_next_probability=0.9)
    assert len(pairs["nsp"]) >= 2 and pairs["nsp"].any()
    for ids, segments, label in zip(pairs["token_ids"], pairs["segment_ids"], pairs["nsp"]):
        a, b = ids[(segments == 0) & (ids >= 100)], ids[(segments == 1) & (ids >= 100)]
        assert set(a // 100) == {5}
        assert set(b // 100) <= ({3, 4} if label else {5})  # never from documents 0 and 1, outside the window


def test_workers_read_disjoint_shares_that_make_up_the_corpus(folder):
    files = [f"f{k}" for k in range(5)]
    assert [worker_share(files, 2, i) for i in range(2)] == [(["f0", "f2", "f4"], None), (["f1", "f3"], None)]
    assert worker_share(files, 8, 3) == (files, (8, 3))
    tok = tokenizer()
    for corpus in (folder, folder / "persuasion.txt"):  # by file; by document (fewer files than workers)
        documents, _ = pretraining.read_documents(str(corpus), document_boundary="blank_line")
        whole = pretraining.tokenize_documents(documents, tok, max_sentence_tokens=29)[2]
        tokens = 0
        for index in range(2):
            dataset, stats = streamed(corpus, drop_remainder=False, num_workers=2, worker_index=index)
            for _ in dataset:
                pass
            tokens += stats["tokens"]
        assert tokens == whole["tokens"], corpus


def test_streamed_packing_gives_the_packed_layout(folder):
    dataset, stats = streamed(folder, pack_sequences=True, max_sequences_per_pack=2)
    x, y, weights = next(iter(dataset))
    assert x["sequence_ids"].shape == (8, 32) and y["nsp"].shape == (8, 2) and weights["nsp"].shape == (8, 2)
    assert stats["packed_rows"] < stats["unpacked_rows"]


def test_static_mode_streams_into_shards_and_reuses_them(folder, tmp_path, capsys):
    options = dict(mode="static", output_dir=str(tmp_path), dupe_factor=2, num_shards=3)
    dataset, stats = streamed(folder, **options)
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["examples"] == stats["examples"] > 8 and len(meta["paths"]) == 3
    assert meta["settings"]["streaming"]["stream_window_documents"] == 4
    assert sum(1 for _ in dataset) == stats["examples"] // 8
    pretraining.pretraining_dataset(
        str(folder), tokenizer(), streaming=True, document_boundary="blank_line", **{**TINY, **options, "verbose": 1}
    )
    assert "reusing 3 TFRecord files" in capsys.readouterr().out


def test_bad_input_is_named(folder, tmp_path):
    tok = tokenizer()
    with pytest.raises(ValueError, match=r"`files` names no text files; received \[\]"):
        pretraining.pretraining_dataset([], tok, streaming=True)
    with pytest.raises(ValueError, match="no file matches"):
        pretraining.pretraining_dataset(str(tmp_path / "missing-*.txt"), tok, streaming=True)
    small = tmp_path / "small.txt"
    small.write_text("One short sentence here. And a second one.\n", encoding="utf-8")
    for streaming in (True, False):
        with pytest.raises(ValueError, match="The corpus gives 2 pairs, fewer than `batch_size` 8"):
            pretraining.pretraining_dataset(str(small), tok, streaming=streaming, **TINY)
    records = tmp_path / "records"
    with pytest.raises(ValueError, match=r"gives \d examples, fewer than `batch_size` 8"):
        pretraining.pretraining_dataset(
            str(small), tok, streaming=True, mode="static", output_dir=str(records), dupe_factor=2, **TINY
        )
    assert not list(records.glob("*.tfrecord")) and not (records / "metadata.json").exists()
    blank = tmp_path / "blank.txt"
    blank.write_text("\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match="hold no usable text"):
        pretraining.pretraining_dataset(str(blank), tok, streaming=True, **TINY)
    with pytest.raises(ValueError, match="`num_workers` 2 needs `streaming=True`"):
        pretraining.PretrainingDataConfig(num_workers=2)
    with pytest.raises(ValueError, match=r"`worker_index` must be in \[0, num_workers 2\); received 2"):
        pretraining.PretrainingDataConfig(streaming=True, num_workers=2, worker_index=2)
    with pytest.raises(ValueError, match="`streaming=True` draws NSP pairs only; received sentence_task='sop'"):
        pretraining.PretrainingDataConfig(streaming=True, sentence_task="sop")
