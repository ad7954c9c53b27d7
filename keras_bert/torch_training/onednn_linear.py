"""float32 linear layers through oneDNN on a CPU, forward and backward, for the compiled train step.

Why: torch's CPU `addmm` / `mm` call MKL's sgemm, and on this AMD EPYC (Zen 5,
AVX-512) MKL runs at about half of what oneDNN's sgemm does on the same
shapes. Measured (one thread, 2026-11-29, `torch.ops.mkldnn._linear_pointwise`
against `F.linear` / `@`, GFLOP/s): base's feed-forward 1024x768x3072 forward
182 vs 97, input gradient 239 vs 109, weight gradient 208 vs 106; mini's
2048x256x1024 122 vs 74. Linear layers are about 97% of a BERT training
step's FLOPs. Both are exact float32 (relative error against float64 on a
1024x768x3072 product: oneDNN 3.7e-7, MKL 2.5e-7); only the order of the sums
differs.

`rewrite_linears` swaps the float32 CPU `aten.linear` nodes of the exported
training graph for `keras_bert::onednn_linear`, a custom op whose backward
(input and weight gradients) runs through oneDNN too. inductor calls it as an
external kernel, as it calls `aten.mm`.
"""

from typing import Optional

from keras_bert.torch_training._graph_edits import finish_rewrite, swap_call

# Part of the ops' names: inductor's on-disk cache keys a compiled graph by the ops it calls, not by their
# Python bodies, so a change to what an op computes or to its output layout must come with a new version.
VERSION = 1
NAME = f"onednn_linear_v{VERSION}"
_OP = None


def onednn_linear_op():
    """The `keras_bert::onednn_linear_v1(x, weight, bias)` op (registered on first use): `F.linear` through oneDNN.

    x: float32 `(..., in)`; weight: `(out, in)`, any strides (Keras' kernel
    seen transposed); bias: `(out,)` or None. Returns `(..., out)`.
    """
    global _OP
    if _OP is not None:
        return _OP
    import torch  # deferred: the op exists only on the torch backend

    pointwise = torch.ops.mkldnn._linear_pointwise

    # `Optional[...]`: torch's schema reader logs a complaint about `torch.Tensor | None` (torch 2.13).
    @torch.library.custom_op(f"keras_bert::{NAME}", mutates_args=())
    def onednn_linear(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor]) -> torch.Tensor:  # noqa
        return pointwise(x, weight, bias, "none", [], "")

    @onednn_linear.register_fake
    def _(x, weight, bias):
        return x.new_empty((*x.shape[:-1], weight.shape[0]))

    @torch.library.custom_op(f"keras_bert::{NAME}_backward", mutates_args=())
    def onednn_linear_backward(
        grad: torch.Tensor, x: torch.Tensor, weight: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        grad_2d = grad.reshape(-1, grad.shape[-1])  # (rows, out)
        x_2d = x.reshape(-1, x.shape[-1])  # (rows, in)
        # pointwise(a, b) = a @ b.T: the input gradient grad @ weight, the weight gradient grad.T @ x.
        grad_x = pointwise(grad_2d, weight.t(), None, "none", [], "").reshape(x.shape)
        # x.T @ grad, (in, out), returned seen as (out, in): Keras' weight is its kernel (in, out) transposed, so
        # the kernel's gradient comes out contiguous, as the optimizer reads it. One layout whatever the input
        # strides: inductor checks the outputs' strides against the fake ones.
        return grad_x, pointwise(x_2d.t(), grad_2d.t(), None, "none", [], "").t()

    @onednn_linear_backward.register_fake
    def _(grad, x, weight):
        return x.new_empty(x.shape), weight.new_empty(weight.shape[::-1]).t()  # the layouts the kernels return

    def setup_context(ctx, inputs, output):
        x, weight, bias = inputs
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None

    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        grad_x, grad_weight = onednn_linear_backward(grad, x, weight)
        # The bias gradient is a plain sum over the rows: inductor fuses it with what produced `grad`.
        grad_bias = grad.reshape(-1, grad.shape[-1]).sum(0) if ctx.has_bias else None
        return grad_x, grad_weight, grad_bias

    onednn_linear.register_autograd(backward, setup_context=setup_context)
    _OP = onednn_linear
    return _OP


def onednn_available():
    """Whether this torch build has oneDNN (the op falls back to nothing: the rewrite is skipped without it)."""
    import torch  # deferred: the op exists only on the torch backend

    return torch.backends.mkldnn.is_available() and hasattr(torch.ops.mkldnn, "_linear_pointwise")


def rewrite_linears(graph_module):
    """Swaps float32 CPU `aten.linear` nodes of `graph_module` for `keras_bert::onednn_linear`.

    Returns:
        The number of nodes replaced (the graph module is changed in place and recompiled).
    """
    import torch  # deferred: the op exists only on the torch backend

    if not onednn_available():
        return 0
    graph = graph_module.graph
    replaced = 0
    for node in list(graph.nodes):
        if node.op != "call_function" or node.target is not torch.ops.aten.linear.default:
            continue
        value = node.meta.get("val")
        if value is None or value.dtype != torch.float32 or value.device.type != "cpu":
            continue  # half precision already reaches oneDNN through aten; a GPU has its own GEMMs
        x, weight, *rest = node.args
        bias = rest[0] if rest else node.kwargs.get("bias")
        onednn_linear_op()  # registers it
        op = getattr(torch.ops.keras_bert, NAME).default
        swap_call(node, op, (x, weight, bias))
        replaced += 1
    return finish_rewrite(graph_module, replaced)

