"""The token-id graph of a keras_bert model, converted to ONNX (tf2onnx) or LiteRT (TFLite).

TensorFlow backend only (`export_onnx` / `export_litert` run this in a
TensorFlow child process when the caller runs JAX or torch). The graph is the
forward pass of the model on int32 `token_ids`, `segment_ids` and
`padding_mask` of shape `(batch, length)` (`(batch, num_choices, length)` for
multiple choice); its outputs are the model's own, named by `output_names`.

- ONNX: dynamic batch and length, opset `DEFAULT_OPSET`; TensorFlow's exact
  GELU uses `Erfc`, which tf2onnx has no handler for: `_erfc_handler` writes
  it as `1 - Erf(x)` (ONNX has `Erf` since opset 9). Dynamic int8 is
  onnxruntime's `quantize_dynamic` (int8 weights of every weight MatMul with a
  scale per output channel, activations quantized per call).
  The weights enter tf2onnx as graph *inputs*, not frozen constants, and
  become initializers afterwards (`_weights_to_initializers`). Frozen, every
  freezing, grappler and optimizer pass copied all of them: a base model
  (440 MB of weights) grew past 24 GB resident and then failed protobuf's
  2 GB serialisation; as inputs it converts at 3 GB peak, mini at 1.1 GB
  instead of 3.9. onnxruntime's basic (provider-independent) constant folding
  then folds the transposes and reshapes tf2onnx leaves on the weights, so
  MatMul reads its weight directly (what int8 quantization looks for) and the
  file computes exactly what the frozen conversion wrote. Last, `onnx_rewrites`
  turns TensorFlow's layer norms into `LayerNormalization` and its GELU into
  the form onnxruntime fuses into one `Gelu` node.
- LiteRT: the variables are frozen to constants (TFLiteConverter otherwise
  keeps them as uninitialised resource variables, and the interpreter returns
  NaN); the batch is dynamic, the length fixed (TFLite's shape signature).
"""

import os

import keras
import numpy as np
import tensorflow as tf

from keras_bert.export.onnx_litert import onnx_rewrites
from keras_bert.layers.graph_export_form import graph_export_form
from keras_bert.models.bert_task import inference_scope_of

DEFAULT_OPSET = 17
INPUT_NAMES = ("token_ids", "segment_ids", "padding_mask")
WEIGHT_INPUT_PREFIX = "keras_bert_weight_"
# One ONNX file is one protobuf message, at most 2 GiB; a little room for the graph itself.
MAX_ONNX_WEIGHT_BYTES = 2**31 - 2**26


def output_names(model, task):
    """The graph's output names: the model's dict keys (sorted), or one name for a single tensor."""
    outputs = model.output
    if isinstance(outputs, dict):
        return sorted(outputs)
    return ["embeddings" if task == "text_embedder" else "logits"]


def _token_id_signature(task, sequence_length=None):
    """The three int32 token-id inputs, `(batch, length)` or `(batch, num_choices, length)`."""
    shape = [None, None, sequence_length] if task == "multiple_choice" else [None, sequence_length]
    return [tf.TensorSpec(shape, tf.int32, name=name) for name in INPUT_NAMES]


def _named(outputs, names):
    """The model's outputs as a dict keyed by the graph's output names."""
    if isinstance(outputs, dict):
        return {name: outputs[name] for name in names}
    return {names[0]: outputs}


def _model_inputs(model, token_ids, segment_ids, padding_mask):
    """The graph's inputs as the dict `model` takes: only the names its functional input has.

    Every graph takes the three BERT inputs, so one runtime feeds any family;
    a backbone without segment embeddings (ModernBERT, DistilBERT) must not
    receive `segment_ids`: `stateless_call` bypasses `BertTask.__call__`, which
    drops them, and a functional model given a dict with an extra key matches
    its inputs by flattened position (sorted keys), so ModernBERT read
    `segment_ids` as its token ids (logits 0.18 off on a tiny model, no error).
    """
    inputs = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
    expected = model.input
    return {name: inputs[name] for name in expected} if isinstance(expected, dict) else inputs


def _token_id_function(model, task, sequence_length=None):
    """`(tf.function, input_signature, names)`: the forward pass returning a dict keyed by `names`."""
    signature = _token_id_signature(task, sequence_length)
    names = output_names(model, task)

    @tf.function(input_signature=signature)
    def forward(token_ids, segment_ids, padding_mask):
        outputs = model(_model_inputs(model, token_ids, segment_ids, padding_mask), training=False)
        return _named(outputs, names)

    return forward, signature, names


def _erfc_handler(ctx, node, name, args):
    """tf2onnx handler: `Erfc(x)` as `1 - Erf(x)` (exact GELU; tf2onnx maps no Erfc)."""
    from tf2onnx import utils  # defers tf2onnx: only a conversion needs it

    erf = ctx.make_node("Erf", [node.input[0]], op_name_scope=node.name)
    dtype = utils.map_onnx_to_numpy_type(ctx.get_dtype(node.input[0]))
    one = ctx.make_const(utils.make_name(f"{node.name}_one"), np.array(1, dtype))
    node.type = "Sub"
    ctx.replace_inputs(node, [one.output[0], erf.output[0]])


def to_onnx(model, task, path, opset=DEFAULT_OPSET):
    """Writes the token-id graph of `model` to `path` (.onnx); returns the output names.

    Raises:
        ValueError: the weights exceed what one ONNX file holds (protobuf's 2 GB).
    """
    import onnxruntime  # defers onnxruntime (an extra): imported only when converting
    import tf2onnx  # defers tf2onnx (an extra), as above

    weight_bytes = sum(int(np.prod(v.shape)) * tf.as_dtype(v.dtype).size for v in model.weights)
    if weight_bytes > MAX_ONNX_WEIGHT_BYTES:
        raise ValueError(
            f"the model's weights take {weight_bytes / 2**30:.2f} GiB; one ONNX file holds under 2 GiB "
            "(protobuf's limit), so this model cannot be exported to ONNX as one file"
        )
    forward, signature, names, weights = _stateless_token_id_function(model, task)
    # Traced in the scope the model's own predict runs in.
    with graph_export_form(model), inference_scope_of(model):  # from_function traces `forward`
        proto, _ = tf2onnx.convert.from_function(
            forward, input_signature=signature, opset=opset, custom_op_handlers={"Erfc": (_erfc_handler, [])},
        )
    _weights_to_initializers(proto.graph, weights)
    unfolded = path + ".unfolded"
    with open(unfolded, "wb") as f:
        f.write(proto.SerializeToString())
    del proto
    try:
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = path
        options.log_severity_level = 3  # its "removing unused initializer" notices are expected
        onnxruntime.InferenceSession(unfolded, options, providers=["CPUExecutionProvider"])
    finally:
        os.remove(unfolded)
    _finish(path)
    return names


def _finish(path):
    """Fuses what onnxruntime cannot (`onnx_rewrites`) and drops the opset imports onnxruntime adds that no node uses."""
    import onnx  # defers onnx (an extra), as above

    proto = onnx.load(path)
    onnx_rewrites.fuse_layer_norms(proto.graph)
    onnx_rewrites.gelu_as_erf_plus_one(proto.graph)
    used = {node.domain for node in proto.graph.node} | {""}
    kept = [opset for opset in proto.opset_import if opset.domain in used]
    del proto.opset_import[:]
    proto.opset_import.extend(kept)
    onnx.save(proto, path)


def _stateless_token_id_function(model, task):
    """`(tf.function, input_signature, names, weights)`: the forward pass with every weight as an input.

    The signature is the three token-id inputs followed by one input per
    variable of `weights` (named `WEIGHT_INPUT_PREFIX` + index); the function
    runs `model.stateless_call` on them, so the traced graph holds no variable.
    """
    trainable, non_trainable = list(model.trainable_variables), list(model.non_trainable_variables)
    weights = trainable + non_trainable
    signature = _token_id_signature(task) + [
        tf.TensorSpec(w.shape, w.dtype, name=f"{WEIGHT_INPUT_PREFIX}{i}") for i, w in enumerate(weights)
    ]
    names = output_names(model, task)

    @tf.function(input_signature=signature)
    def forward(token_ids, segment_ids, padding_mask, *values):
        inputs = _model_inputs(model, token_ids, segment_ids, padding_mask)
        outputs, _ = model.stateless_call(
            list(values[: len(trainable)]), list(values[len(trainable):]), inputs, training=False
        )
        return _named(outputs, names)

    return forward, signature, names, weights


def _weights_to_initializers(graph, weights):
    """Turns the weight inputs of a converted graph into initializers holding the weights' values.

    Weights the graph does not read (dropout's seed state) are dropped. The
    initializers are named by the variables' paths, so a reader of the file
    sees `transformer_layer_0/self_attention/qkv/kernel`, not an index.
    """
    from onnx import numpy_helper  # defers onnx (an extra), as above

    by_input = {f"{WEIGHT_INPUT_PREFIX}{i}": w for i, w in enumerate(weights)}
    read = {name for node in graph.node for name in node.input}
    paths = [w.path for w in weights]
    readable = len(set(paths)) == len(paths)  # paths are unique in a built model; the index if not
    renamed = {}
    for item in graph.input:
        if item.name in by_input and item.name in read:
            variable = by_input[item.name]
            renamed[item.name] = variable.path if readable else item.name
            graph.initializer.append(numpy_helper.from_array(np.asarray(keras.ops.convert_to_numpy(variable.value)),
                                                             renamed[item.name]))
    kept = [item for item in graph.input if item.name not in by_input]
    del graph.input[:]
    graph.input.extend(kept)
    for node in graph.node:
        for k, name in enumerate(node.input):
            if name in renamed:
                node.input[k] = renamed[name]


def quantize_int8(source, target):
    """Dynamic int8 quantization of an ONNX file (weights int8 per output channel, activations at run time).

    Per-channel weight scales, not one per tensor, with 7-bit weights (`reduce_range`): chosen on
    the validation sentences of the movie-review split (all-MiniLM-L6-v2 fine-tuned, fp32 0.8620;
    2026-11-29): per tensor 0.8450, per channel 0.8535, per channel with reduce_range 0.8554, and its
    test accuracy 0.8472 against fp32's 0.8463 (docs/results/studies/onnx_int8_settings.md). The
    validation margin is two sentences; reduce_range is also what onnxruntime advises for CPUs
    without VNNI (AVX2), where u8 x s8 products saturate 16-bit accumulators.

    onnxruntime's dynamic quantization takes MatMul, not Gemm, and tf2onnx writes the
    attention's QKV and output projections (Keras `EinsumDense`) as Gemm: they are rewritten
    as MatMul + Add first (`onnx_rewrites.gemms_as_matmuls`), or half of each block's weights stay fp32.
    """
    import onnx  # defers onnx (an extra): imported only when quantizing
    from onnxruntime.quantization import QuantType, quantize_dynamic  # defers onnxruntime, as above

    proto = onnx.load(source)
    onnx_rewrites.gemms_as_matmuls(proto.graph)
    staged = target + ".matmul.onnx"
    onnx.save(proto, staged)
    del proto
    try:
        quantize_dynamic(staged, target, weight_type=QuantType.QInt8, per_channel=True, reduce_range=True)
    finally:
        os.remove(staged)


def to_litert(model, task, path, sequence_length):
    """Writes the token-id graph of `model` as a LiteRT (.tflite) file with a fixed length; returns the output names.

    The outputs of the file are `output_0`, `output_1`, ... in the order of the returned names.
    """
    # defers the private TF module to the conversion that needs it (freezing variables to constants)
    from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

    forward, _, names = _token_id_function(model, task, sequence_length)

    @tf.function(input_signature=forward.input_signature)
    def as_list(token_ids, segment_ids, padding_mask):
        outputs = forward(token_ids, segment_ids, padding_mask)
        return [outputs[name] for name in names]

    with graph_export_form(model), inference_scope_of(model):  # as in `to_onnx`
        frozen = convert_variables_to_constants_v2(as_list.get_concrete_function())
    # An empty trackable object: the frozen function holds no variables, and passing one keeps the signature.
    converter = tf.lite.TFLiteConverter.from_concrete_functions([frozen], tf.Module())
    with open(path, "wb") as f:
        f.write(converter.convert())
    return names
