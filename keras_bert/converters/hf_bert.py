"""BERT's names: Hugging Face `BertModel` / `BertForPreTraining` / `BertForMaskedLM` tensors <-> our weights.

Also the mapping of the BERT-shaped encoder blocks that RoBERTa and ELECTRA
reuse (`encoder.layer.N.*`).
"""

from keras_bert.converters.hf_config_fields import absolute_positions, activation, constructor_arguments
from keras_bert.converters.weight_entries import (
    WeightEntry,
    attention_entries,
    dense_entries,
    embedding_entries,
    layer_norm_entries,
)

MODEL_TYPE = "bert"
TITLE = "BERT"
BACKBONE_CLASS = "BertBackbone"
PREFIX = "bert."

# Checkpoints of `BertForMaskedLM` have no pooler (transformers builds it
# without one). Such a pooler keeps its initial weights, with a warning where
# the model's outputs depend on it.
OPTIONAL_NAMES = ("pooler.dense.weight", "pooler.dense.bias")

# Parts of BERT checkpoints that a model may legitimately not use: the
# pretraining heads (a backbone loaded from `BertForPreTraining`), the heads
# of Hugging Face's fine-tuned task models, and buffers that are not weights.
# Any other unused tensor means the checkpoint does not match its config.
HEAD_NAMES = (
    "cls.predictions.transform.dense.weight",
    "cls.predictions.transform.dense.bias",
    "cls.predictions.transform.LayerNorm.weight",
    "cls.predictions.transform.LayerNorm.bias",
    "cls.predictions.bias",
    "cls.predictions.decoder.weight",
    "cls.predictions.decoder.bias",
    "cls.seq_relationship.weight",
    "cls.seq_relationship.bias",
    "classifier.weight",
    "classifier.bias",
    "qa_outputs.weight",
    "qa_outputs.bias",
)
HEAD_PREFIXES = ()

# The MLM decoder is tied: checkpoints that store it must hold a copy of
# the tensor it is tied to, or our tied head cannot represent them.
TIED_NAMES = {
    "cls.predictions.decoder.weight": "embeddings.word_embeddings.weight",
    "cls.predictions.decoder.bias": "cls.predictions.bias",
}
# The tensor whose use means the model has the (tied) MLM head.
MLM_NAME = "cls.predictions.bias"


def read_config(hf, config_path):
    """`BertBackbone` constructor arguments from a BERT `config.json` dict (or Google's `bert_config.json`)."""
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
            "max_sequence_length": ("max_position_embeddings", int, 512),
            "num_segments": ("type_vocab_size", int, 2),
            "layer_norm_epsilon": ("layer_norm_eps", float, 1e-12),
        },
    )
    # "gelu_new" / "gelu_pytorch_tanh" checkpoints get the tanh GELU; passed only when not BERT's exact one.
    hidden_act = activation(hf, "hidden_act", config_path)
    if hidden_act != "gelu":
        arguments["activation"] = hidden_act
    return arguments


def block_entries(block, prefix):
    """A post-LN `TransformerEncoder` against BERT's `encoder.layer.N` names (also RoBERTa's and ELECTRA's)."""
    return [
        *attention_entries(
            block.attention,
            f"{prefix}.attention.self.query",
            f"{prefix}.attention.self.key",
            f"{prefix}.attention.self.value",
            f"{prefix}.attention.output.dense",
        ),
        *layer_norm_entries(block.attention_layer_norm, f"{prefix}.attention.output.LayerNorm"),
        *dense_entries(block.intermediate_dense, f"{prefix}.intermediate.dense"),
        *dense_entries(block.output_dense, f"{prefix}.output.dense"),
        *layer_norm_entries(block.output_layer_norm, f"{prefix}.output.LayerNorm"),
    ]


def backbone_entries(backbone):
    """WeightEntries for every weight of a `BertBackbone` (or a `RobertaBackbone`: the same names)."""
    if getattr(backbone, "normalize_first", False):
        raise ValueError("Pre-LN backbones (normalize_first=True) have no counterpart in BERT checkpoints.")
    entries = embedding_entries(backbone.embeddings)
    for i, block in enumerate(backbone.transformer_layers):
        entries += block_entries(block, f"encoder.layer.{i}")
    entries += dense_entries(backbone.pooler.dense, "pooler.dense")
    return entries


def masked_lm_head_entries(head):
    """WeightEntries of a `MaskedLMHead` (its decoder is tied to the token embedding)."""
    entries = dense_entries(head.transform_dense, "cls.predictions.transform.dense")
    entries += layer_norm_entries(head.transform_layer_norm, "cls.predictions.transform.LayerNorm")
    entries.append(WeightEntry(head.output_bias, ["cls.predictions.bias"]))
    return entries


def next_sentence_head_entries(head):
    return dense_entries(head.dense, "cls.seq_relationship")


def model_entries(model):
    """WeightEntries for a BERT backbone, or a task model's backbone and pretraining heads."""
    if not hasattr(model, "backbone"):
        return backbone_entries(model)
    entries = backbone_entries(model.backbone)
    if getattr(model, "masked_lm_head", None) is not None:
        entries += masked_lm_head_entries(model.masked_lm_head)
    if getattr(model, "next_sentence_head", None) is not None:
        entries += next_sentence_head_entries(model.next_sentence_head)
    return entries
