"""The ONNX rewrites of the export: each pattern is rewritten to the same numbers, anything else is left alone.

Small graphs written with `onnx.helper` in the exact shape tf2onnx gives our models (the export tests
check the rewrites on real exported models, within 1e-4 of Keras, on every backend).
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from keras_bert.export.onnx_litert import onnx_rewrites

pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="ONNX graph rewriting and onnxruntime only: nothing here depends on the Keras backend"
)

HIDDEN = 8


def _model(nodes, initializers, output="out", shape=(2, 3, HIDDEN)):
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in initializers.items()],
    )
    # IR version 8 (what opset 17 came with): onnx 1.23 writes a newer IR than onnxruntime 1.31 reads.
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _run(model, x):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _moments_layer_norm(extra_reader_of_mean=False):
    """TensorFlow's layer norm as tf2onnx writes it (see `onnx_rewrites.fuse_layer_norms`)."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("GlobalAveragePool", ["x"], ["mean"]),
        helper.make_node("Sub", ["x", "mean"], ["diff"]),
        helper.make_node("Mul", ["diff", "diff"], ["square"]),
        helper.make_node("GlobalAveragePool", ["square"], ["variance"]),
        helper.make_node("Add", ["variance", "epsilon"], ["shifted"]),
        helper.make_node("Sqrt", ["shifted"], ["root"]),
        helper.make_node("Reciprocal", ["root"], ["inverse"]),
        helper.make_node("Mul", ["inverse", "gamma"], ["scale"]),
        helper.make_node("Neg", ["mean"], ["negative_mean"]),
        helper.make_node("Mul", ["negative_mean", "scale"], ["mean_scaled"]),
        helper.make_node("Add", ["mean_scaled", "beta"], ["shift"]),
        helper.make_node("Mul", ["x", "scale"], ["x_scaled"]),
        helper.make_node("Add", ["x_scaled", "shift"], ["normalized"]),
    ]
    if extra_reader_of_mean:  # the mean is also an input elsewhere: fusing would lose it
        nodes += [helper.make_node("Add", ["normalized", "mean"], ["out"])]
    else:
        nodes += [helper.make_node("Identity", ["normalized"], ["out"])]
    initializers = {"epsilon": np.array(1e-12), "gamma": 1 + rng.normal(size=(1, 1, HIDDEN)),
                    "beta": rng.normal(size=(1, 1, HIDDEN))}
    return _model(nodes, initializers)


def test_moments_layer_norm_becomes_one_layer_normalization_with_the_same_outputs():
    x = np.random.default_rng(1).normal(size=(2, 3, HIDDEN)).astype(np.float32) * 3 + 1
    model = _moments_layer_norm()
    expected = _run(model, x)
    assert onnx_rewrites.fuse_layer_norms(model.graph) == 1
    assert [n.op_type for n in model.graph.node] == ["LayerNormalization", "Identity"]
    assert {t.name for t in model.graph.initializer} == {"keras_bert/layer_norm_0/gamma", "keras_bert/layer_norm_0/beta"}
    np.testing.assert_allclose(_run(model, x), expected, atol=1e-5)
    reference = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-12)
    gamma = numpy_helper.to_array(next(t for t in model.graph.initializer if t.name.endswith("gamma")))
    beta = numpy_helper.to_array(next(t for t in model.graph.initializer if t.name.endswith("beta")))
    np.testing.assert_allclose(_run(model, x), reference * gamma + beta, atol=1e-5)


def test_a_layer_norm_whose_mean_is_read_elsewhere_is_left_alone():
    model = _moments_layer_norm(extra_reader_of_mean=True)
    before = [n.op_type for n in model.graph.node]
    assert onnx_rewrites.fuse_layer_norms(model.graph) == 0
    assert [n.op_type for n in model.graph.node] == before


def _tf_gelu(c=float(np.sqrt(0.5))):
    """TensorFlow's exact GELU as tf2onnx writes it: 0.5 x erfc(-x c), erfc as 1 - Erf."""
    nodes = [
        helper.make_node("Mul", ["half", "x"], ["half_x"]),
        helper.make_node("Neg", ["x"], ["negative_x"]),
        helper.make_node("Mul", ["negative_x", "c"], ["scaled"]),
        helper.make_node("Erf", ["scaled"], ["erf"]),
        helper.make_node("Sub", ["one", "erf"], ["erfc"]),
        helper.make_node("Mul", ["half_x", "erfc"], ["out"]),
    ]
    return _model(nodes, {"half": np.array(0.5), "c": np.array(c), "one": np.array(1.0)})


def test_gelu_is_rewritten_into_the_form_onnxruntime_fuses(tmp_path):
    import math

    x = np.random.default_rng(2).normal(size=(2, 3, HIDDEN)).astype(np.float32) * 2
    model = _tf_gelu()
    expected = _run(model, x)
    assert onnx_rewrites.gelu_as_erf_plus_one(model.graph) == 1
    ops = [n.op_type for n in model.graph.node]
    assert "Neg" not in ops and "Sub" not in ops and "Div" in ops, ops
    np.testing.assert_allclose(_run(model, x), expected, atol=1e-6)
    exact = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    np.testing.assert_allclose(_run(model, x), exact, atol=1e-6)
    # onnxruntime's own optimizer now turns it into one Gelu node.
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    assert "Gelu" in [n.op_type for n in onnx.load(options.optimized_model_filepath).graph.node]


def test_an_erf_that_is_not_gelu_is_left_alone():
    model = _tf_gelu(c=0.5)  # erfc(-x/2): not the GELU constant
    assert onnx_rewrites.gelu_as_erf_plus_one(model.graph) == 0
    assert "Neg" in [n.op_type for n in model.graph.node]


def test_gemm_with_a_transposed_weight_becomes_matmul_with_the_same_outputs():
    rng = np.random.default_rng(3)
    weight, bias = rng.normal(size=(5, HIDDEN)), rng.normal(size=(4,))  # weight (out, in): transB
    nodes = [helper.make_node("Gemm", ["x", "w"], ["projected"], transB=1, beta=0.0),
             helper.make_node("Gemm", ["projected", "w2", "b"], ["out"])]
    model = _model(nodes, {"w": weight, "w2": rng.normal(size=(5, 4)), "b": bias}, shape=(6, HIDDEN))
    x = rng.normal(size=(6, HIDDEN)).astype(np.float32)
    expected = _run(model, x)
    assert onnx_rewrites.gemms_as_matmuls(model.graph) == 2
    assert [n.op_type for n in model.graph.node] == ["MatMul", "MatMul", "Add"]
    assert "w" not in {t.name for t in model.graph.initializer}  # only its transposed copy is kept
    np.testing.assert_allclose(_run(model, x), expected, atol=1e-5)
