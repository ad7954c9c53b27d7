"""CompiledForward: a task model's inference forward on torch, traced once and compiled, for `predict` and `evaluate`.

    model.compile(jit_compile=True)     # a keras_bert task model on KERAS_BACKEND=torch
    model.predict(x)                    # the forward runs as one compiled graph
    model.evaluate(x, y)                # likewise; the loss and metrics are Keras' own, on its outputs

`fit` trains with `CompiledTrainStep`; inference is the same idea without
the gradient: `TorchGraph` (the core of `TracedTorchModel`) exports the
model's `training=False` forward once (dynamic batch and length: one graph
for every batch shape),
float32 linear layers go through oneDNN on a CPU (`onednn_linear`), and
inductor compiles it (`torch.compile`, dynamic shapes). The graph reads the
model's own parameters, so what `fit` changes between epochs is what
`evaluate` sees. Where exporting or compiling fails, inference runs eagerly
from then on, with a warning that says why (`fallback_reason`).
"""

import warnings

import keras

from keras_bert.torch_training.torch_graph import TorchGraph

# The `torch.compile` mode of the inference graph; None runs the exported graph uncompiled (the tests of the
# machinery around it use that: seconds where inductor's C++ takes tens of seconds on two cores).
COMPILE_MODE = "default"


class CompiledForward:
    """The forward `predict_step` and `test_step` call on a torch model compiled with `jit_compile=True`.

    Args:
        model: a keras_bert task model or backbone on the torch backend; its
            `_checked_inputs` checks each batch as a call would.

    Attributes:
        fallback_reason: None while the forward runs compiled; else why it runs eagerly.
        traced: the `TorchGraph`, once the first batch has built it.
    """

    def __init__(self, model):
        self.model = model
        self.traced = None
        self.fallback_reason = None
        if keras.distribution.distribution() is not None:
            self._fall_back("a keras.distribution is set")

    def __call__(self, inputs):
        """The model's `training=False` outputs on `inputs`, or None where the forward runs eagerly instead."""
        if self.fallback_reason is not None:
            return None
        inputs = self.model._checked_inputs(inputs)  # bad ids raise here, as in an eager call
        first = self.traced is None
        try:
            if first:
                self.traced = TorchGraph(self.model, compile_mode=COMPILE_MODE, onednn_linears=True)
            return self.traced(inputs)  # inductor compiles at the first call
        except Exception as error:
            if not first:
                raise
            self.traced = None
            self._fall_back(f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
            return None

    def _fall_back(self, reason):
        self.fallback_reason = reason
        warnings.warn(
            f"{self.model.name}: the compiled torch forward does not apply ({reason}); predict and evaluate run "
            "eagerly, as with jit_compile=False.",
            stacklevel=4,
        )

    def __repr__(self):
        state = "eager: " + self.fallback_reason if self.fallback_reason else ("traced" if self.traced else "not traced")
        return f"CompiledForward({self.model.name!r}, {state})"
