"""Moving BERT weights between keras-hub's `BertBackbone` and ours.

Both go through canonical names (see `weight_map`): keras-hub's layers are
described here by a weight table, as each family describes ours
(`weight_tables`), and hold the same BERT names as ours (`hf_bert`); one
all-or-nothing `assign_entries` loads either side.

keras-hub's BERT computes GELU with the tanh approximation (as Google's
original TF1 code did); keras_bert, like Hugging Face transformers, uses the
exact erf form. The same weights therefore give slightly different outputs:
on all-MiniLM-L6-v2 and real sentences, up to 4e-3 in `sequence_output` and
2e-4 in `pooled_output` (with the GELU forms made equal, 4e-6). The weight
mapping itself is exact.

`keras_hub_backbone_config` and `keras_hub_tensors` read a keras-hub BERT
(`keras_bert.BertBackbone.from_keras_hub` builds ours from them);
`to_keras_hub` builds keras-hub's from ours. keras-hub is imported only
inside these functions.
"""

import numpy as np

from keras_bert.converters import hf_bert
from keras_bert.converters.weight_map import assign_entries, canonical_weights, entries_to_canonical, is_backbone
from keras_bert.converters.weight_tables import each_layer, table_entries

# keras-hub's BertBackbone hard-codes this LayerNorm epsilon.
KERAS_HUB_LAYER_NORM_EPSILON = 1e-12
# Constructor arguments (and attributes) that keras-hub's BertBackbone and ours share, by the same name.
SHARED_ARGUMENTS = (
    "vocabulary_size", "num_layers", "num_heads", "hidden_dim", "intermediate_dim", "dropout", "max_sequence_length",
    "num_segments",
)

# keras-hub's layers hold the same tensors as ours: its attribute path -> ours, whose BERT names (`hf_bert`) they take.
_EMBEDDINGS = {
    "token_embedding.embeddings": "embeddings.token_embedding.embeddings",
    "position_embedding.position_embeddings": "embeddings.position_embeddings",
    "segment_embedding.embeddings": "embeddings.segment_embedding.embeddings",
    "embeddings_layer_norm": "embeddings.layer_norm",
}
_BLOCK = {
    "_self_attention_layer": "attention",  # a keras MultiHeadAttention: separate query, key and value kernels
    "_self_attention_layer_norm": "attention_layer_norm",
    "_feedforward_intermediate_dense": "intermediate_dense",
    "_feedforward_output_dense": "output_dense",
    "_feedforward_layer_norm": "output_layer_norm",
}
KERAS_HUB_BACKBONE = {
    **{theirs: hf_bert.EMBEDDINGS[ours] for theirs, ours in _EMBEDDINGS.items()},
    "transformer_layers": each_layer(hf_bert.LAYERS, {theirs: hf_bert.BLOCK[ours] for theirs, ours in _BLOCK.items()}),
    "pooled_dense": hf_bert.BACKBONE["pooler.dense"],
}


def keras_hub_entries(hub_backbone):
    """`WeightEntry`s for every weight of a `keras_hub.models.BertBackbone`."""
    for block in hub_backbone.transformer_layers:
        if block.normalize_first:
            raise ValueError(f"keras-hub `{block.name}` is pre-LN (normalize_first=True); BERT is post-LN.")
    return table_entries(hub_backbone, KERAS_HUB_BACKBONE)


def keras_hub_backbone(hub_model):
    """The `keras_hub.models.BertBackbone` of `hub_model` (itself, or a keras-hub task model's `backbone`)."""
    import keras_hub  # defers keras-hub: an optional dependency, needed for this interop only

    backbone = hub_model if isinstance(hub_model, keras_hub.models.BertBackbone) else getattr(hub_model, "backbone", None)
    if not isinstance(backbone, keras_hub.models.BertBackbone):
        raise ValueError(
            "Expected a keras_hub.models.BertBackbone (or a keras-hub BERT task model). "
            f"Received: {type(hub_model).__name__}"
        )
    return backbone


def keras_hub_backbone_config(hub_backbone):
    """keras_bert `BertBackbone` constructor arguments of a `keras_hub.models.BertBackbone`."""
    arguments = {name: getattr(hub_backbone, name) for name in SHARED_ARGUMENTS}
    return {**arguments, "layer_norm_epsilon": KERAS_HUB_LAYER_NORM_EPSILON}


def keras_hub_tensors(hub_backbone):
    """Canonical name -> numpy array for every weight of a `keras_hub.models.BertBackbone`."""
    return entries_to_canonical(keras_hub_entries(hub_backbone))


def to_keras_hub(model):
    """A `keras_hub.models.BertBackbone` with the weights of a keras_bert backbone.

    Args:
        model: a keras_bert `BertBackbone`, or a task model (its `backbone`
            is used; keras-hub's backbone has no pretraining heads).

    Returns:
        A `keras_hub.models.BertBackbone`.
    """
    import keras_hub  # defers keras-hub: an optional dependency, needed for this interop only

    backbone = model if is_backbone(model) else getattr(model, "backbone", None)
    if not is_backbone(backbone):
        raise ValueError(f"Expected a keras_bert BertBackbone or a model with one. Received: {type(model).__name__}")
    if not np.isclose(backbone.layer_norm_epsilon, KERAS_HUB_LAYER_NORM_EPSILON, rtol=0, atol=1e-15):
        raise ValueError(
            "keras-hub's BertBackbone has LayerNorm epsilon 1e-12 built in. "
            f"Received: layer_norm_epsilon={backbone.layer_norm_epsilon}"
        )
    arguments = {name: getattr(backbone, name) for name in SHARED_ARGUMENTS}
    hub = keras_hub.models.BertBackbone(**arguments, dtype=backbone.dtype_policy)
    assign_entries(keras_hub_entries(hub), canonical_weights(backbone), f"keras_bert {backbone.name}")
    return hub
