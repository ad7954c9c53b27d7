"""`FusedAdamWUpdate` updates as `BertAdamW.apply` does, and says when it does not apply."""

import keras
import numpy as np
import pytest

from keras_bert.optimizers import BertAdamW, create_optimizer
from keras_bert.torch_training import FusedAdamWUpdate

pytestmark = pytest.mark.only_backend("torch", reason="torch's fused AdamW kernel; the update of the torch backend")


def variables(seed=0):
    """Four variables placed as in an encoder (their paths give `layer_decay` a depth each)."""
    rng = np.random.default_rng(seed)

    def variable(scope, shape, name):
        with keras.name_scope(scope):
            return keras.Variable(rng.normal(size=shape).astype("float32"), name=name)

    return [
        variable("transformer_layer_0", (6, 4), "kernel"),
        variable("transformer_layer_1", (4,), "bias"),  # no weight decay
        variable("embeddings", (3, 5), "embeddings"),
        variable("head", (5,), "gamma"),  # no weight decay
    ]


def gradients(step, transposed=False):
    import torch

    rng = np.random.default_rng(100 + step)
    grads = [torch.from_numpy(rng.normal(size=shape).astype("float32") * 3) for shape in ((6, 4), (4,), (3, 5), (5,))]
    if transposed:  # what a transposed-layout backward hands over: same values, other strides
        grads[0] = grads[0].t().contiguous().t()
    grads[2] = None if step == 1 else grads[2]  # a variable without a gradient in one step
    return grads


@pytest.mark.parametrize("settings", [
    {},
    {"warmup_steps": 2, "total_steps": 9, "global_clipnorm": 0.5},
    {"gradient_accumulation_steps": 3, "warmup_steps": 2, "total_steps": 9},
    {"global_clipnorm": None, "weight_decay": 0.0},
    {"layer_decay": 0.5, "weight_decay": 0.1, "warmup_steps": 2, "total_steps": 9},
], ids=["default", "schedule_and_clipping", "accumulation", "no_clipping_no_decay", "layer_decay"])
def test_fused_update_is_bert_adamw_apply(settings):
    import torch

    reference, fused = variables(), variables()
    keras_optimizer = create_optimizer(learning_rate=1e-2, **settings)
    fused_optimizer = create_optimizer(learning_rate=1e-2, **settings)
    keras_optimizer.build(reference)
    fused_optimizer.build(fused)
    update = FusedAdamWUpdate.for_optimizer(fused_optimizer, fused)
    assert update is not None
    for step in range(7):
        with torch.no_grad():
            keras_optimizer.apply(gradients(step), reference)
        update(gradients(step, transposed=True))
        for a, b in zip(fused, reference):
            np.testing.assert_allclose(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b), rtol=1e-5,
                                       atol=1e-6, err_msg=f"{a.name} after step {step}")
    assert int(fused_optimizer.iterations) == int(keras_optimizer.iterations)
    for a, b in zip(fused_optimizer.variables, keras_optimizer.variables):
        np.testing.assert_allclose(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b), rtol=1e-5, atol=1e-6,
                                   err_msg=a.path)


@pytest.mark.parametrize("optimizer, reason", [
    (lambda: create_optimizer("lamb"), "not a BertAdamW"),
    (lambda: keras.optimizers.AdamW(1e-3), "not a BertAdamW"),
    (lambda: BertAdamW(1e-3, epsilon_after_bias_correction=False), "epsilon before the bias correction"),
    (lambda: BertAdamW(1e-3, clipnorm=1.0), "Keras-only options"),
])
def test_updates_the_kernel_does_not_compute_are_refused_with_a_reason(optimizer, reason):
    weights = variables()
    optimizer = optimizer()
    optimizer.build(weights)
    assert reason in FusedAdamWUpdate.unsupported_reason(optimizer, weights)
    assert FusedAdamWUpdate.for_optimizer(optimizer, weights) is None
