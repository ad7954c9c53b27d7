"""Attention in training and on GPUs: dropout inside torch's fused kernel, explicit elsewhere; JAX's cuDNN mask form."""

import keras
import numpy as np
import pytest

import keras_bert.layers.self_attention as self_attention_module
from keras_bert.layers import SelfAttention
from keras_bert.layers._fused import attention, attention_dropout_fuses

BATCH, SEQ, HIDDEN, HEADS = 2, 6, 16, 2
DRAWS = 2000


def hidden_states(seed=0):
    return np.random.default_rng(seed).normal(size=(BATCH, SEQ, HIDDEN)).astype("float32")


def padding_mask():
    mask = np.ones((BATCH, SEQ), "int32")
    mask[1, -2:] = 0
    return mask


def mean_training_output(layer, x, mask, draws=DRAWS):
    """The mean over `draws` dropout draws of the layer's training output, in one batched call."""
    tiled_x = np.tile(x, (draws, 1, 1))
    tiled_mask = np.tile(mask, (draws, 1))
    out = keras.ops.convert_to_numpy(layer(tiled_x, padding_mask=tiled_mask, training=True))
    return out.reshape(draws, *x.shape).mean(axis=0), out[: len(x)]


def same_draw(layer, x, mask, seed=7):
    """The layer's training output under a fixed dropout draw: torch's global generator (unseeded
    dropout on torch, fused or not) and the layer's own seed generator (TensorFlow, JAX) both reset."""
    keras.utils.set_random_seed(seed)
    layer.probs_dropout.seed_generator.state.assign(np.array([seed, 0], "uint32"))
    return keras.ops.convert_to_numpy(layer(x, padding_mask=mask, training=True))


def check_attention_dropout_is_unbiased_and_keeps_padded_keys_out():
    # Inverted dropout on the probabilities leaves the expected output unchanged: the mean over many
    # draws must come back to the inference output. A rate applied without the 1/(1-p) rescale, or to
    # the wrong tensor (the logits, the output), misses it by far more than the tolerance.
    layer = SelfAttention(num_heads=HEADS, dropout=0.5)
    x, mask = hidden_states(), padding_mask()
    inference = keras.ops.convert_to_numpy(layer(x, padding_mask=mask, training=False))
    mean, one_draw = mean_training_output(layer, x, mask)
    assert np.all(np.isfinite(one_draw))
    scale = np.abs(inference).max()
    assert np.abs(one_draw - inference).max() > 0.3 * scale  # dropout is really active in training
    np.testing.assert_allclose(mean, inference, atol=0.06 * scale)

    # Padded keys stay out under dropout too: changing them changes nothing, draw for draw.
    changed = x.copy()
    changed[1, -2:] = 100.0
    a = same_draw(layer, x, mask)
    b = same_draw(layer, changed, mask)
    np.testing.assert_allclose(a[1, :-2], b[1, :-2], atol=1e-5)
    np.testing.assert_allclose(a[0], b[0], atol=1e-5)


@pytest.mark.only_backend("torch", reason="torch's scaled_dot_product_attention is the kernel that takes dropout_p")
def test_fused_attention_dropout_is_unbiased_and_keeps_padded_keys_out():
    assert attention_dropout_fuses()
    check_attention_dropout_is_unbiased_and_keeps_padded_keys_out()


def test_explicit_attention_dropout_is_unbiased_and_keeps_padded_keys_out(monkeypatch):
    monkeypatch.setattr(self_attention_module, "attention_dropout_fuses", lambda export_form=False: False)
    check_attention_dropout_is_unbiased_and_keeps_padded_keys_out()


@pytest.mark.only_backend("torch", reason="torch's scaled_dot_product_attention is the kernel that takes dropout_p")
def test_torch_training_with_attention_dropout_takes_the_fused_kernel(monkeypatch):
    calls = []

    def spy(query, key, value, mask=None, dropout_rate=0.0, **options):
        calls.append(dropout_rate)
        return attention(query, key, value, mask=mask, dropout_rate=dropout_rate, **options)

    monkeypatch.setattr(self_attention_module, "attention", spy)
    layer = SelfAttention(num_heads=HEADS, dropout=0.25)
    layer(hidden_states(), padding_mask=padding_mask(), training=True)
    layer(hidden_states(), padding_mask=padding_mask(), training=False)
    assert calls == [0.25, 0.0]
    # Probabilities asked for: they must exist as a tensor, so the explicit path runs.
    _, probs = layer(hidden_states(), padding_mask=padding_mask(), training=True, return_attention_scores=True)
    assert calls == [0.25, 0.0] and tuple(probs.shape) == (BATCH, HEADS, SEQ, SEQ)


@pytest.mark.only_backend("torch", reason="gradients are read through torch's autograd")
def test_torch_fused_attention_dropout_passes_gradients():
    import torch

    layer = SelfAttention(num_heads=HEADS, dropout=0.1)
    x = torch.tensor(hidden_states(), requires_grad=True, device=keras.ops.convert_to_tensor(0.0).device)
    out = layer(x, padding_mask=padding_mask(), training=True)
    out.sum().backward()
    assert x.grad is not None and torch.isfinite(x.grad).all() and x.grad.abs().sum() > 0


@pytest.mark.not_backend("torch", reason="torch fuses attention dropout; this checks the refusal elsewhere")
def test_attention_refuses_in_kernel_dropout_where_the_backend_has_none():
    q = np.zeros((1, 4, 2, 8), "float32")
    with pytest.raises(ValueError, match="dropout_rate=0.1"):
        attention(q, q, q, dropout_rate=0.1)


@pytest.mark.only_backend("jax", reason="the spread mask is for cuDNN's fused attention, tried by Keras' JAX op")
def test_jax_gpu_form_spreads_the_key_mask_and_keeps_the_result(monkeypatch):
    import jax

    from keras_bert.layers import _fused

    layer = SelfAttention(num_heads=HEADS)
    x, mask = hidden_states(), padding_mask()
    on_cpu = keras.ops.convert_to_numpy(layer(x, padding_mask=mask))
    key_mask = keras.ops.convert_to_tensor(mask.astype(bool))[:, None, None, :]
    query = keras.ops.zeros((BATCH, SEQ, HEADS, HIDDEN // HEADS))
    assert _fused._full_query_axis_on_gpu(key_mask, query) is key_mask  # unchanged off a GPU

    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")  # the form Keras' op then gets on a GPU
    spread = _fused._full_query_axis_on_gpu(key_mask, query)
    assert tuple(spread.shape) == (BATCH, 1, SEQ, SEQ)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(spread),
                                  np.broadcast_to(mask.astype(bool)[:, None, None, :], (BATCH, 1, SEQ, SEQ)))
    np.testing.assert_allclose(keras.ops.convert_to_numpy(layer(x, padding_mask=mask)), on_cpu, atol=1e-6)
