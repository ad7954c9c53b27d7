"""RobertaBackbone against transformers' RobertaModel: positions past the padding id, one token type."""

import numpy as np
import pytest

from family_helpers import assert_close, assert_real_tokens_close, hf_forward, hf_model, padded_batch, torch, transformers
from harness import run_model_test
from keras_bert import RobertaBackbone
from keras_bert.models.roberta_backbone import roberta_position_ids

# As roberta-base: 2 + 14 position rows for 14 tokens, pad id 1, one token type, epsilon 1e-5.
TINY_ROBERTA = dict(
    vocab_size=40,
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=24,
    max_position_embeddings=16,
    type_vocab_size=1,
    pad_token_id=1,
    layer_norm_eps=1e-5,
)


def test_position_ids_as_transformers_computes_them():
    token_ids = np.array([[0, 31, 2, 1, 1], [0, 5, 6, 7, 2]], "int32")
    expected = transformers.models.roberta.modeling_roberta.RobertaEmbeddings.create_position_ids_from_input_ids(
        torch.tensor(token_ids), padding_idx=1
    ).numpy()
    np.testing.assert_array_equal(np.asarray(roberta_position_ids(token_ids, 1)), expected)
    np.testing.assert_array_equal(expected[0], [2, 3, 4, 1, 1])


def test_matches_transformers_roberta_model(tmp_path):
    hf = hf_model("RobertaModel", transformers.RobertaConfig(**TINY_ROBERTA))
    hf.save_pretrained(tmp_path)
    backbone = RobertaBackbone.from_pretrained(str(tmp_path))
    assert (backbone.max_sequence_length, backbone.num_segments, backbone.padding_id) == (14, 1, 1)
    inputs = padded_batch(TINY_ROBERTA["vocab_size"], padding_id=1, length=14)
    inputs["segment_ids"][:] = 0
    ours = backbone(inputs)
    reference = hf_forward(hf, inputs)
    assert_real_tokens_close(ours["sequence_output"], reference.last_hidden_state, inputs["padding_mask"])
    assert_close(ours["pooled_output"], reference.pooler_output)


def test_roberta_for_masked_lm_has_no_pooler_and_says_so(tmp_path):
    hf = hf_model("RobertaForMaskedLM", transformers.RobertaConfig(**TINY_ROBERTA), seed=1)
    hf.save_pretrained(tmp_path)
    with pytest.warns(UserWarning, match="no pooler weights"):
        backbone = RobertaBackbone.from_pretrained(str(tmp_path))
    inputs = padded_batch(TINY_ROBERTA["vocab_size"], padding_id=1)
    inputs["segment_ids"][:] = 0
    reference = hf_forward(hf.roberta, inputs, output_hidden_states=True).hidden_states[-1]
    assert_real_tokens_close(backbone(inputs)["sequence_output"], reference, inputs["padding_mask"])


def test_saving_config_training_and_limits(tmp_path):
    inputs = padded_batch(30, padding_id=1, batch_size=2, length=6)
    inputs["segment_ids"][:] = 0
    model = run_model_test(
        lambda: RobertaBackbone(
            vocabulary_size=30, num_layers=2, num_heads=2, hidden_dim=8, intermediate_dim=16, max_sequence_length=6,
            dropout=0.0,
        ),
        inputs,
        {"sequence_output": (2, 6, 8), "pooled_output": (2, 8)},
        tmp_path,
    )
    assert model.embeddings.position_embeddings.shape == (6 + 1 + 1, 8)
    inputs["segment_ids"][0, 0] = 1
    with pytest.raises(ValueError, match=r"`segment_ids` must be in \[0, 1\) \(num_segments=1\)"):
        model(inputs)
    with pytest.raises(ValueError, match="sequence length 7 is longer than max_sequence_length=6"):
        model(padded_batch(30, padding_id=1, batch_size=2, length=7))
    with pytest.raises(ValueError, match="`padding_id` must be an int in \\[0, vocabulary_size=30\\). Received: padding_id=30"):
        RobertaBackbone(vocabulary_size=30, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=8, padding_id=30)
