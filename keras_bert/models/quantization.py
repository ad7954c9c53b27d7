"""Saving models that `model.quantize(...)` changed: which layers, and re-applying it on load.

Our models rebuild from their constructor arguments (`get_config`), which
know nothing of quantization, so a quantized model's config also lists its
quantized layers, and `from_config` quantizes those layers again before the
weights (the int8 values and scales) are loaded into them.
"""


def quantized_layers(model, exclude=None):
    """`{layer.path: quantization mode}` of `model`'s quantized layers, minus those inside `exclude`."""
    skip = {id(layer) for layer in exclude._flatten_layers()} if exclude is not None else set()
    return {
        layer.path: layer.quantization_mode
        for layer in model._flatten_layers(include_self=False)
        if layer.quantization_mode is not None and id(layer) not in skip
    }


def restore_quantization(model, layers):
    """Quantizes the layers named in `layers` (a `quantized_layers` dict) the same way again."""
    for mode in sorted(set(layers.values())):
        paths = {path for path, m in layers.items() if m == mode}
        model.quantize(mode, filters=lambda layer, paths=paths: layer.path in paths)
    return model
