"""Multi-head self-attention for BERT, on `keras.ops.dot_product_attention`."""

import math

import keras
from keras import ops

from keras_bert.layers._fused import attention, attention_dropout_fuses, linear
from keras_bert.layers.arguments import (
    check_positive_int,
    check_rate,
    check_wavelength,
    clone_initializer,
    get_initializer,
)
from keras_bert.layers.local_attention import (
    alone_sees_itself,
    attention_blocks,
    context_from_blocks,
    local_attention_mask,
    probabilities_from_blocks,
    window_radius,
)
from keras_bert.layers.rotary_embedding import RotaryEmbedding


@keras.saving.register_keras_serializable(package="keras_bert")
class SelfAttention(keras.layers.Layer):
    """Multi-head scaled dot-product self-attention with a key padding mask.

    Instead of (or with) the key padding mask, a full `attention_mask` may say
    which key every query may attend to: packed sequences use it to keep
    attention inside each example (see `packed_attention_mask`).

    Query, key and value come from one fused projection whose kernel has shape
    `(hidden_dim, 3, num_heads, head_dim)`: one matmul instead of three, and the
    heads axis stays explicit so a layout map can shard it (see
    `keras_bert.distribution`).

    The fast path is `keras.ops.dot_product_attention` (fused kernels where the
    backend has them). On torch, attention dropout in training stays on that
    path too: torch's fused kernel drops the probabilities itself. When
    attention probabilities are asked for, or attention dropout is active in
    training on TensorFlow or JAX, the probabilities must exist as a tensor, so
    the layer computes them explicitly, with the softmax in float32.

    Two options serve ModernBERT: rotary position embeddings on the queries
    and keys (`rotary_max_wavelength`), and local attention
    (`local_attention_window`), where a query sees only the keys within
    `window // 2` positions of it. Local attention is computed in blocks
    (see `local_attention`), never as masked `(seq, seq)` scores, except
    where the window covers the whole input (a static length of at most
    `window // 2 + 1`: local attention is then global attention), with a
    per-query `attention_mask`, or for `first_query_only` (one row of scores).

    Args:
        num_heads: int. Number of attention heads; must divide the input width.
        dropout: float. Dropout rate on the attention probabilities (training only).
        kernel_initializer: initializer for the projection kernels.
        bias_initializer: initializer for the projection biases.
        use_bias: bool. Biases on the query/key/value and output projections
            (ModernBERT: `attention_bias`, False by default).
        rotary_max_wavelength: None (no rotary embedding), or the base of the
            rotary embedding applied to queries and keys (`RotaryEmbedding`).
        local_attention_window: None (global attention), or an int >= 1: a
            query attends to keys at most `local_attention_window // 2`
            positions away (transformers' ModernBERT `local_attention`).

    Call arguments:
        x: float tensor of shape `(batch_size, sequence_length, hidden_dim)`.
        padding_mask: int or bool tensor of shape `(batch_size, sequence_length)`,
            1/True for real tokens. Padded keys get zero attention. Optional.
        attention_mask: int or bool tensor of shape `(batch_size,
            sequence_length, sequence_length)`, 1/True where query `t` may
            attend to key `s`. Optional; combined with `padding_mask` when
            both are given. Every query should keep at least one key.
        training: bool, whether dropout is active.
        return_attention_scores: bool. If True, also return the attention
            probabilities.
        first_query_only: bool. Compute the output of the first position only
            (it still attends to every key): shape `(batch_size, 1, hidden_dim)`.
            Takes `padding_mask` only.
        position_ids: optional int tensor of shape `(batch_size,
            sequence_length)`: the positions the rotary embedding rotates by
            (packed sequences restart them for every packed example);
            `0..sequence_length-1` when None. Only with `rotary_max_wavelength`.

    Returns:
        Float tensor of shape `(batch_size, sequence_length, hidden_dim)`; with
        `return_attention_scores=True`, a tuple of it and the probabilities of
        shape `(batch_size, num_heads, sequence_length, sequence_length)` (in a
        local layer built from its blocks, zero outside the window).
    """

    def __init__(
        self,
        num_heads,
        dropout=0.0,
        kernel_initializer="truncated_normal",
        bias_initializer="zeros",
        use_bias=True,
        rotary_max_wavelength=None,
        local_attention_window=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("num_heads", num_heads)
        check_rate("dropout", dropout)
        if local_attention_window is not None:
            check_positive_int("local_attention_window", local_attention_window)
        self.num_heads = num_heads
        self.dropout = dropout
        self.kernel_initializer = get_initializer(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.use_bias = bool(use_bias)
        self.rotary_max_wavelength = rotary_max_wavelength
        self.local_attention_window = local_attention_window
        if rotary_max_wavelength is not None:
            check_wavelength("rotary_max_wavelength", rotary_max_wavelength)
        # Not configuration: set while a model is traced for a graph converter (`graph_export_form(model)`).
        self.graph_export_form = False
        # Not configuration: the longest input the model can take, or None; set by a backbone whose learned
        # position table bounds it (`EncoderBackbone`). Lets a graph with a free length skip the query chunks.
        self.max_length = None

    def build(self, input_shape):
        # input_shape: (batch, seq, hidden)
        hidden_dim = input_shape[-1]
        if hidden_dim is None:
            raise ValueError(f"SelfAttention needs a known last dimension. Received input_shape={input_shape}")
        if hidden_dim % self.num_heads != 0:
            raise ValueError(
                f"`num_heads` must divide the hidden size. Received: num_heads={self.num_heads}, "
                f"hidden_dim={hidden_dim}"
            )
        self.hidden_dim = hidden_dim
        self.head_dim = hidden_dim // self.num_heads
        self.qkv_dense = keras.layers.EinsumDense(
            "btd,dpnh->btpnh",
            output_shape=(None, 3, self.num_heads, self.head_dim),
            bias_axes="pnh" if self.use_bias else None,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            bias_initializer=clone_initializer(self.bias_initializer),
            dtype=self.dtype_policy,
            name="qkv",
        )
        self.qkv_dense.build(input_shape)
        self.output_dense = keras.layers.EinsumDense(
            "btnh,nhd->btd",
            output_shape=(None, hidden_dim),
            bias_axes="d" if self.use_bias else None,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            bias_initializer=clone_initializer(self.bias_initializer),
            dtype=self.dtype_policy,
            name="output",
        )
        self.output_dense.build((input_shape[0], input_shape[1], self.num_heads, self.head_dim))
        self.probs_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy, name="probs_dropout")
        self.rotary_embedding = None
        if self.rotary_max_wavelength is not None:
            self.rotary_embedding = RotaryEmbedding(
                self.rotary_max_wavelength, dtype=self.dtype_policy, name="rotary_embedding"
            )
        self.built = True

    def call(
        self, x, padding_mask=None, attention_mask=None, training=None, return_attention_scores=False,
        first_query_only=False, position_ids=None,
    ):
        if position_ids is not None and self.rotary_embedding is None:
            raise ValueError(f"{self.name} has no rotary embedding (rotary_max_wavelength=None): pass no `position_ids`.")
        qkv = linear(self.qkv_dense, x)  # (batch, seq, 3, heads, head_dim)
        # unstack, not three slices: on TensorFlow each slice's gradient is a full-size zero-padded
        # tensor (StridedSliceGrad) summed with the others, which made our train step 0.80x
        # keras-hub's; unstack's gradient is one stack.
        query, key, value = ops.unstack(qkv, 3, axis=2)  # each (batch, seq, heads, head_dim)
        if self.rotary_embedding is not None:
            query, key = self.rotary_embedding(query, position_ids), self.rotary_embedding(key, position_ids)
        if first_query_only:  # the first position attends to every key; no other query is computed
            if attention_mask is not None:
                raise ValueError("`first_query_only` takes a `padding_mask`, not a per-query `attention_mask`.")
            query = query[:, :1]
        local = self.local_attention_window is not None and not self._window_covers(x)
        if local and attention_mask is None and not first_query_only:
            radius, length = window_radius(self.local_attention_window), ops.shape(x)[1]
            blocks = attention_blocks(query, key, value, padding_mask, radius)
            context, probs = self._attend(*blocks, training, return_attention_scores)
            context = context_from_blocks(context, length, radius)  # (batch, seq, heads, head_dim)
            if return_attention_scores:
                probs = probabilities_from_blocks(probs, length, radius)
        else:
            mask = self._key_mask(x, padding_mask, attention_mask, local, first_query_only)
            context, probs = self._attend(query, key, value, mask, training, return_attention_scores)
        output = linear(self.output_dense, context, input_rank=2)
        if return_attention_scores:
            return output, probs
        return output

    def _window_covers(self, x):
        """Whether the local window reaches every key from every query: a static length of at most radius + 1."""
        length = x.shape[1]  # None, or a symbolic dimension while JAX infers shapes: not static
        return isinstance(length, int) and length - 1 <= window_radius(self.local_attention_window)

    def _key_mask(self, x, padding_mask, attention_mask, local, first_query_only):
        """bool, broadcastable to `(batch, heads, seq_q, seq_k)`: which keys each query may attend to; or None."""
        key_mask = None
        if padding_mask is not None:
            key_mask = ops.cast(padding_mask, "bool")[:, None, None, :]  # (batch, 1, 1, seq)
        if attention_mask is not None:
            full_mask = ops.cast(attention_mask, "bool")[:, None, :, :]  # (batch, 1, seq_q, seq_k)
            key_mask = full_mask if key_mask is None else ops.logical_and(key_mask, full_mask)
        if local:  # one row of scores (first_query_only) or a per-query mask anyway: the window as a mask
            positions = ops.arange(ops.shape(x)[1])
            queries = positions[:1] if first_query_only else positions
            band = local_attention_mask(queries, positions, window_radius(self.local_attention_window))[None, None]
            key_mask = band if key_mask is None else ops.logical_and(key_mask, band)
            # As in the blocks: a query with no key in reach attends to itself (see `local_attention`).
            key_mask = alone_sees_itself(key_mask, local_attention_mask(queries, positions, 0)[None, None])
        return key_mask

    def _attend(self, query, key, value, key_mask, training, return_attention_scores):
        """`(context (batch, seq_q, heads, head_dim), probabilities (batch, heads, seq_q, seq_k) or None)`."""
        dropping = bool(training) and self.dropout > 0
        explicit = return_attention_scores or (dropping and not attention_dropout_fuses(self.graph_export_form))
        if not explicit:
            rate = self.dropout if dropping else 0.0
            context = attention(
                query, key, value, mask=key_mask, dropout_rate=rate, export_form=self.graph_export_form,
                max_length=self.max_length,
            )
            return context, None

        scale = 1.0 / math.sqrt(self.head_dim)
        logits = ops.einsum("btnh,bsnh->bnts", query, key)  # (batch, heads, seq_q, seq_k)
        logits = ops.cast(logits, "float32") * scale
        if key_mask is not None:
            # A large finite negative rather than -inf: a row that is all masked
            # then averages uniformly instead of producing NaN.
            logits = ops.where(key_mask, logits, -1e9)
        probs = ops.softmax(logits, axis=-1)
        probs = ops.cast(probs, self.compute_dtype)
        dropped = self.probs_dropout(probs, training=training)
        return ops.einsum("bnts,bsnh->btnh", dropped, value), probs  # context: (batch, seq, heads, head_dim)

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "dropout": self.dropout,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            "use_bias": self.use_bias,
            "rotary_max_wavelength": self.rotary_max_wavelength,
            "local_attention_window": self.local_attention_window,
        }


def packed_attention_mask(sequence_ids, padding_mask=None):
    """The block-diagonal attention mask of packed sequences.

    Token `t` may attend to token `s` only when both belong to the same packed
    example. Padding (sequence id 0, or `padding_mask` 0) forms its own block,
    so a padded query still has keys to attend to (its output is never read)
    while no real token ever attends to padding.

    Args:
        sequence_ids: int tensor of shape `(batch_size, sequence_length)`:
            1..k for the k-th packed example of a row, 0 for padding.
        padding_mask: optional int or bool tensor of the same shape; where it
            is 0 the token counts as padding whatever its sequence id.

    Returns:
        bool tensor of shape `(batch_size, sequence_length, sequence_length)`.
    """
    ids = ops.cast(sequence_ids, "int32")
    if padding_mask is not None:
        ids = ops.where(ops.cast(padding_mask, "bool"), ids, 0)
    return ops.equal(ids[:, :, None], ids[:, None, :])  # (batch, seq_q, seq_k)
