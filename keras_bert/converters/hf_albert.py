"""ALBERT's names: Hugging Face `AlbertModel` / `AlbertForPreTraining` / `AlbertForMaskedLM` tensors <-> `AlbertBackbone`.

ALBERT shares one transformer block across all layers: transformers keeps it
as `encoder.albert_layer_groups.0.albert_layers.0`, our backbone as the one
`TransformerEncoder` it calls `num_layers` times.
"""

from keras_bert.converters.hf_config_fields import absolute_positions, activation, constructor_arguments
from keras_bert.converters.weight_entries import attention_entries, dense_entries, embedding_entries, layer_norm_entries

MODEL_TYPE = "albert"
TITLE = "ALBERT"
BACKBONE_CLASS = "AlbertBackbone"
PREFIX = "albert."

# `AlbertForMaskedLM` checkpoints have no pooler.
OPTIONAL_NAMES = ("pooler.weight", "pooler.bias")
# Heads a backbone may leave unused: MLM, sentence order, and fine-tuned task heads.
HEAD_PREFIXES = ("predictions.", "sop_classifier.", "classifier.", "qa_outputs.")
TIED_NAMES = {}
MLM_NAME = None

_LAYER = "encoder.albert_layer_groups.0.albert_layers.0"


def read_config(hf, config_path):
    """`AlbertBackbone` constructor arguments from an ALBERT `config.json` dict."""
    absolute_positions(hf, config_path)
    groups, inner = hf.get("num_hidden_groups", 1), hf.get("inner_group_num", 1)
    if groups != 1 or inner != 1:
        raise ValueError(
            f"{config_path}: num_hidden_groups={groups}, inner_group_num={inner}; keras_bert's AlbertBackbone "
            "shares one block across all layers, as every released ALBERT does (both 1)."
        )
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
            "dropout": ("hidden_dropout_prob", float, 0.0),
            "max_sequence_length": ("max_position_embeddings", int, 512),
            "num_segments": ("type_vocab_size", int, 2),
            "layer_norm_epsilon": ("layer_norm_eps", float, 1e-12),
        },
    )
    arguments["activation"] = activation(hf, "hidden_act", config_path, default="gelu_new")
    return arguments


def backbone_entries(backbone):
    block = backbone.transformer_layer
    return [
        *embedding_entries(backbone.embeddings),
        *dense_entries(backbone.embedding_projection, "encoder.embedding_hidden_mapping_in"),
        *attention_entries(
            block.attention,
            f"{_LAYER}.attention.query",
            f"{_LAYER}.attention.key",
            f"{_LAYER}.attention.value",
            f"{_LAYER}.attention.dense",
        ),
        *layer_norm_entries(block.attention_layer_norm, f"{_LAYER}.attention.LayerNorm"),
        *dense_entries(block.intermediate_dense, f"{_LAYER}.ffn"),
        *dense_entries(block.output_dense, f"{_LAYER}.ffn_output"),
        *layer_norm_entries(block.output_layer_norm, f"{_LAYER}.full_layer_layer_norm"),
        *dense_entries(backbone.pooler.dense, "pooler"),
    ]


def model_entries(model):
    """WeightEntries of an `AlbertBackbone` (or of a task model's: its heads are not in checkpoints)."""
    return backbone_entries(getattr(model, "backbone", model))
