"""BertTask: what every BERT model with a head shares."""

import keras

from keras_bert.models.input_checks import BACKBONE_INPUTS, check_fit_data, check_inputs, check_labels
from keras_bert.models.quantization import quantized_layers, restore_quantization


class BertTask(keras.Model):
    """Base class of the task models (pretrainer, classifiers, ...).

    A task model is a functional model whose body is a `BertBackbone`. This
    class gives them the same input checks as the backbone (so a wrong input
    name, rank, dtype or out-of-range id fails with a clear message), and
    config serialisation that stores the backbone's config, so `.keras` files
    rebuild the same architecture on any backend.

    Subclasses set `input_names` and build their graph in `__init__`, passing
    every extra constructor argument to `get_config` via `_task_config`.
    """

    input_names = BACKBONE_INPUTS
    # A label id that marks positions to leave out of the loss (token classifiers: -100).
    ignored_label = None

    def __call__(self, inputs, *args, **kwargs):
        check_inputs(inputs, self.backbone.get_config(), names=self.input_names, where=self.name)
        return super().__call__(inputs, *args, **kwargs)

    def fit(self, x=None, *args, **kwargs):
        check_fit_data(x, self.backbone.get_config(), self.input_names, self.name)
        self._check_labels(args[0] if args else kwargs.get("y"))
        return super().fit(x, *args, **kwargs)

    def predict(self, x, *args, **kwargs):
        check_fit_data(x, self.backbone.get_config(), self.input_names, self.name)
        return super().predict(x, *args, **kwargs)

    def evaluate(self, x=None, *args, **kwargs):
        check_fit_data(x, self.backbone.get_config(), self.input_names, self.name)
        self._check_labels(args[0] if args else kwargs.get("y"))
        return super().evaluate(x, *args, **kwargs)

    def _check_labels(self, y):
        num_classes = getattr(self, "num_classes", None)
        if y is not None and num_classes is not None:
            check_labels(y, num_classes, self.name, self.ignored_label)

    def compile_from_config(self, config):
        # Our `compile` fills defaults; a saved compile config already holds the
        # resolved optimizer, losses and metrics, so compile with it directly.
        # (Keras skips restoring the compile state of models with a custom
        # `compile` unless this is overridden, losing the optimizer state.)
        config = keras.saving.deserialize_keras_object(config)
        # The saved `jit_compile` is what "auto" resolved to on the saving backend (False for
        # TensorFlow on CPU, for torch): resolve it again here, or a model fine-tuned on
        # TensorFlow would predict eagerly, op by op, on JAX.
        config["jit_compile"] = "auto"
        keras.Model.compile(self, **config)
        if self.built:
            self.optimizer.build(self.trainable_variables)

    def _task_config(self):
        """Constructor arguments other than `backbone`; subclasses extend it."""
        return {}

    def get_config(self):
        return {
            "name": self.name,
            "trainable": self.trainable,
            "backbone": keras.layers.serialize(self.backbone),
            **self._task_config(),
            # The head's quantized layers; the backbone's are in its own config.
            **({"quantized_layers": quantized} if (quantized := quantized_layers(self, exclude=self.backbone)) else {}),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["backbone"] = keras.layers.deserialize(config["backbone"])
        quantized = config.pop("quantized_layers", None)
        model = cls(**config)
        return restore_quantization(model, quantized) if quantized else model
