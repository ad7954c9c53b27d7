"""`predict_in_batches`: what `keras.Model.predict` does for the models that are not Keras models.

`RuntimeModel` (an ONNX / LiteRT graph) and `TracedTorchModel` (a torch
graph) stand in for a Keras model in the text pipelines, which call
`predict(inputs, batch_size)`; both answer with this over their own
`predict_on_batch`.
"""

import numpy as np


def predict_in_batches(predict_on_batch, inputs, batch_size):
    """`predict_on_batch` over slices of `batch_size` rows of `inputs`, the outputs concatenated.

    Args:
        predict_on_batch: a function of one batch (a dict like `inputs`)
            that returns a numpy array or a dict of them, batch first.
        inputs: a dict of arrays (or tensors) with `token_ids`, all of the
            same number of rows.
        batch_size: rows per call.

    Returns:
        One array, or a dict of arrays, with as many rows as `inputs`.

    Raises:
        ValueError: `inputs` has no rows.
    """
    total = len(inputs["token_ids"])
    parts = [
        predict_on_batch({k: v[start : start + batch_size] for k, v in inputs.items()})
        for start in range(0, total, batch_size)
    ]
    if not parts:
        raise ValueError("no rows to predict")
    if isinstance(parts[0], dict):
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return np.concatenate(parts)
