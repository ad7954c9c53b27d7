"""ELECTRA's names: Hugging Face `ElectraModel` / `ElectraForPreTraining` / `ElectraForMaskedLM` tensors <-> ours.

The encoder blocks are named as BERT's; the embeddings are `embedding_dim`
wide and projected to `hidden_dim` by `embeddings_project` when the two
differ. The discriminator head is `discriminator_predictions.*`, the
generator's `generator_predictions.*` and `generator_lm_head.*` (its weight
tied to the token embedding).
"""

from keras_bert.converters import hf_bert
from keras_bert.converters.hf_family import Family
from keras_bert.converters.weight_tables import dense, each_layer, layer_norm, tensor

BACKBONE = {
    **hf_bert.EMBEDDINGS,
    "embedding_projection": dense("embeddings_project"),  # None when the embeddings are hidden_dim wide
    "transformer_layers": each_layer(hf_bert.LAYERS, hf_bert.BLOCK),
}
HEADS = {
    "discriminator_head": {
        "dense": dense("discriminator_predictions.dense"),
        "prediction_dense": dense("discriminator_predictions.dense_prediction"),
    },
    "masked_lm_head": {
        "transform_dense": dense("generator_predictions.dense"),
        "transform_layer_norm": layer_norm("generator_predictions.LayerNorm"),
        "output_bias": tensor("generator_lm_head.bias"),
    },
}
HEAD_PREFIXES = (
    "discriminator_predictions.",
    "generator_predictions.",
    "generator_lm_head.",
    "classifier.",
    "qa_outputs.",
    "sequence_summary.",
)

FAMILY = Family(
    model_type="electra", title="ELECTRA", backbone_class="ElectraBackbone", prefix="electra.",
    config_fields={**hf_bert.CONFIG_FIELDS, "embedding_dim": ("embedding_size", int, 128)},
    position_embedding_type="absolute", backbone=BACKBONE, heads=HEADS, head_prefixes=HEAD_PREFIXES,
    tied_names={"generator_lm_head.weight": "embeddings.word_embeddings.weight"}, mlm_name="generator_lm_head.bias",
)
