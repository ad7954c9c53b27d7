"""ElectraBackbone, ElectraDiscriminator and ElectraGenerator against transformers' ELECTRA models."""

import numpy as np
import pytest

from family_helpers import assert_close, assert_real_tokens_close, hf_forward, hf_model, padded_batch, transformers
from harness import run_model_test
from keras_bert import ElectraBackbone, ElectraDiscriminator, ElectraGenerator

TINY_ELECTRA = dict(
    vocab_size=40,
    embedding_size=16,
    hidden_size=16,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=24,
    max_position_embeddings=16,
)
# A generator is narrower than its embeddings are wide in ELECTRA-small's recipe; here E=8 < H=16: projected.
TINY_GENERATOR = {**TINY_ELECTRA, "embedding_size": 8}
MASK_POSITIONS = np.array([[1, 4, 7], [2, 3, 0], [5, 9, 8], [0, 1, 3]], "int32")


def test_discriminator_matches_electra_for_pretraining(tmp_path):
    hf = hf_model("ElectraForPreTraining", transformers.ElectraConfig(**TINY_ELECTRA))
    hf.save_pretrained(tmp_path)
    inputs = padded_batch(TINY_ELECTRA["vocab_size"])
    reference = hf_forward(hf, inputs, output_hidden_states=True)

    discriminator = ElectraDiscriminator.from_pretrained(str(tmp_path))
    assert discriminator.backbone.embedding_projection is None  # E == H: transformers has no projection either
    assert_real_tokens_close(discriminator(inputs), reference.logits, inputs["padding_mask"])

    backbone = ElectraBackbone.from_pretrained(str(tmp_path))  # the head is left aside
    ours = backbone(inputs)
    assert_real_tokens_close(ours["sequence_output"], reference.hidden_states[-1], inputs["padding_mask"])
    # No pooler: pooled_output is the [CLS] token's final hidden state.
    assert_close(ours["pooled_output"], reference.hidden_states[-1][:, 0])


def test_generator_matches_sharded_electra_for_masked_lm(tmp_path):
    hf = hf_model("ElectraForMaskedLM", transformers.ElectraConfig(**TINY_GENERATOR), seed=1)
    hf.save_pretrained(tmp_path, max_shard_size="5KB")
    assert (tmp_path / "model.safetensors.index.json").exists()
    inputs = padded_batch(TINY_GENERATOR["vocab_size"])
    logits = hf_forward(hf, inputs).logits.numpy()

    generator = ElectraGenerator.from_pretrained(str(tmp_path))
    assert (generator.backbone.embedding_dim, generator.backbone.hidden_dim) == (8, 16)
    expected = np.take_along_axis(logits, MASK_POSITIONS[..., None], axis=1)
    assert_close(generator({**inputs, "mask_positions": MASK_POSITIONS}), expected)


def test_heads_missing_from_a_checkpoint_are_named(tmp_path):
    hf_model("ElectraModel", transformers.ElectraConfig(**TINY_GENERATOR)).save_pretrained(tmp_path)
    ElectraBackbone.from_pretrained(str(tmp_path))
    with pytest.raises(ValueError, match=r"lacks tensors the model needs: generator_predictions\.dense\.weight"):
        ElectraGenerator.from_pretrained(str(tmp_path))
    with pytest.raises(ValueError, match=r"lacks tensors the model needs: discriminator_predictions\.dense\.weight"):
        ElectraDiscriminator.from_pretrained(str(tmp_path))


def electra(**overrides):
    config = dict(
        vocabulary_size=30, num_layers=2, num_heads=2, hidden_dim=8, intermediate_dim=16, embedding_dim=4,
        max_sequence_length=8, dropout=0.0,
    )
    return ElectraBackbone(**{**config, **overrides})


def test_generator_saving_config_and_training(tmp_path):
    inputs = {**padded_batch(30, batch_size=2, length=6), "mask_positions": np.array([[1, 2], [0, 3]], "int32")}
    run_model_test(
        lambda: ElectraGenerator(electra()),
        inputs,
        (2, 2, 30),
        tmp_path,
        targets=np.array([[5, 6], [7, 8]], "int32"),
        sample_weight=np.array([[1.0, 1.0], [1.0, 0.0]], "float32"),
    )


def test_discriminator_saving_config_and_training(tmp_path):
    inputs = padded_batch(30, batch_size=2, length=6)
    replaced = np.array([[0, 1, 0, 0, 1, 0], [1, 0, 0, 0, 0, 0]], "int32")
    run_model_test(
        lambda: ElectraDiscriminator(electra(embedding_dim=None)),
        inputs,
        (2, 6),
        tmp_path,
        targets=replaced,
        sample_weight=inputs["padding_mask"].astype("float32"),
    )
