"""LoRA fine-tuning: low-rank adapters on the encoder's kernels, saved alone, merged for export.

    enable_lora(classifier, rank=8)          # Keras' own `enable_lora` on every encoder block
    classifier.compile(...); classifier.fit(...)   # trains the adapters and the task head only
    save_adapter(classifier, "adapter.npz")  # a few MB: the A/B matrices and the head
    merged = merge_lora(classifier)          # plain kernels W + (alpha / rank) * A @ B, for export

The adapters are Keras' (`Dense.enable_lora`, `EinsumDense.enable_lora`): a
kernel of shape `(*rest, last)` gets `lora_kernel_a` of shape `(*rest, rank)`
and `lora_kernel_b` of shape `(rank, last)` and computes with
`W + (alpha / rank) * A @ B`, A random and B zero at the start (so the model
starts as the base model). For the fused QKV kernel `(hidden, 3, heads,
head_dim)` that is one A per head slice and a B shared by all heads: the rank
is bounded by `head_dim`, and A holds `hidden * 3 * heads * rank` numbers
(keras-hub's BERT, with separate query and value kernels, has the same shape
of adapter).

What Keras' saving does with them (checked on all three backends): a `.keras`
file or `.weights.h5` of a model with LoRA holds the merged kernel and no A/B;
our layers build their sublayers without `lora_rank`, so such a file loads as a
plain model with the same outputs. Quantized models (`model.quantize("int8")`)
take adapters too (QLoRA-style; int8 checked on TensorFlow): saving merges in
float and quantizes again, which moves outputs by the quantization error
(6.5e-5 on the tiny test model); `merge_lora` refuses them. That is the export path (`merge_lora`), but
it loses the adapters, hence `save_adapter` / `load_adapter`, which read and
write the variables themselves.

Targets (per `TransformerEncoder` block): "qkv" (the fused query/key/value
projection), "attention_output", "intermediate" and "feedforward_output" (the
two feed-forward kernels). Everything else of the backbone is frozen:
embeddings, LayerNorms, biases and the pooler, as in common LoRA practice
(Hugging Face peft's defaults); the task head trains fully.
"""

import json
import os
import tempfile

import keras
import numpy as np

from keras_bert.layers.transformer_encoder import TransformerEncoder

TARGETS = ("qkv", "attention_output", "intermediate", "feedforward_output")
_ADAPTER_VARIABLES = ("lora_kernel_a", "lora_kernel_b")
# The key of the adapter file's JSON description (the other keys are variable paths).
_INFO_KEY = "__lora__"


def _target_layer(block, target):
    """The Dense / EinsumDense of `block` (a TransformerEncoder) that `target` names."""
    return {
        "qkv": block.attention.qkv_dense,
        "attention_output": block.attention.output_dense,
        "intermediate": block.intermediate_dense,
        "feedforward_output": block.output_dense,
    }[target]


def _backbone(model):
    """`model.backbone` for a task model, `model` itself for a backbone."""
    return getattr(model, "backbone", model)


def _blocks(model):
    blocks = [layer for layer in _backbone(model)._flatten_layers() if isinstance(layer, TransformerEncoder)]
    if not blocks:
        raise ValueError(f"LoRA needs a model with TransformerEncoder blocks; {model.name!r} has none.")
    return blocks


def rank_limit(layer):
    """The largest useful LoRA rank of a Dense / EinsumDense as Keras factors it.

    Keras splits a kernel of shape `(*rest, last)` into A `(*rest, rank)` and
    B `(rank, last)`: the update has rank at most `min(prod(rest), last)`, and
    the per-head slices of the fused QKV kernel at most `head_dim` (its `last`).
    """
    shape = tuple(layer._kernel.shape)  # `kernel` would be the merged one; `_kernel` is the variable
    return min(int(np.prod(shape[:-1])), int(shape[-1]))


def _check_arguments(rank, alpha, targets):
    if not isinstance(rank, int) or isinstance(rank, bool) or rank <= 0:
        raise ValueError(f"The LoRA rank must be a positive int. Received: rank={rank!r}")
    if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or alpha <= 0):
        raise ValueError(f"The LoRA alpha must be a positive number (or None: the rank). Received: alpha={alpha!r}")
    targets = tuple(targets)
    unknown = [t for t in targets if t not in TARGETS]
    if not targets or unknown:
        raise ValueError(f"LoRA targets must be some of {list(TARGETS)}. Received: targets={list(targets)!r}")
    return targets


def enable_lora(model, rank, alpha=None, targets=TARGETS):
    """Adds rank-`rank` adapters to the encoder kernels of `model` and freezes the rest of its backbone.

    Args:
        model: a built task model (with `.backbone`) or a `BertBackbone`; changed in place.
        rank: int, the adapters' rank; at most the smaller side of every
            targeted kernel as Keras factors it (see `rank_limit`).
        alpha: the update is scaled by `alpha / rank`; None means `alpha = rank`
            (scale 1, Keras' default).
        targets: which kernels of every block get adapters (see `TARGETS`).

    Returns:
        The LoRA description `{"rank", "alpha", "targets", "layers"}` (JSON-ready).

    Raises:
        ValueError: a rank <= 0 or above a kernel's limit (both named), an
            unknown target, a model without encoder blocks or with LoRA already on.
    """
    targets = _check_arguments(rank, alpha, targets)
    layers = [_target_layer(block, t) for block in _blocks(model) for t in targets]
    for layer in layers:
        if layer.lora_enabled:
            raise ValueError(f"LoRA is already enabled on {layer.path} (rank {layer.lora_rank}).")
        limit = rank_limit(layer)
        if rank > limit:
            raise ValueError(
                f"The LoRA rank {rank} is larger than the layer {layer.path} allows: its kernel "
                f"{tuple(layer._kernel.shape)} takes a rank of at most {limit}."
            )
    for layer in layers:
        layer.enable_lora(rank, lora_alpha=alpha)
    adapters = {id(v) for v in adapter_variables(model)}
    for variable in _backbone(model).weights:
        # Variable by variable, not `backbone.trainable = False`: that would freeze the adapters too.
        variable.trainable = id(variable) in adapters
    return lora_info(model)


def lora_layers(model):
    """The layers of `model`'s backbone that have LoRA enabled, in model order."""
    return [layer for layer in _backbone(model)._flatten_layers() if getattr(layer, "lora_enabled", False)]


def lora_info(model):
    """`{"rank", "alpha", "targets", "layers"}` of `model`'s adapters, or None without LoRA."""
    layers = lora_layers(model)
    if not layers:
        return None
    targets = [t for t in TARGETS if any(_target_layer(b, t) in layers for b in _blocks(model))]
    return {"rank": layers[0].lora_rank, "alpha": layers[0].lora_alpha, "targets": targets,
            "layers": [layer.path for layer in layers]}


def adapter_variables(model):
    """The A and B matrices of every adapter of `model`."""
    return [getattr(layer, name) for layer in lora_layers(model) for name in _ADAPTER_VARIABLES]


def head_variables(model):
    """The weights of a task model outside its backbone (none for a backbone)."""
    backbone = _backbone(model)
    if backbone is model:
        return []
    return [v for layer in model.layers if layer is not backbone for v in layer.weights]


def parameter_counts(model):
    """`{"trainable", "total", "share"}`: parameters that train, all parameters (adapters included), their ratio."""
    trainable = sum(int(np.prod(v.shape)) for v in model.trainable_weights)
    total = sum(int(np.prod(v.shape)) for v in model.weights)
    return {"trainable": trainable, "total": total, "share": trainable / total}


def _base_fingerprint(model):
    """Sums of the frozen base kernels under the adapters: an adapter refuses a different base model."""
    return [float(np.sum(keras.ops.convert_to_numpy(layer._kernel).astype("float64"))) for layer in lora_layers(model)]


def save_adapter(model, path, base=None):
    """Writes `model`'s adapters and task head (and no other weight) to the `.npz` file `path`.

    Args:
        model: a model with LoRA enabled.
        path: where the `.npz` goes; the arrays are keyed by variable path,
            with the LoRA description (and `base`) as JSON under "__lora__".
        base: optional, what the base model was (e.g. the `--init` path), recorded.

    Raises:
        ValueError: `model` has no LoRA.
    """
    info = lora_info(model)
    if info is None:
        raise ValueError(f"{model.name!r} has no LoRA adapters to save (see `enable_lora`).")
    arrays = {v.path: keras.ops.convert_to_numpy(v) for v in adapter_variables(model) + head_variables(model)}
    info.update(base=base, base_fingerprint=_base_fingerprint(model), model_class=type(model).__name__)
    arrays[_INFO_KEY] = np.array(json.dumps(info))
    directory = os.path.dirname(os.fspath(path)) or "."
    # Through a temporary file and a rename, so a kill never leaves half an adapter.
    fd, tmp = tempfile.mkstemp(suffix=".npz", dir=directory)
    os.close(fd)
    try:
        np.savez(tmp, **arrays)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def read_adapter_info(path):
    """The LoRA description stored in the adapter file `path` (rank, alpha, targets, base...)."""
    with np.load(path, allow_pickle=False) as data:
        if _INFO_KEY not in data.files:
            raise ValueError(f"{path} is not a keras-bert LoRA adapter (no {_INFO_KEY!r} entry).")
        return json.loads(str(data[_INFO_KEY]))


def load_adapter(model, path):
    """Loads the adapter file `path` into `model` (the same base model and task), enabling LoRA if needed.

    Afterwards `model` computes exactly what the fine-tuned model computed.

    Raises:
        ValueError: the file's rank/targets differ from LoRA already on `model`, a
            weight is missing or has another shape, or the base kernels differ.
    """
    info = read_adapter_info(path)
    current = lora_info(model)
    if current is None:
        enable_lora(model, info["rank"], alpha=info["alpha"], targets=info["targets"])
    elif (current["rank"], current["alpha"], current["targets"]) != (info["rank"], info["alpha"], info["targets"]):
        raise ValueError(
            f"{path} holds rank {info['rank']} (alpha {info['alpha']}) adapters on {info['targets']}; the model has "
            f"rank {current['rank']} (alpha {current['alpha']}) on {current['targets']}."
        )
    fingerprint = _base_fingerprint(model)
    if not np.allclose(fingerprint, info["base_fingerprint"], rtol=1e-5, atol=1e-3):
        raise ValueError(f"{path} was trained on another base model than this one (base: {info.get('base')!r}).")
    with np.load(path, allow_pickle=False) as data:
        for variable in adapter_variables(model) + head_variables(model):
            if variable.path not in data.files:
                raise ValueError(f"{path} has no weight {variable.path!r}: it is not an adapter of this model.")
            value = data[variable.path]
            if tuple(value.shape) != tuple(variable.shape):
                raise ValueError(
                    f"{path}: {variable.path!r} has shape {value.shape}, the model's {tuple(variable.shape)}."
                )
            variable.assign(value)
    return model


def merge_lora(model):
    """A copy of `model` without LoRA: every adapted kernel replaced by `W + (alpha / rank) * A @ B`.

    Keras' own merge (the kernel a LoRA layer saves) computes the merged
    kernels; the copy is rebuilt from `model`'s config, so its layers are
    plain Dense / EinsumDense and it saves, exports and loads as any model.
    It is not compiled.

    Raises:
        ValueError: a quantized adapted layer. Its `kernel` adds A @ B to the
            integer kernel; `model.save` merges those right (Keras dequantizes,
            merges and quantizes again), so save and load such a model instead.
    """
    quantized = [layer.path for layer in lora_layers(model) if layer.quantization_mode is not None]
    if quantized:
        raise ValueError(
            f"merge_lora: {quantized[0]} is quantized ({len(quantized)} such layers); save the model with "
            "`model.save(...)` (Keras merges the adapters into the quantized kernels) and load that file instead."
        )
    merged = type(model).from_config(model.get_config())
    values = {v.path: v for v in model.weights}
    for layer in lora_layers(model):
        values[layer._kernel.path] = layer.kernel  # the property merges A @ B in, in the kernel's dtype
    for variable in merged.weights:
        if variable.path not in values:
            raise ValueError(f"merge_lora: {variable.path!r} of the copy has no counterpart in {model.name!r}.")
        # A host copy: on JAX, `cast` to the same dtype hands back the original's own device buffer, and a
        # predict step of the copy that donates its buffers would then delete the original's weights.
        variable.assign(np.array(keras.ops.convert_to_numpy(values[variable.path]), dtype=variable.dtype))
    return merged
