"""Raw text → the model's inputs for explanations, with where each token came from in the text.

An explanation reads one sequence per text (or one per choice): it does not
window long texts, since an attribution over overlapping windows would
attribute one prediction to several forward passes. A text that does not fit
is refused with a message that says by how much.
"""

import dataclasses

import numpy as np
import tensorflow as tf

from keras_bert.preprocessing.input_packer import BertInputPacker
from keras_bert.preprocessing.trimmed_offsets import trimmed_offsets


@dataclasses.dataclass
class PackedText:
    """One input (a text, a pair, a question and its context, or a context and its choices), packed.

    Attributes:
        fields: the input's texts, in order.
        inputs: dict of int32 arrays `(1, length)` (`(1, num_choices, length)`
            with a choices axis), cut to the longest row.
        token_ids: int array `(rows, length)`, one row per sequence.
        spans: per row, per position, `(field, start, end)` character offsets
            of the token in `fields[field]` (`(field, None, None)` when the
            tokenizer gives no offsets), or None for [CLS], [SEP] and padding.
    """

    fields: list
    inputs: dict
    token_ids: np.ndarray
    spans: list


def _pieces(tokenizer, text):
    """`(ids, spans)` of one text; spans None where the tokenizer gives no offsets (SentencePiece)."""
    if hasattr(tokenizer, "tokenize_with_offsets"):
        # Without the spaces byte-level BPE tokens carry: words are told apart by the white space between spans.
        ids, starts, ends, _, _ = (t.numpy().tolist()[0] for t in trimmed_offsets(tokenizer, tf.constant([text])))
        return ids, list(zip(starts, ends))
    ids = tokenizer.tokenize(text).numpy().tolist()
    return ids, [None] * len(ids)


class TextPacker:
    """Packs the inputs of one task for explanations (no windows; a text that does not fit is refused).

    Args:
        tokenizer: the model's tokenizer.
        sequence_length: the longest sequence to read.
        choices: inputs are a context and its choices (multiple choice).
    """

    def __init__(self, tokenizer, sequence_length, choices=False):
        self.tokenizer = tokenizer
        self.sequence_length = sequence_length
        self.choices = choices
        self.packer = BertInputPacker.from_tokenizer(tokenizer, sequence_length)
        self.separators_between = getattr(tokenizer, "separators_between", 1)

    def pack(self, fields, where):
        """One input's fields → `PackedText`.

        Args:
            fields: list of strings: `[text]`, `[text, pair]`, or `[context, choice, ...]`.
            where: what messages call the input ("text 3").

        Raises:
            ValueError: an empty field, or a sequence longer than `sequence_length`.
        """
        for i, field in enumerate(fields):
            if not isinstance(field, str):
                raise ValueError(f"{where}: field {i + 1} must be a string. Received {type(field).__name__}")
            if not field.strip():
                raise ValueError(f"{where}: field {i + 1} is empty: nothing to explain")
        pieces = [_pieces(self.tokenizer, field) for field in fields]
        rows = [[0, i] for i in range(1, len(fields))] if self.choices else [list(range(len(fields)))]
        for row in rows:
            self._check_length([len(pieces[f][0]) for f in row], where)
        packed = [self._pack_row(row, pieces) for row in rows]
        length = max(len(ids) for ids, _, _ in packed)
        token_ids = np.full((len(rows), length), self.tokenizer.pad_token_id, dtype="int32")
        segment_ids = np.zeros((len(rows), length), dtype="int32")
        padding_mask = np.zeros((len(rows), length), dtype="int32")
        spans = []
        for r, (ids, segments, row_spans) in enumerate(packed):
            token_ids[r, : len(ids)], segment_ids[r, : len(ids)], padding_mask[r, : len(ids)] = ids, segments, 1
            spans.append(row_spans + [None] * (length - len(ids)))
        inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
        inputs = {k: v[None] if self.choices else v for k, v in inputs.items()}  # (1, [choices,] length)
        return PackedText(list(fields), inputs, token_ids, spans)

    def pack_many(self, inputs):
        """Inputs of one or two fields each (texts, or pairs; not choices) → one batch of model inputs.

        For reading many edited texts at once (the deletion curve): one
        tokenizer call and one packer call for the batch. Fields may be empty.

        Returns:
            dict of int32 arrays `(len(inputs), length)`, cut to the longest row.
        """
        columns = list(zip(*inputs))
        if len({len(fields) for fields in inputs}) != 1 or len(columns) not in (1, 2):
            raise ValueError("pack_many takes inputs of one field each, or two fields each")
        ids = [self.tokenizer.tokenize(tf.constant(list(column))) for column in columns]  # ragged (n, None)
        lengths = np.sum([column.row_lengths().numpy() for column in ids], axis=0)
        for i, n in enumerate(lengths):
            self._check_length([int(n)] + [0] * (len(ids) - 1), f"input {i}")
        packed = {k: v.numpy() for k, v in self.packer(*ids).items()}
        length = int(packed["padding_mask"].sum(axis=1).max())
        return {k: v[:, :length] for k, v in packed.items()}

    def _check_length(self, lengths, where):
        specials = 2 if len(lengths) == 1 else 3 + (self.separators_between - 1)
        total = sum(lengths) + specials
        if total > self.sequence_length:
            raise ValueError(
                f"{where}: {total} tokens with the special tokens, longer than the {self.sequence_length} an "
                f"explanation reads (sequence_length). Explanations read one sequence and never cut a text: "
                f"shorten it by {total - self.sequence_length} tokens, or raise sequence_length (at most the "
                f"model's max_sequence_length)."
            )

    def _pack_row(self, row, pieces):
        """`(ids, segment ids, spans)` of one sequence, laid out by the tokenizer's packer."""
        segments = [tf.ragged.constant([pieces[f][0]], dtype=tf.int32, ragged_rank=1) for f in row]
        packed = {k: v.numpy()[0] for k, v in self.packer(*segments).items()}
        length = int(packed["padding_mask"].sum())
        spans = [None]  # [CLS]
        for n, f in enumerate(row):
            if n > 0:
                spans += [None] * (self.separators_between - 1)
            spans += [(f, None, None) if s is None else (f, *s) for s in pieces[f][1]] + [None]  # the field, [SEP]
        return packed["token_ids"][:length], packed["segment_ids"][:length], spans
