"""The pieces every family's weight mapping is made of: one of our variables against canonical tensors.

Canonical tensors carry Hugging Face's names (without the family's prefix,
`bert.`, `albert.`, ...) and layouts (dense weights as `(out, in)`). Each
family module (`hf_bert`, `hf_albert`, ...) lists its model's variables
with these helpers; `weight_map` loads and saves through those lists.
"""

import numpy as np


class WeightEntry:
    """One of our variables and the canonical tensor(s) it is made of.

    Args:
        variable: the keras variable.
        names: canonical tensor names that make up the variable.
        to_keras: function(list of arrays) -> array shaped like `variable`.
        to_canonical: function(array) -> list of arrays, one per name.
    """

    def __init__(self, variable, names, to_keras=None, to_canonical=None):
        self.variable = variable
        self.names = list(names)
        self.to_keras = to_keras or (lambda arrays: arrays[0])
        self.to_canonical = to_canonical or (lambda array: [array])


def dense_entries(layer, prefix):
    """A Dense layer against `prefix.weight` (out, in) and `prefix.bias`."""
    return [
        WeightEntry(layer.kernel, [f"{prefix}.weight"], lambda a: a[0].T, lambda k: [k.T]),
        WeightEntry(layer.bias, [f"{prefix}.bias"]),
    ]


def layer_norm_entries(layer, prefix):
    return [WeightEntry(layer.gamma, [f"{prefix}.weight"]), WeightEntry(layer.beta, [f"{prefix}.bias"])]


def attention_entries(attention, query, key, value, output):
    """A `SelfAttention` against four `(hidden, hidden)` linear layers named `query`, `key`, `value`, `output`.

    Our fused kernel is `(hidden, 3, heads, head_dim)` (the heads axis kept
    for sharding); the output kernel is `(heads, head_dim, hidden)`.
    """
    num_heads, head_dim = attention.num_heads, attention.head_dim
    hidden = num_heads * head_dim
    qkv_names = [query, key, value]

    def qkv_kernel_to_keras(arrays):
        # Each (out, in) -> (in, heads, head_dim); stacked on a new axis 1.
        return np.stack([w.T.reshape(hidden, num_heads, head_dim) for w in arrays], axis=1)

    def qkv_kernel_to_canonical(kernel):
        return [kernel[:, i].reshape(hidden, hidden).T for i in range(3)]

    def qkv_bias_to_keras(arrays):
        return np.stack([b.reshape(num_heads, head_dim) for b in arrays], axis=0)

    def qkv_bias_to_canonical(bias):
        return [bias[i].reshape(hidden) for i in range(3)]

    dense = attention.output_dense
    return [
        WeightEntry(
            attention.qkv_dense.kernel, [f"{n}.weight" for n in qkv_names], qkv_kernel_to_keras, qkv_kernel_to_canonical
        ),
        WeightEntry(attention.qkv_dense.bias, [f"{n}.bias" for n in qkv_names], qkv_bias_to_keras, qkv_bias_to_canonical),
        WeightEntry(
            dense.kernel,
            [f"{output}.weight"],
            lambda a: a[0].T.reshape(num_heads, head_dim, hidden),
            lambda k: [k.reshape(hidden, hidden).T],
        ),
        WeightEntry(dense.bias, [f"{output}.bias"]),
    ]


def embedding_entries(embeddings):
    """`BertEmbeddings` against `embeddings.*` (every family names its embeddings as BERT does)."""
    entries = [
        WeightEntry(embeddings.token_embedding.embeddings, ["embeddings.word_embeddings.weight"]),
        WeightEntry(embeddings.position_embeddings, ["embeddings.position_embeddings.weight"]),
    ]
    if embeddings.segment_embedding is not None:
        entries.append(WeightEntry(embeddings.segment_embedding.embeddings, ["embeddings.token_type_embeddings.weight"]))
    return entries + layer_norm_entries(embeddings.layer_norm, "embeddings.LayerNorm")
