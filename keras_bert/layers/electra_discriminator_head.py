"""ELECTRA's discriminator head: is each token the original or a replacement?"""

import keras
from keras import ops

from keras_bert.layers.arguments import clone_initializer, get_initializer
from keras_bert.layers.transformer_encoder import ACTIVATIONS


@keras.saving.register_keras_serializable(package="keras_bert")
class ElectraDiscriminatorHead(keras.layers.Layer):
    """Scores every token as replaced (logit > 0) or original, as ELECTRA's discriminator.

    `Dense(hidden_dim) -> activation -> Dense(1)` on every hidden state
    (transformers' `ElectraDiscriminatorPredictions`).

    Args:
        activation: one of `TransformerEncoder`'s activations ("gelu" for ELECTRA).
        kernel_initializer: initializer for both kernels.

    Call arguments:
        sequence_output: float tensor of shape `(batch_size, sequence_length, hidden_dim)`.

    Returns:
        float32 logits of shape `(batch_size, sequence_length)` (float32 even
        under mixed precision, for a stable loss).
    """

    def __init__(self, activation="gelu", kernel_initializer="truncated_normal", **kwargs):
        super().__init__(**kwargs)
        if activation not in ACTIVATIONS:
            raise ValueError(f"`activation` must be one of {sorted(ACTIVATIONS)}. Received: activation={activation!r}")
        self.activation = activation
        self.kernel_initializer = get_initializer(kernel_initializer)
        self.graph_export_form = False  # not configuration: see `keras_bert.layers.graph_export_form`

    def build(self, sequence_output_shape):
        hidden_dim = sequence_output_shape[-1]
        self.dense = keras.layers.Dense(
            hidden_dim,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name="dense",
        )
        self.dense.build(sequence_output_shape)
        self.prediction_dense = keras.layers.Dense(
            1,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name="prediction_dense",
        )
        self.prediction_dense.build(sequence_output_shape)
        self.built = True

    def call(self, sequence_output):
        x = ACTIVATIONS[self.activation](self.dense(sequence_output), export_form=self.graph_export_form)  # (batch, seq, hidden)
        logits = self.prediction_dense(x)[..., 0]  # (batch, seq)
        return ops.cast(logits, "float32")

    def compute_output_spec(self, sequence_output):
        return keras.KerasTensor(tuple(sequence_output.shape[:-1]), dtype="float32")

    def get_config(self):
        return {
            **super().get_config(),
            "activation": self.activation,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
        }
