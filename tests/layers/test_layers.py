"""Every layer through the shared harness, plus the numbers each must get right."""

import keras
import numpy as np
import pytest

from harness import run_layer_test
from keras_bert.layers import (
    BertEmbeddings,
    FlattenChoices,
    MaskedLMHead,
    NextSentenceHead,
    Pooler,
    SelfAttention,
    TransformerEncoder,
    UnflattenChoices,
)

BATCH, SEQ, HIDDEN, VOCAB = 2, 6, 16, 50


def hidden_states(seed=0):
    return np.random.default_rng(seed).normal(size=(BATCH, SEQ, HIDDEN)).astype("float32")


def padding_mask():
    mask = np.ones((BATCH, SEQ), "int32")
    mask[1, -2:] = 0
    return mask


def test_bert_embeddings(tmp_path):
    inputs = {
        "token_ids": np.random.default_rng(0).integers(0, VOCAB, (BATCH, SEQ)).astype("int32"),
        "segment_ids": np.array([[0, 0, 0, 1, 1, 1]] * BATCH, "int32"),
    }
    init = dict(vocabulary_size=VOCAB, hidden_dim=HIDDEN, max_sequence_length=8, num_segments=2)
    layer = run_layer_test(
        BertEmbeddings,
        init,
        inputs,
        expected_output_shape=(BATCH, SEQ, HIDDEN),
        expected_num_trainable_weights=5,  # 3 tables + LayerNorm gamma, beta
        expected_num_params=(VOCAB + 8 + 2) * HIDDEN + 2 * HIDDEN,
        tmp_path=tmp_path,
    )
    # Hand-computed: LayerNorm(token + segment + position) with gamma=1, beta=0.
    out = keras.ops.convert_to_numpy(layer(**inputs, training=False))
    tok = keras.ops.convert_to_numpy(layer.token_embedding.embeddings)[inputs["token_ids"]]
    seg = keras.ops.convert_to_numpy(layer.segment_embedding.embeddings)[inputs["segment_ids"]]
    pos = keras.ops.convert_to_numpy(layer.position_embeddings)[:SEQ][None]
    x = tok + seg + pos
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_self_attention(tmp_path):
    run_layer_test(
        SelfAttention,
        dict(num_heads=4),
        {"x": hidden_states(), "padding_mask": padding_mask()},
        expected_output_shape=(BATCH, SEQ, HIDDEN),
        expected_num_trainable_weights=4,
        expected_num_params=4 * (HIDDEN * HIDDEN + HIDDEN),
        tmp_path=tmp_path,
    )


def test_self_attention_returns_probabilities(tmp_path):
    run_layer_test(
        SelfAttention,
        dict(num_heads=4),
        {"x": hidden_states(), "padding_mask": padding_mask()},
        call_kwargs={"return_attention_scores": True},
        expected_output_shape=((BATCH, SEQ, HIDDEN), (BATCH, 4, SEQ, SEQ)),
        expected_output_dtype=("float32", "float32"),
        expected_num_trainable_weights=4,
        tmp_path=tmp_path,
    )


def test_self_attention_matches_hand_computed_attention():
    layer = SelfAttention(num_heads=2)
    x, mask = hidden_states(), padding_mask()
    fused = keras.ops.convert_to_numpy(layer(x, padding_mask=mask))
    explicit, probs = layer(x, padding_mask=mask, return_attention_scores=True)
    np.testing.assert_allclose(fused, keras.ops.convert_to_numpy(explicit), atol=1e-5)

    qkv_kernel = keras.ops.convert_to_numpy(layer.qkv_dense.kernel)  # (hidden, 3, heads, head_dim)
    qkv_bias = keras.ops.convert_to_numpy(layer.qkv_dense.bias)
    q, k, v = (np.einsum("btd,dnh->btnh", x, qkv_kernel[:, i]) + qkv_bias[i] for i in range(3))
    logits = np.einsum("btnh,bsnh->bnts", q, k) / np.sqrt(HIDDEN // 2)
    logits = np.where(mask[:, None, None, :] == 1, logits, -np.inf)
    expected_probs = np.exp(logits - logits.max(-1, keepdims=True))
    expected_probs /= expected_probs.sum(-1, keepdims=True)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(probs), expected_probs, atol=1e-6)
    context = np.einsum("bnts,bsnh->btnh", expected_probs, v)
    out_kernel = keras.ops.convert_to_numpy(layer.output_dense.kernel)
    expected = np.einsum("btnh,nhd->btd", context, out_kernel) + keras.ops.convert_to_numpy(layer.output_dense.bias)
    np.testing.assert_allclose(fused, expected, atol=1e-5)


def test_attention_ignores_padded_keys():
    layer = SelfAttention(num_heads=2)
    x, mask = hidden_states(), padding_mask()
    _, probs = layer(x, padding_mask=mask, return_attention_scores=True)
    probs = keras.ops.convert_to_numpy(probs)
    assert np.all(probs[1, :, :, -2:] == 0.0)
    changed = x.copy()
    changed[1, -2:] = 100.0  # padded positions only
    a = keras.ops.convert_to_numpy(layer(x, padding_mask=mask))
    b = keras.ops.convert_to_numpy(layer(changed, padding_mask=mask))
    np.testing.assert_allclose(a[:, :-2], b[:, :-2], atol=1e-5)
    np.testing.assert_allclose(a[0], b[0], atol=1e-5)


def test_self_attention_fast_path_keeps_an_all_padding_example_finite():
    # The fused path (torch's scaled_dot_product_attention takes the bool mask
    # directly) must not turn an example without keys into NaN: NaN reaches the
    # loss even under a zero sample weight. The other example is unaffected.
    layer = SelfAttention(num_heads=2)
    x = hidden_states()
    mask = np.ones((BATCH, SEQ), "int32")
    mask[1] = 0
    fused = keras.ops.convert_to_numpy(layer(x, padding_mask=mask))
    explicit, _ = layer(x, padding_mask=mask, return_attention_scores=True)
    assert np.all(np.isfinite(fused))
    np.testing.assert_allclose(fused[0], keras.ops.convert_to_numpy(explicit)[0], atol=1e-5)


@pytest.mark.only_backend("torch", reason="the fused projection is torch-only; elsewhere linear() is the layer's own call")
def test_transformer_encoder_fast_projection_matches_the_layers_own_call():
    # On torch the encoder applies its Dense layers through one fused addmm
    # (keras_bert.layers._fused.linear); it must equal the layers' own call,
    # LoRA included (the merged kernel is what the shortcut reads).
    from keras_bert.layers._fused import linear

    encoder = TransformerEncoder(num_heads=2, intermediate_dim=32, dropout=0.0)
    x = hidden_states()
    encoder(x)
    dense = encoder.intermediate_dense
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(linear(dense, x)), keras.ops.convert_to_numpy(dense(x)), atol=1e-6
    )
    qkv = encoder.attention.qkv_dense
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(linear(qkv, x)), keras.ops.convert_to_numpy(qkv(x)), atol=1e-6
    )
    dense.enable_lora(2)
    dense.lora_kernel_b.assign(np.random.default_rng(1).normal(size=dense.lora_kernel_b.shape))
    np.testing.assert_allclose(
        keras.ops.convert_to_numpy(linear(dense, x)), keras.ops.convert_to_numpy(dense(x)), atol=1e-5
    )


@pytest.mark.only_backend("torch", reason="the half-precision layer norm shortcut is torch-only; elsewhere layer_norm() is the layer's own call")
@pytest.mark.parametrize("policy", ["bfloat16", "mixed_bfloat16", "float16"])
def test_half_precision_layer_norm_matches_the_layers_own_call(policy):
    # keras_bert.layers._fused.layer_norm skips Keras' float32 round trip on torch; forward and
    # gradients must equal the layer's own call up to one rounding of the half-precision output.
    import torch

    from keras_bert.layers._fused import layer_norm

    layer = keras.layers.LayerNormalization(epsilon=1e-12, dtype=policy)
    layer.build((BATCH, SEQ, HIDDEN))
    rng = np.random.default_rng(0)
    layer.gamma.assign(rng.normal(1.0, 0.3, HIDDEN))
    layer.beta.assign(rng.normal(0.0, 0.3, HIDDEN))
    x = keras.ops.cast(hidden_states() * 4.0 + 1.0, layer.compute_dtype)
    want = layer(x)
    got = layer_norm(layer, x)
    assert got.dtype == want.dtype == getattr(torch, layer.compute_dtype)
    ulp = 2.0 ** -7 if "bfloat16" in policy else 2.0 ** -10
    np.testing.assert_allclose(got.detach().float().numpy(), want.detach().float().numpy(), atol=4 * ulp, rtol=ulp)
    x = x.detach().requires_grad_(True)
    (grad_fast,) = torch.autograd.grad(layer_norm(layer, x).float().square().sum(), x)
    (grad_keras,) = torch.autograd.grad(layer(x).float().square().sum(), x)
    np.testing.assert_allclose(grad_fast.float().numpy(), grad_keras.float().numpy(), atol=0.05, rtol=0.02)
    fp32 = keras.layers.LayerNormalization(epsilon=1e-12)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(layer_norm(fp32, hidden_states())),
                                  keras.ops.convert_to_numpy(fp32(hidden_states())))


def test_exact_gelu_matches_keras_and_the_normal_cdf_and_its_gradient():
    # keras_bert.layers._fused.gelu writes the exact GELU with erf on TensorFlow and JAX (their erfc is slow);
    # on every backend it must be x * Phi(x), as Keras' exact GELU, and differentiate as it does.
    import math

    from keras_bert.layers._fused import gelu

    x = np.linspace(-8.0, 8.0, 801).astype("float32")
    x64 = x.astype("float64")
    cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2.0)) for v in x64])  # Phi, in float64
    pdf = np.exp(-0.5 * x64**2) / math.sqrt(2.0 * math.pi)
    want = x64 * cdf
    got = keras.ops.convert_to_numpy(gelu(keras.ops.convert_to_tensor(x)))
    np.testing.assert_allclose(got, want, atol=2e-6, rtol=1e-6)
    keras_form = keras.ops.convert_to_numpy(keras.ops.gelu(x, approximate=False))
    np.testing.assert_allclose(got, keras_form, atol=1e-6, rtol=1e-6)
    # graph exports keep Keras' own form (the ONNX rewrites expect it)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(gelu(keras.ops.convert_to_tensor(x), export_form=True)),
                                  keras_form)
    # d/dx x Phi(x) = Phi(x) + x phi(x): through the backend's own autodiff of whichever form gelu uses.
    np.testing.assert_allclose(_gradient(gelu, x), cdf + x64 * pdf, atol=2e-6, rtol=1e-5)
    bf16 = keras.ops.convert_to_numpy(keras.ops.cast(gelu(keras.ops.cast(x, "bfloat16")), "float32"))
    np.testing.assert_allclose(bf16, want, atol=0.02, rtol=2.0 ** -7)


def _gradient(function, x):
    """d sum(function(x)) / dx on the current backend, as numpy."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        value = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(value)
            total = tf.reduce_sum(function(value))
        return tape.gradient(total, value).numpy()
    if backend == "jax":
        import jax

        return np.asarray(jax.grad(lambda v: function(v).sum())(x))
    import torch

    value = torch.tensor(x, requires_grad=True)
    function(value).sum().backward()
    return value.grad.numpy()


def test_self_attention_rejects_heads_not_dividing_width():
    with pytest.raises(ValueError, match="num_heads"):
        SelfAttention(num_heads=3)(hidden_states())


@pytest.mark.parametrize("normalize_first", [False, True])
def test_transformer_encoder(tmp_path, normalize_first):
    run_layer_test(
        TransformerEncoder,
        dict(num_heads=4, intermediate_dim=32, normalize_first=normalize_first),
        {"x": hidden_states(), "padding_mask": padding_mask()},
        expected_output_shape=(BATCH, SEQ, HIDDEN),
        expected_num_trainable_weights=12,
        expected_num_params=4 * (HIDDEN * HIDDEN + HIDDEN) + 2 * HIDDEN * 32 + 32 + HIDDEN + 4 * HIDDEN,
        tmp_path=tmp_path,
    )



@pytest.mark.parametrize("normalize_first", [False, True])
def test_transformer_encoder_first_token_only_is_the_first_row_of_the_full_output(normalize_first):
    """The first position's output alone (it still attends to every key, padding masked), by argument and by
    scope; any other block in the scope computes every position."""
    from keras_bert.layers.transformer_encoder import first_token_only

    layer = TransformerEncoder(num_heads=4, intermediate_dim=32, normalize_first=normalize_first)
    other = TransformerEncoder(num_heads=4, intermediate_dim=32, normalize_first=normalize_first)
    x, mask = hidden_states(), padding_mask()
    full = keras.ops.convert_to_numpy(layer(x, padding_mask=mask))
    first = keras.ops.convert_to_numpy(layer(x, padding_mask=mask, first_token_only=True))
    assert first.shape == (BATCH, 1, HIDDEN)
    np.testing.assert_allclose(first, full[:, :1], atol=1e-5)
    with first_token_only(layer):
        scoped = keras.ops.convert_to_numpy(layer(x, padding_mask=mask))
        assert keras.ops.convert_to_numpy(other(x, padding_mask=mask)).shape == (BATCH, SEQ, HIDDEN)
    np.testing.assert_allclose(scoped, first, atol=1e-6)
    assert keras.ops.convert_to_numpy(layer(x, padding_mask=mask)).shape == (BATCH, SEQ, HIDDEN)  # scope left
    with pytest.raises(ValueError, match="attention scores"):
        layer(x, padding_mask=mask, first_token_only=True, return_attention_scores=True)
    with pytest.raises(ValueError, match="padding_mask"):
        layer(x, attention_mask=np.ones((BATCH, SEQ, SEQ), "int32"), first_token_only=True)

@pytest.mark.parametrize(
    "policy, options, call_options",
    [
        ("float32", {}, {}),
        ("float32", {"normalize_first": True}, {"first_token_only": True}),
        ("mixed_float16", {"gated_feed_forward": True, "normalize_first": True}, {"return_attention_scores": True}),
        ("mixed_bfloat16", {"local_attention_window": 4, "rotary_max_wavelength": 10_000.0}, {"return_attention_scores": True}),
    ],
)
@pytest.mark.not_backend("jax", reason="the declaration is the same code on every backend; JAX compiles each eager op of "
                                       "these blocks (9 s), TensorFlow and torch check the same in 1-3 s")
def test_transformer_encoder_declares_the_shapes_and_dtypes_its_call_returns(policy, options, call_options):
    """A functional model learns a block's outputs from `compute_output_spec` (declared, so that building a
    model does not trace every block); they must be what calling the block on real tensors gives."""
    layer = TransformerEncoder(num_heads=4, intermediate_dim=32, dtype=policy, **options)
    x, mask = hidden_states(), padding_mask()
    declared = layer(keras.KerasTensor(x.shape), padding_mask=keras.KerasTensor(mask.shape, "int32"), **call_options)
    computed = layer(x, padding_mask=mask, **call_options)
    declared, computed = keras.tree.flatten(declared), keras.tree.flatten(computed)
    assert [(tuple(t.shape), t.dtype) for t in declared] == [
        (tuple(t.shape), keras.backend.standardize_dtype(t.dtype)) for t in computed
    ]
    with pytest.raises(ValueError, match="attention scores"):
        layer(keras.KerasTensor(x.shape), first_token_only=True, return_attention_scores=True)


def test_transformer_encoder_uses_exact_gelu():
    layer = TransformerEncoder(num_heads=2, intermediate_dim=8)
    layer.build((None, None, HIDDEN))
    h = np.linspace(-3, 3, 8, dtype="float32")[None, None, :]
    from math import erf, sqrt

    expected = np.array([v * 0.5 * (1 + erf(v / sqrt(2))) for v in h.ravel()])
    np.testing.assert_allclose(keras.ops.convert_to_numpy(keras.ops.gelu(h, approximate=False)).ravel(), expected, atol=1e-6)


def test_pooler(tmp_path):
    layer = run_layer_test(
        Pooler,
        {},
        {"sequence_output": hidden_states()},
        expected_output_shape=(BATCH, HIDDEN),
        expected_num_trainable_weights=2,
        tmp_path=tmp_path,
    )
    x = hidden_states()
    kernel, bias = (keras.ops.convert_to_numpy(w) for w in (layer.dense.kernel, layer.dense.bias))
    np.testing.assert_allclose(keras.ops.convert_to_numpy(layer(x)), np.tanh(x[:, 0] @ kernel + bias), atol=1e-5)


def test_next_sentence_head(tmp_path):
    run_layer_test(
        NextSentenceHead,
        {},
        {"pooled_output": hidden_states()[:, 0]},
        expected_output_shape=(BATCH, 2),
        expected_num_trainable_weights=2,
        expected_num_params=2 * HIDDEN + 2,
        tmp_path=tmp_path,
    )


def test_masked_lm_head_untied(tmp_path):
    run_layer_test(
        MaskedLMHead,
        dict(vocabulary_size=VOCAB),
        {"sequence_output": hidden_states(), "mask_positions": np.array([[1, 2, 0], [3, 0, 0]], "int32")},
        expected_output_shape=(BATCH, 3, VOCAB),
        expected_num_trainable_weights=6,  # transform kernel, bias, LN gamma, beta, decoder kernel, output bias
        tmp_path=tmp_path,
    )


def test_masked_lm_head_tied_decoder_uses_embedding_table():
    embedding = keras.layers.Embedding(VOCAB, HIDDEN)
    embedding.build((None,))
    head = MaskedLMHead(vocabulary_size=VOCAB, token_embedding=embedding)
    x, positions = hidden_states(), np.array([[1, 2], [3, 0]], "int32")
    logits = keras.ops.convert_to_numpy(head(x, positions))
    gathered = np.take_along_axis(x, positions[:, :, None], axis=1)
    kernel, bias = (keras.ops.convert_to_numpy(w) for w in (head.transform_dense.kernel, head.transform_dense.bias))
    h = gathered @ kernel + bias
    from scipy.special import erf

    h = h * 0.5 * (1 + erf(h / np.sqrt(2)))
    h = (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-12)
    expected = h @ keras.ops.convert_to_numpy(embedding.embeddings).T
    np.testing.assert_allclose(logits, expected, atol=1e-4)
    # The head owns only the transform, LayerNorm and output bias; the decoder is the embedding.
    own = [w for w in head.trainable_weights if w is not embedding.embeddings]
    assert len(own) == 5


def test_masked_lm_head_rejects_mismatched_embedding():
    embedding = keras.layers.Embedding(VOCAB + 1, HIDDEN)
    with pytest.raises(ValueError, match="vocabulary_size"):
        MaskedLMHead(vocabulary_size=VOCAB, token_embedding=embedding)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(vocabulary_size=0, hidden_dim=4), "vocabulary_size"),
        (dict(vocabulary_size=10, hidden_dim=4, dropout=1.5), "dropout"),
        (dict(vocabulary_size=10, hidden_dim="4"), "hidden_dim"),
    ],
)
def test_bert_embeddings_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        BertEmbeddings(**kwargs)


def test_flatten_choices(tmp_path):
    token_ids = np.arange(BATCH * 3 * SEQ, dtype="int32").reshape(BATCH, 3, SEQ)
    layer = run_layer_test(
        FlattenChoices,
        {},
        {"x": token_ids},
        expected_output_shape=(BATCH * 3, SEQ),
        expected_num_trainable_weights=0,
        expected_output_dtype="int32",
        tmp_path=tmp_path,
    )
    # Row-major: choice j of example i becomes row i * num_choices + j.
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(layer(token_ids)), token_ids.reshape(BATCH * 3, SEQ))


def test_unflatten_choices(tmp_path):
    scores = np.arange(BATCH * 3, dtype="float32").reshape(BATCH * 3, 1)
    token_ids = np.zeros((BATCH, 3, SEQ), "int32")
    layer = run_layer_test(
        UnflattenChoices,
        {},
        {"scores": scores, "token_ids": token_ids},
        expected_output_shape=(BATCH, 3),
        expected_num_trainable_weights=0,
        tmp_path=tmp_path,
    )
    # The inverse of FlattenChoices: example i's scores are rows i * 3 .. i * 3 + 2.
    unflattened = keras.ops.convert_to_numpy(layer(scores, token_ids))
    np.testing.assert_array_equal(unflattened, scores.reshape(BATCH, 3))


# --- options the BERT family needs (issue 18); the defaults keep BERT as it was.
def test_transformer_encoder_activation_choice_and_old_configs():
    x = hidden_states()
    exact = TransformerEncoder(num_heads=2, intermediate_dim=8, dropout=0.0)
    exact.build(x.shape)
    config = exact.get_config()
    assert config["activation"] == "gelu"
    # A config saved before the option existed loads with BERT's exact GELU.
    old = TransformerEncoder.from_config({k: v for k, v in config.items() if k != "activation"})
    assert old.activation == "gelu"
    tanh = TransformerEncoder.from_config({**config, "activation": "gelu_approximate"})
    tanh.build(x.shape)
    # Weights large enough that the intermediate activations reach where the two GELUs part.
    rng = np.random.default_rng(0)
    exact.set_weights([rng.normal(size=w.shape).astype("float32") for w in exact.get_weights()])
    tanh.set_weights(exact.get_weights())
    # The tanh form (ALBERT's gelu_new): 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3))).
    h = np.linspace(-3, 3, 8, dtype="float32")[None, None, :]
    expected = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h**3)))
    np.testing.assert_allclose(keras.ops.convert_to_numpy(keras.ops.gelu(h, approximate=True)), expected, atol=1e-6)
    a = keras.ops.convert_to_numpy(exact(x, padding_mask=padding_mask()))
    b = keras.ops.convert_to_numpy(tanh(x, padding_mask=padding_mask()))
    assert 1e-7 < np.abs(a - b).max() < 1e-2  # close, yet not the same function
    with pytest.raises(ValueError, match=r"`activation` must be one of \['gelu', 'gelu_approximate', 'relu'\]. Received: activation='gelu_new'"):
        TransformerEncoder(num_heads=2, intermediate_dim=8, activation="gelu_new")


def test_bert_embeddings_without_segments():
    token_ids = np.random.default_rng(0).integers(0, VOCAB, (BATCH, SEQ)).astype("int32")
    layer = BertEmbeddings(vocabulary_size=VOCAB, hidden_dim=HIDDEN, max_sequence_length=8, num_segments=0)
    out = keras.ops.convert_to_numpy(layer(token_ids))
    assert layer.segment_embedding is None and len(layer.trainable_weights) == 4  # 2 tables + LayerNorm
    x = keras.ops.convert_to_numpy(layer.token_embedding.embeddings)[token_ids]
    x = x + keras.ops.convert_to_numpy(layer.position_embeddings)[:SEQ][None]
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-12)
    np.testing.assert_allclose(out, expected, atol=1e-5)
    with pytest.raises(ValueError, match="pass `segment_ids` exactly when num_segments > 0. Received: num_segments=0"):
        layer(token_ids, np.zeros_like(token_ids))
    with pytest.raises(ValueError, match="Received: num_segments=2, segment_ids=None"):
        BertEmbeddings(vocabulary_size=VOCAB, hidden_dim=HIDDEN)(token_ids)


def test_masked_lm_head_with_a_narrower_tied_embedding():
    embedding = keras.layers.Embedding(VOCAB, 4)
    embedding.build((None,))
    head = MaskedLMHead(vocabulary_size=VOCAB, token_embedding=embedding, embedding_dim=4)
    logits = head(hidden_states(), np.array([[1, 2], [3, 0]], "int32"))
    assert tuple(logits.shape) == (BATCH, 2, VOCAB)
    assert tuple(head.transform_dense.kernel.shape) == (HIDDEN, 4)
    assert MaskedLMHead.from_config(head.get_config()).embedding_dim == 4
    with pytest.raises(ValueError, match="token_embedding.output_dim=4, embedding_dim=None, hidden_dim=16"):
        MaskedLMHead(vocabulary_size=VOCAB, token_embedding=embedding)(hidden_states(), np.array([[1], [2]], "int32"))


def test_graph_export_form_switches_only_the_named_models_layers_and_restores_them():
    from keras_bert.layers import graph_export_form

    inputs = keras.Input((SEQ, HIDDEN))
    block = TransformerEncoder(num_heads=2, intermediate_dim=32)
    model = keras.Model(inputs, block(inputs))
    other = TransformerEncoder(num_heads=2, intermediate_dim=32)
    other.build((BATCH, SEQ, HIDDEN))
    x = np.random.default_rng(0).normal(size=(BATCH, SEQ, HIDDEN)).astype("float32")
    fast = keras.ops.convert_to_numpy(model(x))
    with graph_export_form(model):
        assert block.graph_export_form and block.attention.graph_export_form
        assert not other.graph_export_form and not other.attention.graph_export_form
        exported = keras.ops.convert_to_numpy(model(x))
    assert not block.graph_export_form and not block.attention.graph_export_form
    np.testing.assert_allclose(exported, fast, atol=1e-5)  # another form of the same function
