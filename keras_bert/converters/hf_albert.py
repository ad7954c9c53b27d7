"""ALBERT's names: Hugging Face `AlbertModel` / `AlbertForPreTraining` / `AlbertForMaskedLM` <-> `AlbertBackbone`.

ALBERT shares one transformer block across all layers: transformers keeps it
as `encoder.albert_layer_groups.0.albert_layers.0`, our backbone as the one
`TransformerEncoder` it calls `num_layers` times. The embeddings are
`embedding_dim` wide, projected to `hidden_dim` by `embedding_hidden_mapping_in`.
"""

from keras_bert.converters import hf_bert
from keras_bert.converters.hf_family import Family
from keras_bert.converters.weight_tables import attention, dense, layer_norm, sublayers

CONFIG_FIELDS = {
    **hf_bert.CONFIG_FIELDS,
    "embedding_dim": ("embedding_size", int, 128),
    "dropout": ("hidden_dropout_prob", float, 0.0),
}


def _one_shared_block(arguments, hf, config_path):
    groups, inner = hf.get("num_hidden_groups", 1), hf.get("inner_group_num", 1)
    if groups != 1 or inner != 1:
        raise ValueError(
            f"{config_path}: num_hidden_groups={groups}, inner_group_num={inner}; keras_bert's AlbertBackbone "
            "shares one block across all layers, as every released ALBERT does (both 1)."
        )


BLOCK = {
    "attention": attention("attention.query", "attention.key", "attention.value", "attention.dense"),
    "attention_layer_norm": layer_norm("attention.LayerNorm"),
    "intermediate_dense": dense("ffn"),
    "output_dense": dense("ffn_output"),
    "output_layer_norm": layer_norm("full_layer_layer_norm"),
}
BACKBONE = {
    **hf_bert.EMBEDDINGS,
    "embedding_projection": dense("encoder.embedding_hidden_mapping_in"),
    "transformer_layer": sublayers("encoder.albert_layer_groups.0.albert_layers.0", BLOCK),
    "pooler.dense": dense("pooler"),
}

FAMILY = Family(
    model_type="albert", title="ALBERT", backbone_class="AlbertBackbone", prefix="albert.",
    config_fields=CONFIG_FIELDS, default_activation="gelu_new", adjust_config=_one_shared_block,
    position_embedding_type="absolute", backbone=BACKBONE,
    # `AlbertForMaskedLM` checkpoints have no pooler.
    optional_names=("pooler.weight", "pooler.bias"),
    # Heads a backbone may leave unused: MLM, sentence order, and fine-tuned task heads.
    head_prefixes=("predictions.", "sop_classifier.", "classifier.", "qa_outputs."),
)
