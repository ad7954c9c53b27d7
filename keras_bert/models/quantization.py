"""Saving models that `model.quantize(...)` changed: which layers, and re-applying it on load.

Our models rebuild from their constructor arguments (`get_config`), which
know nothing of quantization, so a quantized model's config also lists its
quantized layers, and `from_config` quantizes those layers again before the
weights (the int8 values and scales) are loaded into them.

`warn_if_int8_is_slow`: our models' `quantize` warns where Keras' int8 was
measured slower than float32 (never a silent slowdown); `warn_if_bfloat16_is_slow`
does the same for a bfloat16 backbone on JAX's CPU backend.
"""

import os
import sys
import warnings

import keras


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


# Backends where Keras' int8 (`model.quantize("int8")`) ran SLOWER than float32 on CPU in our benchmark:
# backend -> int8 / float32 tokens/s of a base BertBackbone, 8x128 `predict_on_batch`, alternating rounds
# (`KERAS_BACKEND=<backend> python -m benchmarks.studies.int8_speed.int8_speed --rounds 3`, 2026-11-25, 2-core AMD EPYC with
# AVX512-VNNI, load average 8-12 from other jobs: TensorFlow 45 vs 189 tokens/s, torch 19.5 vs 64.5). Keras calls no int8 matmul kernel there on CPU (torch: `torch._int_mm` is CUDA-only in
# Keras; TensorFlow: int8 is cast up before the matmul) and quantizes activations on every call. JAX
# (XLA:CPU int8 dot) measured 1.30x, so it is not listed.
INT8_SLOWER_ON_CPU = {"tensorflow": 0.24, "torch": 0.30}
INT8_FASTER_ROUTE = "keras-bert export --format onnx --quantize int8"
_warned_backends = set()


def warn_if_int8_is_slow(mode, config=None):
    """Warns once per backend when `mode` is int8 on a backend and device where we measured int8 slower.

    Never a silent slowdown: the message names the measured ratio, the
    command that measured it and the faster route (ONNX Runtime int8).
    """
    mode = mode or getattr(config, "mode", None)
    backend = keras.backend.backend()
    if mode != "int8" or backend not in INT8_SLOWER_ON_CPU or backend in _warned_backends:
        return
    if _on_accelerator():
        return  # measured on CPU only; on a GPU Keras has int8 kernels
    _warned_backends.add(backend)
    ratio = INT8_SLOWER_ON_CPU[backend]
    warnings.warn(
        f"keras_bert: Keras int8 on the {backend} backend ran at {ratio:.2f}x the speed of float32 on CPU in our "
        f"benchmark (base BERT, batch 8 x 128, `KERAS_BACKEND={backend} python -m benchmarks.studies.int8_speed.int8_speed`): Keras "
        f"has no fast int8 matmul there, so this model is now smaller but slower. For fast int8 inference export "
        f"it to ONNX Runtime (`{INT8_FASTER_ROUTE}`), or use dtype='bfloat16' or the JAX backend.",
        UserWarning,
        stacklevel=_caller_stacklevel(),
    )


# bfloat16 / float32 forward tokens/s of a base BertBackbone (8x128, `predict_on_batch`) on JAX's CPU backend
# in `make bench` (benchmarks/RESULTS.md forward rows, 2026-11-21): 927 vs 1,003. XLA:CPU in jaxlib 0.10.2
# has no bfloat16 matmul kernel for this CPU's AVX512-BF16 (a jitted 1024x768 @ 768x3072: 180 GFLOP/s in
# bfloat16, 195 in float32; the XLA_FLAGS oneDNN, XNNPACK and YNNPACK fusion options changed nothing),
# so bfloat16 halves the weights' memory but is not faster there. TensorFlow (oneDNN) and torch run it faster.
BFLOAT16_SLOWER_ON_CPU = {"jax": 0.92}
_warned_bfloat16 = set()


def warn_if_bfloat16_is_slow(policy):
    """Warns once per backend when `policy` computes in bfloat16 on a CPU backend where we measured it slower."""
    backend = keras.backend.backend()
    if backend not in BFLOAT16_SLOWER_ON_CPU or backend in _warned_bfloat16:
        return
    if keras.dtype_policies.get(policy).compute_dtype != "bfloat16":
        return
    if _on_accelerator():
        return  # measured on CPU only
    _warned_bfloat16.add(backend)
    warnings.warn(
        f"keras_bert: bfloat16 on the {backend} backend ran at {BFLOAT16_SLOWER_ON_CPU[backend]:.2f}x the speed of "
        f"float32 on CPU in our benchmark (base BERT, batch 8 x 128, `make bench`): XLA:CPU has no bfloat16 matmul "
        f"kernel here, so this model uses half the weight memory but is not faster. For speed on CPU use float32 "
        f"on JAX, or bfloat16 on the TensorFlow or torch backend.",
        UserWarning,
        stacklevel=_caller_stacklevel(),
    )


def _on_accelerator():
    """Whether new tensors go to a GPU or TPU; `keras.distribution.list_devices` has no torch version."""
    device = str(getattr(keras.ops.zeros(()), "device", "cpu")).lower()  # "cpu", "cuda:0", ".../device:GPU:0"
    return any(kind in device for kind in ("cuda", "gpu", "tpu"))


def _caller_stacklevel():
    """The `warnings.warn` stacklevel of the first frame outside keras_bert's models and Keras: the user's
    `quantize` call (Keras wraps `quantize` in its own frames, more or fewer by version)."""
    inside = tuple(os.path.dirname(os.path.abspath(path)) + os.sep for path in (__file__, keras.__file__))
    frame, level = sys._getframe(1), 1  # 1: the caller of this function, warn_if_int8_is_slow
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inside):
        frame, level = frame.f_back, level + 1
    return level
