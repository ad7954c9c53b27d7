"""`keras_bert::onednn_linear`: `F.linear`'s values and gradients, eager and under inductor, in the layouts it takes."""

import pytest

from keras_bert.torch_training.onednn_linear import NAME, onednn_available, onednn_linear_op

pytestmark = pytest.mark.only_backend("torch", reason="a torch custom op (oneDNN through torch's mkldnn ops)")


def cases():
    import torch

    torch.manual_seed(0)
    # Keras' (in, out) kernel, which the op sees as weight = kernel.T; and a contiguous (out, in) weight.
    yield "keras kernel, 3-d input, bias", torch.randn(3, 4, 8), torch.randn(8, 5), torch.randn(5)
    yield "contiguous weight, 2-d input, no bias", torch.randn(6, 8), torch.randn(5, 8).t(), None


def linear_and_grads(function, x, kernel, bias, grad):
    import torch

    leaves = [t.clone().requires_grad_() for t in (x, kernel, *([bias] if bias is not None else []))]
    out = function(leaves[0], leaves[1].t(), leaves[2] if bias is not None else None)
    return [out, *torch.autograd.grad(out, leaves, grad)]


@pytest.mark.parametrize("compiler", [None, "inductor"])
def test_values_and_gradients_are_f_linear_s(compiler):
    import torch

    if not onednn_available():
        pytest.skip("this torch build has no oneDNN (the compiled step then keeps aten.linear)")
    onednn_linear_op()
    op = getattr(torch.ops.keras_bert, NAME).default
    if compiler:
        op = torch.compile(op, backend=compiler)
    for name, x, kernel, bias in cases():
        grad = torch.randn(*x.shape[:-1], kernel.shape[1])
        expected = linear_and_grads(torch.nn.functional.linear, x, kernel, bias, grad)
        got = linear_and_grads(op, x, kernel, bias, grad)
        for a, b, what in zip(got, expected, ("output", "input gradient", "kernel gradient", "bias gradient")):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5, msg=f"{name}: {what}")
        if kernel.is_contiguous():  # a Keras kernel's gradient in the kernel's layout: what the fused update reads
            assert got[2].is_contiguous()
