"""Where each byte-level BPE token came from in the text: the arithmetic of `BytePairTokenizer.tokenize_with_offsets`.

The `tokenizers` library gives every character of the text it tokenizes an
alignment, the span of the original text it stands for, and a token's offsets
run from its first character's alignment to its last one's. Byte-level BPE
loses nothing, so those characters can be counted back: the pieces a step cuts
a text into lie end to end, the words of GPT-2's split lie end to end in their
piece, the tokens of a word lie end to end in its bytes. What changes lengths
is said here once:

- Unicode normalization: the text is normalized in segments (a character
  and the marks or Hangul vowel and final jamo after it, which is what NFC
  and NFD combine or reorder), and a segment's normalized characters use
  up its original ones in order, as `tokenizers`' alignments do: where
  fewer come out, the first takes those it combined ("e" + U+0301 → "é"
  stands for the "e"); where more come out, the first original character
  stands for the extra ones (NFKC's "ﬁ" → "f", "i": both stand for "ﬁ").
  Reordered marks are not followed (neither does `tokenizers`). A piece
  whose segments normalize to something other than the whole piece does
  (rare) is one segment.
- A space put before a piece (`add_prefix_space`) stands for the piece's
  first character, as `tokenizers`' prepend aligns it.
- A token that holds part of a character's bytes (an emoji split into
  tokens) covers the whole character.
- `trim_offsets` (RoBERTa's post-processor): a token's offsets leave out the
  spaces at its ends, by the Rust `process_offsets` rule (see `trim_spaces`).

Offsets are in characters here; `BytePairTokenizer` turns them into UTF-8
bytes at the end.
"""

import tensorflow as tf
import tensorflow_text as tf_text

# Characters that continue the segment before them: marks, and Hangul's vowel and final jamo (a syllable's parts).
_CONTINUES = r"[\p{M}\x{1160}-\x{11FF}\x{D7B0}-\x{D7FF}]"


def starts_in_rows(lengths):
    """Ragged `(rows, items)` int64 lengths → flat int64 exclusive running sums, restarting in every row."""
    flat = lengths.flat_values
    running = tf.cumsum(flat, exclusive=True)
    # One past the end, so that an empty row's start is a valid index too.
    running_ext = tf.concat([running, tf.reduce_sum(flat, keepdims=True)], axis=0)
    return running - tf.gather(tf.gather(running_ext, lengths.row_starts()), lengths.value_rowids())


def char_lengths(strings):
    """String tensor → int64 lengths in Unicode characters."""
    return tf.cast(tf.strings.length(strings, unit="UTF8_CHAR"), tf.int64)


def in_row(flat_index, rows):
    """Flat int64 positions inside ragged `rows` → positions counted from the start of each position's row."""
    return flat_index - tf.gather(rows.row_starts(), rows.value_rowids())


def normalized_alignment(pieces, form):
    """Unicode-normalizes text pieces, with the original character each normalized character stands for.

    Args:
        pieces: string `(n,)`, valid UTF-8.
        form: "NFC", "NFD", "NFKC" or "NFKD".

    Returns:
        `(normalized, alignment)`: string `(n,)`, equal to normalizing each
        piece whole; int64 ragged `(n, normalized characters)`, the index of
        the original character (within its piece) each one stands for.
    """
    chars = tf.strings.unicode_split(pieces, "UTF-8")
    position = in_row(tf.range(tf.size(chars.flat_values, out_type=tf.int64)), chars)
    starts_segment = ~tf.strings.regex_full_match(chars.flat_values, _CONTINUES) | (position == 0)
    whole = tf_text.normalize_utf8(pieces, form)
    # Where segment by segment is not the piece's own normalization, the piece is one segment.
    by_segment, _ = _normalized_segments(chars, starts_segment, form)
    alone = tf.strings.reduce_join(by_segment, axis=1) != whole
    starts_segment = tf.where(tf.gather(alone, chars.value_rowids()), position == 0, starts_segment)
    segments, original = _normalized_segments(chars, starts_segment, form)
    first_chars = tf.boolean_mask(position, starts_segment)
    normalized = tf.strings.unicode_split(segments.flat_values, "UTF-8")  # (segments, normalized characters)
    segment = normalized.value_rowids()
    place = in_row(tf.range(tf.size(segment, out_type=tf.int64)), normalized)
    # The normalized characters use up the original ones in order (the alignments `tokenizers` gives): where
    # fewer come out, the first one (the starter, combined) takes what it combined; where more come out, the first
    # original character (the one decomposed) stands for the extra ones.
    extra = tf.gather(normalized.row_lengths() - original.row_lengths(), segment)
    aligned = tf.where(extra <= 0, tf.where(place == 0, place, place - extra), tf.maximum(place - extra, 0))
    aligned += tf.gather(first_chars, segment)
    per_piece = tf.reduce_sum(segments.with_flat_values(normalized.row_lengths()), axis=1)
    return whole, tf.RaggedTensor.from_row_lengths(aligned, per_piece, validate=False)


def _normalized_segments(chars, starts_segment, form):
    """Characters `(n, chars)` cut before each `starts_segment` → `(normalized segments (n, segments),
    original segments (segments, characters))`."""
    segment_of_char = tf.cumsum(tf.cast(starts_segment, tf.int64)) - 1
    original = tf.RaggedTensor.from_value_rowids(
        chars.flat_values, segment_of_char, nrows=tf.reduce_sum(tf.cast(starts_segment, tf.int64)), validate=False
    )
    per_piece = tf.math.unsorted_segment_sum(tf.cast(starts_segment, tf.int64), chars.value_rowids(), chars.nrows())
    normalized = tf_text.normalize_utf8(tf.strings.reduce_join(original, axis=1), form)
    return tf.RaggedTensor.from_row_lengths(normalized, per_piece, validate=False), original


def trim_spaces(starts, ends, leading, trailing, is_first, add_prefix_space):
    """RoBERTa's `trim_offsets`: a token's offsets without the spaces at its ends, as the Rust `process_offsets`.

    Args:
        starts, ends: int64 character offsets of the tokens.
        leading, trailing: int64, how many spaces (GPT-2's "Ġ", or white
            space in an added token's match) the token starts / ends with.
        is_first: bool, the token is its text's first (or starts at 0).
        add_prefix_space: the tokenizer puts a space before the text; then
            a first token's one leading space is the one it added, and stays.

    Returns:
        `(starts, ends)`; a token of spaces only keeps an empty span at its end.
    """
    if add_prefix_space:
        leading = tf.where(is_first & (leading == 1), tf.zeros_like(leading), leading)
    starts = tf.where(leading > 0, tf.minimum(starts + leading, ends), starts)
    ends = tf.where((trailing > 0) & (ends >= trailing), tf.maximum(ends - trailing, starts), ends)
    return starts, ends
