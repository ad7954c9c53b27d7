"""Windows over texts longer than one sequence, and how the windows' outputs become one result per text.

A text longer than the model's sequence is read in overlapping windows that
start every `stride` tokens until one reaches the end (BERT's "doc stride");
a text pair is windowed over its longer segment, the shorter one repeated in
every window. A whole batch is windowed at once, in TensorFlow ops: the
exported SavedModel traces these functions into its `serve_text` graph and
the Python pipelines and fine-tuning features run the very same functions
eagerly, so both read a long text through the same windows.

A window table describes every window of a batch by three int32 vectors of
shape `(num_windows,)`: `owner` (the row of the batch it belongs to),
`start` (its first token in that row) and `length` (its token count). Rows
come in order, each row's windows in the order of their starts, and each row
has at least one window (an empty text has one empty window), so per-row
results are segment reductions over `owner`.
"""

import math

import tensorflow as tf


def num_windows(lengths, window, stride):
    """Windows of `window` tokens every `stride` tokens that cover `lengths` tokens (at least 1)."""
    return 1 + (tf.maximum(lengths - window, 0) + stride - 1) // stride


def window_table(lengths, window, stride):
    """`(owner, start, length)` of the windows over each row (see the module docstring).

    Args:
        lengths: int32 `(batch_size,)`, tokens per row.
        window: int32 `(batch_size,)` or a scalar, tokens per window (at least 1).
        stride: int32 `(batch_size,)` or a scalar, tokens between window starts, in `[1, window]`.

    Examples:
    >>> window_table(tf.constant([10, 3]), 4, 3)  # rows of 10 and 3 tokens
    # owner [0, 0, 0, 1], start [0, 3, 6, 0], length [4, 4, 4, 3]
    """
    lengths = tf.cast(lengths, tf.int32)
    window = tf.broadcast_to(tf.cast(window, tf.int32), tf.shape(lengths))
    stride = tf.broadcast_to(tf.cast(stride, tf.int32), tf.shape(lengths))
    counts = num_windows(lengths, window, stride)
    owner = tf.repeat(tf.range(tf.size(lengths)), counts)
    index = tf.ragged.range(counts).flat_values  # window number within its row
    start = index * tf.gather(stride, owner)
    length = tf.minimum(tf.gather(window, owner), tf.gather(lengths, owner) - start)
    return owner, start, length


def single_text_table(lengths, sequence_length, stride):
    """The window table of single texts packed as `[CLS] text [SEP]`: windows of `sequence_length - 2` tokens.

    Args:
        lengths: int32 `(batch_size,)`, tokens per text.
        sequence_length: Python int, packed length.
        stride: Python int, tokens between window starts, cut to the window;
            0 puts the windows side by side (no overlap).
    """
    window = sequence_length - 2
    return window_table(lengths, window, min(stride or window, window))


def pair_table(length_a, length_b, sequence_length, stride, separators_between=1):
    """Windows over text pairs: the longer segment windowed, the shorter one repeated whole in every window.

    The shorter segment keeps at most half the room (its tail past that is
    dropped), so every window has room for at least half a sequence of the
    longer one; on a tie the second segment is windowed (as `longest_first`
    truncation counts it the longer). Windowing the longer segment reads the
    whole of a long document whichever side of the pair it is on, in the
    segment order the model was trained with. A pair that fits is one window.

    Args:
        length_a, length_b: int32 `(batch_size,)`, tokens of each segment.
        sequence_length: Python int, packed length (`[CLS] a [SEP] b [SEP]`).
        stride: Python int, tokens between window starts, cut to the window; 0: side by side.
        separators_between: separators between the segments (2 for RoBERTa's `</s></s>`).

    Returns:
        `(owner, (start_a, length_a), (start_b, length_b), dropped)`: the
        rows, each window's span of either segment, and per row the tokens no
        window holds (the shorter segment's tail), all int32.
    """
    room = sequence_length - 2 - separators_between
    if room < 2:
        raise ValueError(f"`sequence_length` must leave room for 2 tokens of a text pair. Received: {sequence_length}")
    length_a, length_b = tf.cast(length_a, tf.int32), tf.cast(length_b, tf.int32)
    short = tf.minimum(length_a, length_b)
    kept = tf.minimum(short, room // 2)
    window = room - kept
    stride = tf.maximum(tf.minimum(stride or window, window), 1)
    owner, start, length = window_table(tf.maximum(length_a, length_b), window, stride)
    a_is_long = tf.gather(length_a > length_b, owner)
    kept_here, zeros = tf.gather(kept, owner), tf.zeros_like(start)
    span_a = (tf.where(a_is_long, start, zeros), tf.where(a_is_long, length, kept_here))
    span_b = (tf.where(a_is_long, zeros, start), tf.where(a_is_long, kept_here, length))
    return owner, span_a, span_b, short - kept


def gather_windows(ids, owner, start, length):
    """The tokens of each window: ragged `(num_windows, (length))` from ragged `ids` `(batch_size, (tokens))`."""
    base = tf.gather(tf.cast(ids.row_starts(), tf.int32), owner) + start
    return tf.gather(ids.flat_values, tf.ragged.range(base, base + length))


def windows_of(ids, sequence_length, stride, pair_ids=None, separators_between=1):
    """The token windows that read every text (or text pair) of a batch, ready to be packed.

    Args:
        ids: ragged int `(batch_size, (tokens))`, the (first) texts' tokens.
        sequence_length: Python int, packed length.
        stride: Python int, tokens between window starts, cut to the window; 0: side by side.
        pair_ids: optional ragged int `(batch_size, (tokens))`, the second texts' tokens.
        separators_between: separators between a pair's segments (the packer's).

    Returns:
        A dict: `first` and `second` (ragged `(num_windows, (tokens))`;
        `second` None for single texts), the table's `owner`, `start` and
        `length` (None for pairs: two segments, two spans), and `dropped`
        int32 `(batch_size,)`, the tokens no window holds.
    """
    lengths = tf.cast(ids.row_lengths(), tf.int32)
    if pair_ids is None:
        owner, start, length = single_text_table(lengths, sequence_length, stride)
        first = gather_windows(ids, owner, start, length)
        return {"first": first, "second": None, "owner": owner, "start": start, "length": length,
                "dropped": tf.zeros_like(lengths)}
    pair_lengths = tf.cast(pair_ids.row_lengths(), tf.int32)
    owner, span_a, span_b, dropped = pair_table(lengths, pair_lengths, sequence_length, stride, separators_between)
    return {
        "first": gather_windows(ids, owner, *span_a),
        "second": gather_windows(pair_ids, owner, *span_b),
        "owner": owner,
        "start": None,
        "length": None,
        "dropped": dropped,
    }


def windows_per_row(owner, num_rows):
    """int32 `(num_rows,)`: how many windows read each row."""
    return tf.math.bincount(owner, minlength=num_rows, maxlength=num_rows, dtype=tf.int32)


def max_windows_per_token(window, stride):
    """How many windows of `window` tokens every `stride` tokens hold one token at most (Python ints)."""
    return math.ceil(window / max(stride, 1))


def max_context(owner, start, length, width, max_offset):
    """BERT's max-context rule for every window position: bool `(num_windows, width)`.

    Position `j` of a window holds token `start + j` of its row. A token in
    several overlapping windows counts only in the window where it has the
    most context: the largest `min(left, right)` (tokens of the window before
    and after it), then the longer window, and on an exact tie the earlier
    window (`_check_is_max_context` in Google's run_squad.py; its score
    `min(left, right) + 0.01 * length` is computed here in integers, x100, so
    ties are exact). Positions past a window's end are False.

    Args:
        owner, start, length: a window table.
        width: int32 scalar, positions per window of the result.
        max_offset: Python int; a token's other windows are at most this many
            table rows away (`max_windows_per_token - 1` for regular windows).
    """
    j = tf.range(width)[tf.newaxis, :]
    token = start[:, tf.newaxis] + j  # (num_windows, width)
    total = tf.size(owner)
    row = tf.range(total)

    def score(first, size):
        first, size = first[:, tf.newaxis], size[:, tf.newaxis]
        return 100 * tf.minimum(token - first, first + size - 1 - token) + size

    own = score(start, length)
    best = j < length[:, tf.newaxis]
    for offset in [o for o in range(-max_offset, max_offset + 1) if o]:
        other = tf.clip_by_value(row + offset, 0, tf.maximum(total - 1, 0))
        exists = (row + offset >= 0) & (row + offset < total) & (tf.gather(owner, other) == owner)
        other_start, other_length = tf.gather(start, other), tf.gather(length, other)
        holds = exists[:, tf.newaxis] & (token >= other_start[:, tf.newaxis]) & (
            token < (other_start + other_length)[:, tf.newaxis]
        )
        theirs = score(other_start, other_length)
        wins = own > theirs if offset < 0 else own >= theirs  # an earlier window keeps a tie
        best = best & (~holds | wins)
    return best


def mean_over_windows(values, owner, num_rows):
    """Mean of the windows' `values` `(num_windows, ...)` per row: float64 `(num_rows, ...)`.

    Computed in float64 (what the pipelines' Python floats and the
    SavedModel's float32 outputs are both read from); rows without a window get 0.
    """
    values = tf.cast(values, tf.float64)
    total = tf.math.unsorted_segment_sum(values, owner, num_rows)
    count = tf.math.unsorted_segment_sum(tf.ones_like(owner, tf.float64), owner, num_rows)
    count = tf.reshape(count, tf.concat([[num_rows], tf.ones([tf.rank(values) - 1], tf.int32)], axis=0))
    return total / tf.maximum(count, 1.0)


def token_mean_over_windows(window_values, owner, start, length, row_starts, num_tokens):
    """Each token's outputs averaged over the windows that hold it: float64 `(num_tokens, ...)`.

    Args:
        window_values: `(num_windows, width, ...)`, the model's per-position
            outputs of windows packed as `[CLS] tokens [SEP]` (a window's token
            `j` at position `j + 1`).
        owner, start, length: the window table.
        row_starts: int `(batch_size,)`, each row's first token in the batch's flat tokens.
        num_tokens: int32 scalar, tokens in the batch.
    """
    base = tf.gather(tf.cast(row_starts, tf.int32), owner) + start
    token = tf.ragged.range(base, base + length)  # each window position's index into the flat tokens
    window_of = tf.cast(token.value_rowids(), tf.int32)
    position = tf.ragged.range(length).flat_values + 1  # +1: after [CLS]
    values = tf.gather_nd(window_values, tf.stack([window_of, position], axis=1))
    return mean_over_windows(values, token.flat_values, num_tokens)
