"""BertBackbone: sizes, outputs, padding behaviour, saving, bad input."""

import keras
import numpy as np
import pytest

from harness import numpy_tree, random_bert_inputs, run_model_test, run_saving_test, tiny_backbone
from keras_bert import BertBackbone

TINY = dict(vocabulary_size=60, max_sequence_length=12)  # the sizes the assertions below name


def test_backbone_harness(tmp_path):
    inputs = random_bert_inputs(3, 8, TINY["vocabulary_size"])
    run_model_test(
        lambda: tiny_backbone(**TINY),
        inputs,
        {"sequence_output": (3, 8, 16), "pooled_output": (3, 16)},
        tmp_path,
    )


@pytest.mark.parametrize(
    "size, expected",
    [
        # Published counts with a 30,522 vocabulary and the pooler.
        # The big ones allocate ~1.8 GB of weights; the count is the same on every backend, so every
        # size past mini is counted in one pass (tiny and mini still build on every backend).
        pytest.param("base", 109_482_240, marks=pytest.mark.only_backend("tensorflow", reason="large allocation, backend-independent count")),
        pytest.param("large", 335_141_888, marks=pytest.mark.only_backend("tensorflow", reason="large allocation, backend-independent count")),
        ("tiny", 4_385_920),
        ("mini", 11_170_560),
        pytest.param("small", 28_763_648, marks=pytest.mark.only_backend("tensorflow", reason="backend-independent count")),
        pytest.param("medium", 41_373_184, marks=pytest.mark.only_backend("tensorflow", reason="backend-independent count")),
    ],
)
def test_named_sizes_have_published_parameter_counts(size, expected):
    backbone = BertBackbone.from_size(size)
    assert backbone.count_params() == expected


def test_from_size_rejects_unknown_size():
    with pytest.raises(ValueError, match="Unknown BERT size 'huge'"):
        BertBackbone.from_size("huge")


def test_hidden_states_and_attentions_on_request():
    backbone = tiny_backbone(**TINY, output_hidden_states=True, output_attentions=True)
    inputs = random_bert_inputs(2, 8, TINY["vocabulary_size"])
    outputs = numpy_tree(backbone(inputs))
    assert len(outputs["hidden_states"]) == 3
    assert len(outputs["attentions"]) == 2
    assert outputs["attentions"][0].shape == (2, 2, 8, 8)
    np.testing.assert_allclose(outputs["hidden_states"][-1], outputs["sequence_output"], atol=1e-6)
    # Rows of attention probabilities sum to one; padded keys (row 1, last two) get none.
    np.testing.assert_allclose(outputs["attentions"][1].sum(-1), 1.0, atol=1e-5)
    assert np.all(outputs["attentions"][0][1, :, :, -2:] == 0.0)
    # Asking for attentions does not change the result.
    plain = tiny_backbone(**TINY)
    plain.set_weights(backbone.get_weights())
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(plain(inputs)["sequence_output"]), outputs["sequence_output"], atol=1e-5
    )


def test_padded_tokens_do_not_change_unpadded_outputs():
    backbone = tiny_backbone(**TINY)
    inputs = random_bert_inputs(2, 8, TINY["vocabulary_size"])
    changed = {k: v.copy() for k, v in inputs.items()}
    changed["token_ids"][1, -2:] = [5, 9]
    changed["segment_ids"][1, -2:] = 1
    a = numpy_tree(backbone(inputs))
    b = numpy_tree(backbone(changed))
    np.testing.assert_allclose(a["sequence_output"][1, :-2], b["sequence_output"][1, :-2], atol=1e-5)
    np.testing.assert_allclose(a["pooled_output"], b["pooled_output"], atol=1e-5)


def test_variable_sequence_length_and_jit_predict():
    backbone = tiny_backbone(**TINY)
    for length in (5, 12):
        inputs = random_bert_inputs(2, length, TINY["vocabulary_size"])
        out = backbone.predict(inputs, verbose=0)
        assert out["sequence_output"].shape == (2, length, 16)


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_mixed_precision_outputs_are_finite(policy):
    backbone = BertBackbone.from_size("tiny", vocabulary_size=100, dtype=policy)
    inputs = random_bert_inputs(2, 16, 100)
    outputs = backbone(inputs)
    compute = policy.split("_")[1]
    assert keras.backend.standardize_dtype(outputs["sequence_output"].dtype) == compute
    for value in numpy_tree(outputs).values():
        assert np.all(np.isfinite(value.astype("float32")))
    for weight in backbone.weights:
        assert keras.backend.standardize_dtype(weight.dtype) == "float32"
    # Within 16-bit rounding of the float32 model with the same weights.
    reference = BertBackbone.from_size("tiny", vocabulary_size=100)
    reference.set_weights(backbone.get_weights())
    expected = keras.ops.convert_to_numpy(reference(inputs)["sequence_output"])
    actual = keras.ops.convert_to_numpy(keras.ops.cast(outputs["sequence_output"], "float32"))
    np.testing.assert_allclose(actual, expected, atol=0.15 if compute == "bfloat16" else 0.02)


# --- bad input: each raises a clear error naming the argument and the value received.


def test_rejects_heads_not_dividing_hidden():
    with pytest.raises(ValueError, match="num_heads=3, hidden_dim=16"):
        tiny_backbone(**TINY, num_heads=3)


def test_rejects_wrong_input_names():
    inputs = random_bert_inputs(2, 8, 60)
    inputs["input_ids"] = inputs.pop("token_ids")
    with pytest.raises(ValueError, match=r"Missing: \['token_ids'\]; unexpected: \['input_ids'\]"):
        tiny_backbone(**TINY)(inputs)


def test_rejects_wrong_rank():
    inputs = random_bert_inputs(2, 8, 60)
    inputs["token_ids"] = inputs["token_ids"][0]
    with pytest.raises(ValueError, match=r"`token_ids` must have rank 2.*\(8,\)"):
        tiny_backbone(**TINY)(inputs)


def test_rejects_float_token_ids():
    inputs = random_bert_inputs(2, 8, 60)
    inputs["token_ids"] = inputs["token_ids"].astype("float32")
    with pytest.raises(ValueError, match="`token_ids` must be an integer tensor. Received dtype float32"):
        tiny_backbone(**TINY)(inputs)


def test_rejects_token_ids_outside_vocabulary():
    inputs = random_bert_inputs(2, 8, 60)
    inputs["token_ids"][0, 3] = 60
    backbone = tiny_backbone(**TINY)
    with pytest.raises(ValueError, match=r"`token_ids` must be in \[0, 60\).*value of 60"):
        backbone(inputs)
    with pytest.raises(ValueError, match=r"`token_ids` must be in \[0, 60\)"):
        backbone.predict(inputs, verbose=0)


def test_rejects_segment_ids_outside_range():
    inputs = random_bert_inputs(2, 8, 60)
    inputs["segment_ids"][0, 3] = 2
    with pytest.raises(ValueError, match=r"`segment_ids` must be in \[0, 2\)"):
        tiny_backbone(**TINY)(inputs)


def test_rejects_sequence_longer_than_max():
    inputs = random_bert_inputs(2, 13, 60)
    with pytest.raises(ValueError, match="sequence length 13 is longer than max_sequence_length=12"):
        tiny_backbone(**TINY)(inputs)


def test_rejects_mismatched_input_shapes():
    inputs = random_bert_inputs(2, 8, 60)
    inputs["padding_mask"] = inputs["padding_mask"][:, :6]
    with pytest.raises(ValueError, match="must have the same shape"):
        tiny_backbone(**TINY)(inputs)


def test_dtype_policy_survives_config_and_saving(tmp_path):
    backbone = tiny_backbone(**TINY, dtype="mixed_bfloat16")
    assert backbone.dtype_policy.name == "mixed_bfloat16"
    assert BertBackbone.from_config(backbone.get_config()).dtype_policy.name == "mixed_bfloat16"
    backbone.save(tmp_path / "b.keras")
    restored = keras.saving.load_model(tmp_path / "b.keras")
    assert restored.dtype_policy.name == "mixed_bfloat16"
    assert restored.transformer_layers[0].dtype_policy.name == "mixed_bfloat16"


def test_calling_a_backbone_does_not_serialise_its_config(monkeypatch):
    """The input checks read `input_limits`: `get_config()` serialises the dtype policy, which
    imported TensorFlow on the first call of a JAX model (4 s of the JAX tour)."""
    backbone = tiny_backbone()
    monkeypatch.setattr(type(backbone), "get_config", lambda self: pytest.fail("get_config called"))
    inputs = random_bert_inputs(2, 8, backbone.vocabulary_size)
    backbone(inputs)
    backbone.predict(inputs, verbose=0)
    assert backbone.input_limits == {"vocabulary_size": 147, "num_segments": 2, "max_sequence_length": 32}


def test_gelu_approximate_is_an_option_and_exact_stays_the_default(tmp_path):
    inputs = random_bert_inputs(2, 8, TINY["vocabulary_size"])
    exact = tiny_backbone(**TINY)
    assert exact.activation == "gelu" and "activation" not in exact.get_config()  # old configs unchanged
    approximate = BertBackbone.from_config({**exact.get_config(), "activation": "gelu_approximate"})
    approximate.set_weights(exact.get_weights())
    assert all(layer.activation == "gelu_approximate" for layer in approximate.transformer_layers)
    a = numpy_tree(approximate(inputs))["sequence_output"]
    e = numpy_tree(exact(inputs))["sequence_output"]
    # The tanh form is close to erf GELU but not equal: the option really switches the function.
    assert 0 < np.max(np.abs(a - e)) < 1e-3
    assert approximate.get_config()["activation"] == "gelu_approximate"
    run_saving_test(approximate, inputs, tmp_path)


@pytest.mark.only_backend("tensorflow", reason="checkpoint config mapping, backend-independent; torch import is slow")
def test_gelu_approximate_round_trips_through_hugging_face(tmp_path):
    import torch  # here: only this test needs torch and transformers (slow imports on the other backends)
    import transformers

    from keras_bert.converters.hf_writer import save_hf_checkpoint

    inputs = random_bert_inputs(2, 8, TINY["vocabulary_size"])
    approximate = tiny_backbone(**TINY, activation="gelu_approximate")
    # Written as hidden_act "gelu_pytorch_tanh", read back as gelu_approximate, and transformers
    # computes the same outputs from it (the numerical truth for the option).
    save_hf_checkpoint(approximate, str(tmp_path / "hf"))
    hf = transformers.BertModel.from_pretrained(str(tmp_path / "hf")).eval()
    assert hf.config.hidden_act == "gelu_pytorch_tanh"
    with torch.no_grad():
        reference = hf(input_ids=torch.from_numpy(np.asarray(inputs["token_ids"])).long(),
                       token_type_ids=torch.from_numpy(np.asarray(inputs["segment_ids"])).long(),
                       attention_mask=torch.from_numpy(np.asarray(inputs["padding_mask"])).long()).last_hidden_state
    mask = np.asarray(inputs["padding_mask"]).astype(bool)
    ours = numpy_tree(approximate(inputs))["sequence_output"]
    np.testing.assert_allclose(ours[mask], reference.numpy()[mask], atol=1e-5)
    assert BertBackbone.from_pretrained(str(tmp_path / "hf")).activation == "gelu_approximate"


def test_rejects_unknown_activation():
    with pytest.raises(ValueError, match="Received: activation='swish'"):
        tiny_backbone(**TINY, activation="swish")


SMALL_COMPUTE = dict(normalize_first=True, gated_feed_forward=True, attention_bias=False, feed_forward_bias=False,
                     layer_norm_bias=False)


def test_small_compute_options_build_train_save_and_learn(tmp_path):
    """Pre-LN, GeGLU, no biases (the Cramming recipe's encoder): shapes, config and `.keras` round trips, and
    a masked LM on it learns a fixed batch (the loss falls by half)."""
    from keras_bert import BertMaskedLM

    inputs = random_bert_inputs(3, 8, TINY["vocabulary_size"])
    backbone = run_model_test(lambda: tiny_backbone(**TINY, **SMALL_COMPUTE), inputs,
                              {"sequence_output": (3, 8, 16), "pooled_output": (3, 16)}, tmp_path)
    names = {w.path for w in backbone.weights}
    # No bias or LayerNorm beta anywhere in the encoder (the pooler, a sentence head, keeps its bias).
    assert not [n for n in names if (n.endswith("bias") or n.endswith("beta")) and "pooler" not in n]
    # The gated feed-forward's input projection holds the gate and the value: twice intermediate_dim.
    block = backbone.transformer_layers[0]
    assert block.gated_feed_forward and not block.attention_bias
    shapes = {w.path.split("/", 1)[1]: tuple(w.shape) for w in block.weights}
    assert shapes["intermediate_dense/kernel"] == (16, 2 * 32) and shapes["output_dense/kernel"] == (32, 16)
    # Configs written before the options existed stay as they were; a round trip keeps the options.
    assert "gated_feed_forward" not in tiny_backbone(**TINY).get_config()
    assert {k: backbone.get_config()[k] for k in SMALL_COMPUTE} == SMALL_COMPUTE

    masked_lm = BertMaskedLM(backbone)
    assert not masked_lm.masked_lm_head.transform_bias and not masked_lm.masked_lm_head.layer_norm_bias
    batch = {**inputs, "mask_positions": np.array([[1, 2, 3]] * 3, "int32")}
    labels = np.random.default_rng(0).integers(5, TINY["vocabulary_size"], (3, 3))
    masked_lm.compile(optimizer=keras.optimizers.Adam(1e-2), loss=keras.losses.SparseCategoricalCrossentropy(
        from_logits=True))
    losses = [float(masked_lm.train_on_batch(batch, labels, return_dict=True)["loss"]) for _ in range(30)]
    assert losses[-1] < 0.5 * losses[0], losses


@pytest.mark.only_backend("tensorflow", reason="a config check before any weight is read; backend-independent")
def test_small_compute_options_have_no_transformers_bert_counterpart(tmp_path):
    from keras_bert.converters.hf_writer import save_hf_checkpoint

    for options in ({"gated_feed_forward": True}, {"attention_bias": False}, {"layer_norm_bias": False}):
        with pytest.raises(ValueError, match=f"{next(iter(options))}=.* has no counterpart in"):
            save_hf_checkpoint(tiny_backbone(**TINY, **options), str(tmp_path / "hf"))
        assert not (tmp_path / "hf" / "model.safetensors").exists()
