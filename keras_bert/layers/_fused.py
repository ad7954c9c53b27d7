"""Dense projections, layer norm, GELU and attention without Keras' extra ops, where a backend pays for them.

Keras' `Dense` and `EinsumDense` compute `matmul(x, kernel)` and then add the
bias as a second op. XLA fuses the two on TensorFlow and JAX; eager torch does
not, and profiling the mini encoder (32x128) showed the separate bias adds and
einsum-through-bmm costing our torch forward about 15% against Hugging Face's
`nn.Linear`, which runs one `addmm`. `linear` keeps the Keras layers (their
weights, names, LoRA and checkpoints unchanged) and only changes how they are
applied on torch: one `torch.nn.functional.linear` over the kernel seen as a
matrix.

Anything this shortcut cannot express (a quantized layer, an activation)
goes through the layer's own call, on every backend.

`layer_norm` does the same for `LayerNormalization` in half precision on torch:
Keras casts a bfloat16 / float16 input up to float32 and the result back, two
full-size copies per norm, where torch's kernel already accumulates in float32.

`gelu` is the exact GELU written with erf on TensorFlow and JAX, whose own
exact GELU goes through a slow erfc kernel.

`attention` also takes attention dropout inside torch's fused kernel
(`attention_dropout_fuses`), on a JAX GPU spreads the key mask to the
form cuDNN's fused attention accepts (`_full_query_axis_on_gpu`), and on
TensorFlow and JAX computes long inputs in query chunks (`_in_query_chunks`).

`gather_positions` picks the masked positions' vectors with `torch.gather` on
torch, where Keras' `take_along_axis` broadcasts the indices with concrete
sizes and so pins batch and length when `torch.export` traces the model.

`attention(..., export_form=True)` and `gelu(x, export_form=True)` give the form
that graph converters (tf2onnx, the LiteRT converter) translate well; see
`_additive_mask_attention`. The layers pass it from their `graph_export_form`
attribute, which `keras_bert.layers.graph_export_form(model)` sets.
"""

import math

import keras
from keras import ops

# Keras' op on TensorFlow and on a JAX CPU computes the full (batch, heads, seq_q, seq_k) scores and
# probabilities: at 8,192 tokens and 12 heads 3.2 GB each per layer, which held a ModernBERT-base forward at
# 6-7 GiB on TensorFlow and 11 GiB on JAX against transformers' 1.8 GiB. In chunks of this many queries the
# scores are (batch, heads, 1024, seq_k) at a time; inputs of at most this length are one chunk, as before.
QUERY_CHUNK = 1024

_SQRT_HALF = math.sqrt(0.5)


def linear(layer, x, input_rank=1):
    """`layer(x)` for a built `Dense` or `EinsumDense` whose kernel maps the last
    `input_rank` axes of `x` to the output axes.

    The kernel of shape `in_axes + out_axes` is read as a matrix
    `(prod(in_axes), prod(out_axes))`; the result has `x`'s leading axes
    followed by `out_axes`. That is exactly the two layer kinds used here:
    `Dense` ("...d,de->...e"), the fused query/key/value `EinsumDense`
    ("btd,dpnh->btpnh") and the attention output ("btnh,nhd->btd").
    """
    if (
        keras.backend.backend() != "torch"
        or layer.quantization_mode is not None
        or getattr(layer, "activation", None) not in (None, keras.activations.linear)
    ):
        return layer(x)
    import torch  # only here: the torch backend is the one place this module runs torch ops

    kernel = ops.convert_to_tensor(layer.kernel)  # merges LoRA; autocast to the compute dtype
    in_size = math.prod(kernel.shape[:input_rank])
    out_shape = tuple(kernel.shape[input_rank:])
    matrix = kernel.reshape(in_size, -1)
    bias = None if layer.bias is None else ops.convert_to_tensor(layer.bias).reshape(-1)
    x = ops.convert_to_tensor(x)
    lead = tuple(x.shape[: x.ndim - input_rank])
    # `matrix.t()` is a view: addmm reads the transposed strides, no copy.
    y = torch.nn.functional.linear(x.reshape(*lead, in_size), matrix.t(), bias)
    return y.reshape(*lead, *out_shape)


def gather_positions(sequence_output, positions):
    """`sequence_output[b, positions[b, p], :]`.

    sequence_output: `(batch, seq, hidden)`; positions: int `(batch, preds)`; returns `(batch, preds, hidden)`.

    Negative positions count from the end, as `ops.take_along_axis` counts them.
    """
    positions = ops.cast(positions, "int32")
    if keras.backend.backend() != "torch":
        return ops.take_along_axis(sequence_output, positions[:, :, None], axis=1)
    import torch  # only here: the torch backend is the one place this module runs torch ops

    x = ops.convert_to_tensor(sequence_output)
    index = ops.convert_to_tensor(positions).long()
    index = torch.where(index < 0, index + x.shape[1], index)
    # gather reads the expanded index as a view (no copy) and has a symbolic-shape rule that export keeps.
    return torch.gather(x, 1, index[:, :, None].expand(-1, -1, x.shape[-1]))


def layer_norm(layer, x):
    """`layer(x)` for a built `LayerNormalization` over the last axis.

    Keras computes a half-precision layer norm in float32 for stability: it
    casts the input up and the output back. Profiling the mini encoder
    (32x128) in bfloat16 on torch put those two copies per norm at about a
    sixth of the forward's time; HF's bfloat16 model has none. torch's
    layer-norm kernel reads bfloat16 / float16 input and accumulates its
    mean and variance in float32 itself, with float32 gamma and beta, so on
    torch the input goes in as it is. Same math; the result differs from
    Keras' by at most one rounding of the output.
    """
    axes = layer.axis if isinstance(layer.axis, (list, tuple)) else [layer.axis]
    if (
        keras.backend.backend() != "torch"
        or layer.rms_scaling
        or not (layer.center and layer.scale)
        or list(axes) not in ([-1], [len(x.shape) - 1])
    ):
        return layer(x)
    import torch  # only here: the torch backend is the one place this module runs torch ops

    x = ops.convert_to_tensor(x)
    if x.dtype not in (torch.bfloat16, torch.float16):
        return layer(x)
    # LayerNormalization's variables do not autocast: gamma and beta come in their stored dtype. The CPU
    # kernel takes float32 gamma and beta beside half-precision input; the CUDA kernel refuses mixed
    # dtypes ("expected scalar type BFloat16 but found Float", seen on an H200 with torch 2.11), so there
    # they come in the input's dtype, as in a model cast whole to bfloat16 (HF's `.to(torch.bfloat16)`).
    weight_dtype = x.dtype if x.is_cuda else torch.float32
    gamma = ops.convert_to_tensor(layer.gamma).to(weight_dtype)
    beta = ops.convert_to_tensor(layer.beta).to(weight_dtype)
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), gamma, beta, layer.epsilon)


def gelu(x, export_form=False):
    """The exact GELU, `x * Phi(x)`: `ops.gelu(x, approximate=False)`, written with erf on TensorFlow and JAX.

    Both backends' own exact GELU go through erfc: TensorFlow's `tf.nn.gelu`
    is `0.5 x erfc(-x / sqrt 2)`, and so is `jax.nn.gelu`. erfc is the slow
    kernel on both. TensorFlow on a (32, 128, 1024) tensor: 57 ms in bfloat16
    and 17 ms in float32. The erf form, `0.5 x (1 + erf(x / sqrt 2))`, took
    10 and 9 ms. It is the same function (erfc(-z) = 1 + erf(z)), and it is
    the form torch's kernel computes, so transformers' BERT too. XLA on a CPU
    writes erfc as both of its branches (a polynomial, and exp times a
    rational function) and a select between them. On a (4096, 1024) float32
    tensor it took 9.4-9.8 ms against erf's 3.9-4.3 ms. That one GELU per
    layer was the whole gap between our JAX mini forward (32x128) and
    keras-hub's, which uses the tanh approximation. The erf form differs from
    the float64 GELU by at most 1.1e-6 there (erfc: 3.8e-7). Graph exports
    keep Keras' form (`export_form=True`), which `onnx_rewrites.gelu_as_erf_plus_one`
    and the LiteRT converter already take.
    """
    if keras.backend.backend() not in ("tensorflow", "jax") or export_form:
        return ops.gelu(x, approximate=False)
    x = ops.convert_to_tensor(x)
    return 0.5 * x * (1.0 + ops.erf(x * _SQRT_HALF))  # ops.erf is tf.math.erf / jax.lax.erf here


def attention_dropout_fuses(export_form=False):
    """Whether `attention(..., dropout_rate=r)` can drop attention probabilities inside the fused kernel.

    torch's `scaled_dot_product_attention` takes `dropout_p` (its flash and
    memory-efficient CUDA kernels apply it without writing the probabilities
    out); Keras' op has no dropout, so on TensorFlow and JAX a layer with
    attention dropout must compute the probabilities itself in training.
    """
    return keras.backend.backend() == "torch" and not export_form


def attention(query, key, value, mask=None, dropout_rate=0.0, export_form=False, max_length=None):
    """`ops.dot_product_attention(query, key, value, mask=mask)` for BERT's self-attention.

    query, key, value: `(batch, seq, heads, head_dim)`; mask: bool, broadcastable
    to `(batch, heads, seq_q, seq_k)`, True where a query may attend to a key.
    dropout_rate: dropout on the attention probabilities, only where
    `attention_dropout_fuses()` (callers pass it in training only). It draws
    from torch's global generator, as Keras' unseeded `Dropout` does on torch,
    so `keras.utils.set_random_seed` fixes it the same way.
    export_form: bool. Trace the form graph converters take (`_additive_mask_attention`).
    max_length: None, or the longest input the model can take (see `_in_query_chunks`).

    On torch, Keras' op makes query, key and value contiguous after moving the
    heads axis (three copies per layer) and turns the mask into a float bias;
    `scaled_dot_product_attention` takes the strided views and the bool mask
    as they are. A query with no key left (an example that is all padding)
    gets zeros from torch 2.13's kernels, finite as Keras' op is (which spreads
    it evenly over the keys); its output is never read, and the test suite
    checks it stays finite, since NaN would reach the loss through a zero
    sample weight.
    """
    if dropout_rate and not attention_dropout_fuses(export_form):
        raise ValueError(
            f"attention dropout inside the kernel needs the torch backend. Received: dropout_rate={dropout_rate} "
            f"on {keras.backend.backend()}"
        )
    if export_form:
        return _additive_mask_attention(query, key, value, mask)
    if keras.backend.backend() == "jax":
        import jax  # only here: the JAX backend is the one place this branch runs

        if jax.default_backend() != "cpu":  # on a GPU as before: chunking there is not measured
            return ops.dot_product_attention(query, key, value, mask=_full_query_axis_on_gpu(mask, query))
    if keras.backend.backend() != "torch":
        return _in_query_chunks(
            lambda q, m: ops.dot_product_attention(q, key, value, mask=m), query, mask, max_length
        )
    import torch  # only here: the torch backend is the one place this module runs torch ops

    query, key, value = (ops.convert_to_tensor(t).transpose(1, 2) for t in (query, key, value))
    if mask is not None:
        mask = ops.convert_to_tensor(mask)
    context = torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=mask,
                                                               dropout_p=float(dropout_rate))
    return context.transpose(1, 2)


def _in_query_chunks(attend, query, mask, max_length=None):
    """`attend(query, mask)`, one chunk of at most `QUERY_CHUNK` queries at a time when the queries are longer.

    Each query's softmax runs over all keys whatever the chunk, so the result is the unchunked one (the same
    ops on fewer rows); a mask with a query axis is cut with the queries, a key-only mask is shared.

    A length only known when the graph runs is decided there (`ops.cond`): TensorFlow retraces `predict` for a
    second input length with the length left free, and a served SavedModel takes any length, so on TensorFlow
    the length is usually dynamic. Deciding at trace time kept such graphs unchunked (a ModernBERT-base forward
    at 8,192 tokens still peaked at 6.1 GiB in `predict` after shorter inputs). Elsewhere (a symbolic length
    while JAX infers shapes) a free length stays one call. So does one that `max_length` (a learned position
    table's rows: no longer input gets through the embeddings) keeps within a chunk: BERT's graphs then carry no
    dead loop (six tiny task models' SavedModel exports 7.9 s instead of 9.7).
    """
    length = query.shape[1]
    if isinstance(length, int):
        return attend(query, mask) if length <= QUERY_CHUNK else _query_chunk_loop(attend, query, mask)
    if keras.backend.backend() != "tensorflow" or (max_length is not None and max_length <= QUERY_CHUNK):
        return attend(query, mask)
    return ops.cond(ops.shape(query)[1] > QUERY_CHUNK, lambda: _query_chunk_loop(attend, query, mask),
                    lambda: attend(query, mask))


def _query_chunk_loop(attend, query, mask):
    """`_in_query_chunks`' chunks: equal ones (at most `QUERY_CHUNK` queries, the last padded by fewer rows than
    there are chunks, dropped after) through one `ops.scan` loop, so only one chunk's scores exist at a time.

    The loop, not a Python loop of slices: unrolled, XLA kept several chunks alive on JAX (a ModernBERT-base
    forward at 8,192 tokens peaked at 7.7 GiB against 3.0-3.2 in a loop), and a dynamic length has no Python
    count. Keras' scan is `lax.scan` on JAX and a TensorFlow while loop that runs one iteration at a time.
    """
    per_query = mask is not None and mask.shape[2] != 1
    heads, head_dim = query.shape[2], query.shape[3]
    length = ops.shape(query)[1]  # an int, or a scalar tensor in a TensorFlow graph with a free length
    count = (length + QUERY_CHUNK - 1) // QUERY_CHUNK
    size = (length + count - 1) // count
    extra = count * size - length
    queries = ops.pad(query, [[0, 0], [0, extra], [0, 0], [0, 0]])
    queries = ops.moveaxis(ops.reshape(queries, (-1, count, size, heads, head_dim)), 1, 0)  # (count, batch, size, ...)
    if per_query:  # padded query rows may see every key (their outputs are dropped)
        mask_batch, mask_heads, keys = (ops.shape(mask)[i] for i in (0, 1, 3))
        masks = ops.pad(mask, [[0, 0], [0, 0], [0, extra], [0, 0]], constant_values=True)
        masks = ops.moveaxis(ops.reshape(masks, (mask_batch, mask_heads, count, size, keys)), 2, 0)

    def step(_, index):  # the chunk's index, not the chunks: Keras' TensorFlow scan fails on two `xs` of free length
        context = attend(queries[index], masks[index] if per_query else mask)
        return context, context  # Keras' scan on TensorFlow writes outputs shaped like the carry

    _, context = ops.scan(step, ops.zeros_like(queries[0]), ops.arange(count))
    context = ops.reshape(ops.moveaxis(context, 0, 1), (-1, count * size, heads, head_dim))
    return context[:, :length]


def _full_query_axis_on_gpu(mask, query):
    """On a JAX GPU, a key padding mask `(batch, 1, 1, seq_k)` spread to `(batch, 1, seq_q, seq_k)`.

    Keras' op tries cuDNN's fused attention first on a GPU, and cuDNN takes a
    mask (as a bias) only with the full query axis: with the broadcastable
    one it raises "Bias must have same seq length as QKV, got 1 and 128", and
    Keras logs that traceback and falls back to XLA's unfused attention (seen
    on an H200, jax 0.11.2). Same mask, same result; elsewhere it stays small.
    """
    import jax  # only here: the JAX backend is the one place this function runs

    if mask is None or mask.shape[2] != 1 or jax.default_backend() != "gpu":
        return mask
    return ops.logical_and(mask, ops.ones((1, 1, ops.shape(query)[1], 1), "bool"))


def _additive_mask_attention(query, key, value, mask=None):
    """`attention` with the mask added to the logits as a `(batch, 1, 1 or seq_q, seq_k)` bias.

    Keras' op on TensorFlow masks with `where(mask, logits, -big)` on the full
    `(batch, heads, seq_q, seq_k)` logits and derives the scale from the traced
    shape. tf2onnx writes that `where` as two casts, two multiplies and an add
    of full-size tensors per layer, and the scale as Shape/Cast/Sqrt/Reciprocal:
    on `mini` (32x128) 502 nodes after onnxruntime's optimizations against HF's
    graph's 167. Here the bias is computed on the small mask, added once, and
    the scale is a constant, which onnxruntime folds into the matmul: 249 nodes,
    and against HF's own ONNX graph in the same process (idle, 16 alternating
    rounds) int8 mini went from 0.81x to 1.03x, fp32 mini 0.80x to 0.97x, int8
    base 0.94x to 0.96x. Masked keys get -1e9 either way, so
    every row with a key left is the same softmax; a row with no key left (all
    padding, never read) is softmax(logits) here instead of uniform.
    """
    scale = 1.0 / math.sqrt(query.shape[-1])
    logits = ops.einsum("btnh,bsnh->bnts", query, key) * scale  # (batch, heads, seq_q, seq_k)
    logits = ops.cast(logits, "float32")  # the -1e9 bias and the softmax in float32, as the explicit path
    if mask is not None:
        logits = logits + (1.0 - ops.cast(mask, "float32")) * -1e9
    probs = ops.cast(ops.softmax(logits, axis=-1), query.dtype)
    return ops.einsum("bnts,bsnh->btnh", probs, value)
