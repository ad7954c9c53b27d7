"""Models saved before issue 42 (every family on one encoder base) still load, on every backend, with the same outputs.

The fixtures were written by tests/fixtures/keras_files_before_42/make_keras_files.py at commit
315c7dc on the TensorFlow backend: every backbone family, pre-LN, packed and ReLU BERT, and task
models on each family (ELECTRA's generator and discriminator, LoRA, mean pooling, MLM only).
"""

import glob
import os

import keras
import numpy as np
import pytest

import keras_bert  # noqa: F401  (registers the classes)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "keras_files_before_42")
KINDS = sorted(os.path.basename(p)[: -len(".keras")] for p in glob.glob(os.path.join(FIXTURES, "*.keras")))


def test_every_family_has_fixtures():
    families = {"bert", "albert", "electra", "roberta", "distil_bert"}
    assert len(KINDS) == 16
    assert {kind.split("_backbone")[0] for kind in KINDS if "_backbone" in kind} == families


@pytest.mark.parametrize("kind", KINDS)
def test_keras_file_from_before_42_loads_with_the_same_outputs(kind):
    model = keras.saving.load_model(os.path.join(FIXTURES, f"{kind}.keras"))
    data = np.load(os.path.join(FIXTURES, f"{kind}.npz"))
    x = {k[2:]: data[k] for k in data.files if k.startswith("x_")}
    expected = {k[2:]: data[k] for k in data.files if k.startswith("y_")}
    outputs = model.predict(x, verbose=0)
    if not isinstance(outputs, dict):
        outputs = {"output": outputs}
    for name, value in expected.items():
        np.testing.assert_allclose(np.asarray(outputs[name]), value, atol=1e-5, err_msg=f"{kind}: {name}")
