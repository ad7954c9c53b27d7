"""ElectraDiscriminatorHead through the harness, and against hand-computed logits."""

import keras
import numpy as np
import pytest

from harness import run_layer_test
from keras_bert.layers import ElectraDiscriminatorHead


def test_electra_discriminator_head(tmp_path):
    x = np.random.default_rng(0).normal(size=(2, 5, 8)).astype("float32")
    head = run_layer_test(
        ElectraDiscriminatorHead,
        dict(activation="gelu"),
        {"sequence_output": x},
        expected_output_shape=(2, 5),
        expected_num_trainable_weights=4,
        expected_num_params=8 * 8 + 8 + 8 + 1,
        tmp_path=tmp_path,
    )
    # Dense(hidden) -> exact GELU -> Dense(1), as transformers' ElectraDiscriminatorPredictions.
    from scipy.special import erf  # scipy: only this hand computation needs it

    kernel, bias, out_kernel, out_bias = (keras.ops.convert_to_numpy(w) for w in head.weights)
    h = x @ kernel + bias
    h = h * 0.5 * (1 + erf(h / np.sqrt(2)))
    np.testing.assert_allclose(keras.ops.convert_to_numpy(head(x)), (h @ out_kernel + out_bias)[..., 0], atol=1e-5)
    with pytest.raises(ValueError, match="Received: activation='tanh'"):
        ElectraDiscriminatorHead(activation="tanh")
