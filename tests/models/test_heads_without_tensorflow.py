"""The task heads build, train, predict and save with TensorFlow absent (keras + keras.ops only)."""

import textwrap

import pytest

from harness import run_without_tensorflow


SCRIPT = textwrap.dedent(
    """
    import sys
    import numpy as np
    import keras
    import keras_bert
    from harness import tiny_backbone
    from keras_bert.models import BertClassifier, BertMultipleChoice, BertQuestionAnswerer, BertTokenClassifier
    from keras_bert.metrics import entity_metrics, squad_metrics

    rng = np.random.default_rng(0)
    x = {"token_ids": rng.integers(0, 30, (4, 8)).astype("int32"), "segment_ids": np.zeros((4, 8), "int32"),
         "padding_mask": np.ones((4, 8), "int32")}
    x3 = {k: np.stack([v, v], axis=1) for k, v in x.items()}
    cases = [
        (BertClassifier(tiny_backbone(), num_classes=2, label_names=["no", "yes"]), x, np.array([0, 1, 0, 1])),
        (BertClassifier(tiny_backbone(), num_classes=1), x, np.array([0.5, 1.0, -1.0, 0.0], "float32")),
        (BertTokenClassifier(tiny_backbone(), num_classes=3), x, np.full((4, 8), -100).clip(-100, 2)),
        (BertQuestionAnswerer(tiny_backbone()), x, {"start": np.array([0, 1, 2, 3]), "end": np.array([0, 1, 3, 3])}),
        (BertMultipleChoice(tiny_backbone()), x3, np.array([0, 1, 1, 0])),
    ]
    cases[2][2][:, 1] = 1
    for model, inputs, targets in cases:
        model.compile()
        model.fit(inputs, targets, epochs=1, verbose=0)
        before = model.predict(inputs, verbose=0)
        model.save("model.keras")
        after = keras.saving.load_model("model.keras").predict(inputs, verbose=0)
        keras.tree.map_structure(lambda a, b: np.testing.assert_allclose(a, b, atol=1e-6), before, after)
    assert entity_metrics([["B-X"]], [["B-X"]])["f1"] == 1.0
    assert "tensorflow" not in sys.modules, "keras_bert imported tensorflow"
    print("OK")
    """
)


@pytest.mark.only_backend("torch", reason="starts its own process with TensorFlow blocked; once is enough")
def test_task_heads_run_without_tensorflow(tmp_path):
    result = run_without_tensorflow(SCRIPT, "torch", tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "OK" in result.stdout
