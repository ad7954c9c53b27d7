"""BertMultipleChoice: pick one of several candidate continuations or answers (SWAG, RACE, ...)."""

import keras
import numpy as np
from keras import ops

from keras_bert.layers._utils import check_rate, get_initializer
from keras_bert.models.bert_classifier import fine_tuning_optimizer, pretrained_backbone
from keras_bert.models.bert_task import BertTask
from keras_bert.models.input_checks import _concrete, check_inputs


@keras.saving.register_keras_serializable(package="keras_bert")
class FlattenChoices(keras.layers.Layer):
    """`(batch_size, num_choices, length)` → `(batch_size * num_choices, length)`."""

    def call(self, x):
        return ops.reshape(x, (-1, ops.shape(x)[-1]))

    def compute_output_spec(self, x):
        batch = None if x.shape[0] is None or x.shape[1] is None else x.shape[0] * x.shape[1]
        return keras.KerasTensor((batch, x.shape[-1]), dtype=x.dtype)


@keras.saving.register_keras_serializable(package="keras_bert")
class UnflattenChoices(keras.layers.Layer):
    """Scores `(batch_size * num_choices, 1)` → `(batch_size, num_choices)`, shaped like `token_ids`."""

    def call(self, scores, token_ids):
        return ops.reshape(scores, (-1, ops.shape(token_ids)[1]))

    def compute_output_spec(self, scores, token_ids):
        return keras.KerasTensor((token_ids.shape[0], token_ids.shape[1]), dtype=scores.dtype)


def _flat_stand_in(value):
    """A rank-2 stand-in of a rank-3 input, for the backbone's input checks."""
    concrete = _concrete(value)
    if concrete is not None:
        return concrete.reshape((-1,) + concrete.shape[2:]) if concrete.ndim == 3 else concrete
    if not hasattr(value, "shape"):
        value = np.asarray(value)
    shape = tuple(value.shape)
    if len(shape) != 3:
        return value
    return keras.KerasTensor((None, shape[2]), dtype=keras.backend.standardize_dtype(value.dtype))


@keras.saving.register_keras_serializable(package="keras_bert")
class BertMultipleChoice(BertTask):
    """A `BertBackbone` that scores each of several choices and normalises across them.

    Every choice is its own sequence, `[CLS] context [SEP] question + choice
    [SEP]`; the backbone encodes all of them, a dropout + dense layer turns
    each pooled [CLS] vector into one score, and a softmax across the choices
    of an example gives their probabilities (BERT's SWAG head).

    Inputs (a dict): `token_ids`, `segment_ids`, `padding_mask`, int32 of
    shape `(batch_size, num_choices, sequence_length)` (see
    `BertMultipleChoicePreprocessor`). `num_choices` may differ between batches.

    Outputs: float32 logits of shape `(batch_size, num_choices)`.

    Training data are `(x, y)` with the index of the right choice, int of shape `(batch_size,)`.

    Args:
        backbone: a `keras_bert.BertBackbone`.
        dropout: float. Dropout before the scoring layer (BERT: 0.1).
        kernel_initializer: initializer of the scoring layer.

    Examples:
    ```python
    model = keras_bert.BertMultipleChoice(keras_bert.BertBackbone.from_pretrained(path))
    model.compile()  # AdamW lr 3e-5, cross-entropy across choices, accuracy
    model.fit(train_features.dataset(batch_size=16, shuffle=True), epochs=3)
    ```
    """

    def __init__(self, backbone, dropout=0.1, kernel_initializer="truncated_normal", **kwargs):
        check_rate("dropout", dropout)

        # === Layers === (locals until the model is initialised, for the torch backend)
        flatten = FlattenChoices(name="flatten_choices")
        output_dropout = keras.layers.Dropout(dropout, dtype=backbone.dtype_policy, name="output_dropout")
        output_dense = keras.layers.Dense(
            1, kernel_initializer=get_initializer(kernel_initializer), dtype="float32", name="logits"
        )
        unflatten = UnflattenChoices(dtype="float32", name="unflatten_choices")

        # === Functional graph ===
        inputs = {
            name: keras.Input(shape=(None, None), dtype="int32", name=name)
            for name in ("token_ids", "segment_ids", "padding_mask")
        }
        flat = {name: flatten(value) for name, value in inputs.items()}  # (batch * choices, length)
        pooled = backbone(flat)["pooled_output"]
        scores = output_dense(output_dropout(pooled))  # (batch * choices, 1)
        outputs = unflatten(scores, inputs["token_ids"])  # (batch, choices)
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.backbone = backbone
        self.output_dropout = output_dropout
        self.output_dense = output_dense

        # === Config ===
        self.dropout = dropout
        self.kernel_initializer = get_initializer(kernel_initializer)

    # --- input checks: rank 3 here; values and names as for the backbone.
    def _check(self, x):
        if isinstance(x, dict):
            for name, value in x.items():
                shape = tuple(value.shape) if hasattr(value, "shape") else np.asarray(value).shape
                if name in self.input_names and len(shape) != 3:
                    raise ValueError(
                        f"{self.name}: `{name}` must have rank 3 (batch_size, num_choices, length). "
                        f"Received shape {shape}"
                    )
            x = {name: _flat_stand_in(value) for name, value in x.items()}
        check_inputs(x, self.backbone.get_config(), names=self.input_names, where=self.name)

    def __call__(self, inputs, *args, **kwargs):
        self._check(inputs)
        return keras.Model.__call__(self, inputs, *args, **kwargs)

    def fit(self, x=None, *args, **kwargs):
        if isinstance(x, dict):
            self._check(x)
        return keras.Model.fit(self, x, *args, **kwargs)

    def predict(self, x, *args, **kwargs):
        if isinstance(x, dict):
            self._check(x)
        return keras.Model.predict(self, x, *args, **kwargs)

    def evaluate(self, x=None, *args, **kwargs):
        if isinstance(x, dict):
            self._check(x)
        return keras.Model.evaluate(self, x, *args, **kwargs)

    def compile(self, optimizer="auto", loss="auto", metrics="auto", **kwargs):
        """Compiles with BERT's fine-tuning defaults.

        Args:
            optimizer: "auto" is AdamW at lr 3e-5 (see `BertClassifier.compile`).
            loss: "auto" is cross-entropy of the softmax across choices.
            metrics: "auto" is accuracy.
        """
        if optimizer == "auto":
            optimizer = fine_tuning_optimizer()
        if loss == "auto":
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        if metrics == "auto":
            metrics = [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
        super().compile(optimizer=optimizer, loss=loss, metrics=metrics, **kwargs)

    def _task_config(self):
        return {"dropout": self.dropout, "kernel_initializer": keras.initializers.serialize(self.kernel_initializer)}

    @classmethod
    def from_pretrained(cls, path, backbone_kwargs=None, **kwargs):
        """A multiple-choice model on a pretrained backbone; the scoring layer starts random.

        Args:
            path: any checkpoint `BertBackbone.from_pretrained` reads.
            backbone_kwargs: dict of backbone arguments that keep the weights' shapes.
            **kwargs: the other constructor arguments.
        """
        return cls(pretrained_backbone(path, backbone_kwargs), **kwargs)
