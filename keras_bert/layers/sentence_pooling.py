"""SentencePooling: one vector per sequence from the token vectors (mean, [CLS] or max), optionally L2-normalised."""

import keras
from keras import ops

from keras_bert.layers._fused import gather_positions

# A large finite negative instead of -inf for padded positions in max pooling, so an
# all-padded row cannot produce -inf or NaN (it is set to zeros afterwards).
_MASKED_VALUE = -1e9


@keras.saving.register_keras_serializable(package="keras_bert")
class SentencePooling(keras.layers.Layer):
    """Pools the token vectors of each sequence into one sentence embedding.

    The modes are those of sentence-transformers' `Pooling` module, computed
    the same way, over the real tokens only ([CLS] and [SEP] included, padding
    left out):

    - "mean": `sum_t(mask_t * x_t) / max(sum_t(mask_t), 1e-9)`;
    - "mean_sqrt_len_tokens": the same sum divided by `sqrt(number of tokens)`;
    - "cls": the vector of the first real token ([CLS] with right padding);
    - "max": the elementwise maximum over the real tokens (zeros for a row with none).

    With `normalize`, the result is divided by its L2 norm (at least 1e-12,
    as `torch.nn.functional.normalize`), so dot products are cosine similarities.
    Pooling always runs in float32, under mixed precision too: embeddings are
    compared with each other, where 16-bit rounding shows.

    Args:
        mode: one of "mean", "cls", "max", "mean_sqrt_len_tokens".
        normalize: bool. L2-normalise the pooled vectors.

    Call arguments:
        sequence_output: float tensor of shape `(batch_size, sequence_length, hidden_dim)`.
        padding_mask: int or bool tensor of shape `(batch_size, sequence_length)`,
            1/True for real tokens.

    Returns:
        float32 tensor of shape `(batch_size, hidden_dim)`.
    """

    MODES = ("mean", "cls", "max", "mean_sqrt_len_tokens")

    def __init__(self, mode="mean", normalize=False, **kwargs):
        super().__init__(**kwargs)
        if mode not in self.MODES:
            raise ValueError(f"`mode` must be one of {self.MODES}. Received: mode={mode!r}")
        if not isinstance(normalize, bool):
            raise ValueError(f"`normalize` must be a bool. Received: normalize={normalize!r}")
        self.mode = mode
        self.normalize = normalize

    def call(self, sequence_output, padding_mask):
        x = ops.cast(sequence_output, "float32")  # (batch, seq, hidden)
        mask = ops.cast(padding_mask, "float32")[:, :, None]  # (batch, seq, 1)
        if self.mode == "cls":
            # The first real token: position 0 with right padding, as sentence-transformers picks it.
            first = ops.argmax(ops.cast(padding_mask, "int32"), axis=1)[:, None]  # (batch, 1)
            pooled = gather_positions(x, first)[:, 0, :]
        elif self.mode == "max":
            pooled = ops.max(ops.where(mask > 0, x, _MASKED_VALUE), axis=1)  # (batch, hidden)
            pooled = ops.where(ops.sum(mask, axis=1) > 0, pooled, 0.0)
        else:
            total = ops.sum(x * mask, axis=1)  # (batch, hidden)
            count = ops.maximum(ops.sum(mask, axis=1), 1e-9)  # (batch, 1)
            pooled = total / (count if self.mode == "mean" else ops.sqrt(count))
        if self.normalize:
            # sqrt of the clipped square norm: the same values as clipping the norm at 1e-12,
            # and a finite gradient for an all-zero vector.
            norm = ops.sqrt(ops.maximum(ops.sum(ops.square(pooled), axis=-1, keepdims=True), 1e-24))
            pooled = pooled / norm
        return pooled

    def compute_output_shape(self, sequence_output_shape, padding_mask_shape=None):
        return (sequence_output_shape[0], sequence_output_shape[-1])

    def compute_output_spec(self, sequence_output, padding_mask=None):
        return keras.KerasTensor(self.compute_output_shape(sequence_output.shape), dtype="float32")

    def get_config(self):
        return {**super().get_config(), "mode": self.mode, "normalize": self.normalize}
