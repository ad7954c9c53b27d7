"""One encoder block of the BERT family: self-attention and a feed-forward network (BERT's, or a gated one)."""

import contextlib

import keras
from keras import ops

from keras_bert.layers._fused import gelu, layer_norm, linear
from keras_bert.layers.arguments import check_positive_int, check_rate, clone_initializer, get_initializer
from keras_bert.layers.feed_forward_layout import gated_feed_forward_scope
from keras_bert.layers.self_attention import SelfAttention

# Feed-forward activations by name: the two GELUs differ by up to ~1e-3, enough to break checkpoint parity.
# Each takes `export_form` (see `graph_export_form`): only the exact GELU has a form of its own for converters.
ACTIVATIONS = {
    "gelu": gelu,
    "gelu_approximate": lambda x, export_form=False: ops.gelu(x, approximate=True),
    "relu": lambda x, export_form=False: ops.relu(x),
}


@keras.saving.register_keras_serializable(package="keras_bert")
class TransformerEncoder(keras.layers.Layer):
    """A transformer encoder block as in BERT.

    Post-LN (BERT's original order, the default):

        x = LayerNorm(x + Dropout(Attention(x)))
        x = LayerNorm(x + Dropout(FeedForward(x)))

    Pre-LN (`normalize_first=True`, trains more stably when deep):

        x = x + Dropout(Attention(LayerNorm(x)))
        x = x + Dropout(FeedForward(LayerNorm(x)))

    The feed-forward network is `Dense(intermediate_dim) -> activation
    -> Dense(hidden_dim)`; BERT's activation is the exact (erf) GELU. The
    gated form (`gated_feed_forward=True`, GeGLU with a GELU: ModernBERT's
    `ModernBertMLP`) projects to twice `intermediate_dim`, splits that into
    an input half and a gate half, and computes `activation(input) * gate`
    before the output projection.

    ModernBERT's blocks are pre-LN with the gated feed-forward network,
    rotary position embeddings, no biases in the dense layers or the
    LayerNorms, local attention in most blocks, and no attention LayerNorm
    in the first block (its input is the embeddings' LayerNorm output):
    `normalize_attention_input=False`.

    Args:
        num_heads: int. Attention heads; must divide the input width.
        intermediate_dim: int. Width of the feed-forward network (BERT: 4x hidden).
        dropout: float. Dropout on attention probabilities and both residual branches.
        layer_norm_epsilon: float. BERT uses 1e-12.
        normalize_first: bool. Pre-LN instead of BERT's post-LN.
        kernel_initializer: initializer for all kernels.
        activation: the feed-forward activation, one of `ACTIVATIONS`:
            "gelu" (exact, erf; BERT, RoBERTa, ELECTRA, DistilBERT, ModernBERT),
            "gelu_approximate" (the tanh approximation; ALBERT's "gelu_new"), "relu".
        gated_feed_forward: bool. The gated feed-forward network (see above).
        attention_bias: bool. Biases in the attention projections.
        feed_forward_bias: bool. Biases in the two feed-forward dense layers.
        layer_norm_bias: bool. A bias (beta) in the LayerNorms.
        normalize_attention_input: bool. Pre-LN only: False feeds the
            attention the block's input as it is, without `attention_layer_norm`
            (which is then None).
        rotary_max_wavelength: None, or the base of rotary position
            embeddings on queries and keys (see `SelfAttention`).
        local_attention_window: None (global attention), or the local window
            (see `SelfAttention`).

    Call arguments:
        x: float tensor of shape `(batch_size, sequence_length, hidden_dim)`.
        padding_mask: int or bool tensor of shape `(batch_size, sequence_length)`.
        attention_mask: int or bool tensor of shape `(batch_size,
            sequence_length, sequence_length)`, which keys each query may
            attend to (packed sequences); optional.
        training: bool, whether dropout is active.
        return_attention_scores: bool. Also return the attention probabilities.
        first_token_only: bool. Compute the block's output at the first
            position only, `(batch_size, 1, hidden_dim)` (see
            `first_token_only`); takes `padding_mask` only. Also on while the
            block's `computes_first_token_only` is set (`first_token_only(block)`).
        position_ids: optional int tensor `(batch_size, sequence_length)`,
            the rotary embedding's positions (packed sequences; see `SelfAttention`).

    Returns:
        Float tensor of shape `(batch_size, sequence_length, hidden_dim)`, and
        with `return_attention_scores=True` also the probabilities of shape
        `(batch_size, num_heads, sequence_length, sequence_length)`.
    """

    def __init__(
        self,
        num_heads,
        intermediate_dim,
        dropout=0.1,
        layer_norm_epsilon=1e-12,
        normalize_first=False,
        kernel_initializer="truncated_normal",
        activation="gelu",
        gated_feed_forward=False,
        attention_bias=True,
        feed_forward_bias=True,
        layer_norm_bias=True,
        normalize_attention_input=True,
        rotary_max_wavelength=None,
        local_attention_window=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if activation not in ACTIVATIONS:
            raise ValueError(f"`activation` must be one of {sorted(ACTIVATIONS)}. Received: activation={activation!r}")
        if not normalize_attention_input and not normalize_first:
            # Post-LN normalises the residual sum with `attention_layer_norm`: it cannot go.
            raise ValueError("`normalize_attention_input=False` needs `normalize_first=True` (pre-LN blocks).")
        check_positive_int("num_heads", num_heads)
        check_positive_int("intermediate_dim", intermediate_dim)
        check_rate("dropout", dropout)
        self.num_heads = num_heads
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.normalize_first = normalize_first
        self.kernel_initializer = get_initializer(kernel_initializer)
        self.activation = activation
        self.gated_feed_forward = bool(gated_feed_forward)
        self.attention_bias = bool(attention_bias)
        self.feed_forward_bias = bool(feed_forward_bias)
        self.layer_norm_bias = bool(layer_norm_bias)
        self.normalize_attention_input = bool(normalize_attention_input)
        self.rotary_max_wavelength = rotary_max_wavelength
        self.local_attention_window = local_attention_window
        # Not configuration, but how the block runs in a model's inference pass or export trace:
        # `first_token_only(block)` and `graph_export_form(model)` set them, on this block alone.
        self.computes_first_token_only = False
        self.graph_export_form = False

    def build(self, input_shape):
        # input_shape: (batch, seq, hidden)
        hidden_dim = input_shape[-1]
        policy = self.dtype_policy
        self.attention = SelfAttention(
            self.num_heads,
            dropout=self.dropout,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            use_bias=self.attention_bias,
            rotary_max_wavelength=self.rotary_max_wavelength,
            local_attention_window=self.local_attention_window,
            dtype=policy,
            name="self_attention",
        )
        self.attention.build(input_shape)
        self.attention_dropout = keras.layers.Dropout(self.dropout, dtype=policy, name="attention_dropout")
        self.attention_layer_norm = None
        if self.normalize_attention_input:
            self.attention_layer_norm = keras.layers.LayerNormalization(
                epsilon=self.layer_norm_epsilon, center=self.layer_norm_bias, dtype=policy, name="attention_layer_norm"
            )
            self.attention_layer_norm.build(input_shape)
        # Gated: one projection holds the input half and the gate half, (hidden, 2 * intermediate_dim).
        self.intermediate_dense = keras.layers.Dense(
            self.intermediate_dim * (2 if self.gated_feed_forward else 1),
            use_bias=self.feed_forward_bias,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=policy,
            name="intermediate_dense",
        )
        with gated_feed_forward_scope(self.gated_feed_forward):  # model-parallel layouts replicate a gated kernel
            self.intermediate_dense.build(input_shape)
        self.output_dense = keras.layers.Dense(
            hidden_dim,
            use_bias=self.feed_forward_bias,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=policy,
            name="output_dense",
        )
        self.output_dense.build(tuple(input_shape[:-1]) + (self.intermediate_dim,))
        self.output_dropout = keras.layers.Dropout(self.dropout, dtype=policy, name="output_dropout")
        self.output_layer_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, center=self.layer_norm_bias, dtype=policy, name="output_layer_norm"
        )
        self.output_layer_norm.build(input_shape)
        self.built = True

    def _feed_forward(self, x):
        h = linear(self.intermediate_dense, x)  # (batch, seq, intermediate_dim), or twice that when gated
        if self.gated_feed_forward:
            h, gate = ops.split(h, 2, axis=-1)  # the input half first, as ModernBERT's `Wi` stacks them
            return linear(self.output_dense, ACTIVATIONS[self.activation](h, export_form=self.graph_export_form) * gate)
        h = ACTIVATIONS[self.activation](h, export_form=self.graph_export_form)
        return linear(self.output_dense, h)  # (batch, seq, hidden_dim)

    def call(
        self, x, padding_mask=None, attention_mask=None, training=None, return_attention_scores=False,
        first_token_only=False, position_ids=None,
    ):
        first_token_only = self._computes_first_token_only(first_token_only, return_attention_scores)
        attention_input = x
        if self.normalize_first and self.attention_layer_norm is not None:
            attention_input = layer_norm(self.attention_layer_norm, x)
        attended = self.attention(
            attention_input,
            padding_mask=padding_mask,
            attention_mask=attention_mask,
            training=training,
            return_attention_scores=return_attention_scores,
            first_query_only=first_token_only,
            position_ids=position_ids,
        )
        if return_attention_scores:
            attended, probs = attended
        if first_token_only:
            x = x[:, :1]  # every later step is per position
        attended = self.attention_dropout(attended, training=training)

        if self.normalize_first:
            x = x + attended
            x = x + self.output_dropout(self._feed_forward(layer_norm(self.output_layer_norm, x)), training=training)
        else:
            x = layer_norm(self.attention_layer_norm, x + attended)
            x = layer_norm(self.output_layer_norm, x + self.output_dropout(self._feed_forward(x), training=training))

        if return_attention_scores:
            return x, probs
        return x

    def _computes_first_token_only(self, first_token_only, return_attention_scores):
        """Whether this call computes the first position only (by argument or by `first_token_only(block)`)."""
        first_token_only = first_token_only or self.computes_first_token_only
        if first_token_only and return_attention_scores:
            raise ValueError("`first_token_only` computes one query; it cannot return every query's attention scores.")
        return first_token_only

    def compute_output_spec(
        self, x, padding_mask=None, attention_mask=None, training=None, return_attention_scores=False,
        first_token_only=False, position_ids=None,
    ):
        # Without this, Keras traces `call` in a scratch graph to learn the output's shape each time a
        # functional model calls the block: 0.17 s per block on TensorFlow, most of building a tiny backbone.
        first_token_only = self._computes_first_token_only(first_token_only, return_attention_scores)
        batch_size, sequence_length, hidden_dim = x.shape
        output_length = 1 if first_token_only else sequence_length
        output = keras.KerasTensor((batch_size, output_length, hidden_dim), dtype=self.compute_dtype)
        if not return_attention_scores:
            return output
        probabilities = (batch_size, self.num_heads, sequence_length, sequence_length)
        return output, keras.KerasTensor(probabilities, dtype=self.compute_dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self.num_heads,
            "intermediate_dim": self.intermediate_dim,
            "dropout": self.dropout,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "normalize_first": self.normalize_first,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "activation": self.activation,
            "gated_feed_forward": self.gated_feed_forward,
            "attention_bias": self.attention_bias,
            "feed_forward_bias": self.feed_forward_bias,
            "layer_norm_bias": self.layer_norm_bias,
            "normalize_attention_input": self.normalize_attention_input,
            "rotary_max_wavelength": self.rotary_max_wavelength,
            "local_attention_window": self.local_attention_window,
        }


@contextlib.contextmanager
def first_token_only(block):
    """While active, the `TransformerEncoder` `block` computes its output at the first position only.

    For a model that reads nothing of the last block's output but the first
    position ([CLS]: BERT's pooler, a "cls" classifier head), the rest of
    that block's work is thrown away: its feed-forward network and output
    projection (three quarters of the block's matmuls) and every query but
    one. Its keys and values still come from every position, so the first
    position's output is the same up to float rounding. The block returns
    `(batch_size, 1, hidden_dim)`; whatever reads the block's other positions
    must not run inside this scope. A block called more than once in one
    forward pass (ALBERT's shared block) would be cut at every call: the
    caller must pass a block that runs once.

    It sets the block's own `computes_first_token_only` and restores it after:
    only this block changes, and only while the model that owns it asks
    (`BertTask.inference_scope`); no thread-wide state is read.
    """
    before = block.computes_first_token_only
    block.computes_first_token_only = True
    try:
        yield
    finally:
        block.computes_first_token_only = before
