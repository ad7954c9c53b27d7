"""layers/ and models/ must build, train and predict with TensorFlow absent.

Runs a child Python process whose import path is a copy of the virtual
environment's site-packages without TensorFlow, tensorflow-text, tf-keras and
TensorBoard (symbolic links, `python -S`), on the JAX and the torch backend,
and exercises the model code end to end. TensorFlow is then as absent as in
an environment where it was never installed: `find_spec` does not see it.
"""

import textwrap


import pytest

from conftest import run_without_tensorflow

SCRIPT = textwrap.dedent(
    """
    import importlib.util, sys

    assert importlib.util.find_spec("tensorflow") is None, "TensorFlow is visible"
    import numpy as np
    import keras_bert
    from keras_bert import BertBackbone, BertPretrainer

    assert "tensorflow" not in sys.modules
    backbone = BertBackbone(vocabulary_size=30, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
                            max_sequence_length=8)
    model = BertPretrainer(backbone)
    model.compile()
    rng = np.random.default_rng(0)
    x = {"token_ids": rng.integers(0, 30, (4, 8)).astype("int32"), "segment_ids": np.zeros((4, 8), "int32"),
         "padding_mask": np.ones((4, 8), "int32"), "mask_positions": np.array([[1, 2]] * 4, "int32")}
    y = {"mlm": rng.integers(0, 30, (4, 2)).astype("int32"), "nsp": np.array([0, 1, 0, 1], "int32")}
    w = {"mlm": np.ones((4, 2), "float32"), "nsp": np.ones(4, "float32")}
    history = model.fit(x, y, sample_weight=w, epochs=1, verbose=0)
    out = model.predict(x, verbose=0)
    assert out["mlm"].shape == (4, 2, 30) and out["nsp"].shape == (4, 2)
    assert "tensorflow" not in sys.modules, "keras_bert imported tensorflow"
    try:
        keras_bert.BertTokenizer
    except ImportError as error:
        print("tokenizer import refused as expected:", error)
    print("OK", keras_bert.__version__, history.history["loss"][0])
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
    assert "OK" in result.stdout
