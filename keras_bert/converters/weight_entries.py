"""The pieces every weight mapping is made of: one of our variables against canonical tensors.

Canonical tensors carry Hugging Face's names (without the family's prefix,
`bert.`, `albert.`, ...) and layouts (dense weights as `(out, in)`). A
`WeightEntry` ties one variable to the tensor(s) it is made of; the functions
here give the entries of a whole layer (`dense_entries`, `layer_norm_entries`,
`attention_entries`). Which layer holds which names is stated once per family
in a table (`weight_tables`), and `weight_map` loads and saves through the
entries of those tables.
"""

import math

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
    """A Dense layer against `prefix.weight` (out, in) and `prefix.bias` (none when the layer has no bias)."""
    entries = [WeightEntry(layer.kernel, [f"{prefix}.weight"], lambda a: a[0].T, lambda k: [k.T])]
    if layer.bias is not None:
        entries.append(WeightEntry(layer.bias, [f"{prefix}.bias"]))
    return entries


def layer_norm_entries(layer, prefix):
    """A LayerNormalization against `prefix.weight` (gamma) and `prefix.bias` (beta; none when it has none)."""
    entries = [WeightEntry(layer.gamma, [f"{prefix}.weight"])]
    if layer.beta is not None:
        entries.append(WeightEntry(layer.beta, [f"{prefix}.bias"]))
    return entries


def _heads_dense_entries(layer, prefix, input_axes):
    """An EinsumDense that keeps the heads as axes against `prefix.weight` `(out, in)` and `prefix.bias` `(out,)`.

    The kernel's first `input_axes` axes are its inputs: a projection is
    `(hidden, heads, head_dim)` (bias `(heads, head_dim)`), the output layer
    `(heads, head_dim, hidden)` (bias `(hidden,)`).
    """
    shape = tuple(layer.kernel.shape)
    inputs = math.prod(shape[:input_axes])
    entries = [
        WeightEntry(
            layer.kernel, [f"{prefix}.weight"], lambda a: a[0].T.reshape(shape), lambda k: [k.reshape(inputs, -1).T]
        )
    ]
    if layer.bias is None:
        return entries
    bias_shape = tuple(layer.bias.shape)
    if len(bias_shape) == 1:
        return entries + [WeightEntry(layer.bias, [f"{prefix}.bias"])]
    return entries + [
        WeightEntry(layer.bias, [f"{prefix}.bias"], lambda a: a[0].reshape(bias_shape), lambda b: [b.reshape(-1)])
    ]


def _fused_qkv_entries(dense, names):
    """Our fused `qkv` EinsumDense, kernel `(hidden, 3, heads, head_dim)`, against three `(hidden, hidden)` projections.

    The three projections are stacked on axis 1 (kernel) and 0 (bias), the
    heads axis kept for sharding.
    """
    kernel = dense.kernel
    hidden, _, num_heads, head_dim = kernel.shape
    projection = (hidden, num_heads, head_dim)

    def kernel_to_keras(arrays):
        return np.stack([w.T.reshape(projection) for w in arrays], axis=1)

    def kernel_to_canonical(value):
        return [value[:, i].reshape(hidden, -1).T for i in range(3)]

    entries = [WeightEntry(kernel, [f"{n}.weight" for n in names], kernel_to_keras, kernel_to_canonical)]
    if dense.bias is not None:
        entries.append(
            WeightEntry(
                dense.bias,
                [f"{n}.bias" for n in names],
                lambda arrays: np.stack([b.reshape(num_heads, head_dim) for b in arrays], axis=0),
                lambda bias: [bias[i].reshape(-1) for i in range(3)],
            )
        )
    return entries


def attention_entries(attention, *names):
    """An attention layer against its checkpoint's linear layers, `(hidden, hidden)` each.

    `names` are four, `query, key, value, output`, or two, `qkv, output`,
    for a checkpoint that stacks query, key and value in one
    `(3 * hidden, hidden)` tensor. Ours (`SelfAttention`) holds query, key
    and value in one fused kernel (`qkv_dense`), Keras' `MultiHeadAttention`
    (keras-hub's encoders) in three (`query_dense`, ...). The output kernel is
    `(heads, head_dim, hidden)` in both.
    """
    *inputs, output = names
    if len(inputs) == 1:
        # (hidden, 3, heads, head_dim) flattens to the stacked (3 * hidden) outputs in query, key, value order.
        entries = _heads_dense_entries(attention.qkv_dense, inputs[0], input_axes=1)
    elif hasattr(attention, "qkv_dense"):
        entries = _fused_qkv_entries(attention.qkv_dense, inputs)
    else:
        projections = (attention.query_dense, attention.key_dense, attention.value_dense)
        entries = []
        for layer, name in zip(projections, inputs):
            entries += _heads_dense_entries(layer, name, input_axes=1)
    return entries + _heads_dense_entries(attention.output_dense, output, input_axes=2)
