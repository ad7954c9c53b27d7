"""`graph_conversion.quantize_int8` gives every weight matrix one int8 scale per output channel, on 7 bits.

Per tensor, one scale serves the whole matrix, set by its largest weight: a
channel whose weights are a thousand times smaller rounds to zero (the study
behind the choice: docs/results/studies/onnx_int8_settings.md). A small
graph written with `onnx.helper` in the two forms tf2onnx gives our weights
(a `Gemm` with a transposed weight, as the attention projections come, and a
`MatMul`), each with channels of very different magnitudes, is quantized as
`export_onnx(quantize="int8")` quantizes, and the int8 file is read back:
each weight's zero point and scale have one entry per output channel, and
every channel's dequantized weights are within half a quantization step of
its fp32 weights, the smallest channels included.

The weights are checked in the file rather than through outputs of the int8
kernels: onnxruntime's uint8 x int8 kernels on AVX2 CPUs without VNNI
(VPMADDUBSW) saturate pairs of products at int16, so a synthetic layer that
uses the whole int8 range in every channel is computed with large errors on
some machines whatever the scales (the export tests check real models'
int8 outputs against fp32).
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from keras_bert.export.onnx_litert import graph_conversion

pytestmark = pytest.mark.only_backend(
    "tensorflow",
    reason="onnx and onnxruntime on a hand-written ONNX file: no Keras backend runs, the same file on every backend",
)

IN, HIDDEN, OUT = 8, 6, 5
LEVELS = 64  # the largest |int8| weight with reduce_range (onnxruntime: symmetric -64..64)


def _weights():
    """`{name: fp32 weights}`, each output channel 10x the last: magnitudes from 1e-3 to 10 (or back)."""
    rng = np.random.default_rng(0)
    return {
        # Gemm with transB=1 holds (out, in), as tf2onnx writes Keras' EinsumDense projections.
        "gemm_weight": rng.normal(size=(HIDDEN, IN)) * np.logspace(-3, 1, HIDDEN)[:, None],
        "matmul_weight": rng.normal(size=(HIDDEN, OUT)) * np.logspace(1, -3, OUT)[None, :],
    }


def _model(weights):
    nodes = [
        # tf2onnx's form of the attention projections: no C, beta 0 (onnxruntime leaves such a Gemm fp32).
        helper.make_node("Gemm", ["x", "gemm_weight"], ["hidden"], transB=1, beta=0.0),
        helper.make_node("MatMul", ["hidden", "matmul_weight"], ["out"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, IN])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in weights.items()],
    )
    # IR version 8 (what opset 17 came with): onnx 1.23 writes a newer IR than onnxruntime 1.31 reads.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_int8_weights_have_a_scale_per_output_channel(tmp_path):
    weights = _weights()
    source, target = tmp_path / "model.onnx", tmp_path / "model.int8.onnx"
    onnx.save(_model(weights), str(source))
    graph_conversion.quantize_int8(str(source), str(target))

    quantized = onnx.load(str(target))
    initializers = {t.name: numpy_helper.to_array(t) for t in quantized.graph.initializer}
    matmuls = [node for node in quantized.graph.node if node.op_type == "MatMulInteger"]
    # Both weights quantized: the Gemm rewritten as MatMul + Add first, then each MatMul as MatMulInteger.
    assert len(matmuls) == 2, [node.op_type for node in quantized.graph.node]
    fp32 = [weights["gemm_weight"].T, weights["matmul_weight"]]  # (in, out), as MatMul reads them
    for node, want in zip(matmuls, fp32):
        # MatMulInteger(A, B, a_zero_point, b_zero_point): B's zero point is a scalar per tensor, (N,) per column.
        name, zero_point_name = node.input[1], node.input[3]
        int8, zero_point = initializers[name], initializers[zero_point_name]
        scale = initializers[name.removesuffix("_quantized") + "_scale"]  # onnxruntime's naming of the scale
        assert int8.dtype == np.int8 and int8.shape == want.shape, (name, int8.dtype, int8.shape)
        assert zero_point.shape == scale.shape == (want.shape[1],), (name, zero_point.shape, scale.shape)
        assert not zero_point.any()  # symmetric int8
        # 7-bit weights (reduce_range, chosen on validation; safe from the AVX2 saturation above).
        assert np.abs(int8).max() == LEVELS, (name, np.abs(int8).max())
        # Every channel keeps its own magnitude: within half a step (its largest weight / 64 / 2) of fp32.
        dequantized = (int8.astype(np.float64) - zero_point) * scale
        channel_max = np.abs(want).max(axis=0)
        error = np.abs(dequantized - want).max(axis=0) / channel_max
        assert np.all(error <= 0.5 / LEVELS + 1e-6), (name, error)
        np.testing.assert_allclose(scale, channel_max / LEVELS, rtol=1e-6)

    x = np.random.default_rng(1).normal(size=(3, IN)).astype(np.float32)
    session = ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
    assert session.run(None, {"x": x})[0].shape == (3, OUT)
