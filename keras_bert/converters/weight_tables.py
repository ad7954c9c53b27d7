"""Weight tables: which of a model's layers holds which checkpoint tensors, stated as data.

A table maps an attribute path of a model or layer (`"pooler.dense"`,
`"embeddings.token_embedding.embeddings"`) to a piece that names the
checkpoint tensors it holds:

```python
BLOCK = {
    "attention": attention("attention.self.query", "attention.self.key",
                           "attention.self.value", "attention.output.dense"),
    "attention_layer_norm": layer_norm("attention.output.LayerNorm"),
    "intermediate_dense": dense("intermediate.dense"),
    ...
}
BACKBONE = {
    "embeddings.token_embedding.embeddings": tensor("embeddings.word_embeddings.weight"),
    ...
    "transformer_layers": each_layer("encoder.layer.{index}", BLOCK),
    "pooler.dense": dense("pooler.dense"),
}
```

`table_entries(backbone, BACKBONE)` gives the `WeightEntry`s of every weight
the table names, in table order. An attribute that is None (ELECTRA's
projection when the embeddings are as wide as the blocks, DistilBERT's
segment embedding) holds no tensors; an attribute that does not exist is an
error in the table. A piece is a function(target, prefix) -> list of
`WeightEntry`, where `prefix` goes before every name it holds.

Tables address Python attributes (`block.attention`, not the Keras name
`self_attention`) because the weights are read as the layers present them:
a LoRA layer's `kernel` is its merged kernel.
"""

from keras_bert.converters.weight_entries import WeightEntry, attention_entries, dense_entries, layer_norm_entries


def tensor(name):
    """A variable held as one tensor `name`, as it is (a bias, an embedding matrix)."""
    return lambda variable, prefix: [WeightEntry(variable, [prefix + name])]


def dense(name):
    """A Dense layer against `name.weight` `(out, in)` and `name.bias`."""
    return lambda layer, prefix: dense_entries(layer, prefix + name)


def layer_norm(name):
    """A LayerNormalization against `name.weight` (gamma) and `name.bias` (beta)."""
    return lambda layer, prefix: layer_norm_entries(layer, prefix + name)


def attention(*names):
    """An attention layer against `query, key, value, output` or `qkv, output` (see `attention_entries`)."""
    if len(names) not in (2, 4):
        raise ValueError(f"attention() takes 4 names (query, key, value, output) or 2 (qkv, output). Received: {names}")
    return lambda layer, prefix: attention_entries(layer, *(prefix + name for name in names))


def sublayers(name, table):
    """A layer whose own `table` names its tensors under `name.`."""
    return lambda layer, prefix: table_entries(layer, table, f"{prefix}{name}.")


def each_layer(pattern, table):
    """A list of layers, each against `table` under `pattern` with its index ("encoder.layer.{index}")."""

    def entries(layers, prefix):
        return [
            entry
            for index, layer in enumerate(layers)
            for entry in table_entries(layer, table, f"{prefix}{pattern.format(index=index)}.")
        ]

    return entries


def _attribute(owner, path):
    """`owner.a.b` for the path "a.b"; None where any step is None."""
    for name in path.split("."):
        if owner is None:
            return None
        owner = getattr(owner, name)
    return owner


def table_entries(owner, table, prefix=""):
    """The `WeightEntry`s of every weight that `table` names on `owner`, in table order.

    Args:
        owner: a model or layer.
        table: dict of attribute path on `owner` -> piece.
        prefix: put before every tensor name (e.g. "encoder.layer.3.").

    Returns:
        A list of `WeightEntry`.

    Raises:
        AttributeError: a path of the table that `owner` does not have.
    """
    entries = []
    for path, piece in table.items():
        target = _attribute(owner, path)
        if target is not None:
            entries += piece(target, prefix)
    return entries
