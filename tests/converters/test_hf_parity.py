"""Numerical truth from outside: our models against Hugging Face transformers.

A random tiny `BertForPreTraining` and the real all-MiniLM-L6-v2 checkpoint
are loaded into keras_bert and compared with transformers' own outputs.
"""

import json
import os

import keras
import numpy as np
import pytest

from harness import numpy_tree, random_bert_inputs
from keras_bert import BertBackbone, BertMaskedLM, BertPretrainer

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY_HF = dict(
    vocab_size=99,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=37,
    max_position_embeddings=24,
    type_vocab_size=2,
    hidden_act="gelu",
)


def tiny_hf_model(cls_name="BertForPreTraining", seed=0):
    torch.manual_seed(seed)
    config = transformers.BertConfig(**TINY_HF, attn_implementation="eager")
    model = getattr(transformers, cls_name)(config).eval()
    # Random init leaves biases and LayerNorm at 0/1; perturb every tensor so
    # a mapping error anywhere shows up in the outputs.
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    return model


def hf_outputs(model, inputs):
    with torch.no_grad():
        out = model(
            input_ids=torch.tensor(inputs["token_ids"], dtype=torch.long),
            token_type_ids=torch.tensor(inputs["segment_ids"], dtype=torch.long),
            attention_mask=torch.tensor(inputs["padding_mask"], dtype=torch.long),
            output_hidden_states=True,
        )
    return out


def batch_with_padding():
    inputs = random_bert_inputs(4, 16, TINY_HF["vocab_size"], pad_last=5)
    inputs["mask_positions"] = np.array([[1, 4, 7], [2, 3, 0], [5, 9, 15], [0, 1, 10]], "int32")
    return inputs


def test_pretrainer_matches_transformers_bert_for_pretraining(tmp_path):
    hf = tiny_hf_model()
    hf.save_pretrained(tmp_path)
    assert os.path.exists(tmp_path / "model.safetensors")
    inputs = batch_with_padding()

    model = BertPretrainer.from_pretrained(str(tmp_path))
    ours = numpy_tree(model(inputs, training=False))
    features = numpy_tree(model.backbone({k: inputs[k] for k in ("token_ids", "segment_ids", "padding_mask")}))
    reference = hf_outputs(hf, inputs)
    sequence = reference.hidden_states[-1].numpy()
    real = inputs["padding_mask"].astype(bool)
    # Padded positions' states are meaningless in both; compare real tokens.
    np.testing.assert_allclose(features["sequence_output"][real], sequence[real], atol=1e-5)
    with torch.no_grad():
        pooled = hf.bert.pooler(reference.hidden_states[-1]).numpy()
    np.testing.assert_allclose(features["pooled_output"], pooled, atol=1e-5)
    mlm = np.take_along_axis(reference.prediction_logits.numpy(), inputs["mask_positions"][..., None], axis=1)
    np.testing.assert_allclose(ours["mlm"], mlm, atol=1e-5)
    np.testing.assert_allclose(ours["nsp"], reference.seq_relationship_logits.numpy(), atol=1e-5)


def test_backbone_from_bert_model_checkpoint_without_prefix(tmp_path):
    hf = tiny_hf_model("BertModel", seed=1)
    hf.save_pretrained(tmp_path)
    inputs = batch_with_padding()
    del inputs["mask_positions"]
    backbone = BertBackbone.from_pretrained(str(tmp_path))
    ours = numpy_tree(backbone(inputs))
    reference = hf_outputs(hf, inputs)
    real = inputs["padding_mask"].astype(bool)
    np.testing.assert_allclose(ours["sequence_output"][real], reference.last_hidden_state.numpy()[real], atol=1e-5)
    np.testing.assert_allclose(ours["pooled_output"], reference.pooler_output.numpy(), atol=1e-5)
    # A BertModel checkpoint has no MLM head: asking for one names what is missing.
    with pytest.raises(ValueError, match=r"lacks tensors the model needs: cls\.predictions"):
        BertMaskedLM.from_pretrained(str(tmp_path))


def test_masked_lm_from_pytorch_bin_with_old_layernorm_names(tmp_path):
    hf = tiny_hf_model("BertForMaskedLM", seed=2)
    hf.config.save_pretrained(tmp_path)
    state = {
        k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta"): v
        for k, v in hf.state_dict().items()
    }
    torch.save(state, tmp_path / "pytorch_model.bin")
    inputs = batch_with_padding()
    model = BertMaskedLM.from_pretrained(str(tmp_path))
    with torch.no_grad():
        logits = hf(
            input_ids=torch.tensor(inputs["token_ids"], dtype=torch.long),
            token_type_ids=torch.tensor(inputs["segment_ids"], dtype=torch.long),
            attention_mask=torch.tensor(inputs["padding_mask"], dtype=torch.long),
        ).logits.numpy()
    expected = np.take_along_axis(logits, inputs["mask_positions"][..., None], axis=1)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(model(inputs)), expected, atol=1e-5)


def test_missing_or_misshaped_tensors_load_nothing(tmp_path):
    from safetensors.numpy import load_file, save_file

    hf = tiny_hf_model("BertModel", seed=3)
    hf.save_pretrained(tmp_path)
    tensors = load_file(tmp_path / "model.safetensors")
    broken = dict(tensors)
    broken["encoder.layer.1.intermediate.dense.weight"] = broken["encoder.layer.1.intermediate.dense.weight"][:, :-1]
    save_file(broken, tmp_path / "model.safetensors")
    with pytest.raises(ValueError, match=r"encoder\.layer\.1\.intermediate\.dense\.weight.*\(37, 31\).*Nothing was loaded"):
        BertBackbone.from_pretrained(str(tmp_path))

    del broken["encoder.layer.1.intermediate.dense.weight"]
    del broken["pooler.dense.bias"]
    save_file(broken, tmp_path / "model.safetensors")
    with pytest.raises(ValueError, match=r"lacks tensors.*encoder\.layer\.1\.intermediate\.dense\.weight, pooler\.dense\.bias"):
        BertBackbone.from_pretrained(str(tmp_path))

    # All or nothing: a failed load leaves an existing model's weights untouched.
    from keras_bert.converters import assign_canonical_weights

    backbone = BertBackbone(
        vocabulary_size=99, num_layers=2, num_heads=4, hidden_dim=32, intermediate_dim=37, max_sequence_length=24
    )
    before = [w.copy() for w in backbone.get_weights()]
    with pytest.raises(ValueError):
        assign_canonical_weights(backbone, broken)
    for a, b in zip(before, backbone.get_weights()):
        np.testing.assert_array_equal(a, b)


def test_truncated_safetensors_is_refused(tmp_path):
    hf = tiny_hf_model("BertModel", seed=4)
    hf.save_pretrained(tmp_path)
    data = (tmp_path / "model.safetensors").read_bytes()
    (tmp_path / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="model.safetensors.*truncated"):
        BertBackbone.from_pretrained(str(tmp_path))


def test_unsupported_config_is_refused(tmp_path):
    hf = tiny_hf_model("BertModel", seed=5)
    hf.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "config.json").read_text())
    config["hidden_act"] = "silu"
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="hidden_act='silu' is not supported"):
        BertBackbone.from_pretrained(str(tmp_path))


def test_from_pretrained_rejects_shape_changing_arguments(tmp_path):
    tiny_hf_model("BertModel").save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="num_layers"):
        BertBackbone.from_pretrained(str(tmp_path), num_layers=3)


def read_sentences(shared_data, count):
    lines = (shared_data / "sentiment" / "movieReviewSnippets_GroundTruth.txt").read_text(encoding="utf-8").splitlines()
    return [line.split("\t")[2] for line in lines[:count]]


def test_real_minilm_matches_transformers(minilm_path, shared_data):
    sentences = read_sentences(shared_data, 16)
    tokenizer = transformers.BertTokenizerFast.from_pretrained(minilm_path)
    encoded = tokenizer(sentences, padding=True, truncation=True, max_length=64, return_tensors="np")
    inputs = {
        "token_ids": encoded["input_ids"].astype("int32"),
        "segment_ids": encoded["token_type_ids"].astype("int32"),
        "padding_mask": encoded["attention_mask"].astype("int32"),
    }
    assert inputs["padding_mask"].min() == 0  # the batch really has padding
    backbone = BertBackbone.from_pretrained(minilm_path)
    assert backbone.num_layers == 6 and backbone.hidden_dim == 384
    ours = numpy_tree(backbone.predict(inputs, verbose=0))
    reference = transformers.BertModel.from_pretrained(minilm_path, attn_implementation="eager").eval()
    out = hf_outputs(reference, inputs)
    real = inputs["padding_mask"].astype(bool)
    np.testing.assert_allclose(ours["sequence_output"][real], out.last_hidden_state.numpy()[real], atol=1e-4)
    np.testing.assert_allclose(ours["pooled_output"], out.pooler_output.numpy(), atol=1e-4)
