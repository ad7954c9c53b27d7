"""layers/ and models/ must build, train and predict with TensorFlow absent.

Runs a child Python process whose import path is a copy of the virtual
environment's site-packages without TensorFlow, tensorflow-text, tf-keras and
TensorBoard (symbolic links, `python -S`), on the JAX and the torch backend,
and exercises the model code end to end: one `fit` step that changes the
weights, `predict`. The names that need TensorFlow at import (tokenizer,
packer, vocabulary learner, pretraining data) must fail there with
ModuleNotFoundError for TensorFlow. TensorFlow is then as absent as in an
environment where it was never installed: `find_spec` does not see it.
"""

import textwrap


import pytest

from harness import run_without_tensorflow

SCRIPT = textwrap.dedent(
    """
    import importlib.util, os, sys

    assert importlib.util.find_spec("tensorflow") is None, "TensorFlow is visible"
    import keras
    import numpy as np
    import keras_bert
    from harness import tiny_backbone
    from keras_bert import BertPretrainer

    assert "tensorflow" not in sys.modules
    assert keras.backend.backend() == os.environ["KERAS_BACKEND"]
    model = BertPretrainer(tiny_backbone())
    model.compile()
    before = [w.copy() for w in model.get_weights()]
    rng = np.random.default_rng(0)
    x = {"token_ids": rng.integers(0, 30, (4, 8)).astype("int32"), "segment_ids": np.zeros((4, 8), "int32"),
         "padding_mask": np.ones((4, 8), "int32"), "mask_positions": np.array([[1, 2]] * 4, "int32")}
    y = {"mlm": rng.integers(0, 30, (4, 2)).astype("int32"), "nsp": np.array([0, 1, 0, 1], "int32")}
    w = {"mlm": np.ones((4, 2), "float32"), "nsp": np.ones(4, "float32")}
    history = model.fit(x, y, sample_weight=w, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert any(not np.array_equal(a, b) for a, b in zip(before, model.get_weights())), "fit changed no weight"
    out = model.predict(x, verbose=0)
    assert out["mlm"].shape == (4, 2, 147) and out["nsp"].shape == (4, 2)
    assert np.all(np.isfinite(out["mlm"])) and np.all(np.isfinite(out["nsp"]))
    assert "tensorflow" not in sys.modules, "keras_bert imported tensorflow"

    # The names that need TensorFlow are refused, saying that TensorFlow is missing.
    for name in ("BertTokenizer", "BertInputPacker", "learn_vocabulary", "pretraining_dataset"):
        try:
            getattr(keras_bert, name)
        except ModuleNotFoundError as error:
            assert error.name.split(".")[0] in ("tensorflow", "tensorflow_text"), (name, error)
        else:
            raise AssertionError(f"keras_bert.{name} imported without TensorFlow")
    assert "tensorflow" not in sys.modules
    print("OK", keras.backend.backend(), history.history["loss"][0])
    """
)


ONCE = "starts its own process with TensorFlow blocked; run once, in this backend's pass of the suite"


@pytest.mark.parametrize(
    "backend",
    [
        pytest.param("jax", marks=pytest.mark.only_backend("jax", reason=ONCE)),
        pytest.param("torch", marks=pytest.mark.only_backend("torch", reason=ONCE)),
    ],
)
def test_models_run_without_tensorflow(backend, tmp_path):
    result = run_without_tensorflow(SCRIPT, backend, tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"OK {backend} " in result.stdout
