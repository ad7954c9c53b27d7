"""Rotary position embeddings: a token's position as a rotation of its query and key features."""

import keras
from keras import ops

from keras_bert.layers.arguments import check_wavelength


@keras.saving.register_keras_serializable(package="keras_bert")
class RotaryEmbedding(keras.layers.Layer):
    """Rotates every head's features by angles that grow with the token's position (RoPE, Su et al., 2021).

    Feature `i` and feature `i + head_dim / 2` of a head form a pair, rotated
    by the angle `position * max_wavelength ** (-2 i / head_dim)`. The dot
    product of a rotated query and a rotated key then depends on their
    positions only through their distance, so attention sees relative
    positions and no position table is learned. The pairs are the two halves
    of the head ("rotate half", as GPT-NeoX, Llama and ModernBERT's
    checkpoints are trained), not the paper's neighbouring features.

    Angles, sines and cosines are computed in float32 whatever the compute
    dtype: in bfloat16 an angle of a few thousand radians keeps no fraction.

    Args:
        max_wavelength: float. The base of the angles (the longest wavelength
            is `2 pi max_wavelength`); "rope theta" in transformers' configs.
            10,000 in the paper; ModernBERT uses 160,000 in its global
            layers and 10,000 in its local ones.

    Call arguments:
        x: float tensor of shape `(batch_size, sequence_length, num_heads,
            head_dim)`, `head_dim` even: the queries or the keys.
        positions: optional int tensor of shape `(batch_size,
            sequence_length)`; `0..sequence_length-1` when None.

    Returns:
        A tensor of `x`'s shape and dtype.
    """

    def __init__(self, max_wavelength=10000.0, **kwargs):
        super().__init__(**kwargs)
        check_wavelength("max_wavelength", max_wavelength)
        self.max_wavelength = float(max_wavelength)

    def build(self, x_shape, positions_shape=None):
        # x_shape: (batch, seq, heads, head_dim)
        if x_shape[-1] is None or x_shape[-1] % 2:
            raise ValueError(f"RotaryEmbedding needs an even, known head_dim. Received x_shape={x_shape}")
        self.built = True

    def call(self, x, positions=None):
        head_dim = x.shape[-1]
        exponents = ops.arange(0, head_dim, 2, dtype="float32") / head_dim  # (head_dim / 2,)
        inverse_frequencies = 1.0 / ops.power(ops.convert_to_tensor(self.max_wavelength, "float32"), exponents)
        if positions is None:
            positions = ops.arange(ops.shape(x)[1], dtype="float32")[None, :]  # (1, seq)
        angles = ops.cast(positions, "float32")[:, :, None] * inverse_frequencies  # (batch or 1, seq, head_dim / 2)
        angles = ops.concatenate([angles, angles], axis=-1)[:, :, None, :]  # (batch or 1, seq, 1, head_dim)
        x32 = ops.cast(x, "float32")
        first, second = ops.split(x32, 2, axis=-1)
        rotated = ops.concatenate([-second, first], axis=-1)  # each pair (a, b) -> (-b, a)
        return ops.cast(x32 * ops.cos(angles) + rotated * ops.sin(angles), x.dtype)

    def compute_output_shape(self, x_shape, positions_shape=None):
        return x_shape

    def get_config(self):
        return {**super().get_config(), "max_wavelength": self.max_wavelength}
