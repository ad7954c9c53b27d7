"""MaskedAccuracy: token-level accuracy that skips ignored positions."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_bert")
class MaskedAccuracy(keras.metrics.Metric):
    """Accuracy of `argmax(y_pred)` over the positions that count.

    A position counts when its label is not `ignore_class` (-100 marks
    [CLS], [SEP], padding and the non-first wordpieces of a word) and its
    sample weight, if any, is not 0. Keras' `SparseCategoricalAccuracy`
    would count -100 labels as errors.

    Args:
        ignore_class: the label of positions to skip.
        name: metric name.
        dtype: metric dtype.

    Call arguments (`update_state`):
        y_true: int labels of shape `(batch_size, sequence_length)`.
        y_pred: logits or probabilities of shape `(batch_size, sequence_length, num_classes)`.
        sample_weight: optional weights of shape `(batch_size, sequence_length)`.
    """

    def __init__(self, ignore_class=-100, name="accuracy", dtype=None):
        super().__init__(name=name, dtype=dtype)
        self.ignore_class = ignore_class
        self.correct = self.add_variable(shape=(), initializer="zeros", name="correct")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(y_true, "int32")
        if len(y_true.shape) == len(y_pred.shape):
            y_true = ops.squeeze(y_true, axis=-1)
        predicted = ops.cast(ops.argmax(y_pred, axis=-1), "int32")
        weight = ops.cast(ops.not_equal(y_true, self.ignore_class), self.dtype)
        if sample_weight is not None:
            sample_weight = ops.cast(sample_weight, self.dtype)
            if len(sample_weight.shape) > len(weight.shape):
                sample_weight = ops.squeeze(sample_weight, axis=-1)
            weight = weight * ops.broadcast_to(sample_weight, ops.shape(weight))
        correct = ops.cast(ops.equal(y_true, predicted), self.dtype)
        self.correct.assign_add(ops.sum(correct * weight))
        self.count.assign_add(ops.sum(weight))

    def result(self):
        return ops.divide_no_nan(self.correct, self.count)

    def reset_state(self):
        self.correct.assign(0.0)
        self.count.assign(0.0)

    def get_config(self):
        return {**super().get_config(), "ignore_class": self.ignore_class}
