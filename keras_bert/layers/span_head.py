"""Span head: start and end logits for extractive question answering."""

import keras
from keras import ops

from keras_bert.layers.arguments import get_initializer

# Added to the logits of padding positions: far below any real logit, yet
# finite, so softmax and cross-entropy stay NaN-free.
_MASKED_LOGIT = -1e9


@keras.saving.register_keras_serializable(package="keras_bert")
class SpanHead(keras.layers.Layer):
    """Scores every token as the start and as the end of the answer span.

    One dense projection to 2 values per token (BERT's SQuAD head). Position 0
    ([CLS]) doubles as "no answer" (SQuAD 2.0): its start and end logits
    score the null span. Padding positions get a logit of -1e9, so they never
    win and take no probability mass.

    Args:
        kernel_initializer: initializer for the projection kernel.

    Call arguments:
        sequence_output: float tensor of shape `(batch_size, sequence_length, hidden_dim)`.
        padding_mask: optional int or bool tensor of shape
            `(batch_size, sequence_length)`, 1 for real tokens.

    Returns:
        A tuple `(start_logits, end_logits)`, float32 tensors of shape
        `(batch_size, sequence_length)` (float32 even under mixed precision,
        for a stable loss).
    """

    def __init__(self, kernel_initializer="truncated_normal", **kwargs):
        super().__init__(**kwargs)
        self.kernel_initializer = get_initializer(kernel_initializer)

    def build(self, sequence_output_shape, padding_mask_shape=None):
        self.dense = keras.layers.Dense(
            2, kernel_initializer=self.kernel_initializer, dtype=self.dtype_policy, name="dense"
        )
        self.dense.build(sequence_output_shape)
        self.built = True

    def call(self, sequence_output, padding_mask=None):
        logits = ops.cast(self.dense(sequence_output), "float32")  # (batch, length, 2)
        start_logits, end_logits = logits[..., 0], logits[..., 1]
        if padding_mask is not None:
            real = ops.cast(padding_mask, "bool")
            start_logits = ops.where(real, start_logits, _MASKED_LOGIT)
            end_logits = ops.where(real, end_logits, _MASKED_LOGIT)
        return start_logits, end_logits

    def compute_output_spec(self, sequence_output, padding_mask=None):
        shape = tuple(sequence_output.shape[:-1])
        return keras.KerasTensor(shape, dtype="float32"), keras.KerasTensor(shape, dtype="float32")

    def get_config(self):
        return {**super().get_config(), "kernel_initializer": keras.initializers.serialize(self.kernel_initializer)}
