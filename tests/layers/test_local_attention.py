"""Local attention in blocks (`SelfAttention(local_attention_window=...)`) against the masked `(seq, seq)` form.

The reference is written here in numpy from the layer's own weights: full
scores, masked outside `|query - key| <= window // 2` (transformers'
ModernBERT definition) and at padded keys. The blocked layer must give the
same outputs and, asked for them, the same full probability matrix, for
lengths that are and are not a multiple of the block, windows of 1 token
(radius 0) up to wider than the input, and padded rows, including padded
queries whose window holds no real key: those attend to themselves alone (the
masked form has no answer for them; ours is defined, and the same on every
backend).
"""

import keras
import numpy as np
import pytest

from keras_bert.layers import SelfAttention
from keras_bert.layers.local_attention import attention_blocks

HIDDEN, HEADS = 16, 2


def perturbed_layer(window, length, seed=0, **kwargs):
    layer = SelfAttention(HEADS, local_attention_window=window, **kwargs)
    layer.build((None, length, HIDDEN))
    rng = np.random.default_rng(seed)
    layer.set_weights([0.3 * rng.standard_normal(w.shape).astype("float32") for w in layer.get_weights()])
    return layer


def batch(length, seed=0):
    """Three rows: no padding, the last 3 positions padded, all but the first 2 padded."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((3, length, HIDDEN)).astype("float32")
    padding_mask = np.ones((3, length), "int32")
    padding_mask[1, -3:] = 0
    padding_mask[2, 2:] = 0
    return x, padding_mask


def masked_reference(layer, x, padding_mask, window):
    """`(output, probabilities, queries with a real key in reach)`: local attention over the full masked scores.

    In float64; a query with no real key in reach attends to itself.
    """
    qkv_kernel, qkv_bias, output_kernel, output_bias = (np.asarray(w, "float64") for w in layer.get_weights())
    qkv = np.einsum("btd,dpnh->btpnh", x, qkv_kernel) + qkv_bias  # (batch, seq, 3, heads, head_dim)
    query, key, value = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    logits = np.einsum("btnh,bsnh->bnts", query, key) / np.sqrt(HIDDEN // HEADS)
    positions = np.arange(x.shape[1])
    allowed = (np.abs(positions[:, None] - positions[None, :]) <= window // 2)[None, None]
    allowed = allowed & padding_mask.astype(bool)[:, None, None, :]  # (batch, 1, seq, seq)
    has_key = allowed.any(-1)  # (batch, 1, seq)
    allowed = allowed | (~has_key[..., None] & np.eye(x.shape[1], dtype=bool))
    logits = np.where(allowed, logits, -np.inf)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs = probs / probs.sum(-1, keepdims=True)
    context = np.einsum("bnts,bsnh->btnh", probs, value)
    return np.einsum("btnh,nhd->btd", context, output_kernel) + output_bias, probs, has_key[:, 0]


@pytest.mark.parametrize(
    "length, window",
    [(13, 4), (16, 8), (11, 1), (40, 8), (6, 128)],
    ids=["13-radius-2", "16-radius-4-whole-blocks", "11-radius-0", "40-radius-4", "window-wider-than-input"],
)
def test_blocks_equal_the_masked_form(length, window):
    layer = perturbed_layer(window, length)
    x, padding_mask = batch(length)
    expected, expected_probs, has_key = masked_reference(layer, x, padding_mask, window)
    output, probs = layer(x, padding_mask=padding_mask, return_attention_scores=True)
    output, probs = keras.ops.convert_to_numpy(output), keras.ops.convert_to_numpy(probs)
    fused = keras.ops.convert_to_numpy(layer(x, padding_mask=padding_mask))  # the fused kernel's path
    assert probs.shape == (3, HEADS, length, length)
    for ours in (output, fused):
        np.testing.assert_allclose(ours, expected, atol=2e-5)
    np.testing.assert_allclose(probs, expected_probs, atol=2e-6)
    if length > window // 2 + 2:  # row 2's last queries have no real key in reach: the case is there
        assert not has_key[2, -1]


def test_blocks_hold_three_blocks_of_keys_per_block_of_queries():
    """40 positions at radius 4: 10 blocks of 4 queries per row, each against 12 keys (not 40)."""
    _, padding_mask = batch(40)
    heads = np.zeros((3, 40, HEADS, HIDDEN // HEADS), "float32")
    query, key, value, mask = attention_blocks(heads, heads, heads, padding_mask, radius=4)
    assert tuple(query.shape) == (30, 4, HEADS, HIDDEN // HEADS)
    assert tuple(key.shape) == tuple(value.shape) == (30, 12, HEADS, HIDDEN // HEADS)
    assert tuple(mask.shape) == (30, 1, 4, 12)
    # Block 0's first query sees keys 0..4: the previous block's 4 keys lie before the sequence.
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(mask)[0, 0, 0], [0] * 4 + [1] * 5 + [0] * 3)


@pytest.mark.only_backend("jax", reason="reads the traced program's tensor shapes from a jaxpr; the blocked code is "
                          "the same keras.ops on every backend, and the other tests check its results on each")
def test_no_tensor_of_the_traced_program_is_sequence_by_sequence():
    import jax
    from jax.extend.core import jaxprs_in_params

    length = 40
    x, padding_mask = batch(length)

    def square_tensors(layer):
        jaxpr = jax.make_jaxpr(lambda a, m: layer(a, padding_mask=m))(x, padding_mask)
        found, pending = [], [jaxpr.jaxpr]
        while pending:
            program = pending.pop()
            for equation in program.eqns:
                found += [v.aval.shape for v in equation.outvars if sum(d >= length for d in v.aval.shape) >= 2]
                pending += jaxprs_in_params(equation.params)
        return found

    assert square_tensors(perturbed_layer(8, length)) == []
    assert square_tensors(perturbed_layer(None, length))  # the check finds the global layer's (seq, seq) scores


@pytest.mark.only_backend("tensorflow", reason="a sequence length unknown until run time exists only in a "
                          "TensorFlow graph (JAX and torch trace concrete shapes)")
def test_blocks_follow_a_length_known_only_at_run_time():
    import tensorflow as tf

    layer = perturbed_layer(4, 13)
    x, padding_mask = batch(13)
    traced = tf.function(
        lambda a, m: layer(a, padding_mask=m),
        input_signature=[tf.TensorSpec((None, None, HIDDEN), "float32"), tf.TensorSpec((None, None), "int32")],
    )
    for length in (13, 7):
        output = traced(x[:, :length], padding_mask[:, :length]).numpy()
        np.testing.assert_allclose(output, masked_reference(layer, x[:, :length], padding_mask[:, :length], 4)[0],
                                   atol=2e-5)


def test_a_single_first_query_sees_its_window_only():
    """`first_query_only` (the [CLS]-only last block) in a local layer: position 0 attends to keys 0..radius."""
    layer = perturbed_layer(6, 13)
    x, padding_mask = batch(13)
    expected, _, _ = masked_reference(layer, x, padding_mask, 6)
    first = keras.ops.convert_to_numpy(layer(x, padding_mask=padding_mask, first_query_only=True))
    np.testing.assert_allclose(first[:, 0], expected[:, 0], atol=2e-5)


def test_arguments_are_checked_and_kept_in_the_config():
    layer = SelfAttention(HEADS, use_bias=False, rotary_max_wavelength=500.0, local_attention_window=8)
    config = layer.get_config()
    assert {k: config[k] for k in ("use_bias", "rotary_max_wavelength", "local_attention_window")} == {
        "use_bias": False, "rotary_max_wavelength": 500.0, "local_attention_window": 8
    }
    rebuilt = SelfAttention.from_config(config)
    rebuilt.build((None, 5, HIDDEN))
    assert [w.path.split("/")[-2:] for w in rebuilt.weights] == [["qkv", "kernel"], ["output", "kernel"]]
    with pytest.raises(ValueError, match="`local_attention_window` must be a positive int. Received: .*=0"):
        SelfAttention(HEADS, local_attention_window=0)
    with pytest.raises(ValueError, match="`rotary_max_wavelength` must be a number > 1. Received: .*=1"):
        SelfAttention(HEADS, rotary_max_wavelength=1)
