"""DistilBertBackbone against transformers' DistilBertModel, its two inputs, saving and training."""

import pytest

from family_helpers import assert_close, assert_real_tokens_close, hf_forward, hf_model, padded_batch, torch, transformers
from harness import run_model_test
from keras_bert import DistilBertBackbone

TINY_DISTILBERT = dict(vocab_size=40, dim=16, n_layers=2, n_heads=2, hidden_dim=24, max_position_embeddings=16)


def test_matches_transformers_distil_bert_model(tmp_path):
    hf = hf_model("DistilBertModel", transformers.DistilBertConfig(**TINY_DISTILBERT))
    hf.save_pretrained(tmp_path)
    backbone = DistilBertBackbone.from_pretrained(str(tmp_path))
    assert backbone.input_names == ("token_ids", "padding_mask")
    inputs = padded_batch(TINY_DISTILBERT["vocab_size"], segments=False)
    ours = backbone(inputs)
    reference = hf_forward(hf, inputs).last_hidden_state
    assert_real_tokens_close(ours["sequence_output"], reference, inputs["padding_mask"])
    # No pooler: pooled_output is the [CLS] token's final hidden state.
    assert_close(ours["pooled_output"], reference[:, 0])


def test_loads_a_pytorch_bin_of_distil_bert_for_masked_lm(tmp_path):
    hf = hf_model("DistilBertForMaskedLM", transformers.DistilBertConfig(**TINY_DISTILBERT, activation="relu"), seed=1)
    hf.config.save_pretrained(tmp_path)
    torch.save(hf.state_dict(), tmp_path / "pytorch_model.bin")  # `distilbert.`-prefixed, with the MLM head
    backbone = DistilBertBackbone.from_pretrained(str(tmp_path))
    assert backbone.activation == "relu"
    inputs = padded_batch(TINY_DISTILBERT["vocab_size"], segments=False)
    reference = hf_forward(hf.distilbert, inputs).last_hidden_state
    assert_real_tokens_close(backbone(inputs)["sequence_output"], reference, inputs["padding_mask"])


def test_saving_config_and_training(tmp_path):
    inputs = padded_batch(30, segments=False, batch_size=2, length=6)
    run_model_test(
        lambda: DistilBertBackbone(
            vocabulary_size=30, num_layers=2, num_heads=2, hidden_dim=8, intermediate_dim=16, max_sequence_length=8,
            dropout=0.0,
        ),
        inputs,
        {"sequence_output": (2, 6, 8), "pooled_output": (2, 8)},
        tmp_path,
    )


def test_segment_ids_are_refused_by_name():
    backbone = DistilBertBackbone(vocabulary_size=30, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=8)
    inputs = padded_batch(30, batch_size=2, length=6)
    with pytest.raises(ValueError, match=r"takes inputs named \['token_ids', 'padding_mask'\].*unexpected: \['segment_ids'\]"):
        backbone(inputs)
    with pytest.raises(ValueError, match=r"sequence length 9 is longer than max_sequence_length=8"):
        DistilBertBackbone(
            vocabulary_size=30, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=8, max_sequence_length=8
        ).predict(padded_batch(30, segments=False, batch_size=2, length=9), verbose=0)
