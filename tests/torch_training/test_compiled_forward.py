"""`predict` and `evaluate` of a model compiled with `jit_compile=True` on torch: one inductor-compiled graph that
reads the weights `fit` changes, and an eager fallback that says why.

Every head's compiled forward against its eager one is in test_compiled_task_models.py (uncompiled export there).
"""

import keras
import numpy as np
import pytest

from harness import random_bert_inputs, tiny_backbone
from keras_bert.models import BertClassifier
from keras_bert.torch_training import compiled_train_step

pytestmark = pytest.mark.only_backend(
    "torch", reason="the compiled forward is the torch backend's `jit_compile=True`; TensorFlow and JAX compile with XLA"
)


def _classifier_and_data():
    keras.utils.set_random_seed(0)
    model = BertClassifier(tiny_backbone(vocabulary_size=40, max_sequence_length=16), num_classes=3, dropout=0.0)
    x = random_bert_inputs(12, 10, 40, seed=0)
    return model, x, np.random.default_rng(0).integers(0, 3, 12)


def test_inductor_forward_evaluates_the_weights_fit_changed(monkeypatch):
    monkeypatch.setattr(compiled_train_step, "COMPILER", "aot_eager")  # the training step is not what is tested
    model, x, y = _classifier_and_data()
    model.compile(optimizer=keras.optimizers.Adam(1e-2), jit_compile=True)
    before = model.evaluate(x, y, batch_size=4, verbose=0, return_dict=True)  # inductor compiles here (dynamic shapes)
    forward = model._compiled_forward
    assert forward.traced is not None and forward.traced.compile_mode == "default" and forward.fallback_reason is None
    model.fit(x, y, batch_size=4, epochs=2, verbose=0)
    after = model.evaluate(x, y, batch_size=5, verbose=0, return_dict=True)  # a batch of 5, then of 2: other shapes
    predicted = model.predict(x, batch_size=5, verbose=0)
    assert model._compiled_forward is forward  # the same graph, not traced again
    np.testing.assert_allclose(predicted, keras.ops.convert_to_numpy(model(x, training=False)), rtol=1e-5, atol=1e-5)
    model.compile(optimizer="adam", jit_compile=False)
    eager = model.evaluate(x, y, batch_size=5, verbose=0, return_dict=True)
    assert after["loss"] < before["loss"] - 0.01  # training moved the weights the graph reads
    for key in eager:
        np.testing.assert_allclose(after[key], eager[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_a_forward_that_cannot_be_traced_runs_eagerly_and_says_why(monkeypatch):
    from keras_bert.torch_training import compiled_forward

    def refuse(*args, **kwargs):
        raise RuntimeError("export refused this model\nsecond line")

    monkeypatch.setattr(compiled_forward, "TorchGraph", refuse)
    model, x, y = _classifier_and_data()
    model.compile(jit_compile=True)
    with pytest.warns(UserWarning, match=r"compiled torch forward does not apply \(RuntimeError: export refused this "
                                         r"model\); predict and evaluate run eagerly"):
        predicted = model.predict(x, verbose=0)
    np.testing.assert_allclose(predicted, keras.ops.convert_to_numpy(model(x, training=False)), rtol=1e-6)
    assert model._compiled_forward.fallback_reason.startswith("RuntimeError")


def test_a_backbone_predicts_through_the_compiled_forward(monkeypatch):
    from keras_bert.torch_training import compiled_forward

    monkeypatch.setattr(compiled_forward, "COMPILE_MODE", None)  # the exported graph, uncompiled: the plumbing
    keras.utils.set_random_seed(0)
    backbone = tiny_backbone(vocabulary_size=40, max_sequence_length=16)
    x = random_bert_inputs(6, 10, 40, seed=1)
    backbone.compile(jit_compile=True)
    predicted = backbone.predict(x, batch_size=4, verbose=0)
    assert backbone._compiled_forward.traced is not None
    expected = keras.tree.map_structure(keras.ops.convert_to_numpy, backbone(x, training=False))
    for name in expected:
        np.testing.assert_allclose(predicted[name], expected[name], rtol=1e-5, atol=1e-5, err_msg=name)
