"""Sentence-pair stage: tokenized documents → `[CLS] A [SEP] B [SEP]` NSP or SOP pairs (or full-sentence rows).

`create_sentence_rows` picks the builder of a `sentence_task`: "nsp"
(`create_nsp_pairs`), "sop" (`create_sop_pairs`, ALBERT's sentence-order
prediction) or "none" (`full_sentences.create_full_sentence_rows`, RoBERTa).

This follows `create_instances_from_document` of google-research/bert
`create_pretraining_data.py`: sentences are gathered into a chunk until it
reaches the target length (`sequence_length - 3`, or with probability
`short_seq_prob` a random shorter one); the chunk is cut at a random sentence
into A and B, and with probability `random_next_probability` B is replaced by
sentences from a random other document (label 1 = "B is random", 0 = "B is the
actual next", as in Hugging Face); the longer side is trimmed at a random end
until the pair fits.

Differences from the original, on purpose: the short target length is drawn
per pair, not once per document (the original's comment says "sometimes"; its
code made every pair of a document short); a sentence longer than
`sequence_length - 3` is cut into pieces at word starts (`tokenize_documents`)
instead of losing its tail when the pair is trimmed. As in the original, a
chunk of a single sentence always gets a random B, so slightly more than half
the labels are 1 (52-53% on Austen).
"""

import random

import numpy as np

from keras_bert.preprocessing.pretraining.config import (
    SENTENCE_TASKS,
    check_choice,
    check_probability,
    check_sequence_length,
)
from keras_bert.preprocessing.pretraining.full_sentences import create_full_sentence_rows


def create_sentence_rows(
    documents,
    sequence_length,
    cls_token_id,
    sep_token_id,
    pad_token_id,
    word_starts=None,
    sentence_task="nsp",
    short_seq_prob=0.1,
    random_next_probability=0.5,
    seed=0,
    cross_documents=True,
):
    """The rows of `sentence_task`: "nsp" pairs, "sop" pairs or "none" full-sentence rows.

    All three return the dict of `create_nsp_pairs` (for "none" `"nsp"` is all
    0 and `segment_ids` all 0), so packing and masking take them alike. For
    "sop", `random_next_probability` is the chance that a pair is swapped;
    "none" uses neither it nor `short_seq_prob`; with `cross_documents=False`
    (rows to be packed) its rows hold one document each (`create_full_sentence_rows`).
    """
    check_choice("sentence_task", sentence_task, SENTENCE_TASKS)
    special = (cls_token_id, sep_token_id, pad_token_id)
    if sentence_task == "none":
        return create_full_sentence_rows(
            documents, sequence_length, *special, word_starts=word_starts, seed=seed, cross_documents=cross_documents
        )
    return _shuffled_pairs(
        sentence_task, documents, sequence_length, special, word_starts, short_seq_prob, random_next_probability, seed
    )


def create_nsp_pairs(documents, sequence_length, cls_token_id, sep_token_id, pad_token_id, word_starts=None,
                     short_seq_prob=0.1, random_next_probability=0.5, seed=0):
    """Builds next-sentence-prediction pairs, packed `[CLS] A [SEP] B [SEP]`.

    Documents are visited in order and the pairs are then shuffled (see the
    module docstring for how a pair is chosen).

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
    special = (cls_token_id, sep_token_id, pad_token_id)
    return _shuffled_pairs(
        "nsp", documents, sequence_length, special, word_starts, short_seq_prob, random_next_probability, seed
    )


def create_sop_pairs(documents, sequence_length, cls_token_id, sep_token_id, pad_token_id, word_starts=None,
                     short_seq_prob=0.1, random_next_probability=0.5, seed=0):
    """Sentence-order prediction pairs (ALBERT): two consecutive segments of one document.

    Chunks of sentences are gathered as for `create_nsp_pairs` and cut at a
    random sentence into A and B; a chunk of one sentence is cut at a random
    word start inside it (a one-token sentence gives no pair). With
    probability `random_next_probability` the two are swapped. Labels keep
    the NSP head's meaning: 0 = "B is A's true continuation" (in order),
    1 = "it is not" (swapped), so the same head and label slot serve both.
    Unlike ALBERT's script, a one-sentence chunk never falls back to a
    random document's B: every label is about order only.

    Args and returns as `create_nsp_pairs` (`"nsp"` holds the SOP labels).
    """
    special = (cls_token_id, sep_token_id, pad_token_id)
    return _shuffled_pairs(
        "sop", documents, sequence_length, special, word_starts, short_seq_prob, random_next_probability, seed
    )


def _shuffled_pairs(sentence_task, documents, sequence_length, special_ids, word_starts, short_seq_prob,
                    random_next_probability, seed):
    """The "nsp" or "sop" pairs of every document, in document order, then shuffled and laid out.

    Args:
        sentence_task: "nsp" (`_PairChooser.document_pairs`) or "sop"
            (`_PairChooser.order_pairs`); it also seeds the draws, so NSP and
            SOP from one seed differ.
        special_ids: `(cls_token_id, sep_token_id, pad_token_id)`.
        The others: as in `create_nsp_pairs`.

    Returns:
        The dict of arrays `create_nsp_pairs` returns.
    """
    check_sequence_length(sequence_length)
    check_probability("short_seq_prob", short_seq_prob)
    check_probability("random_next_probability", random_next_probability)
    rng = random.Random(f"{sentence_task}:{seed}")
    corpus = _FlatCorpus(documents, word_starts)
    chooser = _PairChooser(corpus, sequence_length - 3, short_seq_prob, random_next_probability, rng)
    pairs_of = chooser.document_pairs if sentence_task == "nsp" else chooser.order_pairs
    spans = [span for d in range(len(corpus.bounds)) for span in pairs_of(d)]
    rng.shuffle(spans)
    return corpus.layout(spans, sequence_length, *special_ids)


class _FlatCorpus:
    """Each document as one flat id array plus sentence boundaries.

    Empty sentences and documents are left out (an A or B must not be empty).

    Attributes:
        ids: per document, int32 `(num_tokens,)`.
        starts: per document, int8 `(num_tokens,)`, 1 where a word starts.
        bounds: per document, int64 `(num_sentences + 1,)` sentence offsets.
    """

    def __init__(self, documents, word_starts):
        self.ids, self.starts, self.bounds = [], [], []
        for d, doc in enumerate(documents):
            keep = [k for k, sentence in enumerate(doc) if len(sentence)]
            if not keep:
                continue
            lengths = [len(doc[k]) for k in keep]
            self.bounds.append(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
            self.ids.append(np.concatenate([np.asarray(doc[k], np.int32) for k in keep]))
            if word_starts is None:
                self.starts.append(np.ones(self.bounds[-1][-1], np.int8))
            else:
                self.starts.append(np.concatenate([np.asarray(word_starts[d][k], np.int8) for k in keep]))
        if not self.bounds:
            raise ValueError("`documents` holds no tokens: there is nothing to make pairs from.")

    def layout(self, spans, sequence_length, cls_token_id, sep_token_id, pad_token_id):
        """`(doc_a, a0, a1, doc_b, b0, b1, label)` spans → the arrays `create_nsp_pairs` returns."""
        count = len(spans)
        token_ids = np.full((count, sequence_length), pad_token_id, np.int32)
        segment_ids = np.zeros((count, sequence_length), np.int32)
        starts = np.ones((count, sequence_length), np.int8)
        nsp = np.zeros(count, np.int32)
        for k, (da, a0, a1, db, b0, b1, label) in enumerate(spans):
            la, lb = a1 - a0, b1 - b0
            row = token_ids[k]
            row[0] = cls_token_id
            row[1 : 1 + la] = self.ids[da][a0:a1]
            row[1 + la] = sep_token_id
            row[2 + la : 2 + la + lb] = self.ids[db][b0:b1]
            row[2 + la + lb] = sep_token_id
            segment_ids[k, 2 + la : 3 + la + lb] = 1
            starts[k, 1 : 1 + la] = self.starts[da][a0:a1]
            starts[k, 2 + la : 2 + la + lb] = self.starts[db][b0:b1]
            # Trimming from the front can leave a word's tail: it becomes a word.
            starts[k, 1] = 1
            starts[k, 2 + la] = 1
            nsp[k] = label
        return {"token_ids": token_ids, "segment_ids": segment_ids, "word_starts": starts, "nsp": nsp}


class _PairChooser:
    """Chooses the A and B spans of every pair of a `_FlatCorpus`; draws from one `random.Random` in a fixed order."""

    def __init__(self, corpus, max_num_tokens, short_seq_prob, random_next_probability, rng):
        self.bounds = corpus.bounds
        self.starts = corpus.starts
        self.max_num_tokens = max_num_tokens
        self.short_seq_prob = short_seq_prob
        self.random_next_probability = random_next_probability
        self.rng = rng

    def target_length(self):
        if self.rng.random() < self.short_seq_prob:
            return self.rng.randint(2, self.max_num_tokens)
        return self.max_num_tokens

    def document_pairs(self, d):
        """Yields `(d, a0, a1, doc_b, b0, b1, label)` token spans for document `d`."""
        bound, rng = self.bounds[d], self.rng
        num_sentences = len(bound) - 1
        target = self.target_length()
        chunk_start, i = 0, 0
        while i < num_sentences:
            if i == num_sentences - 1 or bound[i + 1] - bound[chunk_start] >= target:
                n = i + 1 - chunk_start
                a_end = chunk_start + (rng.randint(1, n - 1) if n >= 2 else 1)
                a = (int(bound[chunk_start]), int(bound[a_end]))
                if n == 1 or rng.random() < self.random_next_probability:
                    label = 1
                    doc_b, b = self.random_segment(d, target - (a[1] - a[0]))
                    # The unused sentences of this chunk start the next one.
                    i = a_end - 1
                else:
                    label = 0
                    doc_b, b = d, (int(bound[a_end]), int(bound[i + 1]))
                a, b = _trim_pair(a, b, self.max_num_tokens, rng)
                yield (d, a[0], a[1], doc_b, b[0], b[1], label)
                chunk_start = i + 1
                target = self.target_length()
            i += 1

    def order_pairs(self, d):
        """Yields SOP spans `(d, a0, a1, d, b0, b1, label)` for document `d` (label 1: swapped)."""
        bound, starts, rng = self.bounds[d], self.starts[d], self.rng
        num_sentences = len(bound) - 1
        target = self.target_length()
        chunk_start = 0
        for i in range(num_sentences):
            if i < num_sentences - 1 and bound[i + 1] - bound[chunk_start] < target:
                continue
            n = i + 1 - chunk_start
            first, end = int(bound[chunk_start]), int(bound[i + 1])
            if n >= 2:
                cut = int(bound[chunk_start + rng.randint(1, n - 1)])
            else:
                cut = _cut_inside(starts, first, end, rng)
            if cut is not None:
                a, b = _trim_pair((first, cut), (cut, end), self.max_num_tokens, rng)
                if rng.random() < self.random_next_probability:
                    yield (d, b[0], b[1], d, a[0], a[1], 1)
                else:
                    yield (d, a[0], a[1], d, b[0], b[1], 0)
            chunk_start = i + 1
            target = self.target_length()

    def random_segment(self, d, target_b):
        """`(doc, (start, end))`: sentences of a random other document, about `target_b` tokens."""
        rng = self.rng
        for _ in range(10):
            other = rng.randint(0, len(self.bounds) - 1)
            if other != d:
                break
        other_bound = self.bounds[other]
        first = rng.randint(0, len(other_bound) - 2)
        last = first
        while last < len(other_bound) - 1:
            last += 1
            if other_bound[last] - other_bound[first] >= target_b:
                break
        return other, (int(other_bound[first]), int(other_bound[last]))


def _cut_inside(starts, first, end, rng):
    """A random word start strictly inside tokens `[first, end)` (any token if it is one word), or None."""
    inside = [p for p in range(first + 1, end) if starts[p]] or list(range(first + 1, end))
    return rng.choice(inside) if inside else None


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


def flat_document(sentences, word_starts=None):
    """One tokenized document → `(ids, starts, bounds)`, the flat form `window_pairs` takes.

    Args:
        sentences: a list of per-sentence id arrays (one document of
            `tokenize_documents`), at least one of them non-empty.
        word_starts: optional, shaped like `sentences`.

    Returns:
        int32 ids `(num_tokens,)`, int8 word starts `(num_tokens,)` and int64
        sentence offsets `(num_sentences + 1,)`.
    """
    corpus = _FlatCorpus([sentences], None if word_starts is None else [word_starts])
    return corpus.ids[0], corpus.starts[0], corpus.bounds[0]


def window_pairs(window, sequence_length, cls_token_id, sep_token_id, pad_token_id, rng, short_seq_prob=0.1,
                 random_next_probability=0.5):
    """NSP pairs of the newest document of a window of recent documents (the streamed corpus's rule).

    The pairs of the last document of `window` are chosen exactly as
    `create_nsp_pairs` chooses a document's pairs, except that a random B
    comes from another document of `window` instead of the whole corpus.
    The pairs are not shuffled.

    Args:
        window: a sequence of `flat_document` triples, the newest last.
        sequence_length, cls_token_id, sep_token_id, pad_token_id,
            short_seq_prob, random_next_probability: as in `create_nsp_pairs`.
        rng: a `random.Random`, drawn from in the same order as `create_nsp_pairs` does.

    Returns:
        The dict of arrays `create_nsp_pairs` returns, for this document's pairs.
    """
    corpus = _FlatCorpus.__new__(_FlatCorpus)  # already flat: no per-sentence concatenation again
    corpus.ids, corpus.starts, corpus.bounds = (list(part) for part in zip(*window))
    chooser = _PairChooser(corpus, sequence_length - 3, short_seq_prob, random_next_probability, rng)
    spans = list(chooser.document_pairs(len(window) - 1))
    return corpus.layout(spans, sequence_length, cls_token_id, sep_token_id, pad_token_id)
