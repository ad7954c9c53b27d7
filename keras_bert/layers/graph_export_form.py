"""`graph_export_form(model)`: trace a model's layers in the form that graph converters translate well."""

import contextlib


@contextlib.contextmanager
def graph_export_form(model):
    """While active, every layer of `model` that has a graph-export form computes in it.

    The layers' fast paths (torch's fused attention with its dropout, the exact
    GELU written with erf on TensorFlow and JAX) are the best forms to run in
    Keras, not the best for tf2onnx and the LiteRT converter to translate. In
    this form attention adds its mask to the logits as a small bias and the
    GELU is Keras' own (see `keras_bert.layers._fused.attention` and `gelu`):
    the same function, traced into a graph that onnxruntime runs faster.

    It sets the `graph_export_form` attribute of `model`'s own layers
    (`SelfAttention`, `TransformerEncoder`, `ElectraDiscriminatorHead`) and
    restores them after; no other model, and no global state, changes. The
    ONNX and LiteRT exports trace inside it.

    Args:
        model: a Keras model or layer.

    Examples:
    ```python
    with keras_bert.layers.graph_export_form(model):
        concrete = tf.function(model).get_concrete_function(specs)
    ```
    """
    layers = [layer for layer in model._flatten_layers(include_self=True) if hasattr(layer, "graph_export_form")]
    before = [layer.graph_export_form for layer in layers]
    for layer in layers:
        layer.graph_export_form = True
    try:
        yield
    finally:
        for layer, value in zip(layers, before):
            layer.graph_export_form = value
