"""Moving BERT weights between keras-hub's `BertBackbone` and ours.

Both go through canonical names (see `weight_map`): keras-hub's variables are
described here as `WeightEntry`s, the same way `weight_map` describes ours,
so one all-or-nothing `assign_entries` loads either side.

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

from keras_bert.converters.weight_map import (
    WeightEntry,
    assign_entries,
    canonical_weights,
    dense_entries,
    entries_to_canonical,
    is_backbone,
    layer_norm_entries,
)

# keras-hub's BertBackbone hard-codes this LayerNorm epsilon.
KERAS_HUB_LAYER_NORM_EPSILON = 1e-12


def _hub_attention_entries(attention, prefix):
    """keras `MultiHeadAttention` (keras-hub's encoder) against canonical q/k/v/output tensors."""
    num_heads, head_dim = attention.num_heads, attention.key_dim
    hidden = num_heads * head_dim

    def projection(dense, name):
        return [
            WeightEntry(
                dense.kernel,  # (hidden, heads, head_dim)
                [f"{prefix}.self.{name}.weight"],
                lambda a: a[0].T.reshape(hidden, num_heads, head_dim),
                lambda k: [k.reshape(hidden, hidden).T],
            ),
            WeightEntry(
                dense.bias,  # (heads, head_dim)
                [f"{prefix}.self.{name}.bias"],
                lambda a: a[0].reshape(num_heads, head_dim),
                lambda b: [b.reshape(hidden)],
            ),
        ]

    output = attention.output_dense
    return [
        *projection(attention.query_dense, "query"),
        *projection(attention.key_dense, "key"),
        *projection(attention.value_dense, "value"),
        WeightEntry(
            output.kernel,  # (heads, head_dim, hidden)
            [f"{prefix}.output.dense.weight"],
            lambda a: a[0].T.reshape(num_heads, head_dim, hidden),
            lambda k: [k.reshape(hidden, hidden).T],
        ),
        WeightEntry(output.bias, [f"{prefix}.output.dense.bias"]),
    ]


def keras_hub_entries(hub_backbone):
    """`WeightEntry`s for every weight of a `keras_hub.models.BertBackbone`."""
    entries = [
        WeightEntry(hub_backbone.token_embedding.embeddings, ["embeddings.word_embeddings.weight"]),
        WeightEntry(hub_backbone.position_embedding.position_embeddings, ["embeddings.position_embeddings.weight"]),
        WeightEntry(hub_backbone.segment_embedding.embeddings, ["embeddings.token_type_embeddings.weight"]),
        *layer_norm_entries(hub_backbone.embeddings_layer_norm, "embeddings.LayerNorm"),
    ]
    for i, block in enumerate(hub_backbone.transformer_layers):
        if block.normalize_first:
            raise ValueError(f"keras-hub `{block.name}` is pre-LN (normalize_first=True); BERT is post-LN.")
        prefix = f"encoder.layer.{i}"
        entries += _hub_attention_entries(block._self_attention_layer, f"{prefix}.attention")
        entries += layer_norm_entries(block._self_attention_layer_norm, f"{prefix}.attention.output.LayerNorm")
        entries += dense_entries(block._feedforward_intermediate_dense, f"{prefix}.intermediate.dense")
        entries += dense_entries(block._feedforward_output_dense, f"{prefix}.output.dense")
        entries += layer_norm_entries(block._feedforward_layer_norm, f"{prefix}.output.LayerNorm")
    entries += dense_entries(hub_backbone.pooled_dense, "pooler.dense")
    return entries


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
    return {
        "vocabulary_size": hub_backbone.vocabulary_size,
        "num_layers": hub_backbone.num_layers,
        "num_heads": hub_backbone.num_heads,
        "hidden_dim": hub_backbone.hidden_dim,
        "intermediate_dim": hub_backbone.intermediate_dim,
        "dropout": hub_backbone.dropout,
        "max_sequence_length": hub_backbone.max_sequence_length,
        "num_segments": hub_backbone.num_segments,
        "layer_norm_epsilon": KERAS_HUB_LAYER_NORM_EPSILON,
    }


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
    hub = keras_hub.models.BertBackbone(
        vocabulary_size=backbone.vocabulary_size,
        num_layers=backbone.num_layers,
        num_heads=backbone.num_heads,
        hidden_dim=backbone.hidden_dim,
        intermediate_dim=backbone.intermediate_dim,
        dropout=backbone.dropout,
        max_sequence_length=backbone.max_sequence_length,
        num_segments=backbone.num_segments,
        dtype=backbone.dtype_policy,
    )
    assign_entries(keras_hub_entries(hub), canonical_weights(backbone), f"keras_bert {backbone.name}")
    return hub
