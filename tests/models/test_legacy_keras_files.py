"""Models saved by the layout before issue 16's restructure still load, on every backend, with the same outputs.

The fixtures were written by tests/fixtures/legacy_keras/make_legacy_keras_files.py at
commit a5476b4 (TensorFlow backend); modules have moved since, registered names have not.
"""

import glob
import os

import keras
import numpy as np
import pytest

import keras_bert  # noqa: F401  (registers the classes)

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "legacy_keras")
KINDS = sorted(os.path.basename(p)[: -len(".keras")] for p in glob.glob(os.path.join(FIXTURES, "*.keras")))


def test_every_model_kind_has_a_fixture():
    assert KINDS == [
        "bert_backbone", "bert_classifier", "bert_masked_lm", "bert_multiple_choice", "bert_pretrainer",
        "bert_question_answerer", "bert_regressor", "bert_token_classifier",
    ]


@pytest.mark.parametrize("kind", KINDS)
def test_legacy_keras_file_loads_with_the_same_outputs(kind):
    model = keras.saving.load_model(os.path.join(FIXTURES, f"{kind}.keras"))
    data = np.load(os.path.join(FIXTURES, f"{kind}.npz"))
    x = {k[2:]: data[k] for k in data.files if k.startswith("x_")}
    expected = {k[2:]: data[k] for k in data.files if k.startswith("y_")}
    outputs = model.predict(x, verbose=0)
    if not isinstance(outputs, dict):
        outputs = {"output": outputs}
    for name, value in expected.items():
        np.testing.assert_allclose(np.asarray(outputs[name]), value, atol=1e-5, err_msg=f"{kind}: {name}")
