"""Folding the choices axis of multiple-choice inputs into the batch, and back.

A multiple-choice model encodes every choice as its own sequence: its inputs
`(batch_size, num_choices, length)` go through the backbone as
`(batch_size * num_choices, length)`, and the one score per sequence comes
back as `(batch_size, num_choices)`. `num_choices` may differ between batches.
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_bert")
class FlattenChoices(keras.layers.Layer):
    """Folds the choices axis into the batch axis.

    Call arguments:
        x: tensor of shape `(batch_size, num_choices, length)`.

    Returns:
        The same values, shape `(batch_size * num_choices, length)`.
    """

    def call(self, x):
        return ops.reshape(x, (-1, ops.shape(x)[-1]))

    def compute_output_spec(self, x):
        batch = None if x.shape[0] is None or x.shape[1] is None else x.shape[0] * x.shape[1]
        return keras.KerasTensor((batch, x.shape[-1]), dtype=x.dtype)


@keras.saving.register_keras_serializable(package="keras_bert")
class UnflattenChoices(keras.layers.Layer):
    """Unfolds one score per choice back into `(batch_size, num_choices)`.

    Call arguments:
        scores: tensor of shape `(batch_size * num_choices, 1)`.
        token_ids: the model's rank-3 input, `(batch_size, num_choices, length)`,
            which gives `num_choices`.

    Returns:
        `scores` of shape `(batch_size, num_choices)`.
    """

    def call(self, scores, token_ids):
        return ops.reshape(scores, (-1, ops.shape(token_ids)[1]))

    def compute_output_spec(self, scores, token_ids):
        return keras.KerasTensor((token_ids.shape[0], token_ids.shape[1]), dtype=scores.dtype)
