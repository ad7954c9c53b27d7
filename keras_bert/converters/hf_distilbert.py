"""DistilBERT's names: Hugging Face `DistilBertModel` / `DistilBertForMaskedLM` tensors <-> `DistilBertBackbone`.

Sinusoidal position embeddings (`sinusoidal_pos_embds`) are stored in the
checkpoint like learned ones, so they load into the same table. The
embeddings are named as BERT's, without token types.
"""

from keras_bert.converters import hf_bert
from keras_bert.converters.hf_family import Family
from keras_bert.converters.weight_tables import attention, dense, each_layer, layer_norm

BLOCK = {
    "attention": attention("attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin"),
    "attention_layer_norm": layer_norm("sa_layer_norm"),
    "intermediate_dense": dense("ffn.lin1"),
    "output_dense": dense("ffn.lin2"),
    "output_layer_norm": layer_norm("output_layer_norm"),
}

# DistilBERT's config.json names five of BERT's fields its own way and has no token types nor LayerNorm epsilon.
_KEYS = {"num_hidden_layers": "n_layers", "num_attention_heads": "n_heads", "hidden_size": "dim",
         "intermediate_size": "hidden_dim", "hidden_dropout_prob": "dropout"}
CONFIG_FIELDS = {
    argument: (_KEYS.get(key, key), *rest)
    for argument, (key, *rest) in hf_bert.CONFIG_FIELDS.items()
    if argument not in ("num_segments", "layer_norm_epsilon")
}

FAMILY = Family(
    model_type="distilbert", title="DistilBERT", backbone_class="DistilBertBackbone", prefix="distilbert.",
    config_fields=CONFIG_FIELDS, activation_key="activation",
    backbone={**hf_bert.EMBEDDINGS, "transformer_layers": each_layer("transformer.layer.{index}", BLOCK)},
    head_prefixes=(
        "vocab_transform.", "vocab_layer_norm.", "vocab_projector.", "pre_classifier.", "classifier.", "qa_outputs."
    ),
)
