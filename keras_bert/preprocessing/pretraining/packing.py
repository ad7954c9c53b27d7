"""Packing stage: several short NSP pairs in one row ("packed BERT"), and how much padding that saves.

Each packed pair keeps its own [CLS]/[SEP], segment ids, NSP label and
positions from 0, and `sequence_ids` let the model keep attention within each
pair, so less of every batch is padding.
"""

import numpy as np

from keras_bert.preprocessing.pretraining.config import check_positive_int

# What `record_packing` adds to the stats of `pretraining_dataset`.
PACKING_STATS = ("unpacked_rows", "packed_rows", "padding_fraction_unpacked", "padding_fraction_packed")


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
    check_positive_int("max_sequences_per_pack", max_sequences_per_pack)
    token_ids = np.asarray(pairs["token_ids"])
    lengths = (token_ids != pad_token_id).sum(axis=1)
    rows = _best_fit_rows(lengths.tolist(), token_ids.shape[1], max_sequences_per_pack)
    return _layout_rows(pairs, rows, lengths, max_sequences_per_pack, pad_token_id)


def _best_fit_rows(lengths, row_length, max_per_row):
    """Lists of pair indices, one per row: each pair into the fullest open row it fits."""
    # Open rows bucketed by the room they have left.
    open_rows = [[] for _ in range(row_length + 1)]
    open_count = np.zeros(row_length + 1, np.int64)
    rows, room = [], []
    for i, n in enumerate(lengths):
        fits = np.flatnonzero(open_count[n:])
        if len(fits):
            r = open_rows[n + fits[0]].pop()
            open_count[n + fits[0]] -= 1
        else:
            r = len(rows)
            rows.append([])
            room.append(row_length)
        rows[r].append(i)
        room[r] -= n
        if len(rows[r]) < max_per_row and room[r] > 0:
            open_rows[room[r]].append(r)
            open_count[room[r]] += 1
    return rows


def _layout_rows(pairs, rows, lengths, S, pad_token_id):
    """Copies each row's pairs one after another; see `pack_pairs` for the arrays."""
    token_ids = np.asarray(pairs["token_ids"])
    num_rows, length = len(rows), token_ids.shape[1]
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


def record_packing(stats, pair_rounds, packed_rounds, pad_token_id):
    """Adds rows and padding fractions before and after packing (`PACKING_STATS`) to `stats`."""
    unpacked = np.concatenate([r["token_ids"] for r in pair_rounds])
    packed = np.concatenate([r["token_ids"] for r in packed_rounds])
    stats["unpacked_rows"] = int(len(unpacked))
    stats["packed_rows"] = int(len(packed))
    stats["padding_fraction_unpacked"] = round(padding_fraction(unpacked, pad_token_id), 4)
    stats["padding_fraction_packed"] = round(padding_fraction(packed, pad_token_id), 4)
    return stats


def packing_summary(stats):
    """One line: pairs → rows, and the padding share before and after."""
    return (
        f"packed {stats['unpacked_rows']} pairs into {stats['packed_rows']} rows; padding "
        f"{stats['padding_fraction_unpacked']:.1%} -> {stats['padding_fraction_packed']:.1%} of all tokens"
    )
