"""AlbertBackbone against transformers' AlbertModel, saving, training, and what it refuses."""

import json

import pytest

from family_helpers import assert_close, assert_real_tokens_close, hf_forward, hf_model, padded_batch, transformers
from harness import run_model_test
from keras_bert import AlbertBackbone, BertBackbone

# E=8 != H=16 exercises the projection; 3 layers share one block.
TINY_ALBERT = dict(
    vocab_size=40,
    embedding_size=8,
    hidden_size=16,
    num_hidden_layers=3,
    num_attention_heads=2,
    intermediate_size=24,
    max_position_embeddings=16,
)


def albert_folder(tmp_path, class_name="AlbertModel", **overrides):
    hf = hf_model(class_name, transformers.AlbertConfig(**{**TINY_ALBERT, **overrides}))
    hf.save_pretrained(tmp_path)
    return hf


def test_matches_transformers_albert_model_layer_by_layer(tmp_path):
    hf = albert_folder(tmp_path)
    assert hf.config.hidden_act == "gelu_new"  # the tanh GELU: exact GELU would differ by ~1e-3
    backbone = AlbertBackbone.from_pretrained(str(tmp_path), output_hidden_states=True)
    assert (backbone.embedding_dim, backbone.hidden_dim, backbone.activation) == (8, 16, "gelu_approximate")
    # One shared block: embeddings (5 variables), projection (2), the one block (12), pooler (2), for 3 layers.
    assert len(backbone.transformer_layer.weights) == 12
    assert len(backbone.weights) == 5 + 2 + 12 + 2
    inputs = padded_batch(TINY_ALBERT["vocab_size"])
    ours = backbone(inputs)
    reference = hf_forward(hf, inputs, output_hidden_states=True)
    assert_real_tokens_close(ours["sequence_output"], reference.last_hidden_state, inputs["padding_mask"])
    assert_close(ours["pooled_output"], reference.pooler_output)
    # transformers' hidden states start after the projection, like ours.
    assert len(ours["hidden_states"]) == len(reference.hidden_states) == 4
    for mine, theirs in zip(ours["hidden_states"], reference.hidden_states):
        assert_real_tokens_close(mine, theirs, inputs["padding_mask"])


def test_backbone_from_albert_for_pretraining_leaves_its_heads(tmp_path):
    hf = albert_folder(tmp_path, "AlbertForPreTraining", hidden_act="gelu")
    backbone = AlbertBackbone.from_pretrained(str(tmp_path))
    assert backbone.activation == "gelu"
    inputs = padded_batch(TINY_ALBERT["vocab_size"])
    reference = hf_forward(hf.albert, inputs)
    assert_real_tokens_close(backbone(inputs)["sequence_output"], reference.last_hidden_state, inputs["padding_mask"])


def test_saving_config_and_training(tmp_path):
    inputs = padded_batch(30, batch_size=2, length=6)
    run_model_test(
        lambda: AlbertBackbone(
            vocabulary_size=30, num_layers=2, num_heads=2, hidden_dim=8, intermediate_dim=16, embedding_dim=4,
            max_sequence_length=8,
        ),
        inputs,
        {"sequence_output": (2, 6, 8), "pooled_output": (2, 8)},
        tmp_path,
    )


def test_refuses_layer_groups_and_names_the_class_for_bert(tmp_path):
    albert_folder(tmp_path)
    with pytest.raises(ValueError, match=r"checkpoint of ALBERT \(model_type 'albert'\).*AlbertBackbone\.from_pretrained"):
        BertBackbone.from_pretrained(str(tmp_path))
    config = json.loads((tmp_path / "config.json").read_text())
    config["num_hidden_groups"] = 3
    (tmp_path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="num_hidden_groups=3, inner_group_num=1"):
        AlbertBackbone.from_pretrained(str(tmp_path))
    with pytest.raises(ValueError, match="`num_heads` must divide `hidden_dim`.*num_heads=3, hidden_dim=16"):
        AlbertBackbone(vocabulary_size=30, num_layers=2, num_heads=3, hidden_dim=16, intermediate_dim=8)
    backbone = AlbertBackbone(vocabulary_size=30, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=8)
    bad = padded_batch(30, batch_size=2, length=6)
    bad["token_ids"][0, 0] = 30
    with pytest.raises(ValueError, match=r"`token_ids` must be in \[0, 30\).*Received a value of 30"):
        backbone(bad)
