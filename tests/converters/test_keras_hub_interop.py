"""keras-hub's BertBackbone <-> ours, through canonical names.

keras-hub computes BERT's GELU with the tanh approximation, keras_bert (like
transformers) with the exact erf form. To check the weight mapping to 1e-5,
the comparisons give keras-hub's feed-forward layers the exact GELU; the
difference the approximation itself makes is measured separately.
"""

import functools

import keras
import numpy as np
import pytest

from harness import numpy_tree, random_bert_inputs
from keras_bert import BertBackbone, BertPretrainer
from keras_bert.converters import to_keras_hub

keras_hub = pytest.importorskip("keras_hub")

SIZE = dict(vocabulary_size=97, num_layers=2, num_heads=4, hidden_dim=32, intermediate_dim=37, max_sequence_length=24)


def perturbed(model, seed=0):
    rng = np.random.default_rng(seed)
    model.set_weights([w + 0.05 * rng.standard_normal(w.shape).astype(w.dtype) for w in model.get_weights()])
    return model


def with_exact_gelu(hub):
    """keras-hub's backbone computing GELU as BERT's paper and transformers do (test-only swap)."""
    for layer in hub.transformer_layers:
        layer._feedforward_intermediate_dense.activation = functools.partial(keras.activations.gelu, approximate=False)
    return hub


def max_delta(ours, theirs, inputs):
    real = inputs["padding_mask"].astype(bool)
    ours, theirs = numpy_tree(ours), numpy_tree(theirs)
    return max(
        float(np.abs(ours["sequence_output"][real] - theirs["sequence_output"][real]).max()),
        float(np.abs(ours["pooled_output"] - theirs["pooled_output"]).max()),
    )


def test_keras_hub_to_ours():
    hub = perturbed(keras_hub.models.BertBackbone(**SIZE))
    backbone = BertBackbone.from_keras_hub(hub)
    assert isinstance(backbone, BertBackbone) and backbone.count_params() == hub.count_params()
    inputs = random_bert_inputs(4, 16, SIZE["vocabulary_size"], pad_last=5)
    approximate = max_delta(backbone(inputs), hub(inputs), inputs)
    delta = max_delta(backbone(inputs), with_exact_gelu(hub)(inputs), inputs)
    print(f"keras-hub -> ours: max |delta| {delta:.2e} (tanh-approximate GELU left in keras-hub: {approximate:.2e})")
    assert delta <= 1e-5
    assert approximate < 1e-3  # the approximation's own effect, small but real


def test_ours_to_keras_hub():
    model = BertPretrainer(perturbed(BertBackbone(**SIZE), seed=1))
    hub = to_keras_hub(model)  # a task model hands over its backbone
    assert isinstance(hub, keras_hub.models.BertBackbone) and hub.count_params() == model.backbone.count_params()
    inputs = random_bert_inputs(3, 20, SIZE["vocabulary_size"], pad_last=7)
    delta = max_delta(model.backbone(inputs), with_exact_gelu(hub)(inputs), inputs)
    print(f"ours -> keras-hub: max |delta| {delta:.2e}")
    assert delta <= 1e-5

    # And back: the weights survive the round trip exactly.
    again = BertBackbone.from_keras_hub(hub)
    for a, b in zip(model.backbone.get_weights(), again.get_weights()):
        np.testing.assert_array_equal(a, b)


# The mapping is names to arrays, checked on every backend by the tests above; real MiniLM weights
# through our backbone are compared with transformers on every backend in test_hf_parity.py. The real
# checkpoint goes through keras-hub once, in torch's pass, the shortest.
@pytest.mark.only_backend("torch", reason="the weight mapping is checked on every backend by the tiny round trips; "
                          "the real checkpoint once")
def test_real_minilm_through_keras_hub(minilm_path, shared_data):
    transformers = pytest.importorskip("transformers")
    from test_hf_parity import read_sentences

    tokenizer = transformers.BertTokenizerFast.from_pretrained(minilm_path)
    sentences = read_sentences(shared_data, 16)
    encoded = tokenizer(sentences, padding=True, max_length=64, truncation=True, return_tensors="np")
    inputs = {
        "token_ids": encoded["input_ids"].astype("int32"),
        "segment_ids": encoded["token_type_ids"].astype("int32"),
        "padding_mask": encoded["attention_mask"].astype("int32"),
    }
    ours = BertBackbone.from_pretrained(minilm_path)
    expected = ours.predict(inputs, verbose=0)
    # Two models: `predict` compiles its function once, so the swap must come first.
    approximate = max_delta(expected, to_keras_hub(ours).predict(inputs, verbose=0), inputs)
    hub = with_exact_gelu(to_keras_hub(ours))
    delta = max_delta(expected, hub.predict(inputs, verbose=0), inputs)
    print(f"MiniLM ours -> keras-hub: max |delta| {delta:.2e} (tanh-approximate GELU: {approximate:.2e})")
    assert delta <= 1e-5
    assert approximate < 1e-2
    back = BertBackbone.from_keras_hub(hub)
    for a, b in zip(ours.get_weights(), back.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_what_keras_hub_cannot_hold_is_refused():
    with pytest.raises(ValueError, match="layer_norm_epsilon=1e-06"):
        to_keras_hub(BertBackbone(**SIZE, layer_norm_epsilon=1e-6))
    with pytest.raises(ValueError, match="normalize_first"):
        to_keras_hub(BertBackbone(**SIZE, normalize_first=True))
    with pytest.raises(ValueError, match="Received: str"):
        BertBackbone.from_keras_hub("bert_base_en")
