"""Windows over long texts as TensorFlow graph code: the SavedModel reads long texts as the pipelines do.

The Python pipelines build their windows with `window_spans`,
`pair_window_spans` and `max_context_mask`
(`keras_bert.preprocessing.tasks.task_features`); these functions build the
same windows for a whole batch at once, with shapes known only at run time,
so `serve_text` and the pipelines see the same token windows, the same
strides and the same max-context windows.

A window table describes every window of a batch by three int32 vectors of
shape `(num_windows,)`: `owner` (the row of the batch it belongs to),
`start` (its first token in that row) and `length` (its token count). Rows
come in order and each row has at least one window (an empty text has one
empty window), so per-row results are segment reductions over `owner`.
"""

import tensorflow as tf


def num_windows(lengths, window, stride):
    """Windows of `window` tokens every `stride` tokens that cover `lengths` tokens (at least 1).

    The same count as `len(window_spans(n, window, stride))`: windows start
    every `stride` tokens until one reaches the end.
    """
    return 1 + (tf.maximum(lengths - window, 0) + stride - 1) // stride


def window_table(lengths, window, stride):
    """`(owner, start, length)` of the windows over each row (see the module docstring).

    Args:
        lengths: int32 `(batch_size,)`, tokens per row.
        window: int32 `(batch_size,)` or a scalar, tokens per window.
        stride: int32 `(batch_size,)` or a scalar, tokens between window starts.
    """
    window = tf.broadcast_to(window, tf.shape(lengths))
    stride = tf.broadcast_to(stride, tf.shape(lengths))
    counts = num_windows(lengths, window, stride)
    owner = tf.repeat(tf.range(tf.size(lengths)), counts)
    index = tf.ragged.range(counts).flat_values  # window number within its row
    start = index * tf.gather(stride, owner)
    length = tf.minimum(tf.gather(window, owner), tf.gather(lengths, owner) - start)
    return owner, start, length


def gather_windows(ids, owner, start, length):
    """The tokens of each window: ragged `(num_windows, (length))` from ragged `ids` `(batch_size, (tokens))`."""
    base = tf.gather(tf.cast(ids.row_starts(), tf.int32), owner) + start
    return tf.gather(ids.flat_values, tf.ragged.range(base, base + length))


def single_windows(ids, sequence_length, stride):
    """Windows of single texts: `(windows, owner, start, length)`, each window `sequence_length - 2` tokens.

    `stride` is cut to the window size; 0 means side by side (no overlap), as
    in `TokenClassifierPipeline`.
    """
    window = sequence_length - 2
    stride = min(stride or window, window)
    lengths = tf.cast(ids.row_lengths(), tf.int32)
    owner, start, length = window_table(lengths, window, stride)
    return gather_windows(ids, owner, start, length), owner, start, length


def pair_windows(ids_a, ids_b, sequence_length, stride):
    """Windows of text pairs, as `pair_window_spans`: the longer segment windowed, the shorter repeated.

    Returns:
        `(windows_a, windows_b, owner, dropped)`: ragged token windows of each
        segment, the row of each window, and per row the tokens no window
        holds (the shorter segment's tail past `(sequence_length - 3) // 2`).
    """
    room = sequence_length - 3
    length_a = tf.cast(ids_a.row_lengths(), tf.int32)
    length_b = tf.cast(ids_b.row_lengths(), tf.int32)
    a_is_long = length_a > length_b  # a tie windows the second segment
    short = tf.minimum(length_a, length_b)
    kept = tf.minimum(short, room // 2)
    window = room - kept
    owner, start, length = window_table(tf.maximum(length_a, length_b), window, tf.maximum(tf.minimum(stride, window), 1))
    long_a = tf.gather(a_is_long, owner)
    kept_here = tf.gather(kept, owner)
    zeros = tf.zeros_like(start)
    windows_a = gather_windows(ids_a, owner, tf.where(long_a, start, zeros), tf.where(long_a, length, kept_here))
    windows_b = gather_windows(ids_b, owner, tf.where(long_a, zeros, start), tf.where(long_a, kept_here, length))
    return windows_a, windows_b, owner, short - kept


def max_context(lengths, window, stride, owner, start, length, width, max_offset):
    """BERT's max-context rule for every window position: bool `(num_windows, width)`.

    Position `j` of a window holds token `start + j` of its row; it is True
    when that window gives the token its most context, as `max_context_mask`
    decides (score `100 * min(left, right) + window length`, the earlier
    window winning a tie), and False past the window's end. A token lies in
    at most `ceil(window / stride)` windows, so comparing each window with its
    `max_offset` neighbours on either side is enough.

    Args:
        lengths, window, stride: int32 `(batch_size,)`, as given to `window_table`.
        owner, start, length: the window table.
        width: int32 scalar, positions per window row of the result.
        max_offset: Python int, at least `ceil(window / stride) - 1` for every row.
    """
    counts = num_windows(lengths, window, stride)
    index = start // tf.gather(stride, owner)  # window number within its row
    j = tf.range(width)[tf.newaxis, :]
    token = start[:, tf.newaxis] + j
    inside = j < length[:, tf.newaxis]

    def score(first, size):
        first, size = first[:, tf.newaxis], size[:, tf.newaxis]
        return 100 * tf.minimum(token - first, first + size - 1 - token) + size

    own = score(start, length)
    best = inside
    for offset in [o for o in range(-max_offset, max_offset + 1) if o]:
        other = index + offset
        exists = (other >= 0) & (other < tf.gather(counts, owner))
        other_start = other * tf.gather(stride, owner)
        other_length = tf.minimum(tf.gather(window, owner), tf.gather(lengths, owner) - other_start)
        holds = exists[:, tf.newaxis] & (token >= other_start[:, tf.newaxis]) & (
            token < (other_start + other_length)[:, tf.newaxis]
        )
        theirs = score(other_start, other_length)
        wins = own > theirs if offset < 0 else own >= theirs
        best = best & (~holds | wins)
    return best


def segment_mean(values, owner, num_rows):
    """Mean of the windows' `values` `(num_windows, ...)` per row: `(num_rows, ...)`."""
    total = tf.math.unsorted_segment_sum(values, owner, num_rows)
    count = tf.math.unsorted_segment_sum(tf.ones_like(owner, values.dtype), owner, num_rows)
    count = tf.reshape(count, tf.concat([[num_rows], tf.ones([tf.rank(values) - 1], tf.int32)], axis=0))
    return total / tf.maximum(count, 1)
