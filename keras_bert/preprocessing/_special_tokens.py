"""Special tokens: the check every tokenizer's vocabulary passes, and cutting them out of the text.

transformers cuts literal special tokens ("[MASK]", "<mask>", ...) out of the
text before anything else runs, and tokenizes the pieces between them on
their own; `SpecialTokenSplitter` does the same with TensorFlow ops (for the
SentencePiece and byte-level BPE tokenizers; `BertTokenizer` splits with
offsets of its own). A `tokenizer.json` may also mark a token `lstrip` /
`rstrip`: its match then takes the whitespace before / after it along
(RoBERTa's and ModernBERT's mask token: "a <mask>" is "a" + "<mask>").
"""

import re

import tensorflow as tf

# 0xFF never occurs in valid UTF-8 (the text is made valid first), so it can
# mark where a special token starts and ends without colliding with any text,
# NUL bytes included.
_MARK = b"\xff"
# Unicode White_Space in an RE2 class: what `\s` and `char::is_whitespace` mean to the Rust tokenizers
# (RE2's own `\s` is ASCII only).
WHITE_SPACE = r"\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}"


def check_special_tokens(tokens, required, source, owner):
    """Raises `ValueError` naming the tokens of `required` that `tokens` lacks.

    Args:
        tokens: the vocabulary's tokens (a list, or a dict keyed by token).
        required: the special token strings, in the order to name them.
        source: what holds `tokens`, as the message's subject (a file path, usually).
        owner: whose vocabulary must hold them, e.g. "ALBERT's".
    """
    present = set(tokens)
    missing = [t for t in required if t not in present]
    if missing:
        raise ValueError(
            f"{source} lacks the special token(s) {missing}; {owner} must contain all of {list(required)}."
        )


def _re2_escape(token):
    return "".join("\\" + c if re.match(r"[\\^$.|?*+()\[\]{}]", c) else c for c in token)


class SpecialTokenSplitter:
    """Splits strings into special-token pieces and the text between them.

    Args:
        token_ids: dict special token string → id; empty: nothing is cut out.
        lstrip: tokens whose match takes the whitespace before them along.
        rstrip: tokens whose match takes the whitespace after them along.
    """

    def __init__(self, token_ids, lstrip=(), rstrip=()):
        # Longest first: at the leftmost match, alternation takes the first alternative that matches
        # (the Rust tokenizers take the longest token there).
        tokens = sorted(token_ids, key=len, reverse=True)
        self._patterns = [
            f"[{WHITE_SPACE}]*" * (t in lstrip) + _re2_escape(t) + f"[{WHITE_SPACE}]*" * (t in rstrip) for t in tokens
        ]
        self._pattern = "(" + "|".join(self._patterns) + ")" if tokens else None
        self._stripped = [i for i, t in enumerate(tokens) if t in lstrip or t in rstrip]
        self._tokens = tf.constant(tokens, tf.string)
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
        if not enabled or self._pattern is None:
            pieces = tf.RaggedTensor.from_tensor(text[:, tf.newaxis])
            return pieces, -tf.ones_like(pieces.flat_values, dtype=tf.int32)
        marked = tf.strings.regex_replace(text, self._pattern, _MARK + rb"\1" + _MARK)
        pieces = tf.strings.split(marked, sep=_MARK)
        flat = pieces.flat_values
        # Odd positions of a row are what the pattern matched.
        position = tf.range(tf.size(flat, out_type=tf.int64)) - tf.gather(pieces.row_starts(), pieces.value_rowids())
        matched = position % 2 == 1
        # [pieces, tokens]: which token each match is; a stripped token's match holds its whitespace too.
        equal = tf.equal(flat[:, tf.newaxis], self._tokens[tf.newaxis, :])
        for i in self._stripped:
            column = tf.range(len(self._patterns)) == i
            equal |= tf.strings.regex_full_match(flat, self._patterns[i])[:, tf.newaxis] & column[tf.newaxis, :]
        ids = tf.gather(self._ids, tf.argmax(tf.cast(equal, tf.int32), axis=1))
        return pieces, tf.where(matched, ids, -1)

    def tokenize(self, text, tokenize_text, enabled=True):
        """`(batch,)` strings → int32 ragged ids `(batch, None)`, special tokens cut out first.

        Args:
            text: string tensor `(batch,)`.
            tokenize_text: the tokenizer's own algorithm, run on the text
                between special tokens: string `(num_pieces,)` → int32 ragged
                `(num_pieces, None)`. A special token's piece comes as "".
            enabled: cut special tokens out (`special_tokens_in_strings`);
                without, each string is one piece of text.

        Returns:
            int32 ragged `(batch, None)`: each piece's ids in order, a special
            token's piece its one id.
        """
        pieces, special_ids = self.split(text, enabled)
        is_special = special_ids >= 0
        ids = tokenize_text(tf.where(is_special, "", pieces.flat_values))
        # validate=False here and in the tokenizers' and the packer's other row partitions built from lengths they
        # counted: valid by construction, and TensorFlow's checks add assert ops (and trace time) to every graph.
        special = tf.RaggedTensor.from_row_lengths(
            tf.boolean_mask(special_ids, is_special), tf.cast(is_special, ids.row_splits.dtype), validate=False
        )
        # [batch, pieces, ids] → [batch, ids]
        return pieces.with_flat_values(tf.concat([ids, special], axis=1)).merge_dims(1, 2)

    def words(self, text, text_words, enabled=True):
        """`tokenize` with the words kept: `(batch,)` strings → int32 ragged `(batch, words, ids)`.

        Args:
            text: string tensor `(batch,)`.
            text_words: the tokenizer's algorithm on the text between special
                tokens: string `(num_pieces,)` → int32 ragged `(num_pieces,
                words, ids)`. A special token's piece comes as "".
            enabled: as `tokenize`'s.

        Returns:
            Each piece's words in order; a special token is a word of its own.
        """
        pieces, special_ids = self.split(text, enabled)
        is_special = special_ids >= 0
        words = text_words(tf.where(is_special, "", pieces.flat_values))
        ones = tf.ones_like(tf.boolean_mask(special_ids, is_special), dtype=words.row_splits.dtype)
        special = tf.RaggedTensor.from_row_lengths(
            tf.RaggedTensor.from_row_lengths(tf.boolean_mask(special_ids, is_special), ones, validate=False),
            tf.cast(is_special, words.row_splits.dtype),
            validate=False,
        )
        # [batch, pieces, words, ids] → [batch, words, ids]
        return pieces.with_flat_values(tf.concat([words, special], axis=1)).merge_dims(1, 2)

    def offsets(self, text, text_offsets, enabled=True):
        """`tokenize`, with where each token is: `(batch,)` strings → int64 ragged `(batch, None, 5)`.

        Args:
            text: string tensor `(batch,)`, valid UTF-8.
            text_offsets: the tokenizer's algorithm with offsets, run on the
                text between special tokens: string `(num_pieces,)` → int64
                ragged `(num_pieces, None, 5)` (see Returns; characters
                counted within each piece). A special token's piece comes as "".
            enabled: as `tokenize`'s.

        Returns:
            Per token: its id, its first and last character in the text
            (a special token: its whole match), and how many spaces it
            starts and ends with (a special token: the white space its
            match took along; see `_byte_pair_offsets.trim_spaces`).
        """
        pieces, special_ids = self.split(text, enabled)
        flat = pieces.flat_values
        is_special = special_ids >= 0
        lengths = tf.cast(tf.strings.length(flat, unit="UTF8_CHAR"), tf.int64)
        # Each piece's first character in its text: the pieces lie end to end.
        starts = tf.cumsum(lengths, exclusive=True)
        starts -= tf.gather(starts, tf.gather(pieces.row_starts(), pieces.value_rowids()))
        found = text_offsets(tf.where(is_special, "", flat))
        # The text's tokens: their first and last characters move by their piece's start.
        columns = tf.constant([0, 1, 1, 0, 0], tf.int64)[tf.newaxis, :]
        shifted = found.flat_values + columns * tf.gather(starts, found.value_rowids())[:, tf.newaxis]
        space = f"[{WHITE_SPACE}]*"
        leading = tf.strings.length(tf.strings.regex_replace(flat, f"^({space})(?s:.*)$", r"\1"), unit="UTF8_CHAR")
        trailing = tf.strings.length(
            tf.strings.regex_replace(flat, f"^(?s:.*?)({space})$", r"\1"), unit="UTF8_CHAR"
        )
        special = tf.stack(
            [tf.cast(special_ids, tf.int64), starts, starts + lengths - 1, tf.cast(leading, tf.int64),
             tf.cast(trailing, tf.int64)], axis=1,
        )  # fmt: skip
        special = tf.RaggedTensor.from_row_lengths(
            tf.boolean_mask(special, is_special), tf.cast(is_special, found.row_splits.dtype), validate=False
        )
        found = found.with_flat_values(shifted)
        # [batch, pieces, tokens, 5] → [batch, tokens, 5]
        return pieces.with_flat_values(tf.concat([found, special], axis=1)).merge_dims(1, 2)
