"""DistilBERT's names: Hugging Face `DistilBertModel` / `DistilBertForMaskedLM` tensors <-> `DistilBertBackbone`."""

from keras_bert.converters.hf_config_fields import activation, constructor_arguments
from keras_bert.converters.weight_entries import attention_entries, dense_entries, embedding_entries, layer_norm_entries

MODEL_TYPE = "distilbert"
TITLE = "DistilBERT"
BACKBONE_CLASS = "DistilBertBackbone"
PREFIX = "distilbert."

OPTIONAL_NAMES = ()  # no pooler
HEAD_PREFIXES = ("vocab_transform.", "vocab_layer_norm.", "vocab_projector.", "pre_classifier.", "classifier.", "qa_outputs.")
TIED_NAMES = {}
MLM_NAME = None


def read_config(hf, config_path):
    """`DistilBertBackbone` constructor arguments from a DistilBERT `config.json` dict.

    Sinusoidal position embeddings (`sinusoidal_pos_embds`) are stored in the
    checkpoint like learned ones, so they load into the same table.
    """
    arguments = constructor_arguments(
        hf,
        config_path,
        {
            "vocabulary_size": ("vocab_size", int),
            "num_layers": ("n_layers", int),
            "num_heads": ("n_heads", int),
            "hidden_dim": ("dim", int),
            "intermediate_dim": ("hidden_dim", int),
            "dropout": ("dropout", float, 0.1),
            "max_sequence_length": ("max_position_embeddings", int, 512),
        },
    )
    arguments["activation"] = activation(hf, "activation", config_path)
    return arguments


def backbone_entries(backbone):
    entries = embedding_entries(backbone.embeddings)
    for i, block in enumerate(backbone.transformer_layers):
        prefix = f"transformer.layer.{i}"
        entries += attention_entries(
            block.attention,
            f"{prefix}.attention.q_lin",
            f"{prefix}.attention.k_lin",
            f"{prefix}.attention.v_lin",
            f"{prefix}.attention.out_lin",
        )
        entries += layer_norm_entries(block.attention_layer_norm, f"{prefix}.sa_layer_norm")
        entries += dense_entries(block.intermediate_dense, f"{prefix}.ffn.lin1")
        entries += dense_entries(block.output_dense, f"{prefix}.ffn.lin2")
        entries += layer_norm_entries(block.output_layer_norm, f"{prefix}.output_layer_norm")
    return entries


def model_entries(model):
    """WeightEntries of a `DistilBertBackbone` (or of a task model's: its heads are not in checkpoints)."""
    return backbone_entries(getattr(model, "backbone", model))
