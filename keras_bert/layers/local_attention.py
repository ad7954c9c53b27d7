"""Local (sliding-window) self-attention computed in blocks, without the full `(seq, seq)` scores.

In a local layer a query at position `t` attends only to keys at positions
`s` with `|t - s| <= radius`: ModernBERT's `local_attention` window of 128
tokens is a radius of 64 (transformers' `sliding_window = local_attention // 2`,
inclusive on both sides, so 129 keys with the query's own).

Masking the full `(seq, seq)` scores would cost as much as global
attention. Here the sequence is cut into blocks of `block = max(radius, 1)`
positions; every key a query of block `c` may see lies in block `c - 1`,
`c` or `c + 1`, so each block of queries attends to those `3 * block` keys
only: `seq * 3 * block` scores instead of `seq * seq`. Within a block the
window is the same for every block, a static `(block, 3 * block)` band; the
sequence is padded up to whole blocks (and by one block on either side for
the neighbours), and padded keys are masked like padding.

A query with no real key in its window (padding further than the radius
from every real token) attends to itself alone: its output is then defined,
and the same on every backend and on the fused and explicit paths (an
all-masked row is zeros in torch's kernel and a uniform average in Keras'
op). Real tokens always have a key, themselves, so their outputs are those
of transformers' masked form; so are a padded query's when some real key is
within reach.

The blocks are ordinary attention problems with a batch of
`batch_size * num_blocks`: `SelfAttention` runs them through the same fused
or explicit attention as its global layers, on every backend, with
`keras.ops` only. Sequence lengths may be dynamic (a `None` length in a
TensorFlow graph): block counts are computed from `ops.shape`.
"""

from keras import ops


def window_radius(window):
    """How far a query sees on each side in a local window of `window` tokens (transformers' definition)."""
    return window // 2


def local_attention_mask(query_positions, key_positions, radius):
    """bool `(len(query_positions), len(key_positions))`: True where `|query - key| <= radius`.

    The masked form of local attention, where there are `(seq, seq)` masks
    anyway (packed sequences) or one query (`first_query_only`); inside the
    blocks, the band every block shares.
    """
    distance = ops.cast(query_positions, "int32")[:, None] - ops.cast(key_positions, "int32")[None, :]
    return ops.less_equal(ops.abs(distance), radius)


def alone_sees_itself(mask, is_self):
    """`mask` (bool, keys on the last axis) where every query without a key left may attend to itself.

    `is_self`: bool, broadcastable to `mask`, True at each query's own key.
    """
    has_key = ops.any(mask, axis=-1, keepdims=True)
    return ops.logical_or(mask, ops.logical_and(is_self, ops.logical_not(has_key)))


def _blocks_of(length, radius):
    """(block size, number of blocks, padded length) for a sequence of `length` positions (int or a scalar tensor)."""
    block = max(radius, 1)
    num_blocks = (length + block - 1) // block
    return block, num_blocks, num_blocks * block


def _pad_positions(x, before, after):
    """`x` `(batch, seq, ...)` with `before` zeros in front of the sequence axis and `after` behind it."""
    widths = [[0, 0], [before, after]] + [[0, 0]] * (len(x.shape) - 2)
    return ops.pad(x, widths)


def _with_neighbours(x, num_blocks, block):
    """`(batch, (num_blocks + 2) * block, ...)` -> `(batch * num_blocks, 3 * block, ...)`: blocks and neighbours."""
    rest = tuple(x.shape[2:])
    x = ops.reshape(x, (-1, num_blocks + 2, block) + rest)
    x = ops.concatenate([x[:, :-2], x[:, 1:-1], x[:, 2:]], axis=2)  # (batch, num_blocks, 3 * block, ...)
    return ops.reshape(x, (-1, 3 * block) + rest)


def attention_blocks(query, key, value, padding_mask, radius):
    """Cuts local self-attention into blocks that `attention` (or the explicit softmax) computes as they are.

    Args:
        query, key, value: float tensors `(batch_size, seq, num_heads, head_dim)`.
        padding_mask: int or bool `(batch_size, seq)`, 1/True for real tokens, or None.
        radius: int, how far a query sees on each side.

    Returns:
        `(query, key, value, mask)`: the blocks, `(batch_size * num_blocks,
        block, num_heads, head_dim)` for queries and `(batch_size *
        num_blocks, 3 * block, num_heads, head_dim)` for keys and values,
        and the bool mask `(batch_size * num_blocks, 1, block, 3 * block)`,
        True where a query may attend to a key (inside the window, a real
        token, inside the sequence; a query with none of those: itself).
    """
    length = ops.shape(query)[1]
    block, num_blocks, padded = _blocks_of(length, radius)
    # Query i of a block and key j of its (previous, own, next) blocks are |j - block - i| apart.
    offsets = ops.arange(3 * block) - block
    band = local_attention_mask(ops.arange(block), offsets, radius)  # (block, 3 * block), the same for every block
    is_self = local_attention_mask(ops.arange(block), offsets, 0)
    keys_valid = ops.ones(ops.shape(query)[:2], "int32") if padding_mask is None else ops.cast(padding_mask, "int32")
    keys_valid = _pad_positions(keys_valid, block, padded - length + block)  # padding beyond both ends: not a key
    keys_valid = ops.cast(_with_neighbours(keys_valid, num_blocks, block), "bool")  # (batch * blocks, 3 * block)
    mask = ops.logical_and(band[None, None, :, :], keys_valid[:, None, None, :])
    mask = alone_sees_itself(mask, is_self[None, None])  # (batch * blocks, 1, block, 3 * block)
    query = ops.reshape(_pad_positions(query, 0, padded - length), (-1, block) + tuple(query.shape[2:]))
    key = _with_neighbours(_pad_positions(key, block, padded - length + block), num_blocks, block)
    value = _with_neighbours(_pad_positions(value, block, padded - length + block), num_blocks, block)
    return query, key, value, mask


def context_from_blocks(context, length, radius):
    """The blocks' outputs `(batch_size * num_blocks, block, ...)` back as `(batch_size, length, ...)`."""
    padded = _blocks_of(length, radius)[2]
    return ops.reshape(context, (-1, padded) + tuple(context.shape[2:]))[:, :length]


def probabilities_from_blocks(probs, length, radius):
    """The blocks' attention probabilities as the full `(batch_size, num_heads, length, length)` matrix.

    Args:
        probs: `(batch_size * num_blocks, num_heads, block, 3 * block)`, as
            the explicit softmax gives them for the blocks of `attention_blocks`.
        length: the sequence length.
        radius: the window radius the blocks were cut for.

    Returns:
        The probabilities with zeros outside the window, for attention plots
        and `output_attentions`: the only place the local layers build an
        `(length, length)` tensor.
    """
    block, num_blocks, _ = _blocks_of(length, radius)
    heads = probs.shape[1]
    width = (num_blocks + 2) * block  # the padded key axis: one block before position 0
    # Block c's rows start at key c * block of the padded axis. Rows padded to `width + block` and laid end to end,
    # then read back `width` at a time, land each block `c * block` further right: a shift without a gather.
    x = ops.reshape(probs, (-1, num_blocks, heads, block, 3 * block))
    x = ops.transpose(x, (0, 2, 3, 1, 4))  # (batch, heads, block, num_blocks, 3 * block)
    x = ops.pad(x, [[0, 0], [0, 0], [0, 0], [0, 0], [0, width + block - 3 * block]])
    x = ops.reshape(x, (-1, heads, block, num_blocks * (width + block)))[..., : num_blocks * width]
    x = ops.reshape(x, (-1, heads, block, num_blocks, width))
    x = ops.reshape(ops.transpose(x, (0, 1, 3, 2, 4)), (-1, heads, num_blocks * block, width))
    return x[:, :, :length, block : block + length]
