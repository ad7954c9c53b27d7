"""Private helpers shared by the SentencePiece and byte-level BPE tokenizers.

transformers cuts literal special tokens ("[MASK]", "<mask>", ...) out of the
text before anything else runs, and tokenizes the pieces between them on
their own; `SpecialTokenSplitter` does the same with TensorFlow ops.
"""

import re

import tensorflow as tf

# 0xFF never occurs in valid UTF-8 (the text is made valid first), so it can
# mark where a special token starts and ends without colliding with any text,
# NUL bytes included.
_MARK = b"\xff"


def _re2_escape(token):
    return "".join("\\" + c if re.match(r"[\\^$.|?*+()\[\]{}]", c) else c for c in token)


class SpecialTokenSplitter:
    """Splits strings into special-token pieces and the text between them.

    Args:
        token_ids: dict special token string → id.
    """

    def __init__(self, token_ids):
        # Longest first: alternation takes the first alternative that matches.
        tokens = sorted(token_ids, key=len, reverse=True)
        self._pattern = "(" + "|".join(_re2_escape(t) for t in tokens) + ")"
        self._tokens = tf.constant(tokens)
        self._ids = tf.constant([token_ids[t] for t in tokens], tf.int32)

    def split(self, text, enabled=True):
        """`(batch,)` strings → ragged `(batch, pieces)` strings and flat ids.

        Returns:
            `(pieces, special_ids)`: `pieces` a ragged string tensor whose
            pieces are, in order, text and special tokens (each of these a
            piece of its own); `special_ids` an int32 tensor aligned with
            `pieces.flat_values`: the token's id, or -1 for text.
        """
        text = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="replace", replacement_char=0xFFFD)
        if not enabled:
            pieces = tf.RaggedTensor.from_tensor(text[:, tf.newaxis])
            return pieces, -tf.ones_like(pieces.flat_values, dtype=tf.int32)
        marked = tf.strings.regex_replace(text, self._pattern, _MARK + rb"\1" + _MARK)
        pieces = tf.strings.split(marked, sep=_MARK)
        flat = pieces.flat_values
        # Odd positions of a row are what the pattern matched.
        position = tf.range(tf.size(flat, out_type=tf.int64)) - tf.gather(pieces.row_starts(), pieces.value_rowids())
        matched = position % 2 == 1
        equal = tf.equal(flat[:, tf.newaxis], self._tokens[tf.newaxis, :])
        ids = tf.gather(self._ids, tf.argmax(tf.cast(equal, tf.int32), axis=1))
        return pieces, tf.where(matched, ids, -1)


def as_batch(strings):
    """A string or batch of strings → `((batch,) string tensor, was_scalar)`."""
    if isinstance(strings, tf.RaggedTensor):
        raise ValueError(
            f"`strings` must be a string or a 1-D batch of strings; received a RaggedTensor of shape {strings.shape}"
        )
    text = tf.convert_to_tensor(strings, dtype=tf.string)
    if text.shape.rank == 0:
        return text[tf.newaxis], True
    if text.shape.rank == 1:
        return text, False
    raise ValueError(f"`strings` must be a string or a 1-D batch of strings; received shape {text.shape}")


def gather_pieces(ids, vocabulary, skip_ids=()):
    """Ids → ragged `(batch, None)` piece strings, without `skip_ids`.

    Args:
        ids: int ids of shape `(num_tokens,)` or `(batch_size, num_tokens)`,
            a list, a dense or a ragged tensor.
        vocabulary: 1-D string tensor, piece of each id.
        skip_ids: ids to leave out (special tokens).

    Returns:
        `(pieces, was_scalar)`.
    """
    if not isinstance(ids, (tf.Tensor, tf.RaggedTensor)):
        rows = [r for r in ids if isinstance(r, (list, tuple))]
        ragged = len({len(r) for r in rows}) > 1
        ids = tf.ragged.constant(ids) if ragged else tf.constant(ids)
    ids = tf.cast(ids, tf.int32)
    scalar = ids.shape.rank == 1
    if scalar:
        ids = ids[tf.newaxis]
    if isinstance(ids, tf.Tensor):
        ids = tf.RaggedTensor.from_tensor(ids)
    size = tf.shape(vocabulary)[0]
    tf.debugging.assert_less(ids.flat_values, size, message="ids must be smaller than the vocabulary size")
    if len(skip_ids):
        skip = tf.constant(list(skip_ids), tf.int32)
        keep = tf.reduce_all(ids.flat_values[:, None] != skip[None, :], axis=-1)
        ids = tf.ragged.boolean_mask(ids, ids.with_flat_values(keep))
    return ids.with_flat_values(tf.gather(vocabulary, ids.flat_values)), scalar
