"""Token spans without the white space at their ends: what answers and words are cut from.

Byte-level BPE tokens carry the space before a word ("Ġ" + "Paris" covers
" Paris" in ModernBERT's offsets, as in `tokenizers`'), so an answer cut by
them would start with a space, a SQuAD answer that starts at the "P" would
not start on a token boundary, and an explanation would glue each word to
the one before it. WordPiece spans never hold white space: for BERT this
changes nothing. One definition for the SQuAD features (labels and the
pipeline's decoding), the exported SavedModel's `serve_text` and the
explanations' words.
"""

import tensorflow as tf

from keras_bert.preprocessing._special_tokens import WHITE_SPACE


def trimmed_offsets(tokenizer, texts):
    """The texts' tokens and their spans, the white space at each token's ends left out.

    Args:
        tokenizer: a tokenizer with `tokenize_with_offsets`.
        texts: string `(batch_size,)`.

    Returns:
        `(ids, char_starts, char_ends, byte_starts, byte_ends)`, int32 ragged
        `(batch_size, None)`. A token of white space only spans nothing, at
        its start: the word it ends (byte-level BPE's "Ġ" before a newline,
        a run of spaces after the word; see `BytePairTokenizer.tokenize_words`)
        or the answer it ends then ends where its text does.
    """
    ids, char_starts, char_ends = tokenizer.tokenize_with_offsets(texts, unit="char")
    _, byte_starts, byte_ends = tokenizer.tokenize_with_offsets(texts, unit="byte")
    first_byte, end_byte = byte_starts.flat_values, byte_ends.flat_values
    covered = tf.strings.substr(tf.gather(texts, ids.value_rowids()), first_byte, end_byte - first_byte)
    space = f"[{WHITE_SPACE}]*"
    leading = tf.strings.regex_replace(covered, f"^({space})(?s:.*)$", r"\1")
    trailing = tf.strings.regex_replace(covered, f"^(?s:.*?)({space})$", r"\1")
    blank = tf.equal(leading, covered)

    def trimmed(starts, ends, unit):
        start = tf.where(blank, starts.flat_values, starts.flat_values + tf.strings.length(leading, unit=unit))
        end = tf.where(blank, start, tf.maximum(ends.flat_values - tf.strings.length(trailing, unit=unit), start))
        return starts.with_flat_values(start), ends.with_flat_values(end)

    return (ids, *trimmed(char_starts, char_ends, "UTF8_CHAR"), *trimmed(byte_starts, byte_ends, "BYTE"))
