"""ModernBertBackbone against transformers' ModernBertModel: loading its folders, and writing them back.

Random tiny transformers models (every weight perturbed; see `family_helpers`)
are saved with `save_pretrained` and loaded with `from_pretrained`; our
`sequence_output` must match `last_hidden_state` at every real token within
`ATOL` (1e-5). The configs cover local windows shorter than the input, global
attention every 2 and every 3 layers, rotary bases other than the defaults,
biases on, a tanh GELU, padded rows, and both of transformers' attention
implementations (eager, sdpa). The other way, a `ModernBertBackbone` written
with `save_hf_checkpoint` loads in transformers without a missing or
unexpected key and computes the same outputs.
"""

import json
import os

import keras
import numpy as np
import pytest

from family_helpers import ATOL, hf_forward, hf_model, padded_batch, transformers
from keras_bert import ModernBertBackbone
from keras_bert.converters import save_hf_checkpoint
from keras_bert.converters.hf_modernbert import FAMILY

ONCE = "reads and writes config.json and numpy tensors only: the same on every backend"

# Token ids 1-3 are ModernBERT's specials here; 0 pads.
SPECIAL_IDS = dict(pad_token_id=0, bos_token_id=1, cls_token_id=1, eos_token_id=2, sep_token_id=3)
TINY = dict(vocab_size=50, hidden_size=32, num_attention_heads=4, intermediate_size=40, max_position_embeddings=64,
            **SPECIAL_IDS)
CASES = {
    # Blocks 0 and 2 global, 1 and 3 local (radius 4 in 37 tokens); rotary bases not the defaults.
    "every-2-layers": dict(num_hidden_layers=4, global_attn_every_n_layers=2, local_attention=8,
                           global_rope_theta=1000.0, local_rope_theta=300.0),
    # Block 0 global, 1 and 2 local with an odd window (radius 3); every bias on; the tanh GELU; sdpa.
    "every-3-layers-biases": dict(num_hidden_layers=3, global_attn_every_n_layers=3, local_attention=7,
                                  attention_bias=True, mlp_bias=True, norm_bias=True,
                                  hidden_activation="gelu_pytorch_tanh", local_rope_theta=5000.0),
    # The released models' window (128) and bases: the local block sees the whole input.
    "window-covers-input": dict(num_hidden_layers=2),
}
SDPA = ("every-3-layers-biases",)


def tiny_modernbert(class_name="ModernBertModel", seed=0, **config):
    return hf_model(class_name, transformers.ModernBertConfig(**{**TINY, **config}), seed=seed)


def max_delta(ours, reference, padding_mask):
    real = np.asarray(padding_mask).astype(bool)
    ours = keras.ops.convert_to_numpy(ours)
    reference = reference.detach().numpy()
    assert ours.shape == reference.shape
    return float(np.abs(ours[real] - reference[real]).max())


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_transformers_modernbert_model(case, tmp_path):
    hf = tiny_modernbert(seed=sorted(CASES).index(case), **CASES[case])
    if case in SDPA:
        hf.set_attn_implementation("sdpa")
    hf.save_pretrained(tmp_path)
    backbone = ModernBertBackbone.from_pretrained(str(tmp_path))
    expected_layers = [i for i, kind in enumerate(hf.config.layer_types) if kind == "full_attention"]
    assert backbone.global_layers == expected_layers
    inputs = padded_batch(TINY["vocab_size"], padding_id=0, segments=False, length=37 if case != SDPA[0] else 40)
    ours = np.asarray(backbone.predict(inputs, verbose=0)["sequence_output"])
    delta = max_delta(ours, hf_forward(hf, inputs).last_hidden_state, inputs["padding_mask"])
    print(f"ModernBERT {case}: max |delta| {delta:.2e}")
    assert delta <= ATOL


@pytest.mark.only_backend("torch", reason="which tensors of a ForMaskedLM folder are the encoder's is the converter's "
                          "name table, the same on every backend; the encoder's numbers are checked on all three above")
def test_masked_lm_checkpoint_loads_its_encoder(tmp_path):
    """`ModernBertForMaskedLM` keeps the encoder under `model.` beside its `head.*` and `decoder.*`."""
    hf = tiny_modernbert("ModernBertForMaskedLM", seed=3, **CASES["every-2-layers"])
    hf.save_pretrained(tmp_path)
    backbone = ModernBertBackbone.from_pretrained(str(tmp_path))
    inputs = padded_batch(TINY["vocab_size"], padding_id=0, segments=False, length=21)
    reference = hf_forward(hf.model, inputs).last_hidden_state
    assert max_delta(backbone(inputs)["sequence_output"], reference, inputs["padding_mask"]) <= ATOL


@pytest.mark.only_backend("torch", reason="writing reads the weights as numpy, the same on every backend; written task "
                          "models are compared with transformers on all three in test_hf_modernbert_tasks.py")
def test_written_checkpoint_loads_in_transformers_with_the_same_outputs(tmp_path):
    backbone = ModernBertBackbone(
        vocabulary_size=50, num_layers=3, num_heads=4, hidden_dim=32, intermediate_dim=40, padding_id=0,
        local_attention_window=6, global_attention_every_n_layers=2, global_rope_wavelength=2000.0,
        local_rope_wavelength=400.0, feed_forward_bias=True, max_sequence_length=64,
    )
    rng = np.random.default_rng(5)
    backbone.set_weights([w + 0.05 * rng.standard_normal(w.shape).astype(w.dtype) for w in backbone.get_weights()])
    folder = save_hf_checkpoint(backbone, tmp_path / "hf")
    assert sorted(os.listdir(folder)) == ["config.json", "model.safetensors"]
    reference, info = transformers.ModernBertModel.from_pretrained(
        folder, attn_implementation="eager", output_loading_info=True
    )
    assert not any(info[kind] for kind in ("missing_keys", "unexpected_keys", "mismatched_keys")), info
    assert reference.config.layer_types == ["full_attention", "sliding_attention", "full_attention"]
    assert reference.config.sliding_window == 3 and reference.config.mlp_bias and not reference.config.attention_bias
    inputs = padded_batch(50, padding_id=0, segments=False, length=19)
    delta = max_delta(backbone(inputs)["sequence_output"], hf_forward(reference.eval(), inputs).last_hidden_state,
                      inputs["padding_mask"])
    print(f"ModernBertBackbone -> ModernBertModel: max |delta| {delta:.2e}")
    assert delta <= ATOL
    with pytest.raises(ValueError, match="written without tokenizer files"):
        save_hf_checkpoint(backbone, tmp_path / "with_vocabulary", vocabulary=["a"] * 50)


@pytest.mark.only_backend("torch", reason=ONCE)
def test_transformers_folder_round_trips_tensor_for_tensor(tmp_path):
    from safetensors.numpy import load_file

    tiny_modernbert(seed=4, **CASES["every-3-layers-biases"]).save_pretrained(tmp_path / "hf")
    backbone = ModernBertBackbone.from_pretrained(str(tmp_path / "hf"))
    folder = save_hf_checkpoint(backbone, tmp_path / "back")
    before = load_file(tmp_path / "hf" / "model.safetensors")
    after = load_file(os.path.join(folder, "model.safetensors"))
    assert sorted(before) == sorted(after)
    for name in before:
        np.testing.assert_array_equal(before[name], after[name], err_msg=name)
    rebuilt = ModernBertBackbone.from_pretrained(folder)
    assert arguments(rebuilt) == arguments(backbone)


def arguments(backbone):
    """The constructor arguments of `backbone` (its config without its unique name)."""
    return {k: v for k, v in backbone.get_config().items() if k != "name"}


def write_config(folder, **changes):
    """Rewrites `folder/config.json` with `changes` (a None value removes the key)."""
    path = folder / "config.json"
    config = {**json.loads(path.read_text()), **changes}
    path.write_text(json.dumps({k: v for k, v in config.items() if v is not None}))


@pytest.mark.only_backend("torch", reason=ONCE)
def test_both_config_forms_and_what_cannot_be_followed(tmp_path):
    tiny_modernbert(seed=5, **CASES["every-2-layers"], embedding_dropout=0.1).save_pretrained(tmp_path)
    new_form = arguments(ModernBertBackbone.from_pretrained(str(tmp_path)))
    assert (new_form["global_rope_wavelength"], new_form["local_rope_wavelength"]) == (1000.0, 300.0)
    assert (new_form["global_attention_every_n_layers"], new_form["local_attention_window"]) == (2, 8)
    assert new_form["dropout"] == 0.1  # the largest of the three rates
    # The released checkpoints' form (transformers 4.x): no layer_types, no rope_parameters.
    write_config(tmp_path, layer_types=None, rope_parameters=None, global_rope_theta=1000.0, local_rope_theta=300.0)
    assert arguments(ModernBertBackbone.from_pretrained(str(tmp_path))) == new_form
    write_config(tmp_path, layer_types=["full_attention", "sliding_attention", "full_attention", "full_attention"])
    with pytest.raises(ValueError, match="is not global attention every n layers from layer 0"):
        ModernBertBackbone.from_pretrained(str(tmp_path))
    write_config(tmp_path, layer_types=None, rope_parameters={"full_attention": {"rope_type": "linear", "factor": 2.0}})
    with pytest.raises(ValueError, match="rope_type='linear'; only the default"):
        ModernBertBackbone.from_pretrained(str(tmp_path))
    write_config(tmp_path, rope_parameters=None, hidden_activation="silu")
    with pytest.raises(ValueError, match="hidden_activation='silu' is not supported"):
        ModernBertBackbone.from_pretrained(str(tmp_path))


@pytest.mark.only_backend("torch", reason=ONCE)
def test_written_config_reads_back_as_the_same_arguments():
    backbone = ModernBertBackbone(
        vocabulary_size=60, num_layers=5, num_heads=2, hidden_dim=8, intermediate_dim=12, padding_id=None,
        local_attention_window=33, global_attention_every_n_layers=4, global_rope_wavelength=123.0,
        local_rope_wavelength=45.0, attention_bias=True, layer_norm_bias=True, dropout=0.2,
        layer_norm_epsilon=1e-6, activation="gelu_approximate",
    )
    from keras_bert.converters.hf_writer import hf_config

    config = hf_config(backbone, "ModernBertModel")
    assert config["layer_types"] == ["full_attention"] + ["sliding_attention"] * 3 + ["full_attention"]
    read = FAMILY.read_config(config, "config.json")
    assert read == {k: v for k, v in backbone.get_config().items() if k in read}
    assert set(read) == set(FAMILY.config_fields) | {"activation"}
    # transformers reads it as the same model.
    theirs = transformers.ModernBertConfig(**config)
    assert (theirs.local_attention, theirs.sliding_window, theirs.pad_token_id) == (33, 16, None)
    assert theirs.rope_parameters["full_attention"]["rope_theta"] == 123.0
