"""Masked language model head, with the decoder tied to the token embedding."""

import keras
from keras import ops

from keras_bert.layers._fused import gather_positions, layer_norm
from keras_bert.layers.arguments import check_positive_int, clone_initializer, get_initializer
from keras_bert.layers.transformer_encoder import ACTIVATIONS


def _embedding_table(embedding, dtype):
    """The (vocab, hidden) table of an `Embedding`, dequantized if `model.quantize` made it int8."""
    mode = embedding.quantization_mode
    if mode is None:
        return ops.cast(embedding.embeddings, dtype)
    if mode == "int8":
        # int8 values with one scale per row: value = int8 / scale (Keras' `Embedding._int8_call`).
        scale = ops.cast(embedding.embeddings_scale, dtype)[:, None]  # (vocab, 1)
        return ops.divide(ops.cast(embedding.embeddings, dtype), scale)
    raise NotImplementedError(
        f"The MLM decoder is tied to the token embedding, which is quantized as {mode!r}; only 'int8' is "
        "supported. Quantize with mode='int8', or keep the token embedding unquantized."
    )


@keras.saving.register_keras_serializable(package="keras_bert")
class MaskedLMHead(keras.layers.Layer):
    """Predicts the original token at each masked position.

    As in BERT: gather the hidden states at `mask_positions`, transform them
    with `Dense(hidden_dim) -> GELU -> LayerNorm`, then score every vocabulary
    entry with the transposed token embedding plus an output bias. Only the
    masked positions are decoded, which is much cheaper than decoding every
    token (the vocabulary projection dominates a small model's cost).

    Args:
        vocabulary_size: int. Size of the output vocabulary.
        token_embedding: optional `keras.layers.Embedding` whose table is used as
            the (transposed) decoder kernel. BERT ties them. Without it the
            layer owns a `(hidden_dim, vocabulary_size)` decoder kernel.
        layer_norm_epsilon: float. BERT uses 1e-12.
        kernel_initializer: initializer for the transform (and untied decoder) kernel.
        embedding_dim: int or None. Width of the transform (and of the tied
            embedding); None for the hidden states' width (BERT). ELECTRA's
            generator projects its hidden states down to its embedding width.
        activation: the transform's activation, one of `TransformerEncoder`'s
            `ACTIVATIONS` ("gelu", exact, in BERT and ModernBERT).
        transform_bias: bool. A bias in the transform's dense layer (BERT:
            True; ModernBERT: its `classifier_bias`, False).
        layer_norm_bias: bool. A bias (beta) in the transform's LayerNorm
            (BERT: True; ModernBERT: its `norm_bias`, False).
        decoder_bias: bool. The output bias over the vocabulary (BERT: True;
            ModernBERT: its `decoder_bias`, True); without it `output_bias` is None.

    Call arguments:
        sequence_output: float tensor of shape `(batch_size, sequence_length, hidden_dim)`.
        mask_positions: int tensor of shape `(batch_size, num_predictions)`;
            padded prediction slots may point at any position (their loss
            weight is zero).

    Returns:
        float32 logits of shape `(batch_size, num_predictions, vocabulary_size)`.
    """

    def __init__(
        self,
        vocabulary_size,
        token_embedding=None,
        layer_norm_epsilon=1e-12,
        kernel_initializer="truncated_normal",
        embedding_dim=None,
        activation="gelu",
        transform_bias=True,
        layer_norm_bias=True,
        decoder_bias=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("vocabulary_size", vocabulary_size)
        if activation not in ACTIVATIONS:
            raise ValueError(f"`activation` must be one of {sorted(ACTIVATIONS)}. Received: activation={activation!r}")
        if embedding_dim is not None:
            check_positive_int("embedding_dim", embedding_dim)
        if token_embedding is not None and token_embedding.input_dim != vocabulary_size:
            raise ValueError(
                "`token_embedding` must have `vocabulary_size` rows. Received: "
                f"vocabulary_size={vocabulary_size}, token_embedding.input_dim={token_embedding.input_dim}"
            )
        self.vocabulary_size = vocabulary_size
        self.token_embedding = token_embedding
        self.layer_norm_epsilon = layer_norm_epsilon
        self.kernel_initializer = get_initializer(kernel_initializer)
        self.embedding_dim = embedding_dim
        self.activation = activation
        self.transform_bias = bool(transform_bias)
        self.layer_norm_bias = bool(layer_norm_bias)
        self.decoder_bias = bool(decoder_bias)
        # Set by `graph_export_form(model)`: the GELU then takes the form graph converters translate.
        self.graph_export_form = False

    def build(self, sequence_output_shape, mask_positions_shape=None):
        hidden_dim = sequence_output_shape[-1]
        width = self.embedding_dim or hidden_dim
        if self.token_embedding is not None and self.token_embedding.output_dim != width:
            raise ValueError(
                "The tied `token_embedding` must be as wide as the transform (`embedding_dim`, else the hidden "
                f"states). Received: token_embedding.output_dim={self.token_embedding.output_dim}, "
                f"embedding_dim={self.embedding_dim}, hidden_dim={hidden_dim}"
            )
        gathered_shape = (sequence_output_shape[0], None, hidden_dim)
        self.transform_dense = keras.layers.Dense(
            width,
            use_bias=self.transform_bias,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name="transform_dense",
        )
        self.transform_dense.build(gathered_shape)
        self.transform_layer_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, center=self.layer_norm_bias, dtype=self.dtype_policy,
            name="transform_layer_norm",
        )
        self.transform_layer_norm.build(gathered_shape[:-1] + (width,))
        if self.token_embedding is None:
            self.decoder_kernel = self.add_weight(
                name="decoder_kernel",
                shape=(width, self.vocabulary_size),
                initializer=clone_initializer(self.kernel_initializer),
            )
        self.output_bias = None
        if self.decoder_bias:
            self.output_bias = self.add_weight(name="output_bias", shape=(self.vocabulary_size,), initializer="zeros")
        self.built = True

    def call(self, sequence_output, mask_positions):
        x = gather_positions(sequence_output, mask_positions)  # (batch, preds, hidden)
        x = ACTIVATIONS[self.activation](self.transform_dense(x), export_form=self.graph_export_form)
        x = layer_norm(self.transform_layer_norm, x)
        # The vocabulary projection is most of the head's cost (and a large part of a small model's train
        # step), so it runs as one 2-D matmul over all predictions: the same math as
        # einsum("bph,vh->bpv"), whose batched form made a `mini` MLM train step 0.87x keras-hub's on
        # TensorFlow. Measured, head alone, forward + backward: TensorFlow 165 ms (einsum) vs 116 ms
        # (this), torch 250 vs 186, JAX 187 vs 156.
        batch_size, num_predictions = ops.shape(x)[0], ops.shape(x)[1]
        flat = ops.reshape(x, (-1, x.shape[-1]))  # (batch * preds, width)
        if self.token_embedding is not None:
            table = _embedding_table(self.token_embedding, x.dtype)  # (vocab, width)
            logits = ops.matmul(flat, ops.transpose(table))
        else:
            logits = ops.matmul(flat, ops.cast(self.decoder_kernel, x.dtype))
        logits = ops.reshape(logits, (batch_size, num_predictions, self.vocabulary_size))
        logits = ops.cast(logits, "float32")
        if self.output_bias is not None:
            logits = logits + ops.cast(self.output_bias, "float32")
        return logits  # (batch, preds, vocab)

    def compute_output_spec(self, sequence_output, mask_positions):
        shape = (sequence_output.shape[0], mask_positions.shape[1], self.vocabulary_size)
        return keras.KerasTensor(shape, dtype="float32")

    def get_config(self):
        # The tied embedding is a live layer, not config: models that tie it
        # (BertPretrainer, BertMaskedLM) pass it again when rebuilt from config.
        return {
            **super().get_config(),
            "vocabulary_size": self.vocabulary_size,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "embedding_dim": self.embedding_dim,
            "activation": self.activation,
            "transform_bias": self.transform_bias,
            "layer_norm_bias": self.layer_norm_bias,
            "decoder_bias": self.decoder_bias,
        }
