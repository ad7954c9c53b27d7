"""FusedAdamWUpdate: `BertAdamW`'s update on torch in one fused kernel per parameter group.

Why: a `BertAdamW` step through Keras on torch (global-norm clipping, weight
decay, Adam) walks the weights, gradients and moments a dozen times in
separate `torch._foreach_*` ops and per-variable ops (the norm's squares and
sums, the clipping's products). Measured on the mini classifier (11M
weights, one thread, 2026-11-29): 144 ms per step for `optimizer.apply`,
against 11 ms for the norm plus `torch._fused_adamw_` on the same tensors,
which reads and writes each of them once. torch's fused kernel computes
torch's AdamW, which is `BertAdamW`'s update in its default form
(`epsilon_after_bias_correction=True`: `optimizers.py` derives the two as
equal), so the numbers differ from Keras' by float rounding only.

State stays Keras': the kernel updates the Keras variables' own tensors (the
weights, `optimizer._momentums`, `optimizer._velocities`, the gradient
accumulators) in place and `optimizer.iterations` is advanced here, so
checkpoints, `.keras` files and a later eager step see exactly what Keras'
own update would have left.
"""

import keras
import numpy as np

from keras_bert.optimizers import BertAdamW


class FusedAdamWUpdate:
    """Applies `optimizer`'s update for `variables` as Keras' `optimizer.apply(grads, variables)` does.

    Build it with `FusedAdamWUpdate.for_optimizer`, which returns None (with
    the reason in `FusedAdamWUpdate.unsupported_reason`) where the fused
    kernel would not compute the optimizer's own update; callers then use
    `optimizer.apply`.

    Covered, each as Keras computes it: the learning-rate schedule, decoupled
    weight decay with the optimizer's exclusions (two parameter groups),
    global-norm clipping (`global_clipnorm`, after averaging accumulated
    gradients), and gradient accumulation (`gradient_accumulation_steps`:
    accumulate, and every N-th step update with the mean; the schedule reads
    the count of steps, Adam's bias correction the count of updates).

    Args:
        optimizer: a built `BertAdamW`.
        variables: the trainable Keras variables, in the order gradients come.
    """

    def __init__(self, optimizer, variables):
        import torch  # deferred: only the torch backend builds this class

        self.optimizer = optimizer
        self.variables = list(variables)
        index = [optimizer._get_variable_index(v) for v in self.variables]
        self._params = [v.value for v in self.variables]
        self._momentums = [optimizer._momentums[i].value for i in index]
        self._velocities = [optimizer._velocities[i].value for i in index]
        accumulated = optimizer._accumulated_gradients if optimizer.gradient_accumulation_steps else None
        self._accumulators = None if accumulated is None else [accumulated[i].value for i in index]
        # Keras' own decision per variable (`exclude_from_weight_decay` names and lists).
        self._decays = [bool(optimizer.weight_decay) and optimizer._use_weight_decay(v) for v in self.variables]
        # Each variable's rate factor (`layer_decay`; 1 without): one kernel call per (decay, rate) group.
        rates = optimizer._layer_rates
        self._rates = [1.0] * len(index) if rates is None else [rates[i] for i in index]
        self._step = torch.zeros((), dtype=torch.float32, device=self._params[0].device)

    @staticmethod
    def unsupported_reason(optimizer, variables):
        """Why the fused kernel would not compute `optimizer`'s update of `variables`, or None when it does."""
        if type(optimizer) is not BertAdamW:  # a subclass may change the update; Keras' own AdamW adds epsilon earlier
            return f"the optimizer is a {type(optimizer).__name__}, not a BertAdamW"
        if not optimizer.epsilon_after_bias_correction:
            return "BertAdamW(epsilon_after_bias_correction=False) adds epsilon before the bias correction"
        if optimizer.amsgrad or optimizer.use_ema or optimizer.clipnorm or optimizer.clipvalue:
            return "amsgrad, EMA, `clipnorm` and `clipvalue` are Keras-only options"
        if optimizer.loss_scale_factor is not None:
            return "a `loss_scale_factor` is set"
        if not optimizer.built:
            return "the optimizer is not built"
        for v in variables:
            if v.constraint is not None or getattr(v, "overwrite_with_gradient", False):
                return f"variable {v.path} has a constraint or is overwritten with its gradient"
            if v.dtype != "float32" or not v.value.is_contiguous():
                return f"variable {v.path} is {v.dtype} or not contiguous; the fused update takes contiguous float32"
        return None

    @classmethod
    def for_optimizer(cls, optimizer, variables):
        """A `FusedAdamWUpdate`, or None where `unsupported_reason` gives one."""
        if cls.unsupported_reason(optimizer, variables) is not None:
            return None
        return cls(optimizer, variables)

    def __call__(self, grads):
        """Updates the variables with `grads` (torch tensors, None where a variable got no gradient)."""
        import torch  # deferred: only the torch backend builds this class

        optimizer = self.optimizer
        # Keras counts every step in `_iterations` (the schedule reads it) and, with accumulation, updates in
        # `iterations` (= _iterations // N, what Adam's bias correction reads).
        step = int(optimizer._iterations.value)
        with torch.no_grad():
            present = [i for i, g in enumerate(grads) if g is not None]
            # The fused kernel walks a weight and its gradient as flat memory: their strides must agree.
            grads = [_like(grads[i], self._params[i]) for i in present]
            accumulation = optimizer.gradient_accumulation_steps
            if accumulation:
                accumulators = [self._accumulators[i] for i in present]
                if (step + 1) % accumulation:  # not an update step: accumulate, as Keras does
                    torch._foreach_add_(accumulators, grads)
                    optimizer._iterations.assign_add(1)
                    return
                grads = torch._foreach_div(torch._foreach_add(grads, accumulators), accumulation)
                torch._foreach_zero_(accumulators)
            learning_rate = float(np.asarray(keras.ops.convert_to_numpy(optimizer.learning_rate)))
            updates = step // accumulation if accumulation else step
            self._update(present, grads, self._clip_scale(grads), learning_rate, updates + 1)
        optimizer._iterations.assign_add(1)

    def _clip_scale(self, grads):
        """The `grad_scale` the kernel divides gradients by: 1 / Keras' `clip_by_global_norm` factor, or None."""
        import torch  # deferred: only the torch backend builds this class

        clip = self.optimizer.global_clipnorm
        if not clip:
            return None
        norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
        # Keras: g * clip * min(1 / norm, 1 / clip); the kernel computes g / grad_scale.
        return 1.0 / (clip * torch.clamp(1.0 / norm, max=1.0 / clip))  # NaN stays NaN, as in Keras

    def _update(self, present, grads, grad_scale, learning_rate, step):
        import torch  # deferred: only the torch backend builds this class

        optimizer = self.optimizer
        # The kernel reads `step` as t (it does not advance it): one tensor serves every parameter.
        self._step.fill_(step)
        groups = {}
        for k, i in enumerate(present):
            groups.setdefault((self._decays[i], self._rates[i]), []).append(k)
        for (decay, rate), chosen in groups.items():
            torch._fused_adamw_(
                [self._params[present[k]] for k in chosen],
                [grads[k] for k in chosen],
                [self._momentums[present[k]] for k in chosen],
                [self._velocities[present[k]] for k in chosen],
                [],
                [self._step] * len(chosen),
                lr=learning_rate * rate,
                beta1=float(optimizer.beta_1),
                beta2=float(optimizer.beta_2),
                weight_decay=float(optimizer.weight_decay) if decay else 0.0,
                eps=float(optimizer.epsilon),
                amsgrad=False,
                maximize=False,
                grad_scale=grad_scale,
            )

    def __repr__(self):
        return f"FusedAdamWUpdate({type(self.optimizer).__name__}, {len(self.variables)} variables)"


def _like(grad, param):
    """`grad` laid out as `param` (contiguous) is: a copy only where the strides differ (a transposed view)."""
    return grad if grad.stride() == param.stride() else grad.contiguous()
