"""The gradient of a model's scores with respect to its token embeddings, on every Keras backend.

Keras 3 has no backend-agnostic gradient of an arbitrary function, so this is
the one module that speaks each backend's own: `tf.GradientTape`, `jax.vjp`,
`torch.autograd.grad`. Everything else in `keras_bert.explain` works on numpy
arrays and `keras.ops`.
"""

import keras
import numpy as np


def scores_and_gradients(score_function, embeddings, inputs, compiled=None):
    """Scores and their gradients with respect to the embeddings, for a batch of rows.

    Args:
        score_function: `f(embeddings, inputs) -> scores`: a float tensor
            `(rows, ...)` and a dict of arrays in, a float tensor `(rows,)`
            out, built from Keras layers and `keras.ops`, reading only the
            variables of `score_function.model`. Rows must not interact (no
            batch statistics): the gradient of the scores' sum is then every
            row's own gradient.
        embeddings: float32 numpy array `(rows, ...)`.
        inputs: dict of numpy arrays, the function's other inputs.
        compiled: optional dict where JAX keeps its compiled program per
            `score_function.key` (reused by later calls with equal keys).

    Returns:
        `(scores, gradients)`: float64 numpy arrays `(rows,)` and shaped like
        `embeddings`, where `gradients[i] = d scores[i] / d embeddings[i]`.
    """
    backend = keras.backend.backend()
    if backend == "tensorflow":
        scores, gradients = _tensorflow(score_function, embeddings, inputs)
    elif backend == "jax":
        scores, gradients = _jax(score_function, embeddings, inputs, {} if compiled is None else compiled)
    elif backend == "torch":
        scores, gradients = _torch(score_function, embeddings, inputs)
    else:
        raise ValueError(f"explanations need gradients: run on tensorflow, jax or torch (this is {backend})")
    return np.asarray(scores, dtype="float64"), np.asarray(gradients, dtype="float64")


def _tensorflow(score_function, embeddings, inputs):
    # deferred: this module loads on JAX and torch too, where TensorFlow is not needed (or installed)
    import tensorflow as tf

    x = tf.convert_to_tensor(embeddings)
    with tf.GradientTape() as tape:
        tape.watch(x)
        scores = score_function(x, inputs)
    return scores.numpy(), tape.gradient(scores, x).numpy()  # the tape sums the rows' scores


def _jax(score_function, embeddings, inputs, compiled):
    # deferred: the JAX backend's own differentiation, imported only when it is the backend
    import jax
    import jax.numpy as jnp  # deferred with jax above

    variables = score_function.model.variables
    if score_function.key not in compiled:

        def scores_and_pullback(values, x, arrays):
            # The variables' values are arguments, not constants baked into the program (Keras' stateless calls).
            with keras.StatelessScope(state_mapping=list(zip(variables, values))):
                scores, pullback = jax.vjp(lambda e: score_function(e, arrays), x)
                return scores, pullback(jnp.ones_like(scores))[0]

        # One compiled program per score function and shape: run op by op, JAX compiles every primitive of
        # the forward and backward passes for each new shape (17 s for a tiny model's first text).
        compiled[score_function.key] = jax.jit(scores_and_pullback)
    scores, gradients = compiled[score_function.key]([v.value for v in variables], jnp.asarray(embeddings), inputs)
    return np.asarray(scores), np.asarray(gradients)


def _torch(score_function, embeddings, inputs):
    # deferred: the torch backend's own differentiation, imported only when it is the backend
    import torch

    x = keras.ops.convert_to_tensor(embeddings).detach().requires_grad_(True)  # on Keras' device
    with torch.enable_grad():
        scores = score_function(x, inputs)
        (gradients,) = torch.autograd.grad(scores.sum(), x)
    return scores.detach().cpu().numpy(), gradients.detach().cpu().numpy()
