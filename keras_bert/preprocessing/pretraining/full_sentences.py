"""Full-sentence rows (RoBERTa's FULL-SENTENCES): `[CLS] s1 s2 ... [SEP]`, MLM only.

RoBERTa (Liu et al., 2019, section 4.2) drops next-sentence prediction and
fills every input with full sentences sampled contiguously from one or more
documents, adding a separator token where a document ends. Here documents are
visited in a seeded random order (a new order per seed, so a new seed per
epoch gives new rows) and their sentences streamed into rows of at most
`sequence_length` tokens: `[CLS]`, sentences, a `[SEP]` between documents,
and a closing `[SEP]`. A sentence that does not fit starts the next row, so
no sentence is cut (one longer than a whole row, which `tokenize_documents`
never makes, is cut into row-sized pieces).

With `cross_documents=False` a row holds one document's sentences only, and
a document longer than a row continues in the next: rows for packing
(`pack_pairs`), which then puts several short documents in one row, each
with its own `[CLS] ... [SEP]`, positions and sequence id, so that packed
documents do not attend to each other (ModernBERT's pretraining).
"""

import random

import numpy as np

from keras_bert.preprocessing.pretraining.config import check_sequence_length


def create_full_sentence_rows(
    documents, sequence_length, cls_token_id, sep_token_id, pad_token_id, word_starts=None, seed=0,
    cross_documents=True,
):
    """Rows of contiguous full sentences, crossing documents with a `[SEP]` between them.

    Args:
        documents: list of documents, each a list of sentences, each a
            sequence of int token ids (as from `tokenize_documents`).
        sequence_length: `T`, the length of every row (>= 5).
        cls_token_id, sep_token_id, pad_token_id: the special ids.
        word_starts: optional, shaped like `documents`: 1 where a word starts.
        seed: int or str; the same seed gives the same rows.
        cross_documents: bool. False ends a row at every document's end (see above).

    Returns:
        The dict of `create_nsp_pairs`: `"token_ids"`, `"segment_ids"` (all
        0: one segment), `"word_starts"` (int32 / int32 / int8 `(num_rows,
        T)`) and `"nsp"` (int32 `(num_rows,)`, all 0: there is no sentence
        label; it keeps the rows in the shape packing and masking take).
    """
    check_sequence_length(sequence_length)
    rng = random.Random(f"full:{seed}")
    order = list(range(len(documents)))
    rng.shuffle(order)
    room = sequence_length - 2  # [CLS] ... [SEP]
    rows, row = [], []  # row: (ids, starts) pieces of the open row
    used = 0
    for d in order:
        if not cross_documents and row:
            rows.append(row)
            row, used = [], 0
        new_document = True
        for k, sentence in enumerate(documents[d]):
            ids = np.asarray(sentence, np.int32)
            if not len(ids):
                continue
            starts = np.ones(len(ids), np.int8) if word_starts is None else np.asarray(word_starts[d][k], np.int8)
            for begin in range(0, len(ids), room):
                piece, piece_starts = ids[begin : begin + room], starts[begin : begin + room]
                separator = 1 if new_document and used else 0
                if used + separator + len(piece) > room:
                    rows.append(row)
                    row, used, separator = [], 0, 0
                if separator:
                    row.append((np.array([sep_token_id], np.int32), np.ones(1, np.int8)))
                row.append((piece, piece_starts))
                used += separator + len(piece)
                new_document = False
    if row:
        rows.append(row)
    if not rows:
        raise ValueError("`documents` holds no tokens: there is nothing to make rows from.")
    rng.shuffle(rows)
    return _layout(rows, sequence_length, cls_token_id, sep_token_id, pad_token_id)


def _layout(rows, sequence_length, cls_token_id, sep_token_id, pad_token_id):
    """Lists of `(ids, starts)` pieces → the arrays `create_full_sentence_rows` returns."""
    count = len(rows)
    token_ids = np.full((count, sequence_length), pad_token_id, np.int32)
    starts = np.ones((count, sequence_length), np.int8)
    for r, pieces in enumerate(rows):
        ids = np.concatenate([p[0] for p in pieces])
        token_ids[r, 0] = cls_token_id
        token_ids[r, 1 : 1 + len(ids)] = ids
        token_ids[r, 1 + len(ids)] = sep_token_id
        starts[r, 1 : 1 + len(ids)] = np.concatenate([p[1] for p in pieces])
        starts[r, 1] = 1
    return {
        "token_ids": token_ids,
        "segment_ids": np.zeros((count, sequence_length), np.int32),
        "word_starts": starts,
        "nsp": np.zeros(count, np.int32),
    }
