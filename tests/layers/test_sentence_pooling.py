"""SentencePooling: the layer contract, and every mode against a numpy computation."""

import keras
import numpy as np
import pytest

from harness import run_layer_test
from keras_bert.layers import SentencePooling


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    sequence_output = rng.normal(size=(4, 6, 8)).astype("float32")
    padding_mask = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0]], "int32")
    return {"sequence_output": sequence_output, "padding_mask": padding_mask}


def _numpy_pooling(x, mask, mode, normalize):
    rows = []
    for vectors, row_mask in zip(x.astype("float64"), mask.astype(bool)):
        real = vectors[row_mask]
        if mode == "cls":
            pooled = real[0]
        elif mode == "max":
            pooled = real.max(axis=0)
        elif mode == "mean":
            pooled = real.mean(axis=0)
        else:  # mean_sqrt_len_tokens
            pooled = real.sum(axis=0) / np.sqrt(len(real))
        rows.append(pooled / np.linalg.norm(pooled) if normalize else pooled)
    return np.stack(rows)


def test_layer_contract(tmp_path):
    run_layer_test(
        SentencePooling, {"mode": "mean", "normalize": True}, _inputs(), expected_output_shape=(4, 8),
        expected_num_trainable_weights=0, expected_num_params=0, tmp_path=tmp_path,
    )


@pytest.mark.parametrize("mode", SentencePooling.MODES)
@pytest.mark.parametrize("normalize", [False, True])
def test_each_mode_matches_numpy(mode, normalize):
    inputs = _inputs(seed=1)
    # Padded positions hold large values: a mode that reads them would be far off.
    inputs["sequence_output"][inputs["padding_mask"] == 0] = 50.0
    out = keras.ops.convert_to_numpy(SentencePooling(mode, normalize)(**inputs))
    expected = _numpy_pooling(inputs["sequence_output"], inputs["padding_mask"], mode, normalize)
    np.testing.assert_allclose(out, expected, atol=1e-5)
    assert out.dtype == np.float32


def test_pooling_is_float32_under_mixed_precision():
    inputs = _inputs()
    out = SentencePooling("max", dtype="mixed_bfloat16")(keras.ops.cast(inputs["sequence_output"], "bfloat16"),
                                                          inputs["padding_mask"])
    assert keras.backend.standardize_dtype(out.dtype) == "float32"


def test_max_of_an_all_padded_row_is_zero_not_minus_infinity():
    inputs = _inputs()
    inputs["padding_mask"][3] = 0
    out = keras.ops.convert_to_numpy(SentencePooling("max")(**inputs))
    np.testing.assert_array_equal(out[3], 0.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [({"mode": "weightedmean"}, "mode='weightedmean'"), ({"mode": "mean", "normalize": "yes"}, "normalize='yes'")],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SentencePooling(**kwargs)
