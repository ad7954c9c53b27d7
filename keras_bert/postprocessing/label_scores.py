"""Labels, choices and their scores from logits: the softmax, the most probable index and its probability.

One definition, in TensorFlow ops, for the classifier and the multiple-choice
model, run eagerly by the pipelines and traced into the SavedModel's
`serve_text`. Computed in float64, so that the pipelines' Python floats and
the SavedModel's float32 outputs come from the same numbers.
"""

import tensorflow as tf


def label_scores(logits):
    """`(probabilities, best, score)` of logits `(batch_size, num_labels)`.

    Returns:
        float64 probabilities `(batch_size, num_labels)` (softmax over the
        last axis), int64 `best` `(batch_size,)` (the most probable index, the
        first on a tie) and float64 `score` `(batch_size,)` (its probability).
    """
    probabilities = tf.nn.softmax(tf.cast(logits, tf.float64), axis=-1)
    return probabilities, tf.argmax(probabilities, axis=-1), tf.reduce_max(probabilities, axis=-1)
