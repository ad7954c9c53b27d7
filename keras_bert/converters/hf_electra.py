"""ELECTRA's names: Hugging Face `ElectraModel` / `ElectraForPreTraining` / `ElectraForMaskedLM` tensors <-> ours.

The encoder blocks are named as BERT's; the embeddings are `embedding_dim`
wide and projected to `hidden_dim` by `embeddings_project` when the two
differ. The discriminator head is `discriminator_predictions.*`, the
generator's `generator_predictions.*` and `generator_lm_head.*` (its weight
tied to the token embedding).
"""

from keras_bert.converters import hf_bert
from keras_bert.converters.hf_config_fields import absolute_positions, activation, constructor_arguments
from keras_bert.converters.weight_entries import WeightEntry, dense_entries, embedding_entries, layer_norm_entries

MODEL_TYPE = "electra"
TITLE = "ELECTRA"
BACKBONE_CLASS = "ElectraBackbone"
PREFIX = "electra."

OPTIONAL_NAMES = ()  # no pooler
HEAD_PREFIXES = (
    "discriminator_predictions.",
    "generator_predictions.",
    "generator_lm_head.",
    "classifier.",
    "qa_outputs.",
    "sequence_summary.",
)
TIED_NAMES = {"generator_lm_head.weight": "embeddings.word_embeddings.weight"}
MLM_NAME = "generator_lm_head.bias"


def read_config(hf, config_path):
    """`ElectraBackbone` constructor arguments from an ELECTRA `config.json` dict."""
    absolute_positions(hf, config_path)
    arguments = constructor_arguments(
        hf,
        config_path,
        {
            "vocabulary_size": ("vocab_size", int),
            "num_layers": ("num_hidden_layers", int),
            "num_heads": ("num_attention_heads", int),
            "hidden_dim": ("hidden_size", int),
            "intermediate_dim": ("intermediate_size", int),
            "embedding_dim": ("embedding_size", int, 128),
            "dropout": ("hidden_dropout_prob", float, 0.1),
            "max_sequence_length": ("max_position_embeddings", int, 512),
            "num_segments": ("type_vocab_size", int, 2),
            "layer_norm_epsilon": ("layer_norm_eps", float, 1e-12),
        },
    )
    arguments["activation"] = activation(hf, "hidden_act", config_path)
    return arguments


def backbone_entries(backbone):
    entries = embedding_entries(backbone.embeddings)
    if backbone.embedding_projection is not None:
        entries += dense_entries(backbone.embedding_projection, "embeddings_project")
    for i, block in enumerate(backbone.transformer_layers):
        entries += hf_bert.block_entries(block, f"encoder.layer.{i}")
    return entries


def model_entries(model):
    """WeightEntries of an `ElectraBackbone`, or of `ElectraDiscriminator` / `ElectraGenerator` with their head."""
    backbone = getattr(model, "backbone", model)
    entries = backbone_entries(backbone)
    head = getattr(model, "discriminator_head", None)
    if head is not None:
        entries += dense_entries(head.dense, "discriminator_predictions.dense")
        entries += dense_entries(head.prediction_dense, "discriminator_predictions.dense_prediction")
    head = getattr(model, "masked_lm_head", None)
    if head is not None:
        entries += dense_entries(head.transform_dense, "generator_predictions.dense")
        entries += layer_norm_entries(head.transform_layer_norm, "generator_predictions.LayerNorm")
        entries.append(WeightEntry(head.output_bias, ["generator_lm_head.bias"]))
    return entries
