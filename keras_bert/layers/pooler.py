"""BERT's pooler: a tanh dense layer on the [CLS] vector."""

import keras

from keras_bert.layers._fused import gather_positions
from keras_bert.layers.arguments import get_initializer


@keras.saving.register_keras_serializable(package="keras_bert")
class Pooler(keras.layers.Layer):
    """Turns the final hidden state of the first token ([CLS]) into `pooled_output`.

    Next-sentence prediction is trained on this vector, and sentence
    classifiers start from it.

    Args:
        kernel_initializer: initializer for the dense kernel.

    With `positions` it pools the vectors at those positions instead: packed
    sequences hold one [CLS] per packed example, each pooled with the same
    weights.

    Call arguments:
        sequence_output: float tensor of shape `(batch_size, sequence_length, hidden_dim)`.
        positions: optional int tensor of shape `(batch_size, num_positions)`.

    Returns:
        Float tensor of shape `(batch_size, hidden_dim)`, or with `positions`
        `(batch_size, num_positions, hidden_dim)`.
    """

    def __init__(self, kernel_initializer="truncated_normal", **kwargs):
        super().__init__(**kwargs)
        self.kernel_initializer = get_initializer(kernel_initializer)

    def build(self, input_shape):
        self.dense = keras.layers.Dense(
            input_shape[-1],
            activation="tanh",
            kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy,
            name="dense",
        )
        self.dense.build((input_shape[0], input_shape[-1]))
        self.built = True

    def call(self, sequence_output, positions=None):
        if positions is None:
            return self.dense(sequence_output[:, 0, :])  # (batch, hidden)
        return self.dense(gather_positions(sequence_output, positions))  # (batch, num_positions, hidden)

    def compute_output_shape(self, sequence_output_shape, positions_shape=None):
        if positions_shape is None:
            return (sequence_output_shape[0], sequence_output_shape[-1])
        return (sequence_output_shape[0], positions_shape[1], sequence_output_shape[-1])

    def get_config(self):
        return {**super().get_config(), "kernel_initializer": keras.initializers.serialize(self.kernel_initializer)}
