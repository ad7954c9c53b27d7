"""BERT pretraining data: corpus → documents → NSP pairs → masked examples.

This follows google-research/bert `create_pretraining_data.py`:

1. `read_documents`: text files → documents → sentences. A document is a
   chapter, a file, or a blank-line separated block (`document_boundary`); a
   line equal to `document_separator` always ends one. Sentences come from a
   small rule-based splitter (`split_sentences`) or are the lines themselves.
2. `tokenize_documents`: sentences → WordPiece ids, keeping which piece starts
   a word (for whole-word masking).
3. `create_nsp_pairs`: sentences are gathered into a chunk until it reaches
   the target length (`sequence_length - 3`, or with probability
   `short_seq_prob` a random shorter one); the chunk is cut at a random
   sentence into A and B, and with probability `random_next_probability` B is
   replaced by sentences from a random other document (label 1 = "B is
   random", 0 = "B is the actual next", as in Hugging Face); the longer side
   is trimmed at a random end until the pair fits.
4. `mask_tokens` (TensorFlow, batched): 15% of the real tokens (never
   `[CLS]`/`[SEP]`/`[PAD]`), at most `max_predictions_per_seq`, are chosen —
   single tokens or whole words — and replaced 80% by `[MASK]`, 10% by a random
   token and 10% left as they are.

Optionally (`pack_sequences`), `pack_pairs` puts several pairs into one row
before masking ("packed BERT"): each keeps its own [CLS]/[SEP], segment ids,
NSP label and positions from 0, and `sequence_ids` let the model keep
attention within each pair, so less of every batch is padding.

`pretraining_dataset` wires it into a `tf.data.Dataset` in two modes:
"dynamic" (pairs made in Python once or every epoch, masks drawn anew every
epoch inside `tf.data`) and "static" (dupe_factor copies masked once and
written to sharded TFRecords, then read back). Both are seeded: the same seed
gives the same examples.

Differences from the original, on purpose: the short target length is drawn
per pair, not once per document (the original's comment says "sometimes";
its code made every pair of a document short); the number of predictions is
15% of the real tokens, not of the sequence with its three special tokens;
a sentence longer than `sequence_length - 3` is cut into pieces at word
starts instead of losing its tail when the pair is trimmed; random
replacement tokens are drawn from the vocabulary minus special and
`[unused*]` tokens. As in the original, a chunk of a single sentence always
gets a random B, so slightly more than half the labels are 1 (52-53% on
Austen).
"""

import glob
import hashlib
import json
import os
import random
import re
import tempfile

import keras
import numpy as np
import tensorflow as tf

# A chapter heading on its own line: "Chapter 1", "CHAPTER XII.", "VOLUME II".
CHAPTER_PATTERN = r"^\s*(chapter|volume|book)\s+([0-9]+|[ivxlcdm]+)\s*\.?\s*$"
DOCUMENT_BOUNDARIES = ("chapter", "file", "blank_line")
LINE_FORMATS = ("wrapped", "sentence_per_line", "paragraph_per_line")
MASKING = ("token", "whole-word")
MODES = ("dynamic", "static")

# Abbreviations after which a period does not end a sentence.
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st messrs mme mlle col capt gen lt rev esq sr jr prof vs no".split()
)
_SENTENCE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]_]*\s+")
_SENTENCE_START = re.compile(r"[\"'\u201c\u2018(\[_]*[A-Z0-9]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _new_stats():
    return {
        "files": 0,
        "lines": 0,
        "blank_lines": 0,
        "skipped_long_lines": 0,
        "invalid_utf8_lines": 0,
        "control_char_lines": 0,
        "documents": 0,
        "skipped_empty_documents": 0,
        "single_sentence_documents": 0,
        "sentences": 0,
        "skipped_empty_sentences": 0,
        "split_long_sentences": 0,
        "tokens": 0,
    }


def split_sentences(text):
    """Splits a paragraph into sentences with a simple rule.

    A sentence ends at `.`, `!` or `?` (plus closing quotes, brackets or `_`)
    followed by whitespace and a capital letter or digit (after optional
    opening quotes), unless the word before the period is a known
    abbreviation (Mr., Mrs., Dr., St., ...), a single-letter initial, or has
    inner periods (p.m., e.g.).
    Good enough for prose like Austen's; it is no linguistic splitter (a
    question inside a sentence followed by a name will split).

    Args:
        text: a paragraph (str).

    Returns:
        A list of non-empty, stripped sentences.
    """
    sentences, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if not _SENTENCE_START.match(text, end):
            continue
        before = text[start : match.start()].rsplit(None, 1)
        last_word = before[-1].lstrip("\"'(\u201c\u2018_").lower() if before else ""
        if text[match.start()] == "." and (
            last_word in _ABBREVIATIONS
            or (len(last_word) == 1 and last_word.isalpha())
            or "." in last_word  # p.m., e.g., U.S.
        ):
            continue
        sentences.append(text[start:end].strip())
        start = end
    sentences.append(text[start:].strip())
    return [s for s in sentences if s]


def _read_lines(path, max_line_chars, stats):
    """Decoded lines of a file; over-long lines dropped, bad bytes replaced."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text_lines = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        text_lines = []
        for line in raw.split(b"\n"):
            try:
                text_lines.append(line.decode("utf-8"))
            except UnicodeDecodeError:
                stats["invalid_utf8_lines"] += 1
                text_lines.append(line.decode("utf-8", errors="replace"))
    if text_lines and text_lines[-1] == "":
        text_lines.pop()  # the empty string after a final newline
    for line in text_lines:
        stats["lines"] += 1
        line = line.rstrip("\r")
        if len(line) > max_line_chars:
            stats["skipped_long_lines"] += 1
            # Treated as a paragraph break: text around it stays apart.
            yield ""
            continue
        if _CONTROL.search(line):
            # Kept: the tokenizer's cleanup drops control characters.
            stats["control_char_lines"] += 1
        yield line


def read_documents(
    files,
    document_boundary="chapter",
    line_format="wrapped",
    document_separator=None,
    chapter_pattern=CHAPTER_PATTERN,
    max_line_chars=20_000,
    stats=None,
):
    """Reads text files into documents of sentences.

    Args:
        files: a path, a glob, or a list of them (read in sorted order).
        document_boundary: where documents end (besides the end of a file and
            `document_separator` lines): `"chapter"` — at chapter headings
            (lines matching `chapter_pattern`, which are dropped); `"file"` —
            only at the end of a file; `"blank_line"` — at every blank line
            (the original BERT input format).
        line_format: `"wrapped"` — hard-wrapped prose: blank lines separate
            paragraphs, a paragraph's lines are joined and split into
            sentences; `"sentence_per_line"` — every line is one sentence;
            `"paragraph_per_line"` — every line is a paragraph to split.
        document_separator: optional string; a line equal to it (after
            stripping) ends the current document, e.g. `"<|endoftext|>"`.
        chapter_pattern: regex (case-insensitive) of a chapter heading line.
        max_line_chars: lines longer than this are skipped and counted.
        stats: optional dict to add counts to (see `pretraining_dataset`).

    Returns:
        `(documents, stats)`: a list of documents, each a list of sentence
        strings, and a dict of counts (lines read, skipped, ...). Empty
        documents are dropped and counted.
    """
    if document_boundary not in DOCUMENT_BOUNDARIES:
        raise ValueError(
            f"`document_boundary` must be one of {DOCUMENT_BOUNDARIES}; received "
            f"{document_boundary!r}"
        )
    if line_format not in LINE_FORMATS:
        raise ValueError(f"`line_format` must be one of {LINE_FORMATS}; received {line_format!r}")
    if not isinstance(max_line_chars, int) or max_line_chars < 1:
        raise ValueError(f"`max_line_chars` must be a positive int; received {max_line_chars!r}")
    stats = _new_stats() if stats is None else stats
    for key, value in _new_stats().items():
        stats.setdefault(key, value)
    chapter = re.compile(chapter_pattern, re.IGNORECASE)
    documents = []

    for path in _expand_files(files):
        stats["files"] += 1
        document, paragraph = [], []

        def end_paragraph():
            if paragraph:
                document.extend(split_sentences(" ".join(paragraph)))
                paragraph.clear()

        def end_document():
            end_paragraph()
            if document:
                documents.append(list(document))
            document.clear()

        for line in _read_lines(path, max_line_chars, stats):
            stripped = line.strip()
            if document_separator is not None and stripped == document_separator:
                end_document()
            elif document_boundary == "chapter" and chapter.match(stripped):
                end_document()
            elif not stripped:
                stats["blank_lines"] += 1
                if document_boundary == "blank_line":
                    end_document()
                else:
                    end_paragraph()
            elif line_format == "sentence_per_line":
                document.append(stripped)
            elif line_format == "paragraph_per_line":
                document.extend(split_sentences(stripped))
            else:
                paragraph.append(stripped)
        end_document()
    return documents, stats


def _expand_files(files):
    if isinstance(files, (str, os.PathLike)):
        files = [files]
    paths = []
    for item in files:
        matches = sorted(glob.glob(os.fspath(item)))
        if not matches:
            raise ValueError(f"`files`: no file matches {os.fspath(item)!r}")
        paths.extend(matches)
    return paths


def tokenize_documents(documents, tokenizer, max_sentence_tokens=None, batch_size=4096, stats=None):
    """Tokenizes documents of sentences into WordPiece ids.

    Args:
        documents: list of documents, each a list of sentence strings.
        tokenizer: a `BertTokenizer`.
        max_sentence_tokens: longer sentences are cut (at a word start where
            possible) into pieces of at most this many tokens, each then
            treated as a sentence; a sentence longer than a whole sequence
            would otherwise lose its tail when pairs are trimmed.
        batch_size: sentences per tokenizer call.
        stats: optional dict to add counts to.

    Returns:
        `(token_documents, word_start_documents, stats)`: the first two are
        lists of documents, each a list of per-sentence numpy arrays: int32
        ids, and int8 flags that are 1 where a word (a basic-tokenizer token)
        starts. Sentences without tokens and documents without sentences are
        dropped and counted.
    """
    stats = _new_stats() if stats is None else stats
    for key, value in _new_stats().items():
        stats.setdefault(key, value)
    sentences = [s for doc in documents for s in doc]
    ids_list, starts_list = [], []
    for begin in range(0, len(sentences), batch_size):
        words = tokenizer.tokenize_words(sentences[begin : begin + batch_size])
        values = words.flat_values.numpy().astype(np.int32)
        word_splits = words.values.row_splits.numpy()
        sentence_splits = word_splits[words.row_splits.numpy()]
        starts = np.zeros(len(values), np.int8)
        starts[word_splits[:-1]] = 1
        for i in range(len(sentence_splits) - 1):
            lo, hi = sentence_splits[i], sentence_splits[i + 1]
            ids_list.append(values[lo:hi])
            starts_list.append(starts[lo:hi])

    token_documents, start_documents, k = [], [], 0
    for doc in documents:
        ids_doc, starts_doc = [], []
        for _ in doc:
            ids, starts = ids_list[k], starts_list[k]
            k += 1
            if len(ids) == 0:
                stats["skipped_empty_sentences"] += 1
                continue
            while max_sentence_tokens is not None and len(ids) > max_sentence_tokens:
                # Too long for any pair: cut it into sentence-like pieces at a
                # word start, rather than lose the tail to pair trimming.
                stats["split_long_sentences"] += 1
                word_cuts = np.flatnonzero(starts[1 : max_sentence_tokens + 1]) + 1
                cut = int(word_cuts[-1]) if len(word_cuts) else max_sentence_tokens
                ids_doc.append(ids[:cut])
                starts_doc.append(starts[:cut])
                stats["tokens"] += cut
                ids, starts = ids[cut:], starts[cut:].copy()
                starts[0] = 1
            ids_doc.append(ids)
            starts_doc.append(starts)
            stats["tokens"] += len(ids)
        if not ids_doc:
            stats["skipped_empty_documents"] += 1
            continue
        stats["sentences"] += len(ids_doc)
        stats["single_sentence_documents"] += len(ids_doc) == 1
        token_documents.append(ids_doc)
        start_documents.append(starts_doc)
    stats["documents"] = len(token_documents)
    return token_documents, start_documents, stats


def _trim_pair(a, b, max_num_tokens, rng):
    """Original `truncate_seq_pair`: drop from a random end of the longer side.

    Works on (start, end) index pairs instead of deleting list items one by
    one, which is quadratic for long segments.
    """
    a0, a1 = a
    b0, b1 = b
    while (a1 - a0) + (b1 - b0) > max_num_tokens:
        front = rng.random() < 0.5
        if a1 - a0 > b1 - b0:
            a0, a1 = (a0 + 1, a1) if front else (a0, a1 - 1)
        else:
            b0, b1 = (b0 + 1, b1) if front else (b0, b1 - 1)
    return (a0, a1), (b0, b1)


def create_nsp_pairs(
    documents,
    sequence_length,
    cls_token_id,
    sep_token_id,
    pad_token_id,
    word_starts=None,
    short_seq_prob=0.1,
    random_next_probability=0.5,
    seed=0,
):
    """Builds next-sentence-prediction pairs, packed `[CLS] A [SEP] B [SEP]`.

    Follows `create_instances_from_document` of the original BERT code (see
    the module docstring for the intended differences). Documents are
    visited in order and the pairs are then shuffled.

    Args:
        documents: list of documents, each a list of sentences, each a
            sequence of int token ids (as from `tokenize_documents`).
        sequence_length: length of the packed pairs (>= 5).
        cls_token_id: id of `[CLS]`.
        sep_token_id: id of `[SEP]`.
        pad_token_id: id of `[PAD]`.
        word_starts: optional, shaped like `documents`: 1 where a word starts.
            Without it every token counts as a word.
        short_seq_prob: probability of a random target length in
            `[2, sequence_length - 3]` instead of the full length.
        random_next_probability: probability that B comes from another
            document (NSP label 1).
        seed: int or str; the same seed gives the same pairs.

    Returns:
        A dict of numpy arrays: `"token_ids"`, `"segment_ids"`,
        `"word_starts"` (int32 / int32 / int8, shape
        `(num_pairs, sequence_length)`; word_starts is 1 on special tokens)
        and `"nsp"` (int32, shape `(num_pairs,)`).
    """
    if not isinstance(sequence_length, int) or sequence_length < 5:
        raise ValueError(f"`sequence_length` must be an int >= 5; received {sequence_length!r}")
    for name, p in (("short_seq_prob", short_seq_prob), ("random_next_probability", random_next_probability)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"`{name}` must be in [0, 1]; received {p!r}")
    rng = random.Random(f"nsp:{seed}")
    max_num_tokens = sequence_length - 3
    # Each document as one flat array plus sentence boundaries; empty
    # sentences and documents are left out (an A or B must not be empty).
    flat_ids, flat_starts, bounds = [], [], []
    for d, doc in enumerate(documents):
        keep = [k for k, sentence in enumerate(doc) if len(sentence)]
        if not keep:
            continue
        lengths = [len(doc[k]) for k in keep]
        bounds.append(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
        flat_ids.append(np.concatenate([np.asarray(doc[k], np.int32) for k in keep]))
        if word_starts is None:
            flat_starts.append(np.ones(bounds[-1][-1], np.int8))
        else:
            flat_starts.append(np.concatenate([np.asarray(word_starts[d][k], np.int8) for k in keep]))
    if not bounds:
        raise ValueError("`documents` holds no tokens: there is nothing to make pairs from.")

    pairs = []  # (doc_a, a_start, a_end, doc_b, b_start, b_end, label)
    for d in range(len(bounds)):
        bound = bounds[d]
        num_sentences = len(bound) - 1
        target = _target_length(rng, max_num_tokens, short_seq_prob)
        chunk_start, i = 0, 0
        while i < num_sentences:
            length = bound[i + 1] - bound[chunk_start]
            if i == num_sentences - 1 or length >= target:
                n = i + 1 - chunk_start
                a_end = chunk_start + (rng.randint(1, n - 1) if n >= 2 else 1)
                a = (int(bound[chunk_start]), int(bound[a_end]))
                if n == 1 or rng.random() < random_next_probability:
                    label = 1
                    target_b = target - (a[1] - a[0])
                    for _ in range(10):
                        other = rng.randint(0, len(bounds) - 1)
                        if other != d:
                            break
                    other_bound = bounds[other]
                    first = rng.randint(0, len(other_bound) - 2)
                    last = first
                    while last < len(other_bound) - 1:
                        last += 1
                        if other_bound[last] - other_bound[first] >= target_b:
                            break
                    b = (int(other_bound[first]), int(other_bound[last]))
                    doc_b = other
                    # The unused sentences of this chunk start the next one.
                    i = a_end - 1
                else:
                    label = 0
                    b = (int(bound[a_end]), int(bound[i + 1]))
                    doc_b = d
                a, b = _trim_pair(a, b, max_num_tokens, rng)
                pairs.append((d, a[0], a[1], doc_b, b[0], b[1], label))
                chunk_start = i + 1
                target = _target_length(rng, max_num_tokens, short_seq_prob)
            i += 1
    rng.shuffle(pairs)

    count = len(pairs)
    token_ids = np.full((count, sequence_length), pad_token_id, np.int32)
    segment_ids = np.zeros((count, sequence_length), np.int32)
    starts = np.ones((count, sequence_length), np.int8)
    nsp = np.zeros(count, np.int32)
    for k, (da, a0, a1, db, b0, b1, label) in enumerate(pairs):
        la, lb = a1 - a0, b1 - b0
        row = token_ids[k]
        row[0] = cls_token_id
        row[1 : 1 + la] = flat_ids[da][a0:a1]
        row[1 + la] = sep_token_id
        row[2 + la : 2 + la + lb] = flat_ids[db][b0:b1]
        row[2 + la + lb] = sep_token_id
        segment_ids[k, 2 + la : 3 + la + lb] = 1
        starts[k, 1 : 1 + la] = flat_starts[da][a0:a1]
        starts[k, 2 + la : 2 + la + lb] = flat_starts[db][b0:b1]
        # Trimming from the front can leave a word's tail: it becomes a word.
        starts[k, 1] = 1
        starts[k, 2 + la] = 1
        nsp[k] = label
    return {"token_ids": token_ids, "segment_ids": segment_ids, "word_starts": starts, "nsp": nsp}


def _target_length(rng, max_num_tokens, short_seq_prob):
    if rng.random() < short_seq_prob:
        return rng.randint(2, max_num_tokens)
    return max_num_tokens


def pack_pairs(pairs, max_sequences_per_pack=3, pad_token_id=0):
    """Packs several short NSP pairs into each row ("packed BERT").

    A row of `create_nsp_pairs` holds one `[CLS] A [SEP] B [SEP]` and then
    padding. Here pairs are put into rows best-fit (each pair, in order, into
    the open row with the least room that still fits it, or a new row), at
    most `max_sequences_per_pack` per row. Every packed pair keeps its own
    tokens, segment ids, word starts and NSP label; `sequence_ids` (1..k) and
    `position_ids` (restarting at 0) tell the model where each one is, so it
    attends within pairs only (see `BertBackbone(packed_inputs=True)`).
    Deterministic: the same pairs give the same rows.

    Args:
        pairs: a dict as from `create_nsp_pairs` (`token_ids`,
            `segment_ids`, `word_starts` of shape `(num_pairs, T)`, `nsp` of
            shape `(num_pairs,)`), each pair's tokens first, then padding.
        max_sequences_per_pack: `S`, the most pairs in one row (>= 1).
        pad_token_id: id of `[PAD]`.

    Returns:
        A dict of numpy arrays with `num_rows <= num_pairs` rows:
        `"token_ids"`, `"segment_ids"`, `"sequence_ids"`, `"position_ids"`
        (int32 `(num_rows, T)`), `"word_starts"` (int8 `(num_rows, T)`, 1 on
        special tokens and padding), `"nsp"` and `"nsp_positions"` (int32
        `(num_rows, S)`: each pair's label and [CLS] position, 0 in empty
        slots) and `"nsp_weights"` (float32 `(num_rows, S)`, 1.0 for real
        pairs, 0.0 for empty slots).
    """
    if not isinstance(max_sequences_per_pack, int) or isinstance(max_sequences_per_pack, bool) or (
        max_sequences_per_pack < 1
    ):
        raise ValueError(
            f"`max_sequences_per_pack` must be a positive int; received {max_sequences_per_pack!r}"
        )
    token_ids = np.asarray(pairs["token_ids"])
    count, length = token_ids.shape
    lengths = (token_ids != pad_token_id).sum(axis=1)
    S = max_sequences_per_pack

    # Best fit: open rows bucketed by the room they have left.
    open_rows = [[] for _ in range(length + 1)]
    open_count = np.zeros(length + 1, np.int64)
    rows, room = [], []
    for i, n in enumerate(lengths.tolist()):
        fits = np.flatnonzero(open_count[n:])
        if len(fits):
            r = open_rows[n + fits[0]].pop()
            open_count[n + fits[0]] -= 1
        else:
            r = len(rows)
            rows.append([])
            room.append(length)
        rows[r].append(i)
        room[r] -= n
        if len(rows[r]) < S and room[r] > 0:
            open_rows[room[r]].append(r)
            open_count[room[r]] += 1

    num_rows = len(rows)
    out = {
        "token_ids": np.full((num_rows, length), pad_token_id, np.int32),
        "segment_ids": np.zeros((num_rows, length), np.int32),
        "sequence_ids": np.zeros((num_rows, length), np.int32),
        "position_ids": np.zeros((num_rows, length), np.int32),
        "word_starts": np.ones((num_rows, length), np.int8),
        "nsp": np.zeros((num_rows, S), np.int32),
        "nsp_positions": np.zeros((num_rows, S), np.int32),
        "nsp_weights": np.zeros((num_rows, S), np.float32),
    }
    for r, members in enumerate(rows):
        offset = 0
        for k, i in enumerate(members):
            n = lengths[i]
            span = slice(offset, offset + n)
            out["token_ids"][r, span] = token_ids[i, :n]
            out["segment_ids"][r, span] = pairs["segment_ids"][i, :n]
            out["word_starts"][r, span] = pairs["word_starts"][i, :n]
            out["sequence_ids"][r, span] = k + 1
            out["position_ids"][r, span] = np.arange(n)
            out["nsp"][r, k] = pairs["nsp"][i]
            out["nsp_positions"][r, k] = offset
            out["nsp_weights"][r, k] = 1.0
            offset += n
    return out


def padding_fraction(token_ids, pad_token_id=0):
    """The share of `[PAD]` tokens in a `(num_rows, T)` array of token ids."""
    token_ids = np.asarray(token_ids)
    return float(np.mean(token_ids == pad_token_id)) if token_ids.size else 0.0


def _record_packing(stats, pair_rounds, packed_rounds, pad_token_id):
    """Adds rows and padding fractions before and after packing to `stats`."""
    unpacked = np.concatenate([r["token_ids"] for r in pair_rounds])
    packed = np.concatenate([r["token_ids"] for r in packed_rounds])
    stats["unpacked_rows"] = int(len(unpacked))
    stats["packed_rows"] = int(len(packed))
    stats["padding_fraction_unpacked"] = round(padding_fraction(unpacked, pad_token_id), 4)
    stats["padding_fraction_packed"] = round(padding_fraction(packed, pad_token_id), 4)
    return stats


_PACKING_STATS = ("unpacked_rows", "packed_rows", "padding_fraction_unpacked", "padding_fraction_packed")


def _packing_summary(stats):
    return (
        f"packed {stats['unpacked_rows']} pairs into {stats['packed_rows']} rows; padding "
        f"{stats['padding_fraction_unpacked']:.1%} -> {stats['padding_fraction_packed']:.1%} of all tokens"
    )


def default_max_predictions(sequence_length, masking_rate=0.15):
    """`round(masking_rate * sequence_length)`: 19 for 128, 77 for 512."""
    return max(1, int(round(masking_rate * sequence_length)))


def random_token_pool(tokenizer):
    """Ids a masked position may be replaced by: not special, not `[unused*]`."""
    special = set(tokenizer.special_token_ids)
    unused = re.compile(r"^\[unused\d+\]$")
    return np.array(
        [
            i
            for i, token in enumerate(tokenizer.get_vocabulary())
            if i not in special and not unused.match(token)
        ],
        np.int32,
    )


def mask_tokens(
    token_ids,
    seed,
    mask_token_id,
    unmaskable_token_ids,
    random_token_ids,
    word_starts=None,
    masking_rate=0.15,
    max_predictions_per_seq=20,
    mask_token_rate=0.8,
    random_token_rate=0.1,
):
    """Chooses and corrupts MLM positions in a batch (TensorFlow ops).

    Per sequence, `k = min(max_predictions_per_seq, max(1, round(masking_rate
    * n)))` of its `n` maskable tokens are chosen. With `word_starts`, whole
    words are chosen together: words are visited in random order and a word
    is taken if all its pieces still fit into `k` (the original BERT rule), so
    a word is never partly masked. Every chosen position independently
    becomes `[MASK]` (`mask_token_rate`), a random token from
    `random_token_ids` (`random_token_rate`) or stays as it is.

    Args:
        token_ids: int32 tensor of shape `(batch_size, sequence_length)`.
        seed: int tensor of shape `(2,)`, the stateless RNG seed; the same
            seed and inputs give the same output.
        mask_token_id: id of `[MASK]`.
        unmaskable_token_ids: ids never chosen (`[CLS]`, `[SEP]`, `[PAD]`).
        random_token_ids: 1-D ids to draw random replacements from.
        word_starts: optional int tensor shaped like `token_ids`: 1 where a
            word starts (and on special tokens).
        masking_rate: share of the maskable tokens to predict.
        max_predictions_per_seq: `P`, the number of prediction slots.
        mask_token_rate: share of the chosen positions set to `[MASK]`.
        random_token_rate: share set to a random token.

    Returns:
        A dict: `"token_ids"` (int32 `(batch_size, sequence_length)`, the
        corrupted input), `"mask_positions"` (int32 `(batch_size, P)`,
        ascending, 0 in unused slots), `"mlm_ids"` (int32 `(batch_size, P)`,
        the original ids there, 0 in unused slots) and `"mlm_weights"`
        (float32 `(batch_size, P)`, 1.0 for real predictions).
    """
    if not 0.0 < masking_rate < 1.0:
        raise ValueError(f"`masking_rate` must be in (0, 1); received {masking_rate!r}")
    if mask_token_rate < 0 or random_token_rate < 0 or mask_token_rate + random_token_rate > 1:
        raise ValueError(
            "`mask_token_rate` and `random_token_rate` must be >= 0 and sum to <= 1; "
            f"received {mask_token_rate!r} and {random_token_rate!r}"
        )
    token_ids = tf.convert_to_tensor(token_ids, tf.int32)
    seed = tf.cast(tf.convert_to_tensor(seed), tf.int64)
    seeds = tf.random.experimental.stateless_split(seed, 4)
    batch_size = tf.shape(token_ids)[0]
    length = token_ids.shape[1] or tf.shape(token_ids)[1]
    num_slots = int(max_predictions_per_seq)
    if num_slots < 1 or (token_ids.shape[1] is not None and num_slots > token_ids.shape[1]):
        raise ValueError(
            "`max_predictions_per_seq` must be in [1, sequence_length "
            f"{token_ids.shape[1]}]; received {max_predictions_per_seq!r}"
        )

    unmaskable = tf.constant(list(unmaskable_token_ids), tf.int32)
    maskable = tf.reduce_all(token_ids[:, :, None] != unmaskable[None, None, :], axis=-1)
    num_maskable = tf.reduce_sum(tf.cast(maskable, tf.int32), axis=1)
    wanted = tf.cast(tf.round(tf.cast(num_maskable, tf.float32) * masking_rate), tf.int32)
    wanted = tf.minimum(tf.minimum(tf.maximum(wanted, 1), num_slots), num_maskable)

    scores = tf.random.stateless_uniform(tf.shape(token_ids), seeds[0])
    if word_starts is None:
        # Each token is its own word: the k best-scored maskable tokens.
        scores = tf.where(maskable, scores, -1.0)
        top = tf.math.top_k(scores, k=num_slots).indices
        take = tf.range(num_slots)[None, :] < wanted[:, None]
        chosen = tf.scatter_nd(
            tf.stack([tf.repeat(tf.range(batch_size), num_slots), tf.reshape(top, [-1])], 1),
            tf.reshape(tf.cast(take, tf.int32), [-1]),
            tf.shape(token_ids),
        ) > 0
    else:
        chosen = _choose_whole_words(
            tf.cast(word_starts, tf.int32), maskable, wanted, scores
        )

    # Chosen positions, ascending, padded with 0 (weight 0) to P slots.
    positions = tf.range(length)[None, :]
    key = tf.where(chosen, positions, length + positions)
    order = tf.sort(key, axis=1)[:, :num_slots]
    weights = order < length
    mask_positions = tf.where(weights, order, 0)
    mlm_ids = tf.where(weights, tf.gather(token_ids, mask_positions, batch_dims=1), 0)

    action = tf.random.stateless_uniform(tf.shape(token_ids), seeds[1])
    pool = tf.constant(random_token_ids, tf.int32)
    random_ids = tf.gather(
        pool,
        tf.random.stateless_uniform(
            tf.shape(token_ids), seeds[2], minval=0, maxval=tf.shape(pool)[0], dtype=tf.int32
        ),
    )
    corrupted = tf.where(chosen & (action < mask_token_rate), mask_token_id, token_ids)
    use_random = chosen & (action >= mask_token_rate) & (action < mask_token_rate + random_token_rate)
    corrupted = tf.where(use_random, random_ids, corrupted)
    return {
        "token_ids": corrupted,
        "mask_positions": mask_positions,
        "mlm_ids": mlm_ids,
        "mlm_weights": tf.cast(weights, tf.float32),
    }


def _choose_whole_words(word_starts, maskable, wanted, scores):
    """Whole-word choice: words in random order, taken while they fit.

    Args:
        word_starts: int32 `(batch, length)`, 1 where a word starts.
        maskable: bool `(batch, length)`.
        wanted: int32 `(batch,)`, tokens to choose per row.
        scores: float32 `(batch, length)` uniform noise; the score of a word's
            first piece orders the words.

    Returns:
        bool `(batch, length)`, the chosen tokens.
    """
    shape = tf.shape(word_starts)
    batch_size, length = shape[0], shape[1]
    # Word index of every token (special tokens are words that never fit).
    word_id = tf.cumsum(tf.concat([tf.zeros([batch_size, 1], tf.int32), word_starts[:, 1:]], 1), axis=1)
    flat_word = word_id + tf.range(batch_size)[:, None] * length
    word_len = tf.math.unsorted_segment_sum(
        tf.ones_like(flat_word), flat_word, batch_size * length
    )
    word_ok = tf.math.unsorted_segment_min(
        tf.cast(maskable, tf.int32), flat_word, batch_size * length
    )
    word_len = tf.reshape(word_len, [batch_size, length])
    word_ok = tf.reshape(word_ok, [batch_size, length]) > 0
    word_score = tf.math.unsorted_segment_max(scores, flat_word, batch_size * length)
    word_score = tf.reshape(word_score, [batch_size, length])
    word_len = tf.where(word_ok, word_len, 0)
    # Visit words by decreasing score; empty slots (len 0) are skipped.
    rank_order = tf.argsort(tf.where(word_len > 0, word_score, -1.0), axis=1, direction="DESCENDING")
    ranked_len = tf.gather(word_len, rank_order, batch_dims=1)

    # Greedy: take a word when it still fits; one step per word slot.
    def step(total, lengths):
        take = (lengths > 0) & (total + lengths <= wanted)
        return total + tf.where(take, lengths, 0)

    totals = tf.scan(
        step, tf.transpose(ranked_len), initializer=tf.zeros([batch_size], tf.int32)
    )
    totals = tf.transpose(totals)  # running total after each ranked word
    before = tf.concat([tf.zeros([batch_size, 1], tf.int32), totals[:, :-1]], 1)
    taken_ranked = totals > before
    taken = tf.scatter_nd(
        tf.stack(
            [tf.repeat(tf.range(batch_size), length), tf.reshape(rank_order, [-1])], 1
        ),
        tf.reshape(tf.cast(taken_ranked, tf.int32), [-1]),
        [batch_size, length],
    )
    return tf.gather(taken, word_id, batch_dims=1) > 0


def _to_model_inputs(masked, segment_ids, nsp, pad_token_id, packing=None):
    """Masking output → `(x, y, sample_weight)` as `BertPretrainer` takes it.

    `packing`: for packed rows, the dict with `sequence_ids`, `position_ids`,
    `nsp_positions` and `nsp_weights` (see `pack_pairs`).
    """
    x = {
        "token_ids": masked["token_ids"],
        "segment_ids": tf.cast(segment_ids, tf.int32),
        "padding_mask": tf.cast(masked["token_ids"] != pad_token_id, tf.int32),
        "mask_positions": masked["mask_positions"],
    }
    y = {"mlm": masked["mlm_ids"], "nsp": tf.cast(nsp, tf.int32)}
    if packing is not None:
        for name in ("sequence_ids", "position_ids", "nsp_positions"):
            x[name] = tf.cast(packing[name], tf.int32)
        weights = {"mlm": masked["mlm_weights"], "nsp": tf.cast(packing["nsp_weights"], tf.float32)}
        return x, y, weights
    # Keras wants a weight for every output once any is given: NSP weighs 1.
    nsp_weights = tf.ones_like(y["nsp"], dtype=tf.float32)
    return x, y, {"mlm": masked["mlm_weights"], "nsp": nsp_weights}


class _Masker:
    """Holds the masking settings; `__call__` masks one batch of pairs."""

    def __init__(self, tokenizer, masking, masking_rate, max_predictions_per_seq):
        self.whole_word = masking == "whole-word"
        self.pad_token_id = tokenizer.pad_token_id
        self.kwargs = dict(
            mask_token_id=tokenizer.mask_token_id,
            unmaskable_token_ids=(
                tokenizer.cls_token_id,
                tokenizer.sep_token_id,
                tokenizer.pad_token_id,
                tokenizer.mask_token_id,
            ),
            random_token_ids=random_token_pool(tokenizer),
            masking_rate=masking_rate,
            max_predictions_per_seq=max_predictions_per_seq,
        )

    def __call__(self, batch, seed):
        return mask_tokens(
            batch["token_ids"],
            seed,
            word_starts=batch["word_starts"] if self.whole_word else None,
            **self.kwargs,
        )


def _batch_seed(seed, epoch, batch_index):
    # Stateless seeds are two int64s: the user's seed, and epoch/batch packed.
    return np.array([_int_seed(seed), epoch * (1 << 32) + batch_index], np.int64)


def _int_seed(seed):
    if isinstance(seed, (int, np.integer)):
        return int(seed) % (1 << 62)
    return int(hashlib.sha256(str(seed).encode()).hexdigest()[:15], 16)


def create_pretraining_examples(
    token_documents,
    tokenizer,
    sequence_length=128,
    word_starts=None,
    masking="token",
    masking_rate=0.15,
    max_predictions_per_seq=None,
    short_seq_prob=0.1,
    random_next_probability=0.5,
    dupe_factor=1,
    seed=0,
    batch_size=256,
    progress=False,
    pack_sequences=False,
    max_sequences_per_pack=3,
    stats=None,
):
    """Static examples: `dupe_factor` rounds of NSP pairs, each masked once.

    Args:
        token_documents: documents of per-sentence id arrays (from
            `tokenize_documents`).
        tokenizer: the `BertTokenizer` that made them.
        sequence_length: length of every example.
        word_starts: the word-start flags from `tokenize_documents` (needed
            for `masking="whole-word"`).
        masking: `"token"` or `"whole-word"`.
        masking_rate: share of real tokens to predict.
        max_predictions_per_seq: prediction slots `P` (default
            `round(0.15 * sequence_length)`).
        short_seq_prob: see `create_nsp_pairs`.
        random_next_probability: see `create_nsp_pairs`.
        dupe_factor: rounds over the corpus, each with new pairs and masks.
        seed: int or str.
        batch_size: pairs masked per TensorFlow call (does not change results).
        progress: show a progress bar.
        pack_sequences: pack up to `max_sequences_per_pack` pairs per row
            (see `pack_pairs`) before masking.
        max_sequences_per_pack: `S`, with `pack_sequences`.
        stats: optional dict; with `pack_sequences`, rows and padding
            fractions before and after packing are added to it.

    Returns:
        A dict of numpy arrays with `num_examples` rows: `token_ids`,
        `segment_ids`, `padding_mask`, `mask_positions`, `mlm_ids` (int32),
        `mlm_weights` (float32) and `nsp` (int32). With `pack_sequences`,
        also `sequence_ids`, `position_ids` (int32 `(num_examples, T)`),
        `nsp_positions` (int32) and `nsp_weights` (float32), and `nsp` has
        shape `(num_examples, S)`.
    """
    _check_masking(masking, word_starts)
    num_slots = max_predictions_per_seq or default_max_predictions(sequence_length, masking_rate)
    masker = _Masker(tokenizer, masking, masking_rate, num_slots)
    pair_rounds = [
        create_nsp_pairs(
            token_documents,
            sequence_length,
            tokenizer.cls_token_id,
            tokenizer.sep_token_id,
            tokenizer.pad_token_id,
            word_starts=word_starts,
            short_seq_prob=short_seq_prob,
            random_next_probability=random_next_probability,
            seed=f"{seed}:{d}",
        )
        for d in range(dupe_factor)
    ]
    rounds = pair_rounds
    if pack_sequences:
        rounds = [pack_pairs(r, max_sequences_per_pack, tokenizer.pad_token_id) for r in pair_rounds]
        if stats is not None:
            _record_packing(stats, pair_rounds, rounds, tokenizer.pad_token_id)
    total = sum(len(r["nsp"]) for r in rounds)
    bar = keras.utils.Progbar(total, unit_name="example") if progress else None
    mask_fn = tf.function(masker.__call__, reduce_retracing=True)
    outputs = {k: [] for k in ("token_ids", "segment_ids", "padding_mask", "mask_positions", "mlm_ids", "mlm_weights", "nsp")}
    if pack_sequences:
        outputs.update({k: [] for k in _PACKED_FEATURES})
    for d, pairs in enumerate(rounds):
        for b, begin in enumerate(range(0, len(pairs["nsp"]), batch_size)):
            batch = {k: v[begin : begin + batch_size] for k, v in pairs.items()}
            masked = mask_fn(batch, _batch_seed(seed, d, b))
            x, y, w = _to_model_inputs(
                masked, batch["segment_ids"], batch["nsp"], tokenizer.pad_token_id,
                packing=batch if pack_sequences else None,
            )
            for key, value in (
                ("token_ids", x["token_ids"]),
                ("segment_ids", x["segment_ids"]),
                ("padding_mask", x["padding_mask"]),
                ("mask_positions", x["mask_positions"]),
                ("mlm_ids", y["mlm"]),
                ("mlm_weights", w["mlm"]),
                ("nsp", y["nsp"]),
            ):
                outputs[key].append(np.asarray(value))
            if pack_sequences:
                for key in ("sequence_ids", "position_ids", "nsp_positions"):
                    outputs[key].append(np.asarray(x[key]))
                outputs["nsp_weights"].append(np.asarray(w["nsp"]))
            if bar is not None:
                bar.add(len(batch["nsp"]))
    return {k: np.concatenate(v) for k, v in outputs.items()}


_INT_FEATURES = ("token_ids", "segment_ids", "padding_mask", "mask_positions", "mlm_ids")
# The extra features of packed examples (`nsp` then holds one label per slot).
_PACKED_FEATURES = ("sequence_ids", "position_ids", "nsp_positions", "nsp_weights")


def write_tfrecords(examples, output_dir, num_shards=4, prefix="pretraining", progress=False):
    """Writes static examples to sharded TFRecord files of `tf.train.Example`s.

    Args:
        examples: dict of numpy arrays as from `create_pretraining_examples`.
        output_dir: folder to write to (created if needed).
        num_shards: number of files; consecutive examples share a file, so
            reading the files in order gives the examples in order.
        prefix: file name prefix.
        progress: show a progress bar.

    Returns:
        The list of written file paths, in order.
    """
    os.makedirs(output_dir, exist_ok=True)
    count = len(examples["nsp"])
    num_shards = max(1, min(int(num_shards), count))
    bar = keras.utils.Progbar(count, unit_name="example") if progress else None
    bounds = np.linspace(0, count, num_shards + 1).astype(int)
    paths = []
    for shard in range(num_shards):
        path = os.path.join(output_dir, f"{prefix}-{shard:05d}-of-{num_shards:05d}.tfrecord")
        with tf.io.TFRecordWriter(path) as writer:
            for i in range(bounds[shard], bounds[shard + 1]):
                feature = {
                    k: tf.train.Feature(int64_list=tf.train.Int64List(value=examples[k][i]))
                    for k in _INT_FEATURES
                }
                feature["mlm_weights"] = tf.train.Feature(
                    float_list=tf.train.FloatList(value=examples["mlm_weights"][i])
                )
                feature["nsp"] = tf.train.Feature(
                    int64_list=tf.train.Int64List(value=np.atleast_1d(examples["nsp"][i]))
                )
                if "sequence_ids" in examples:  # packed rows
                    for k in ("sequence_ids", "position_ids", "nsp_positions"):
                        feature[k] = tf.train.Feature(int64_list=tf.train.Int64List(value=examples[k][i]))
                    feature["nsp_weights"] = tf.train.Feature(
                        float_list=tf.train.FloatList(value=examples["nsp_weights"][i])
                    )
                writer.write(
                    tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()
                )
                if bar is not None:
                    bar.add(1)
        paths.append(path)
    return paths


def read_tfrecords(
    paths, sequence_length, max_predictions_per_seq, batch_size=32, shuffle=False, seed=0,
    drop_remainder=True, shuffle_buffer=10_000, num_examples=None, max_sequences_per_pack=None,
):
    """Reads `write_tfrecords` files as batches of `(x, y, sample_weight)`.

    Args:
        paths: file paths (read in this order).
        sequence_length: the examples' sequence length.
        max_predictions_per_seq: the examples' prediction slots `P`.
        batch_size: examples per batch.
        shuffle: shuffle examples (seeded, anew every epoch).
        seed: shuffle seed.
        drop_remainder: drop a last, smaller batch.
        shuffle_buffer: shuffle buffer size.
        num_examples: the number of examples in the files, if known; gives
            the dataset a known length.
        max_sequences_per_pack: `S` for files of packed examples; None for
            unpacked ones.

    Returns:
        A `tf.data.Dataset` of `(x, y, sample_weight)` as in
        `pretraining_dataset`.
    """
    T, P = sequence_length, max_predictions_per_seq
    spec = {k: tf.io.FixedLenFeature([P if k in ("mask_positions", "mlm_ids") else T], tf.int64) for k in _INT_FEATURES}
    spec["mlm_weights"] = tf.io.FixedLenFeature([P], tf.float32)
    spec["nsp"] = tf.io.FixedLenFeature([], tf.int64)
    S = max_sequences_per_pack
    if S is not None:
        spec["nsp"] = tf.io.FixedLenFeature([S], tf.int64)
        spec["sequence_ids"] = tf.io.FixedLenFeature([T], tf.int64)
        spec["position_ids"] = tf.io.FixedLenFeature([T], tf.int64)
        spec["nsp_positions"] = tf.io.FixedLenFeature([S], tf.int64)
        spec["nsp_weights"] = tf.io.FixedLenFeature([S], tf.float32)

    def parse(serialized):
        f = tf.io.parse_example(serialized, spec)
        f = {k: tf.cast(v, tf.int32) if v.dtype == tf.int64 else v for k, v in f.items()}
        x = {k: f[k] for k in ("token_ids", "segment_ids", "padding_mask", "mask_positions")}
        weights = {"mlm": f["mlm_weights"], "nsp": tf.ones_like(f["nsp"], dtype=tf.float32)}
        if S is not None:
            x.update({k: f[k] for k in ("sequence_ids", "position_ids", "nsp_positions")})
            weights["nsp"] = f["nsp_weights"]
        return x, {"mlm": f["mlm_ids"], "nsp": f["nsp"]}, weights

    dataset = tf.data.TFRecordDataset(list(paths))
    if num_examples is not None:
        # A known length lets Keras show steps and stop exactly (see
        # `_dynamic_dataset`).
        dataset = dataset.apply(tf.data.experimental.assert_cardinality(num_examples))
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer, seed=_int_seed(seed), reshuffle_each_iteration=True)
    dataset = dataset.batch(batch_size, drop_remainder=drop_remainder)
    return dataset.map(parse, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)


def _check_masking(masking, word_starts):
    if masking not in MASKING:
        raise ValueError(f"`masking` must be one of {MASKING}; received {masking!r}")
    if masking == "whole-word" and word_starts is None:
        raise ValueError('`masking="whole-word"` needs `word_starts` (from tokenize_documents).')


def pretraining_dataset(
    files,
    tokenizer,
    sequence_length=128,
    batch_size=32,
    masking="token",
    mode="dynamic",
    seed=0,
    masking_rate=0.15,
    max_predictions_per_seq=None,
    short_seq_prob=0.1,
    random_next_probability=0.5,
    resample_pairs_each_epoch=True,
    dupe_factor=5,
    output_dir=None,
    num_shards=4,
    shuffle=True,
    drop_remainder=True,
    document_boundary="chapter",
    line_format="wrapped",
    document_separator=None,
    max_line_chars=20_000,
    verbose=1,
    return_stats=False,
    pack_sequences=False,
    max_sequences_per_pack=3,
):
    """Text files → batches for MLM + NSP pretraining (`BertPretrainer.fit`).

    Args:
        files: a path, a glob, or a list of them.
        tokenizer: a `BertTokenizer`.
        sequence_length: `T`, the length of every example.
        batch_size: `B`.
        masking: `"token"` (each position on its own) or `"whole-word"` (all
            pieces of a word together).
        mode: `"dynamic"`: pairs are made in Python when iteration starts
            (again every epoch if `resample_pairs_each_epoch`) and masks are
            drawn inside `tf.data`, anew every epoch. `"static"`:
            `dupe_factor` rounds are masked once, written as TFRecords to
            `output_dir` (reused when they match these settings) and read back.
        seed: int or str; the same seed gives the same batches (epoch by
            epoch for a fresh dataset).
        masking_rate: share of the real tokens to predict.
        max_predictions_per_seq: `P` (default `round(0.15 * T)`).
        short_seq_prob: chance of a shorter random target length for a pair.
        random_next_probability: chance that B is a random segment (label 1).
        resample_pairs_each_epoch: dynamic mode: new pairs every epoch.
        dupe_factor: static mode: rounds over the corpus.
        output_dir: static mode: where the TFRecords go (default: a new
            temporary folder).
        num_shards: static mode: number of TFRecord files.
        shuffle: shuffle examples every epoch (seeded).
        drop_remainder: drop the last smaller batch (fixed shapes for XLA/JAX
            and for distribution).
        document_boundary: see `read_documents`.
        line_format: see `read_documents`.
        document_separator: see `read_documents`.
        max_line_chars: see `read_documents`.
        verbose: 1 prints a summary of the corpus and skipped input, and a
            progress bar for static generation; 0 is silent.
        return_stats: also return the counts dict.
        pack_sequences: pack several short pairs into each row (see
            `pack_pairs`), before masking, so less of every batch is padding.
            Train with a backbone built with `packed_inputs=True`.
        max_sequences_per_pack: `S`, the most pairs in one packed row.

    Returns:
        A `tf.data.Dataset` (or `(dataset, stats)`) whose elements are
        `(x, y, sample_weight)`:
        `x = {"token_ids", "segment_ids", "padding_mask": int32 (B, T),
        "mask_positions": int32 (B, P)}`,
        `y = {"mlm": int32 (B, P) original ids, "nsp": int32 (B,)}`,
        `sample_weight = {"mlm": float32 (B, P) 1.0 real / 0.0 padding
        slots, "nsp": float32 (B,) all 1.0}` (Keras needs a weight for
        every output once one output has weights).
        `stats` counts lines, skipped long / invalid-UTF-8 / control-character
        lines, documents, empty and single-sentence documents, sentences,
        tokens and (static) examples.

        With `pack_sequences`, `x` also holds `"sequence_ids"` (1..k for the
        k-th pair of a row, 0 for padding) and `"position_ids"` (restarting
        at 0 for every pair), int32 (B, T), and `"nsp_positions"`, int32
        (B, S), every pair's [CLS] position; `y["nsp"]` is int32 (B, S) and
        `sample_weight["nsp"]` float32 (B, S), 1.0 for real pairs and 0.0
        for empty slots. Masking picks real tokens of any pair in the row (at
        most `P` per row, never [CLS]/[SEP]/[PAD]). `stats` then also has
        `unpacked_rows`, `packed_rows`, `padding_fraction_unpacked` and
        `padding_fraction_packed` (of the first epoch's pairs in dynamic
        mode, of all rounds in static mode).
    """
    if mode not in MODES:
        raise ValueError(f"`mode` must be one of {MODES}; received {mode!r}")
    if masking not in MASKING:
        raise ValueError(f"`masking` must be one of {MASKING}; received {masking!r}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"`batch_size` must be a positive int; received {batch_size!r}")
    if not isinstance(dupe_factor, int) or dupe_factor < 1:
        raise ValueError(f"`dupe_factor` must be a positive int; received {dupe_factor!r}")
    if not isinstance(pack_sequences, bool):
        raise ValueError(f"`pack_sequences` must be True or False; received {pack_sequences!r}")
    if not isinstance(max_sequences_per_pack, int) or isinstance(max_sequences_per_pack, bool) or (
        max_sequences_per_pack < 1
    ):
        raise ValueError(
            f"`max_sequences_per_pack` must be a positive int; received {max_sequences_per_pack!r}"
        )
    packing = max_sequences_per_pack if pack_sequences else None
    num_slots = max_predictions_per_seq or default_max_predictions(sequence_length, masking_rate)
    if not 1 <= num_slots <= sequence_length:
        raise ValueError(
            f"`max_predictions_per_seq` must be in [1, sequence_length]; received {num_slots!r}"
        )
    documents, stats = read_documents(
        files, document_boundary, line_format, document_separator, max_line_chars=max_line_chars
    )
    token_docs, start_docs, stats = tokenize_documents(
        documents, tokenizer, max_sentence_tokens=sequence_length - 3, stats=stats
    )
    if not token_docs:
        raise ValueError(f"`files` {files!r} hold no usable text; counts: {stats}")
    if verbose:
        print(f"pretraining_dataset: {_summary(stats)}")

    if mode == "static":
        dataset, stats = _static_dataset(
            token_docs, start_docs, tokenizer, sequence_length, batch_size, masking, seed,
            masking_rate, num_slots, short_seq_prob, random_next_probability, dupe_factor,
            output_dir, num_shards, shuffle, drop_remainder, verbose, stats, files, packing,
        )
    else:
        dataset = _dynamic_dataset(
            token_docs, start_docs, tokenizer, sequence_length, batch_size, masking, seed,
            masking_rate, num_slots, short_seq_prob, random_next_probability,
            resample_pairs_each_epoch, shuffle, drop_remainder, packing, stats,
        )
    if packing and verbose:
        print(f"pretraining_dataset: {_packing_summary(stats)}")
    return (dataset, stats) if return_stats else dataset


def _summary(stats):
    skipped = {
        k: v for k, v in stats.items()
        if v and (k.startswith("skipped") or k in ("invalid_utf8_lines", "control_char_lines", "split_long_sentences"))
    }
    return (
        f"{stats['files']} files, {stats['lines']} lines, {stats['documents']} documents, "
        f"{stats['sentences']} sentences, {stats['tokens']} tokens"
        + (f"; skipped/repaired: {skipped}" if skipped else "; nothing skipped")
    )


def _dynamic_dataset(
    token_docs, start_docs, tokenizer, sequence_length, batch_size, masking, seed, masking_rate,
    num_slots, short_seq_prob, random_next_probability, resample, shuffle, drop_remainder,
    packing=None, stats=None,
):
    """`packing`: None, or `max_sequences_per_pack` to pack pairs into rows."""
    masker = _Masker(tokenizer, masking, masking_rate, num_slots)
    epochs = iter(range(1 << 31))
    cache = {}

    def make_pairs(epoch):
        key = epoch if resample else 0
        if key not in cache:
            cache.clear()  # keep one epoch's pairs at a time
            cache[key] = create_nsp_pairs(
                token_docs, sequence_length, tokenizer.cls_token_id, tokenizer.sep_token_id,
                tokenizer.pad_token_id, word_starts=start_docs, short_seq_prob=short_seq_prob,
                random_next_probability=random_next_probability, seed=f"{seed}:{key}",
            )
            if packing:
                pairs = cache[key]
                cache[key] = pack_pairs(pairs, packing, tokenizer.pad_token_id)
                if key == 0 and stats is not None:
                    _record_packing(stats, [pairs], [cache[key]], tokenizer.pad_token_id)
        return cache[key]

    # Every epoch has as many batches as the first, so the dataset has a
    # known length: Keras then shows steps, and its TensorFlow trainer does not
    # run past the end (with an unknown length, Keras 3.15 on TF averaged an
    # empty extra step into the per-output loss metrics).
    first_count = len(make_pairs(0)["nsp"])
    if drop_remainder:
        num_batches, needed = first_count // batch_size, first_count // batch_size * batch_size
    else:
        num_batches, needed = -(-first_count // batch_size), first_count
    if num_batches == 0:
        raise ValueError(
            f"The corpus gives {first_count} pairs, fewer than `batch_size` {batch_size}; "
            "use a smaller batch_size or drop_remainder=False."
        )

    def generate():
        # A fresh iterator (a new epoch) calls this again: new pairs/masks.
        epoch = next(epochs)
        pairs = make_pairs(epoch)
        count = len(pairs["nsp"])
        order = np.arange(count)
        if shuffle:
            order = np.random.default_rng([_int_seed(seed), epoch]).permutation(count)
        # Another epoch's pairs may number a few more or fewer: cut or wrap.
        order = np.resize(order, needed)
        for b, begin in enumerate(range(0, needed, batch_size)):
            rows = order[begin : begin + batch_size]
            batch = {k: v[rows] for k, v in pairs.items()}
            yield batch, _batch_seed(seed, epoch, b)

    T = sequence_length
    batch_dim = batch_size if drop_remainder else None
    signature = (
        {
            "token_ids": tf.TensorSpec([batch_dim, T], tf.int32),
            "segment_ids": tf.TensorSpec([batch_dim, T], tf.int32),
            "word_starts": tf.TensorSpec([batch_dim, T], tf.int8),
            "nsp": tf.TensorSpec([batch_dim], tf.int32),
        },
        tf.TensorSpec([2], tf.int64),
    )
    if packing:
        S = packing
        signature[0].update(
            {
                "sequence_ids": tf.TensorSpec([batch_dim, T], tf.int32),
                "position_ids": tf.TensorSpec([batch_dim, T], tf.int32),
                "nsp": tf.TensorSpec([batch_dim, S], tf.int32),
                "nsp_positions": tf.TensorSpec([batch_dim, S], tf.int32),
                "nsp_weights": tf.TensorSpec([batch_dim, S], tf.float32),
            }
        )
    dataset = tf.data.Dataset.from_generator(generate, output_signature=signature)
    dataset = dataset.apply(tf.data.experimental.assert_cardinality(num_batches))

    def mask(batch, batch_seed):
        masked = masker(batch, batch_seed)
        return _to_model_inputs(
            masked, batch["segment_ids"], batch["nsp"], tokenizer.pad_token_id, packing=batch if packing else None
        )

    return dataset.map(mask, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).prefetch(
        tf.data.AUTOTUNE
    )


def _static_dataset(
    token_docs, start_docs, tokenizer, sequence_length, batch_size, masking, seed, masking_rate,
    num_slots, short_seq_prob, random_next_probability, dupe_factor, output_dir, num_shards,
    shuffle, drop_remainder, verbose, stats, files, packing=None,
):
    settings = {
        "files": [
            [p, os.path.getsize(p), os.path.getmtime(p)] for p in _expand_files(files)
        ],
        "vocabulary": hashlib.sha256("\n".join(tokenizer.get_vocabulary()).encode()).hexdigest(),
        "tokenizer": {k: v for k, v in tokenizer.get_config().items() if k != "vocabulary"},
        "sequence_length": sequence_length,
        "max_predictions_per_seq": num_slots,
        "masking": masking,
        "masking_rate": masking_rate,
        "short_seq_prob": short_seq_prob,
        "random_next_probability": random_next_probability,
        "dupe_factor": dupe_factor,
        "seed": str(seed),
        "num_shards": num_shards,
        "format": 1,
    }
    if packing:
        # Only when packing: unpacked settings (and so reuse of existing files) stay as they were.
        settings["max_sequences_per_pack"] = packing
    if output_dir is None:
        output_dir = tempfile.mkdtemp(prefix="keras_bert_pretraining_")
    meta_path = os.path.join(output_dir, "metadata.json")
    meta = None
    if os.path.isfile(meta_path):
        with open(meta_path, encoding="utf-8") as f:
            meta = json.load(f)
    if meta and meta.get("settings") == json.loads(json.dumps(settings)) and all(
        os.path.isfile(p) for p in meta["paths"]
    ):
        paths = meta["paths"]
        stats["examples"] = meta["examples"]
        stats.update(meta.get("packing", {}))
        if verbose:
            print(f"pretraining_dataset: reusing {len(paths)} TFRecord files in {output_dir}")
    else:
        examples = create_pretraining_examples(
            token_docs, tokenizer, sequence_length, word_starts=start_docs, masking=masking,
            masking_rate=masking_rate, max_predictions_per_seq=num_slots,
            short_seq_prob=short_seq_prob, random_next_probability=random_next_probability,
            dupe_factor=dupe_factor, seed=seed, progress=bool(verbose),
            **({"pack_sequences": True, "max_sequences_per_pack": packing, "stats": stats} if packing else {}),
        )
        paths = write_tfrecords(examples, output_dir, num_shards, progress=bool(verbose))
        stats["examples"] = int(len(examples["nsp"]))
        meta = {"settings": settings, "paths": paths, "examples": stats["examples"]}
        if packing:
            meta["packing"] = {k: stats[k] for k in _PACKING_STATS}
        with open(meta_path, "w", encoding="utf-8") as f:
            json.dump(meta, f, indent=1)
        if verbose:
            print(f"pretraining_dataset: wrote {stats['examples']} examples to {output_dir}")
    dataset = read_tfrecords(
        paths, sequence_length, num_slots, batch_size, shuffle=shuffle, seed=seed,
        drop_remainder=drop_remainder, num_examples=stats["examples"], max_sequences_per_pack=packing,
    )
    return dataset, stats
