"""RotaryEmbedding against transformers' (ModernBERT's), and the relative-position property it exists for."""

import keras
import numpy as np
import pytest

from harness import run_layer_test
from keras_bert.layers import RotaryEmbedding

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def heads(seed, shape=(2, 9, 3, 8)):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")  # (batch, seq, heads, head_dim)


@pytest.mark.parametrize("wavelength", [10000.0, 160000.0, 300.0])
def test_matches_transformers_modernbert_rotation(wavelength):
    from transformers.models.modernbert import modeling_modernbert

    config = transformers.ModernBertConfig(
        hidden_size=24, num_attention_heads=3, num_hidden_layers=1, global_rope_theta=wavelength
    )
    rotary = modeling_modernbert.ModernBertRotaryEmbedding(config)
    query, key = heads(0), heads(1)
    positions = torch.arange(9)[None]
    cos, sin = rotary(torch.tensor(query), positions, "full_attention")
    # transformers rotates (batch, heads, seq, head_dim); ours keeps (batch, seq, heads, head_dim).
    expected_query, expected_key = modeling_modernbert.apply_rotary_pos_emb(
        torch.tensor(query).transpose(1, 2), torch.tensor(key).transpose(1, 2), cos, sin
    )
    layer = RotaryEmbedding(wavelength)
    for ours, expected in ((layer(query), expected_query), (layer(key), expected_key)):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(ours), expected.transpose(1, 2).numpy(), atol=1e-5)


def test_scores_depend_on_the_distance_only():
    layer = RotaryEmbedding(10000.0)
    query, key = heads(2), heads(3)
    positions = np.arange(9)[None].repeat(2, 0)

    def scores(shift):
        q = keras.ops.convert_to_numpy(layer(query, positions=positions + shift))
        k = keras.ops.convert_to_numpy(layer(key, positions=positions + shift))
        return np.einsum("btnh,bsnh->bnts", q, k)

    np.testing.assert_allclose(scores(0), scores(37), atol=1e-4)
    default = keras.ops.convert_to_numpy(layer(query))
    np.testing.assert_allclose(default, keras.ops.convert_to_numpy(layer(query, positions=positions)), atol=0)
    assert np.abs(default - query).max() > 0.1  # it does rotate


def test_layer_contract(tmp_path):
    run_layer_test(
        RotaryEmbedding,
        {"max_wavelength": 500.0},
        {"x": heads(4)},
        expected_output_shape=(2, 9, 3, 8),
        expected_num_trainable_weights=0,
        tmp_path=tmp_path,
    )
    with pytest.raises(ValueError, match="even, known head_dim"):
        RotaryEmbedding()(heads(5, shape=(1, 4, 2, 5)))
    with pytest.raises(ValueError, match="`max_wavelength` must be a number > 1. Received: max_wavelength=0.5"):
        RotaryEmbedding(0.5)
