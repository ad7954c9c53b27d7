"""LoRA on the encoder kernels: what trains, merging, the adapter file, rank checks (every backend)."""

import keras
import numpy as np
import pytest

from harness import random_bert_inputs, tiny_backbone
from keras_bert import BertClassifier
from keras_bert.models.lora import (
    TARGETS,
    adapter_variables,
    enable_lora,
    head_variables,
    load_adapter,
    lora_info,
    lora_layers,
    merge_lora,
    parameter_counts,
    save_adapter,
)

VOCAB, HIDDEN, HEADS, INTERMEDIATE, LAYERS = 147, 16, 2, 32, 2  # head_dim 8


def classifier(seed=0):
    keras.utils.set_random_seed(seed)
    return BertClassifier(tiny_backbone(num_layers=LAYERS, hidden_dim=HIDDEN, num_heads=HEADS), num_classes=3)


def inputs():
    return random_bert_inputs(4, 12, VOCAB, seed=1)


def predict(model):
    return keras.ops.convert_to_numpy(model(inputs(), training=False))


def perturb_adapters(model, seed=2):
    """B starts at zero (the model starts as its base); give every adapter and the head a visible update."""
    rng = np.random.default_rng(seed)
    for variable in adapter_variables(model) + head_variables(model):
        variable.assign(keras.ops.convert_to_numpy(variable) + rng.normal(0, 0.2, variable.shape).astype("float32"))


def test_only_adapters_and_the_head_train_and_one_step_changes_only_them():
    model = classifier()
    base = predict(model)
    rank = 2
    info = enable_lora(model, rank)
    assert info["rank"] == rank and info["alpha"] == rank and info["targets"] == list(TARGETS)
    assert len(lora_layers(model)) == 4 * LAYERS
    np.testing.assert_allclose(predict(model), base, atol=1e-6)  # B = 0: the base model's outputs

    trainable = {v.path for v in model.trainable_weights}
    expected = {v.path for v in adapter_variables(model)} | {"logits/kernel", "logits/bias"}
    assert trainable == expected
    # Keras' shapes per block: qkv A (16, 3, 2, r) B (r, 8); attention output A (2, 8, r) B (r, 16);
    # feed-forward A (16, r) B (r, 32) and A (32, r) B (r, 16); head 16 x 3 + 3.
    per_block = (16 * 3 * 2 + 8) * rank + (2 * 8 + 16) * rank + (16 + 32) * rank + (32 + 16) * rank
    counts = parameter_counts(model)
    assert counts["trainable"] == LAYERS * per_block + 16 * 3 + 3
    assert counts["share"] == pytest.approx(counts["trainable"] / counts["total"])

    before = {v.path: keras.ops.convert_to_numpy(v).copy() for v in model.weights}
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    model.train_on_batch(inputs(), np.array([0, 1, 2, 1]))
    changed = {v.path for v in model.weights if not np.array_equal(before[v.path], keras.ops.convert_to_numpy(v))}
    # A gets no gradient while B is zero (dL/dA = x^T g B^T): the first step moves every B and the head.
    assert changed <= expected
    assert {v.path for v in adapter_variables(model) if v.path.endswith("lora_kernel_b")} <= changed
    assert {"logits/kernel", "logits/bias"} <= changed


def test_merged_model_has_plain_kernels_and_the_same_outputs(tmp_path):
    model = classifier()
    enable_lora(model, 4, alpha=8)
    perturb_adapters(model)
    expected = predict(model)
    merged = merge_lora(model)
    assert lora_info(merged) is None and len(merged.weights) == len(model.weights) - len(adapter_variables(model))
    np.testing.assert_allclose(predict(merged), expected, atol=1e-5)
    # The copy shares no buffer with the original: on JAX, Keras' compiled predict of a copy that shared them
    # deleted the original's weights ("Buffer has been deleted or donated").
    np.testing.assert_allclose(merged.predict(inputs(), verbose=0), expected, atol=1e-5)
    np.testing.assert_allclose(model.predict(inputs(), verbose=0), expected, atol=1e-5)
    merged.save(tmp_path / "merged.keras")
    reloaded = keras.saving.load_model(tmp_path / "merged.keras")
    np.testing.assert_allclose(predict(reloaded), expected, atol=1e-5)


def test_adapter_file_restores_the_fine_tuned_model_exactly_on_the_same_base(tmp_path):
    base = classifier(seed=0)
    base_weights = [keras.ops.convert_to_numpy(w) for w in base.weights]
    enable_lora(base, 2)
    perturb_adapters(base)
    expected = predict(base)
    save_adapter(base, tmp_path / "adapter.npz", base="tiny seed 0")
    stored = np.load(tmp_path / "adapter.npz")
    # Only the adapters and the head: 2 matrices per adapted kernel, the head's kernel and bias, the description.
    assert len(stored.files) == 2 * 4 * LAYERS + 2 + 1

    fresh = classifier(seed=0)  # the same base, a new random head: the file brings the head
    for variable, value in zip(fresh.weights, base_weights):
        variable.assign(value)
    load_adapter(fresh, tmp_path / "adapter.npz")
    np.testing.assert_array_equal(predict(fresh), expected)

    other = classifier(seed=7)
    with pytest.raises(ValueError, match="another base model"):
        load_adapter(other, tmp_path / "adapter.npz")
    ranked = classifier(seed=0)
    enable_lora(ranked, 3)
    with pytest.raises(ValueError, match="rank 2 .* the model has rank 3"):
        load_adapter(ranked, tmp_path / "adapter.npz")


@pytest.mark.parametrize(
    "rank, message",
    [
        (0, "must be a positive int. Received: rank=0"),
        (-2, "Received: rank=-2"),
        (2.0, "Received: rank=2.0"),
        (True, "Received: rank=True"),
        # head_dim 8 bounds the fused QKV kernel (16, 3, 2, 8) as Keras factors it.
        (9, r"rank 9 is larger than the layer transformer_layer_0/self_attention/qkv allows: its kernel "
            r"\(16, 3, 2, 8\) takes a rank of at most 8"),
    ],
)
def test_bad_ranks_are_refused_with_the_value_and_the_limit(rank, message):
    model = classifier()
    with pytest.raises(ValueError, match=message):
        enable_lora(model, rank)
    assert lora_layers(model) == []  # nothing half-enabled


def test_other_bad_arguments_are_refused():
    model = classifier()
    with pytest.raises(ValueError, match="alpha must be a positive number.*alpha=0"):
        enable_lora(model, 2, alpha=0)
    with pytest.raises(ValueError, match=r"targets must be some of .*Received: targets=\['query'\]"):
        enable_lora(model, 2, targets=["query"])
    enable_lora(model, 2, targets=["intermediate"])
    with pytest.raises(ValueError, match="already enabled"):
        enable_lora(model, 2, targets=["intermediate"])
    with pytest.raises(ValueError, match="has no LoRA adapters"):
        save_adapter(classifier(), "unused.npz")


@pytest.mark.only_backend("tensorflow", reason="the int8 merge and re-quantization is Keras' own code for every backend; "
                                               "eager int8 on JAX took 82 s here, on TensorFlow a few")
@pytest.mark.usefixtures("frozen_gc")  # Keras' per-variable gc.collect() (48 s late in a suite run without it)
def test_a_quantized_model_takes_adapters_and_saves_them_merged(tmp_path):
    model = classifier()
    model.quantize("int8")
    enable_lora(model, 2)
    perturb_adapters(model)
    expected = predict(model)
    model.save(tmp_path / "quantized.keras")  # Keras dequantizes, merges A @ B and quantizes again
    reloaded = keras.saving.load_model(tmp_path / "quantized.keras")
    assert lora_info(reloaded) is None
    assert np.max(np.abs(predict(reloaded) - expected)) < 1e-3  # the int8 rounding of the merged kernels
    with pytest.raises(ValueError, match="is quantized .* save the model"):
        merge_lora(model)


@pytest.mark.parametrize("alpha", [None, 2, 8])
def test_every_adapted_kernel_is_w_plus_alpha_over_rank_times_a_b(alpha):
    """The scale is `alpha / rank` (alpha None: 1), on the kernel the model computes with and in the merged copy:
    a LoRA that ignored alpha trained and merged at another scale, and only a size threshold noticed (issue 44)."""
    rank = 4
    model = classifier()
    enable_lora(model, rank, alpha=alpha)
    base = {layer.path: keras.ops.convert_to_numpy(layer._kernel) for layer in lora_layers(model)}
    perturb_adapters(model)  # moves the adapters and the head, not the base kernels
    merged = merge_lora(model)
    merged_weights = {v.path: keras.ops.convert_to_numpy(v) for v in merged.weights}  # merge_lora matches paths
    scale = (alpha or rank) / rank
    for layer in lora_layers(model):
        a = keras.ops.convert_to_numpy(layer.lora_kernel_a)
        b = keras.ops.convert_to_numpy(layer.lora_kernel_b)
        expected = base[layer.path] + scale * np.reshape(a @ b, base[layer.path].shape)
        np.testing.assert_allclose(keras.ops.convert_to_numpy(layer.kernel), expected, atol=1e-5, err_msg=layer.path)
        np.testing.assert_allclose(merged_weights[layer._kernel.path], expected, atol=1e-5, err_msg=layer.path)
    assert len(base) == 4 * LAYERS
