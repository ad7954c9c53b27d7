"""ModernBertBackbone as a model: its layout, config, fit and `.keras` round trip, mixed precision, attentions.

Numerical truth against transformers' `ModernBertModel` is in
tests/converters/test_hf_modernbert.py.
"""

import keras
import numpy as np
import pytest

from harness import numpy_tree, run_model_test
from keras_bert import BertBackbone, ModernBertBackbone
from keras_bert.layers.transformer_encoder import first_token_only

# Blocks 0 and 2 global, 1 local with a radius of 2: shorter than the 12-token inputs.
TINY = dict(
    vocabulary_size=40, num_layers=3, num_heads=4, hidden_dim=32, intermediate_dim=24, padding_id=0,
    local_attention_window=4, global_attention_every_n_layers=2, max_sequence_length=16,
)


def inputs(batch_size=3, length=12, seed=0):
    rng = np.random.default_rng(seed)
    padding_mask = np.ones((batch_size, length), "int32")
    padding_mask[1, -5:] = 0
    token_ids = rng.integers(1, TINY["vocabulary_size"], size=(batch_size, length)).astype("int32") * padding_mask
    return {"token_ids": token_ids, "padding_mask": padding_mask}


def test_layout_follows_modernbert():
    backbone = ModernBertBackbone(**TINY)
    assert backbone.input_names == ("token_ids", "padding_mask")
    assert backbone.global_layers == [0, 2]
    blocks = backbone.transformer_layers
    assert [block.local_attention_window for block in blocks] == [None, 4, None]
    assert [block.rotary_max_wavelength for block in blocks] == [160000.0, 10000.0, 160000.0]
    assert blocks[0].attention_layer_norm is None and blocks[1].attention_layer_norm is not None
    assert all(block.gated_feed_forward and block.normalize_first for block in blocks)
    assert backbone.embeddings.position_embeddings is None and backbone.embeddings.segment_embedding is None
    # No biases anywhere by default: kernels, LayerNorm scales and the token table only.
    kinds = {w.path.split("/")[-1] for w in backbone.weights}
    assert kinds == {"embeddings", "kernel", "gamma"}
    assert tuple(blocks[0].intermediate_dense.kernel.shape) == (32, 2 * 24)  # input half and gate half
    # Embeddings (40 x 32 + 32), per block qkv + output + gated Wi + Wo + 2 norms (block 0: 1), final norm.
    per_block = 32 * 96 + 32 * 32 + 32 * 48 + 24 * 32 + 2 * 32
    assert backbone.count_params() == 40 * 32 + 32 + 3 * per_block - 32 + 32


def test_config_fit_and_keras_round_trip(tmp_path):
    model = run_model_test(
        lambda: ModernBertBackbone(**TINY, attention_bias=True, feed_forward_bias=True, layer_norm_bias=True),
        inputs(),
        {"sequence_output": (3, 12, 32), "pooled_output": (3, 32)},
        tmp_path,
    )
    assert {w.path.split("/")[-1] for w in model.weights} == {"embeddings", "kernel", "bias", "gamma", "beta"}
    config = model.get_config()
    assert config["local_attention_window"] == 4 and config["layer_norm_bias"] is True
    # The `.keras` file is a checkpoint of the family like a transformers folder.
    reloaded = ModernBertBackbone.from_pretrained(str(tmp_path / "model.keras"))
    assert {**reloaded.get_config(), "name": None} == {**config, "name": None}
    with pytest.raises(ValueError, match="is a checkpoint of ModernBERT.*keras_bert.ModernBertBackbone.from_pretrained"):
        BertBackbone.from_pretrained(str(tmp_path / "model.keras"))
    with pytest.raises(ValueError, match=r"named \['token_ids', 'padding_mask'\].*unexpected: \['segment_ids'\]"):
        model({**inputs(), "segment_ids": np.zeros((3, 12), "int32")})
    with pytest.raises(ValueError, match="sequence length 17 is longer than max_sequence_length=16"):
        model(inputs(length=17))


def test_hidden_states_and_attentions_built_from_the_bands():
    backbone = ModernBertBackbone(**TINY, output_hidden_states=True, output_attentions=True)
    x = inputs()
    outputs = numpy_tree(backbone(x))
    assert [h.shape for h in outputs["hidden_states"]] == [(3, 12, 32)] * 4
    assert [a.shape for a in outputs["attentions"]] == [(3, 4, 12, 12)] * 3
    # Block 1 is local: |query - key| <= 2, padded keys excluded; row 1's last three queries (padding) have no
    # real key in reach and attend to themselves.
    local = outputs["attentions"][1]
    distance = np.abs(np.arange(12)[:, None] - np.arange(12)[None, :])
    assert np.all(local[:, :, distance > 2] == 0)
    np.testing.assert_allclose(local.sum(-1), 1.0, atol=1e-5)
    assert np.all(local[1][:, :9, -5:] == 0)
    np.testing.assert_array_equal(local[1][:, [9, 10, 11], [9, 10, 11]], 1.0)
    assert outputs["attentions"][0][0][:, distance > 2].max() > 0  # the global block sees every key
    # Asking for attentions (the explicit softmax) changes no output.
    without = ModernBertBackbone(**TINY)
    without.set_weights(backbone.get_weights())
    np.testing.assert_allclose(numpy_tree(without(x))["sequence_output"], outputs["sequence_output"], atol=1e-5)


def test_first_token_only_through_a_local_last_block():
    """A [CLS]-only head's scope (the last block computes position 0 only) gives the same first vector."""
    backbone = ModernBertBackbone(**{**TINY, "num_layers": 2})  # the last block (1) is local
    x = inputs()
    expected = keras.ops.convert_to_numpy(backbone(x)["pooled_output"])
    last = backbone.transformer_layers[-1]
    assert last.local_attention_window == 4
    with first_token_only(last):
        hidden = backbone.embeddings(x["token_ids"])
        hidden = backbone.transformer_layers[0](hidden, padding_mask=x["padding_mask"])
        first = backbone.final_layer_norm(last(hidden, padding_mask=x["padding_mask"]))
    np.testing.assert_allclose(keras.ops.convert_to_numpy(first)[:, 0], expected, atol=1e-5)


@pytest.mark.filterwarnings("ignore:keras_bert. bfloat16 on the jax backend")  # a speed note, not the subject here
@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision(policy):
    reference = ModernBertBackbone(**TINY)
    backbone = ModernBertBackbone(**TINY, dtype=policy)
    backbone.set_weights(reference.get_weights())
    assert ModernBertBackbone.from_config(backbone.get_config()).dtype_policy.name == policy
    outputs = backbone(inputs())
    assert keras.backend.standardize_dtype(outputs["sequence_output"].dtype) == policy.split("_")[1]
    assert {keras.backend.standardize_dtype(w.dtype) for w in backbone.weights} == {"float32"}
    ours = keras.ops.convert_to_numpy(keras.ops.cast(outputs["sequence_output"], "float32"))
    expected = keras.ops.convert_to_numpy(reference(inputs())["sequence_output"])
    real = inputs()["padding_mask"].astype(bool)
    # LayerNorm outputs of unit scale: 16-bit rounding through 3 blocks stays well under this.
    np.testing.assert_allclose(ours[real], expected[real], atol=0.1 if policy == "mixed_bfloat16" else 0.02)


def test_from_size_and_argument_checks():
    backbone = ModernBertBackbone.from_size("tiny", vocabulary_size=100, padding_id=0)
    assert (backbone.num_layers, backbone.hidden_dim, backbone.intermediate_dim) == (2, 128, 192)
    assert (backbone.local_attention_window, backbone.global_attention_every_n_layers) == (128, 3)
    with pytest.raises(ValueError, match="Unknown ModernBERT size 'huge'"):
        ModernBertBackbone.from_size("huge")
    with pytest.raises(ValueError, match=r"`padding_id` must be None or an int in \[0, vocabulary_size=100\)"):
        ModernBertBackbone.from_size("tiny", vocabulary_size=100)
    with pytest.raises(ValueError, match="`local_attention_window` must be a positive int. Received: .*=0"):
        ModernBertBackbone(**{**TINY, "local_attention_window": 0})
    with pytest.raises(ValueError, match="even head size: hidden_dim / num_heads = 36/4"):
        ModernBertBackbone(**{**TINY, "hidden_dim": 36})


def test_packed_documents_attend_and_rotate_as_if_alone():
    """Three documents in one packed row give each one's outputs alone: block-diagonal global and local attention,
    rotary positions restarting at every document (the local radius, 2, is shorter than the documents)."""
    unpacked = ModernBertBackbone(**TINY)
    packed = ModernBertBackbone(**TINY, packed_inputs=True)
    for block in unpacked.transformer_layers:  # sharper attention than the initial weights': rotations then matter
        block.attention.qkv_dense.kernel.assign(block.attention.qkv_dense.kernel * 20.0)
    packed.set_weights(unpacked.get_weights())
    assert packed.input_names == ("token_ids", "padding_mask", "sequence_ids", "position_ids")
    assert "packed_inputs" not in unpacked.get_config() and packed.get_config()["packed_inputs"]
    lengths, row_length = [5, 7, 3], 16
    rng = np.random.default_rng(3)
    documents = [rng.integers(1, TINY["vocabulary_size"], size=n).astype("int32") for n in lengths]
    row = {name: np.zeros((1, row_length), "int32") for name in packed.input_names}
    start = 0
    for number, document in enumerate(documents, start=1):
        span = slice(start, start + len(document))
        row["token_ids"][0, span], row["padding_mask"][0, span] = document, 1
        row["sequence_ids"][0, span], row["position_ids"][0, span] = number, np.arange(len(document))
        start += len(document)
    together = keras.ops.convert_to_numpy(packed(row)["sequence_output"])[0]
    # Each document alone, in one padded batch (padding is masked: the real tokens' outputs are the document's).
    alone = {"token_ids": np.zeros((3, max(lengths)), "int32"), "padding_mask": np.zeros((3, max(lengths)), "int32")}
    for i, document in enumerate(documents):
        alone["token_ids"][i, : len(document)], alone["padding_mask"][i, : len(document)] = document, 1
    alone = keras.ops.convert_to_numpy(unpacked(alone)["sequence_output"])
    start = 0
    for i, document in enumerate(documents):
        np.testing.assert_allclose(together[start : start + len(document)], alone[i, : len(document)], atol=1e-5)
        start += len(document)
    # Rotary scores depend on distances only, so offsets shared by a document cancel; the positions are still read:
    # all zeros (no rotation at all) change the outputs.
    unrotated = packed({**row, "position_ids": np.zeros_like(row["position_ids"])})["sequence_output"]
    assert np.abs(keras.ops.convert_to_numpy(unrotated)[0, : sum(lengths)] - together[: sum(lengths)]).max() > 1e-2
