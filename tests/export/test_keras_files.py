"""`.keras` files: saved on this backend, loaded on the other two with identical predictions.

Each backend's run of this test saves every model kind and loads the files in
child processes on the other backends (both at once), so the three runs of the suite cover
all six (save, load) pairs. Same-backend save/load equality of each model is
in the models' own harness tests.
"""

import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

from harness import tiny_backbone
from keras_bert import BertClassifier, BertMaskedLM, BertPretrainer
from load_and_predict import BATCH, INPUTS_OF, VOCABULARY_SIZE, call, flat_outputs, model_inputs

BACKENDS = ("tensorflow", "jax", "torch")
HERE = Path(__file__).resolve().parent


def every_model():
    from keras_bert import BertMultipleChoice, BertQuestionAnswerer, BertTokenClassifier, ModernBertBackbone

    keras.utils.set_random_seed(11)
    return {
        "backbone": tiny_backbone(vocabulary_size=VOCABULARY_SIZE),
        "pretrainer": BertPretrainer(tiny_backbone(vocabulary_size=VOCABULARY_SIZE)),
        "masked_lm": BertMaskedLM(tiny_backbone(vocabulary_size=VOCABULARY_SIZE)),
        "classifier": BertClassifier(tiny_backbone(vocabulary_size=VOCABULARY_SIZE), num_classes=3, label_names=["a", "b", "c"]),
        "regressor": BertClassifier(tiny_backbone(vocabulary_size=VOCABULARY_SIZE), num_classes=1),
        "token_classifier": BertTokenClassifier(tiny_backbone(vocabulary_size=VOCABULARY_SIZE), num_classes=4, label_names=["O", "B-X", "I-X", "B-Y"]),
        "question_answerer": BertQuestionAnswerer(tiny_backbone(vocabulary_size=VOCABULARY_SIZE)),
        "multiple_choice": BertMultipleChoice(tiny_backbone(vocabulary_size=VOCABULARY_SIZE)),
        # Rotary positions, no biases, and a local block (radius 2 in 12 tokens) computed in bands.
        "modern_bert_backbone": ModernBertBackbone(
            vocabulary_size=VOCABULARY_SIZE, num_layers=2, num_heads=2, hidden_dim=16, intermediate_dim=24,
            padding_id=0, local_attention_window=4, max_sequence_length=32,
        ),
    }


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("keras_files")
    inputs = model_inputs()
    np.savez(folder / "inputs.npz", **{f"{g}/{k}": v for g, group in inputs.items() for k, v in group.items()})
    expected = {}
    for name, model in every_model().items():
        model.save(folder / f"{name}.keras")
        expected.update(flat_outputs(name, call(model, inputs[INPUTS_OF.get(name, "plain")])))
    return folder, expected


@pytest.fixture(scope="module")
def loaded(saved):
    """Both other backends load the files and predict, in two child processes started together.

    Each child is a fresh Python that spends most of its time importing its
    backend and tracing; side by side they overlap (this process only waits).
    Returns {backend: (exit status, stderr, {output key: array} or None)}.
    """
    folder, _ = saved
    children = {}
    for other in (b for b in BACKENDS if b != keras.backend.backend()):
        env = {**os.environ, "KERAS_BACKEND": other, "TF_CPP_MIN_LOG_LEVEL": "2"}
        log = open(folder / f"log_{other}.txt", "w+")  # a file, not a pipe: neither child waits on a full pipe
        children[other] = (subprocess.Popen(
            [sys.executable, str(HERE / "load_and_predict.py"), str(folder)], env=env, stdout=log, stderr=log,
        ), log)
    results = {}
    for other, (child, log) in children.items():
        try:
            child.wait(timeout=600)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        log.seek(0)
        err = log.read()
        log.close()
        outputs = None
        if child.returncode == 0:
            with np.load(folder / f"outputs_{other}.npz") as data:
                outputs = {k: data[k] for k in data.files}
        results[other] = (child.returncode, err, outputs)
    return results


@pytest.mark.parametrize("other", [b for b in BACKENDS if b != keras.backend.backend()])
def test_saved_here_loads_there_with_identical_predictions(saved, loaded, other):
    here = keras.backend.backend()
    _, expected = saved
    returncode, err, outputs = loaded[other]
    assert returncode == 0, err[-3000:]
    assert sorted(outputs) == sorted(expected)
    for key in expected:
        np.testing.assert_allclose(outputs[key], expected[key], atol=1e-5, err_msg=f"{key}: saved on {here}, loaded on {other}")


def test_pretrained_backbone_becomes_the_body_of_a_new_task_model(saved):
    folder, expected = saved
    pretrainer = keras.saving.load_model(folder / "pretrainer.keras")
    classifier = BertClassifier(pretrainer.backbone, num_classes=3)
    x = model_inputs()["plain"]
    # Same body: its pooled output equals the saved pretrainer backbone's.
    reference = keras.saving.load_model(folder / "pretrainer.keras").backbone.predict(x, verbose=0)["pooled_output"]
    np.testing.assert_allclose(classifier.backbone.predict(x, verbose=0)["pooled_output"], reference, atol=1e-6)
    assert classifier.predict(x, verbose=0).shape == (BATCH, 3)
    classifier.compile(optimizer=keras.optimizers.SGD(0.1))
    classifier.fit(x, np.array([0, 1, 2]), epochs=1, verbose=0)  # trains: weights move
    moved = classifier.backbone.predict(x, verbose=0)["pooled_output"]
    assert np.abs(moved - reference).max() > 1e-6
