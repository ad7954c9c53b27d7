"""Corpus stage: text files → documents of sentences → WordPiece ids.

`read_documents` cuts text files into documents (a chapter, a file, or a
blank-line separated block, per `document_boundary`; a line equal to
`document_separator` always ends one) and documents into sentences, from a
small rule-based splitter (`split_sentences`) or the lines themselves.
`tokenize_documents` turns the sentences into WordPiece ids and keeps which
piece starts a word (for whole-word masking). Both add to one dict of counts
(lines read, skipped, repaired, ...) that `pretraining_dataset` reports.
"""

import glob
import os
import re

import numpy as np

from keras_bert.preprocessing.pretraining.config import (
    DOCUMENT_BOUNDARIES,
    LINE_FORMATS,
    check_choice,
    check_positive_int,
)

# A chapter heading on its own line: "Chapter 1", "CHAPTER XII.", "VOLUME II".
CHAPTER_PATTERN = r"^\s*(chapter|volume|book)\s+([0-9]+|[ivxlcdm]+)\s*\.?\s*$"

# Abbreviations after which a period does not end a sentence.
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st messrs mme mlle col capt gen lt rev esq sr jr prof vs no".split()
)
_SENTENCE_END = re.compile(r"[.!?]+[\"'\u201d\u2019)\]_]*\s+")
_SENTENCE_START = re.compile(r"[\"'\u201c\u2018(\[_]*[A-Z0-9]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

# The counts `read_documents` and `tokenize_documents` keep, in report order.
CORPUS_COUNTERS = (
    "files",
    "lines",
    "blank_lines",
    "skipped_long_lines",
    "invalid_utf8_lines",
    "control_char_lines",
    "documents",
    "skipped_empty_documents",
    "single_sentence_documents",
    "sentences",
    "skipped_empty_sentences",
    "split_long_sentences",
    "tokens",
)
_REPAIR_COUNTERS = ("invalid_utf8_lines", "control_char_lines", "split_long_sentences")


def _with_counters(stats):
    """`stats` (a new dict when None) with every corpus counter present."""
    stats = {} if stats is None else stats
    for key in CORPUS_COUNTERS:
        stats.setdefault(key, 0)
    return stats


def corpus_summary(stats):
    """One line: files, lines, documents, sentences, tokens, and what was skipped or repaired."""
    skipped = {k: v for k, v in stats.items() if v and (k.startswith("skipped") or k in _REPAIR_COUNTERS)}
    return (
        f"{stats['files']} files, {stats['lines']} lines, {stats['documents']} documents, "
        f"{stats['sentences']} sentences, {stats['tokens']} tokens"
        + (f"; skipped/repaired: {skipped}" if skipped else "; nothing skipped")
    )


def expand_text_files(paths):
    """Paths, folders and globs → the list of text files they name.

    A folder gives the files under it (recursively, sorted; names starting
    with "." are skipped, folders included); a glob gives its matches, sorted;
    an existing file passes through.

    Args:
        paths: a path, a folder or a glob (str or `os.PathLike`), or a list of them.

    Returns:
        A list of file paths (str), in the order of `paths`.

    Raises:
        FileNotFoundError: a folder holds no files.
        ValueError: a path or glob matches no file.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = []
    for item in map(os.fspath, paths):
        if os.path.isdir(item):
            files.extend(_files_under(item))
        elif os.path.isfile(item):
            files.append(item)
        else:
            matches = sorted(glob.glob(item))
            if not matches:
                raise ValueError(f"no file matches {item!r}")
            files.extend(matches)
    return files


def _files_under(folder):
    found = []
    for root, folders, names in os.walk(folder):
        folders[:] = [name for name in folders if not name.startswith(".")]
        found.extend(os.path.join(root, name) for name in names if not name.startswith("."))
    if not found:
        raise FileNotFoundError(f"{folder}: the folder holds no files")
    return sorted(found)


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
    """Decoded lines of a file, read a line at a time; over-long lines dropped, bad bytes replaced.

    Splitting the bytes at b"\\n" and decoding each line gives the same text as
    decoding the whole file first (no UTF-8 sequence contains the newline
    byte), and a streamed corpus never holds a whole file.
    """
    with open(path, "rb") as f:
        for raw in f:
            stats["lines"] += 1
            raw = raw[:-1] if raw.endswith(b"\n") else raw
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                stats["invalid_utf8_lines"] += 1
                line = raw.decode("utf-8", errors="replace")
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


def read_documents(files, document_boundary="chapter", line_format="wrapped", document_separator=None,
                   chapter_pattern=CHAPTER_PATTERN, max_line_chars=20_000, stats=None):
    """Reads text files into documents of sentences.

    Args:
        files: a path, a folder, a glob, or a list of them (see
            `expand_text_files`).
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
    check_choice("document_boundary", document_boundary, DOCUMENT_BOUNDARIES)
    check_choice("line_format", line_format, LINE_FORMATS)
    check_positive_int("max_line_chars", max_line_chars)
    stats = _with_counters(stats)
    documents = []
    for path in expand_text_files(files):
        documents.extend(iter_file_documents(
            path, document_boundary, line_format, document_separator, chapter_pattern, max_line_chars, stats
        ))
    return documents, stats


def _file_documents(lines, document_boundary, line_format, document_separator, chapter, stats):
    """Yields the documents of one file's lines (see `read_documents`), each as soon as it ends."""
    finished, document, paragraph = [], [], []

    def end_paragraph():
        if paragraph:
            document.extend(split_sentences(" ".join(paragraph)))
            paragraph.clear()

    def end_document():
        end_paragraph()
        if document:
            finished.append(list(document))
        document.clear()

    for line in lines:
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
        if finished:
            yield finished.pop()
    end_document()
    yield from finished


def iter_file_documents(path, document_boundary="chapter", line_format="wrapped", document_separator=None,
                        chapter_pattern=CHAPTER_PATTERN, max_line_chars=20_000, stats=None):
    """Yields the documents of one text file, one at a time (what a streamed corpus reads).

    The same documents, in the same order, as `read_documents([path], ...)`
    (which reads each file with it), but only the current document and
    paragraph are held; the arguments are those of `read_documents`, not
    checked here.

    Yields:
        Documents, each a non-empty list of sentence strings.
    """
    stats = _with_counters(stats)
    stats["files"] += 1
    lines = _read_lines(path, max_line_chars, stats)
    chapter = re.compile(chapter_pattern, re.IGNORECASE)
    yield from _file_documents(lines, document_boundary, line_format, document_separator, chapter, stats)


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
    stats = _with_counters(stats)
    sentences = iter(_tokenize_sentences([s for doc in documents for s in doc], tokenizer, batch_size))
    token_documents, start_documents = [], []
    for doc in documents:
        ids_doc, starts_doc = [], []
        for ids, starts in (next(sentences) for _ in doc):
            if len(ids) == 0:
                stats["skipped_empty_sentences"] += 1
                continue
            for piece_ids, piece_starts in _split_long_sentence(ids, starts, max_sentence_tokens, stats):
                ids_doc.append(piece_ids)
                starts_doc.append(piece_starts)
                stats["tokens"] += len(piece_ids)
        if not ids_doc:
            stats["skipped_empty_documents"] += 1
            continue
        stats["sentences"] += len(ids_doc)
        stats["single_sentence_documents"] += len(ids_doc) == 1
        token_documents.append(ids_doc)
        start_documents.append(starts_doc)
    stats["documents"] = len(token_documents)
    return token_documents, start_documents, stats


def _tokenize_sentences(sentences, tokenizer, batch_size):
    """`(ids, word_starts)` numpy arrays (int32, int8) of every sentence, in order."""
    if hasattr(tokenizer, "word_start_ids"):
        # Byte-level BPE: whole words are the tokens from one "Ġ" to the next, as RoBERTa's and ModernBERT's
        # whole-word masking reads them (its `tokenize_words` splits punctuation off as words of their own).
        return _tokenize_by_word_start_tokens(sentences, tokenizer, batch_size)
    tokenized = []
    for begin in range(0, len(sentences), batch_size):
        words = tokenizer.tokenize_words(sentences[begin : begin + batch_size])
        values = words.flat_values.numpy().astype(np.int32)
        word_splits = words.values.row_splits.numpy()
        sentence_splits = word_splits[words.row_splits.numpy()]
        starts = np.zeros(len(values), np.int8)
        starts[word_splits[:-1]] = 1
        for lo, hi in zip(sentence_splits[:-1], sentence_splits[1:]):
            tokenized.append((values[lo:hi], starts[lo:hi]))
    return tokenized


def _tokenize_by_word_start_tokens(sentences, tokenizer, batch_size):
    """`_tokenize_sentences` for a tokenizer that marks word starts in its tokens (byte-level BPE: `word_start_ids`)."""
    starts_word = np.zeros(tokenizer.vocabulary_size(), np.int8)
    starts_word[np.asarray(tokenizer.word_start_ids(), np.int64)] = 1
    tokenized = []
    for begin in range(0, len(sentences), batch_size):
        ids = tokenizer.tokenize(sentences[begin : begin + batch_size])
        values, splits = ids.flat_values.numpy().astype(np.int32), ids.row_splits.numpy()
        starts = starts_word[values]
        starts[splits[:-1][splits[:-1] < len(values)]] = 1  # a sentence's first token starts a word
        tokenized += [(values[lo:hi], starts[lo:hi]) for lo, hi in zip(splits[:-1], splits[1:])]
    return tokenized


def _split_long_sentence(ids, starts, max_sentence_tokens, stats):
    """Yields `(ids, starts)` pieces of at most `max_sentence_tokens`, cut at word starts.

    A sentence too long for any pair becomes sentence-like pieces instead of
    losing its tail to pair trimming.
    """
    while max_sentence_tokens is not None and len(ids) > max_sentence_tokens:
        stats["split_long_sentences"] += 1
        word_cuts = np.flatnonzero(starts[1 : max_sentence_tokens + 1]) + 1
        cut = int(word_cuts[-1]) if len(word_cuts) else max_sentence_tokens
        yield ids[:cut], starts[:cut]
        ids, starts = ids[cut:], starts[cut:].copy()
        starts[0] = 1
    yield ids, starts
