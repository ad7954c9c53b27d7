"""CompiledInferenceSteps: `predict` and `evaluate` through `CompiledForward` on torch with `jit_compile=True`.

A mixin of the task models (`BertTask`) and the backbones (`EncoderBackbone`),
before `keras.Model` in their bases. On TensorFlow and JAX, and on torch
without `jit_compile=True`, every step is Keras' own.
"""

import keras

from keras_bert.torch_training.compiled_forward import CompiledForward


class CompiledInferenceSteps:
    """Keras' torch `predict_step` and `test_step`, with the forward compiled (see `CompiledForward`)."""

    def compile(self, *args, **kwargs):
        super().compile(*args, **kwargs)
        self._compiled_forward = None  # traced again at the next predict or evaluate, if still compiled

    def _should_torch_compile(self):
        # Keras' torch trainer asks this before it `torch.compile`s its steps with `jit_compile=True`. Its
        # torch.compile of the train step measured no faster than eager after 125 s of compiling (issue 48): `fit`
        # runs `CompiledTrainStep` instead (the task models'), `predict` and `evaluate` the `CompiledForward` here.
        return False

    def predict_step(self, *args, **kwargs):
        outputs = self._compiled_forward_outputs(*args)
        return super().predict_step(*args, **kwargs) if outputs is None else outputs

    def test_step(self, *args, **kwargs):
        y_pred = self._compiled_forward_outputs(*args)
        if y_pred is None:
            return super().test_step(*args, **kwargs)
        # Keras' torch `test_step`, with the compiled forward's outputs.
        x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(args[0])
        loss = self._compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight, training=False)
        rows = next(value for value in keras.tree.flatten(x) if value is not None).shape[0]
        self._loss_tracker.update_state(loss, sample_weight=rows)
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def _compiled_forward_outputs(self, *args):
        """The batch's outputs through `CompiledForward` (torch, `jit_compile=True`), or None to run eagerly.

        (JAX's steps take `(state, data)`: two arguments, never compiled here.)
        """
        if keras.backend.backend() != "torch" or self.jit_compile is not True or len(args) != 1:
            return None
        if getattr(self, "_compiled_forward", None) is None:
            self._compiled_forward = CompiledForward(self)
        return self._compiled_forward(keras.utils.unpack_x_y_sample_weight(args[0])[0])
