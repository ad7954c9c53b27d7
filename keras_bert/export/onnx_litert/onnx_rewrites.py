"""Rewrites of the ONNX graph tf2onnx writes for our models, each exact up to float rounding.

tf2onnx converts TensorFlow's ops one by one, so a Keras `LayerNormalization`
arrives as the twelve elementwise ops of `tf.nn.moments` + rsqrt, TensorFlow's
exact GELU as `Neg -> Mul -> Erf -> Sub`, and an `EinsumDense` projection as
`Gemm`. onnxruntime recognises none of these, which costs it its fused kernels
(measured: the elementwise ops took 30-45% of a mini forward pass) and, for
`Gemm`, int8 (dynamic quantization takes MatMul only). Each function here
matches one pattern exactly — every intermediate read only inside the pattern,
constants of the expected shape — and leaves anything else as it is. New nodes
are named after the tensor they write (unique in a valid graph).

- `fuse_layer_norms`: the moments pattern -> one `LayerNormalization` (a
  standard op since opset 17).
- `gelu_as_erf_plus_one`: `1 - Erf(-x c)` -> `1 + Erf(x / sqrt 2)` (erf is odd),
  the form onnxruntime's GELU fusion looks for.
- `gemms_as_matmuls`: a plain `Gemm` with a weight -> `MatMul` (+ `Add`).
"""

import numpy as np

SQRT_HALF = float(np.sqrt(0.5))
SQRT_TWO_NAME = "keras_bert/gelu_sqrt2"


class _Graph:
    """Consumers and constant values of an ONNX GraphProto's names."""

    def __init__(self, graph):
        from onnx import numpy_helper  # defers onnx (an extra): imported only when exporting

        self.consumers = {}
        for node in graph.node:
            for name in dict.fromkeys(node.input):  # a node reading a name twice (x * x) is one reader
                self.consumers.setdefault(name, []).append(node)
        self.outputs = {item.name for item in graph.output}
        self.constants = {tensor.name: tensor for tensor in graph.initializer}
        self._numpy_helper = numpy_helper

    def value(self, name):
        """The constant's array, or None when `name` is not an initializer."""
        tensor = self.constants.get(name)
        return None if tensor is None else self._numpy_helper.to_array(tensor)

    def only_consumer(self, name, op_type):
        """The single node reading `name` if it has type `op_type` and `name` is not a graph output."""
        readers = self.consumers.get(name, [])
        if len(readers) != 1 or readers[0].op_type != op_type or name in self.outputs:
            return None
        return readers[0]

    def other_input(self, node, name):
        """The input of a two-input node that is not `name` (None if `name` is not one of them)."""
        inputs = list(node.input)
        if len(inputs) != 2 or name not in inputs:
            return None
        return inputs[1] if inputs[0] == name else inputs[0]


def fuse_layer_norms(graph):
    """Replaces each `tf.nn.moments` layer norm over the last axis of a rank-3 tensor with `LayerNormalization`.

    The pattern (x: (batch, length, hidden); gamma, beta: constants (1, 1, hidden)):
    mean = GlobalAveragePool(x); var = GlobalAveragePool((x - mean) * (x - mean));
    scale = Reciprocal(Sqrt(var + eps)) * gamma; out = x * scale + (beta + -mean * scale).
    GlobalAveragePool of a rank-3 tensor averages its last axis. Returns the number fused.
    """
    from onnx import helper, numpy_helper  # defers onnx, as above

    g = _Graph(graph)
    replaced, removed = {}, set()
    for mean in [node for node in graph.node if node.op_type == "GlobalAveragePool"]:
        matched = _match_layer_norm(g, mean)
        if matched is None:
            continue
        x, gamma, beta, epsilon, nodes, last = matched
        hidden = gamma.shape[-1]
        # Named by count, not by node: tf2onnx's node names may be empty.
        scale_name, bias_name = (f"keras_bert/layer_norm_{len(replaced)}/{part}" for part in ("gamma", "beta"))
        graph.initializer.extend([
            numpy_helper.from_array(np.ascontiguousarray(gamma.reshape(hidden)), scale_name),
            numpy_helper.from_array(np.ascontiguousarray(beta.reshape(hidden)), bias_name),
        ])
        replaced[id(last)] = helper.make_node(
            "LayerNormalization", [x, scale_name, bias_name], [last.output[0]], name=f"{last.output[0]}/LayerNormalization",
            axis=-1, epsilon=float(epsilon),
        )
        removed.update(id(node) for node in nodes if node is not last)
    _replace_nodes(graph, replaced, removed)
    _drop_unread_initializers(graph)
    return len(replaced)


def _match_layer_norm(g, mean):
    x = mean.input[0]
    readers = g.consumers.get(mean.output[0], [])
    if mean.output[0] in g.outputs or sorted(n.op_type for n in readers) != ["Neg", "Sub"]:
        return None
    sub = next(n for n in readers if n.op_type == "Sub")
    neg = next(n for n in readers if n.op_type == "Neg")
    if list(sub.input) != [x, mean.output[0]]:
        return None
    square = g.only_consumer(sub.output[0], "Mul")
    if square is None or list(square.input) != [sub.output[0], sub.output[0]]:
        return None
    variance = g.only_consumer(square.output[0], "GlobalAveragePool")
    add_epsilon = variance and g.only_consumer(variance.output[0], "Add")
    epsilon = add_epsilon and g.value(g.other_input(add_epsilon, variance.output[0]))
    if epsilon is None or np.size(epsilon) != 1:
        return None
    sqrt = g.only_consumer(add_epsilon.output[0], "Sqrt")
    reciprocal = sqrt and g.only_consumer(sqrt.output[0], "Reciprocal")
    scale = reciprocal and g.only_consumer(reciprocal.output[0], "Mul")
    gamma = scale and g.value(g.other_input(scale, reciprocal.output[0]))
    # Keras' layer norm broadcasts gamma to x's rank, so (1, 1, hidden) means x is rank 3, where
    # GlobalAveragePool averages the last axis only (over a rank-4 x it would average two).
    if gamma is None or gamma.ndim != 3 or gamma.shape[:2] != (1, 1):
        return None
    scale_readers = g.consumers.get(scale.output[0], [])
    if scale.output[0] in g.outputs or len(scale_readers) != 2 or any(n.op_type != "Mul" for n in scale_readers):
        return None
    shifted_mean = next((n for n in scale_readers if neg.output[0] in n.input), None)
    scaled_x = next((n for n in scale_readers if x in n.input), None)
    if shifted_mean is None or scaled_x is None or shifted_mean is scaled_x:
        return None
    if g.only_consumer(neg.output[0], "Mul") is not shifted_mean:
        return None
    add_beta = g.only_consumer(shifted_mean.output[0], "Add")
    beta = add_beta and g.value(g.other_input(add_beta, shifted_mean.output[0]))
    if beta is None or beta.shape != gamma.shape:
        return None
    last = g.only_consumer(scaled_x.output[0], "Add")
    if last is None or g.only_consumer(add_beta.output[0], "Add") is not last:
        return None
    nodes = [mean, sub, neg, square, variance, add_epsilon, sqrt, reciprocal, scale, shifted_mean, scaled_x, add_beta,
             last]
    return x, gamma, beta, np.asarray(epsilon).reshape(()), nodes, last


def gelu_as_erf_plus_one(graph):
    """Rewrites TensorFlow's exact GELU, `0.5 x (1 - Erf(-x c))`, as `0.5 x (1 + Erf(x / sqrt(2)))`. Returns the count.

    tf2onnx writes `erfc(-x c)` (c = 1/sqrt(2)) as `Neg(x) -> Mul(c) -> Erf -> Sub(1, .)`; the
    `Neg` moves onto the erf's sign (erf is odd), and `* c` becomes `/ sqrt(2)`: onnxruntime
    1.31 fuses `Div(sqrt 2) -> Erf -> Add(1) -> Mul` into one `Gelu` and not the `Mul(c)` form
    (checked on its optimized graph).
    """
    from onnx import helper, numpy_helper  # defers onnx, as above

    g = _Graph(graph)
    replaced, removed = {}, set()
    for neg in [node for node in graph.node if node.op_type == "Neg"]:
        scale = g.only_consumer(neg.output[0], "Mul")
        c = scale and g.value(g.other_input(scale, neg.output[0]))
        erf = scale and g.only_consumer(scale.output[0], "Erf")
        sub = erf and g.only_consumer(erf.output[0], "Sub")
        if c is None or np.size(c) != 1 or sub is None or sub.input[1] != erf.output[0]:
            continue
        one = g.value(sub.input[0])
        if one is None or np.size(one) != 1 or float(np.asarray(one).reshape(())) != 1.0:
            continue
        if abs(float(np.asarray(c).reshape(())) - SQRT_HALF) > 1e-6:
            continue
        if SQRT_TWO_NAME not in g.constants:
            g.constants[SQRT_TWO_NAME] = numpy_helper.from_array(np.array(np.sqrt(2.0), c.dtype), SQRT_TWO_NAME)
            graph.initializer.append(g.constants[SQRT_TWO_NAME])
        positive = f"{scale.output[0]}/over_sqrt2"
        replaced[id(scale)] = helper.make_node("Div", [neg.input[0], SQRT_TWO_NAME], [positive], name=positive)
        replaced[id(erf)] = helper.make_node("Erf", [positive], [erf.output[0]], name=erf.name)
        replaced[id(sub)] = helper.make_node("Add", [erf.output[0], sub.input[0]], [sub.output[0]], name=f"{sub.output[0]}/plus")
        removed.add(id(neg))
    _replace_nodes(graph, replaced, removed)
    _drop_unread_initializers(graph)  # the 1/sqrt(2) constant, now unread
    return len(removed)


def gemms_as_matmuls(graph):
    """Rewrites each `Gemm(A, B, C)` whose B is a weight as `MatMul(A, B') + C` (B' = B transposed if transB).

    Only the plain forms tf2onnx writes are rewritten (alpha 1, A not transposed, B an initializer,
    C absent or with beta 1; the projections come without C and beta 0); any other Gemm is left
    as it is. Returns the number rewritten.
    """
    from onnx import helper, numpy_helper  # defers onnx, as above

    weights = {tensor.name: tensor for tensor in graph.initializer}
    nodes, rewritten = [], 0
    for node in graph.node:
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        has_bias = len(node.input) > 2 and bool(node.input[2])
        plain = (node.op_type == "Gemm" and node.domain in ("", "ai.onnx") and attributes.get("alpha", 1.0) == 1.0
                 and (not has_bias or attributes.get("beta", 1.0) == 1.0) and not attributes.get("transA", 0)
                 and node.input[1] in weights)
        if not plain:
            nodes.append(node)
            continue
        kernel = node.input[1]
        if attributes.get("transB", 0):
            kernel = f"{node.input[1]}/transposed_for_matmul"
            if kernel not in weights:
                values = numpy_helper.to_array(weights[node.input[1]]).T
                weights[kernel] = numpy_helper.from_array(np.ascontiguousarray(values), kernel)
                graph.initializer.append(weights[kernel])
        product = f"{node.output[0]}/matmul_output" if has_bias else node.output[0]
        nodes.append(helper.make_node("MatMul", [node.input[0], kernel], [product], name=f"{node.output[0]}/MatMul"))
        if has_bias:
            nodes.append(helper.make_node("Add", [product, node.input[2]], [node.output[0]], name=f"{node.output[0]}/Add"))
        rewritten += 1
    del graph.node[:]
    graph.node.extend(nodes)
    _drop_unread_initializers(graph)
    return rewritten


def _replace_nodes(graph, replaced, removed):
    """Rebuilds the node list: nodes whose id is in `replaced` swapped in place, those in `removed` dropped.

    A replacement takes its original's place, after every node its inputs come from, so the
    list stays topologically sorted.
    """
    nodes = []
    for node in graph.node:
        if id(node) in removed:
            continue
        nodes.append(replaced.get(id(node), node))
    del graph.node[:]
    graph.node.extend(nodes)


def _drop_unread_initializers(graph):
    read = {name for node in graph.node for name in node.input} | {item.name for item in graph.output}
    kept = [tensor for tensor in graph.initializer if tensor.name in read]
    del graph.initializer[:]
    graph.initializer.extend(kept)
