"""Next-sentence prediction head."""

import keras

from keras_bert.layers.arguments import get_initializer


@keras.saving.register_keras_serializable(package="keras_bert")
class NextSentenceHead(keras.layers.Layer):
    """Scores whether segment B follows segment A, from the pooled [CLS] vector.

    Args:
        kernel_initializer: initializer for the 2-way projection.

    Call arguments:
        pooled_output: float tensor of shape `(batch_size, hidden_dim)`, or
            `(batch_size, num_sequences, hidden_dim)` for packed sequences.

    Returns:
        float32 logits of shape `(batch_size, 2)` (or `(batch_size,
        num_sequences, 2)`): index 0 = "B is the actual
        next segment", 1 = "B is random" (the convention of Google's BERT and
        Hugging Face). Logits are float32 even under mixed precision, for a
        stable loss.
    """

    def __init__(self, kernel_initializer="truncated_normal", **kwargs):
        super().__init__(**kwargs)
        self.kernel_initializer = get_initializer(kernel_initializer)

    def build(self, input_shape):
        self.dense = keras.layers.Dense(
            2, kernel_initializer=self.kernel_initializer, dtype=self.dtype_policy, name="dense"
        )
        self.dense.build(input_shape)
        self.built = True

    def call(self, pooled_output):
        return keras.ops.cast(self.dense(pooled_output), "float32")

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (2,)

    def compute_output_spec(self, pooled_output):
        return keras.KerasTensor(tuple(pooled_output.shape[:-1]) + (2,), dtype="float32")

    def get_config(self):
        return {**super().get_config(), "kernel_initializer": keras.initializers.serialize(self.kernel_initializer)}
