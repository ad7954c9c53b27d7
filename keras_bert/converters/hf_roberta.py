"""RoBERTa's names: Hugging Face `RobertaModel` / `RobertaForMaskedLM` tensors <-> `RobertaBackbone`.

RoBERTa's tensors are named as BERT's (under `roberta.`); what differs is
the configuration: positions start after the padding id, one token type,
LayerNorm epsilon 1e-5.
"""

from keras_bert.converters import hf_bert
from keras_bert.converters.hf_config_fields import absolute_positions, activation, constructor_arguments

MODEL_TYPE = "roberta"
TITLE = "RoBERTa"
BACKBONE_CLASS = "RobertaBackbone"
PREFIX = "roberta."

# `RobertaForMaskedLM` checkpoints have no pooler.
OPTIONAL_NAMES = hf_bert.OPTIONAL_NAMES
HEAD_PREFIXES = ("lm_head.", "classifier.", "qa_outputs.")
TIED_NAMES = {}
MLM_NAME = None


def read_config(hf, config_path):
    """`RobertaBackbone` constructor arguments from a RoBERTa `config.json` dict.

    The position table has `max_position_embeddings` rows, of which the first
    `pad_token_id + 1` are never used by real tokens (positions count from
    `pad_token_id + 1`): the longest input is `max_position_embeddings -
    pad_token_id - 1` tokens (512 for roberta-base's 514 rows).
    """
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
            "dropout": ("hidden_dropout_prob", float, 0.1),
            "num_segments": ("type_vocab_size", int, 2),
            "layer_norm_epsilon": ("layer_norm_eps", float, 1e-12),
            "padding_id": ("pad_token_id", int, 1),
        },
    )
    rows = int(hf.get("max_position_embeddings", 512))
    arguments["max_sequence_length"] = rows - arguments["padding_id"] - 1
    if arguments["max_sequence_length"] < 1:
        raise ValueError(
            f"{config_path}: max_position_embeddings={rows} leaves no position after pad_token_id="
            f"{arguments['padding_id']} (RoBERTa's positions start at pad_token_id + 1)."
        )
    arguments["activation"] = activation(hf, "hidden_act", config_path)
    return arguments


def model_entries(model):
    """WeightEntries of a `RobertaBackbone` (or of a task model's: its heads are not in checkpoints)."""
    return hf_bert.backbone_entries(getattr(model, "backbone", model))
