"""Token + segment + learned position embeddings, as in BERT."""

import keras
from keras import ops

from keras_bert.layers._fused import layer_norm
from keras_bert.layers.arguments import check_positive_int, check_rate, clone_initializer, get_initializer


@keras.saving.register_keras_serializable(package="keras_bert")
class BertEmbeddings(keras.layers.Layer):
    """Sums token, segment and position embeddings, then LayerNorm and dropout.

    With `num_segments=0` there is no segment embedding (DistilBERT): the sum
    is token + position embeddings, and `segment_ids` must not be given. With
    `max_sequence_length=None` there is no position table either (ModernBERT,
    whose attention rotates queries and keys by position instead): the token
    embedding alone goes through the LayerNorm.

    This is BERT's input layer (`bert/embeddings` in Google's checkpoints,
    `embeddings` in Hugging Face's). Positions are learned, one vector per
    position up to `max_sequence_length`. Positions are `0..sequence_length-1`
    unless `position_ids` are given (packed sequences restart them at 0 for
    every packed example).

    Args:
        vocabulary_size: int. Number of WordPiece tokens.
        hidden_dim: int. Width of every embedding.
        max_sequence_length: int. Number of learned positions; None for no
            position embedding.
        num_segments: int. Number of segment (token type) ids; 0 for none.
        dropout: float. Dropout rate after the LayerNorm.
        layer_norm_epsilon: float. BERT uses 1e-12.
        layer_norm_bias: bool. A bias (beta) in the LayerNorm (ModernBERT: none).
        kernel_initializer: initializer for the three embedding tables.

    Call arguments:
        token_ids: int tensor of shape `(batch_size, sequence_length)`.
        segment_ids: int tensor of shape `(batch_size, sequence_length)`;
            None (and required to be None) when `num_segments=0`.
        position_ids: optional int tensor of shape `(batch_size,
            sequence_length)`, each in `[0, max_sequence_length)`; None
            (and required to be None) without a position table.
        token_embeddings: optional float tensor of shape `(batch_size,
            sequence_length, hidden_dim)` used in place of the token table's
            rows for `token_ids` (which then give only the shape): what
            gradient-based explanations differentiate with respect to
            (`keras_bert.explain`). None (the default) looks the ids up.
        training: bool, whether dropout is active.

    Returns:
        Float tensor of shape `(batch_size, sequence_length, hidden_dim)`.
    """

    def __init__(
        self,
        vocabulary_size,
        hidden_dim,
        max_sequence_length=512,
        num_segments=2,
        dropout=0.1,
        layer_norm_epsilon=1e-12,
        kernel_initializer="truncated_normal",
        layer_norm_bias=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        check_positive_int("vocabulary_size", vocabulary_size)
        check_positive_int("hidden_dim", hidden_dim)
        if max_sequence_length is not None:
            check_positive_int("max_sequence_length", max_sequence_length)
        # 0 segments: no segment embedding at all (DistilBERT), not a one-row table.
        if num_segments != 0:
            check_positive_int("num_segments", num_segments)
        check_rate("dropout", dropout)
        self.vocabulary_size = vocabulary_size
        self.hidden_dim = hidden_dim
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.dropout = dropout
        self.layer_norm_epsilon = layer_norm_epsilon
        self.kernel_initializer = get_initializer(kernel_initializer)
        self.layer_norm_bias = bool(layer_norm_bias)

        self.token_embedding = keras.layers.Embedding(
            vocabulary_size,
            hidden_dim,
            embeddings_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name="token_embedding",
        )
        self.segment_embedding = None
        if num_segments:
            self.segment_embedding = keras.layers.Embedding(
                num_segments,
                hidden_dim,
                embeddings_initializer=clone_initializer(self.kernel_initializer),
                dtype=self.dtype_policy,
                name="segment_embedding",
            )
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, center=self.layer_norm_bias, dtype=self.dtype_policy, name="layer_norm"
        )
        self.dropout_layer = keras.layers.Dropout(dropout, dtype=self.dtype_policy, name="dropout")

    def build(self, token_ids_shape, segment_ids_shape=None, position_ids_shape=None, token_embeddings_shape=None):
        self.token_embedding.build(token_ids_shape)
        if self.segment_embedding is not None:
            self.segment_embedding.build(token_ids_shape)
        # A plain weight rather than an Embedding layer: positions are
        # 0..sequence_length-1 unless packed, and a slice is cheaper than a gather.
        self.position_embeddings = None
        if self.max_sequence_length is not None:
            self.position_embeddings = self.add_weight(
                name="position_embeddings",
                shape=(self.max_sequence_length, self.hidden_dim),
                initializer=clone_initializer(self.kernel_initializer),
            )
        self.layer_norm.build(tuple(token_ids_shape) + (self.hidden_dim,))
        self.built = True

    def call(self, token_ids, segment_ids=None, position_ids=None, token_embeddings=None, training=None):
        # token_ids, segment_ids: (batch, seq)
        if (segment_ids is None) != (self.segment_embedding is None):
            raise ValueError(
                f"{self.name}: pass `segment_ids` exactly when num_segments > 0. Received: "
                f"num_segments={self.num_segments}, segment_ids={'None' if segment_ids is None else 'a tensor'}"
            )
        x = self.token_embedding(token_ids) if token_embeddings is None else token_embeddings
        if segment_ids is not None:
            x = x + self.segment_embedding(segment_ids)
        if self.position_embeddings is None:
            if position_ids is not None:
                raise ValueError(
                    f"{self.name} has no position table (max_sequence_length=None): pass no `position_ids`."
                )
        elif position_ids is None:
            sequence_length = ops.shape(token_ids)[1]
            positions = ops.cast(self.position_embeddings[:sequence_length], x.dtype)  # (seq, hidden)
            x = x + positions[None, :, :]
        else:
            table = ops.cast(self.position_embeddings, x.dtype)
            x = x + ops.take(table, ops.cast(position_ids, "int32"), axis=0)  # (batch, seq, hidden)
        x = layer_norm(self.layer_norm, x)
        return self.dropout_layer(x, training=training)  # (batch, seq, hidden)

    def compute_output_shape(
        self, token_ids_shape, segment_ids_shape=None, position_ids_shape=None, token_embeddings_shape=None
    ):
        return tuple(token_ids_shape) + (self.hidden_dim,)

    def get_config(self):
        return {
            **super().get_config(),
            "vocabulary_size": self.vocabulary_size,
            "hidden_dim": self.hidden_dim,
            "max_sequence_length": self.max_sequence_length,
            "num_segments": self.num_segments,
            "dropout": self.dropout,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "layer_norm_bias": self.layer_norm_bias,
        }

