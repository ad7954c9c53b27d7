"""Integrated gradients and gradient × input on a task model's token embeddings (numpy in and out)."""

import keras
import numpy as np

from keras_bert.explain.gradients import scores_and_gradients


class EmbeddingScores:
    """A target's score as a function of the token embeddings and the other inputs of a batch.

    Args:
        model: a task model (`BertTask.call_with_token_embeddings`).
        target: a `Target` (its `score(outputs) -> (n,)`).

    Call arguments:
        embeddings: float tensor `(n * rows, length, dim)`: `n` copies of an
            input's `rows` sequences (one per choice with a choices axis).
        inputs: dict of int arrays with a batch axis of `n`.
    """

    def __init__(self, model, target):
        self.model = model
        self.target = target
        self.key = target  # equal targets of one model: one compiled program (JAX)

    def __call__(self, embeddings, inputs):
        return self.target.score(self.model.call_with_token_embeddings(inputs, embeddings))


def token_embeddings(model, token_ids):
    """The token table's rows for `token_ids` `(rows, length)`: float32 numpy `(rows, length, dim)`."""
    return np.asarray(keras.ops.convert_to_numpy(model.backbone.token_embedding(token_ids)), dtype="float32")


def _tiled(inputs, copies):
    """`inputs` (batch axis 1) repeated `copies` times along the batch axis."""
    return {name: np.repeat(np.asarray(value), copies, axis=0) for name, value in inputs.items()}


def integrated_gradients(scores, inputs, baseline_ids, alphas, weights, batch_size, compiled=None):
    """Integrated gradients on the straight path from the baseline's token embeddings to the input's.

    The input and the baseline themselves ride along in the batches as two
    more points of weight 0 (their scores, not their gradients, are used),
    and the last batch is filled up with weight-0 points, so every forward
    pass has the same shape (one compiled program on JAX).

    Args:
        scores: an `EmbeddingScores`.
        inputs: the input's int arrays, batch axis 1.
        baseline_ids: int array `(rows, length)`.
        alphas, weights: the quadrature (`integration_steps`).
        batch_size: points per forward and backward pass.
        compiled: the JAX programs to reuse (see `scores_and_gradients`).

    Returns:
        `(attributions, score_input, score_baseline)`: float64 `(rows, length)`
        (the embedding axis summed) and two floats.
    """
    token_ids = np.reshape(inputs["token_ids"], (-1, inputs["token_ids"].shape[-1]))  # (rows, length)
    x, base = token_embeddings(scores.model, token_ids), token_embeddings(scores.model, baseline_ids)
    points = len(alphas) + 2  # the path's points, then the input and the baseline
    passes = -(-points // batch_size)
    size = -(-points // passes)  # as even as the passes allow: 66 points at batch_size 32 are 3 passes of 22
    total = passes * size
    path = np.concatenate([alphas, [1.0, 0.0], np.zeros(total - points)]).astype("float32")
    weights = np.concatenate([weights, np.zeros(total - len(weights))])
    path_gradient = np.zeros(x.shape, dtype="float64")
    ends = np.zeros(total)
    tiled = _tiled(inputs, size)
    for start in range(0, total, size):
        chunk = base[None] + path[start : start + size, None, None, None] * (x - base)[None]  # (n, rows, len, dim)
        for i, exact in ((points - 2, x), (points - 1, base)):
            if start <= i < start + size:
                chunk[i - start] = exact  # the input and the baseline as they are, not through the rounding above
        values, gradients = scores_and_gradients(scores, chunk.reshape((-1,) + x.shape[1:]), tiled, compiled)
        ends[start : start + size] = values
        gradients = gradients.reshape(chunk.shape)
        path_gradient += np.tensordot(weights[start : start + size], gradients, axes=1)
    attributions = ((x - base).astype("float64") * path_gradient).sum(axis=-1)
    return attributions, float(ends[points - 2]), float(ends[points - 1])


def gradient_times_input(scores, inputs, compiled=None):
    """Gradient × input on the token embeddings: `(attributions (rows, length), score_input)`."""
    token_ids = np.reshape(inputs["token_ids"], (-1, inputs["token_ids"].shape[-1]))
    x = token_embeddings(scores.model, token_ids)
    values, gradients = scores_and_gradients(scores, x, _tiled(inputs, 1), compiled)
    return (x.astype("float64") * gradients).sum(axis=-1), float(values[0])
