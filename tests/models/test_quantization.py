"""`model.quantize("int8")` (Keras' own API) on our models: close to float32, and saved/loaded as int8."""

import warnings

import keras
import numpy as np
import pytest

from harness import tiny_backbone
from keras_bert.models import BertClassifier, BertPretrainer


# Keras runs a full gc.collect() per quantized variable: conftest's `frozen_gc` keeps each one to this
# test's objects (~50 s of the two tests per backend late in a suite run without it).
pytestmark = pytest.mark.usefixtures("frozen_gc")


def _inputs(batch=3, seq=12):
    rng = np.random.default_rng(0)
    mask = np.ones((batch, seq), "int32")
    mask[0, 8:] = 0
    return {"token_ids": rng.integers(1, 120, (batch, seq)).astype("int32"),
            "segment_ids": np.zeros((batch, seq), "int32"), "padding_mask": mask}


def _quantize(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one "no quantize method" warning per Dropout / LayerNorm
        model.quantize("int8")


def _relative_error(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


def test_int8_classifier_is_close_and_round_trips_through_keras_file(tmp_path):
    model = BertClassifier(tiny_backbone(vocabulary_size=120, hidden_dim=32), num_classes=3)
    x = _inputs()
    reference = model.predict_on_batch(x)
    _quantize(model)
    quantized = model.predict_on_batch(x)
    assert _relative_error(quantized, reference) < 0.05
    kinds = {layer.path.split("/")[-1]: layer.quantization_mode for layer in model._flatten_layers()
             if layer.quantization_mode}
    assert kinds["qkv"] == kinds["intermediate_dense"] == kinds["logits"] == "int8"

    path = str(tmp_path / "int8.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    assert restored.get_config() == model.get_config()
    np.testing.assert_allclose(restored.predict_on_batch(x), quantized, atol=1e-5)


def test_int8_pretrainer_mlm_decoder_dequantizes_the_tied_embedding():
    model = BertPretrainer(tiny_backbone(vocabulary_size=120, hidden_dim=32))
    x = {**_inputs(), "mask_positions": np.array([[1, 3], [2, 5], [0, 7]], "int32")}
    reference = model.predict_on_batch(x)
    _quantize(model)
    quantized = model.predict_on_batch(x)
    assert model.backbone.token_embedding.quantization_mode == "int8"
    assert _relative_error(quantized["mlm"], reference["mlm"]) < 0.05
    assert _relative_error(quantized["nsp"], reference["nsp"]) < 0.05


def test_int8_warns_once_on_the_backends_where_it_was_measured_slower(monkeypatch):
    from keras_bert.models import quantization  # the module whose once-per-backend record is reset here

    monkeypatch.setattr(quantization, "_warned_backends", set())
    backbone = tiny_backbone(vocabulary_size=120, hidden_dim=32)
    classifier = BertClassifier(tiny_backbone(vocabulary_size=120, hidden_dim=32), num_classes=2)
    x = _inputs()
    reference = backbone.predict_on_batch(x)["sequence_output"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        backbone.quantize("int8")
        classifier.quantize("int8")  # the task model's override; same backend: no second warning
    ours = [str(w.message) for w in caught if "keras_bert: Keras int8" in str(w.message)]
    backend = keras.backend.backend()
    if backend in ("tensorflow", "torch"):
        assert len(ours) == 1, ours
        ratio = quantization.INT8_SLOWER_ON_CPU[backend]
        assert f"ran at {ratio:.2f}x" in ours[0] and f"KERAS_BACKEND={backend} python -m benchmarks.studies.int8_speed.int8_speed" in ours[0]
        assert "keras-bert export --format onnx --quantize int8" in ours[0]
        assert all(w.filename == __file__ for w in caught if "keras_bert: Keras int8" in str(w.message))
    else:  # JAX: XLA's int8 dot measured faster than float32, no warning
        assert backend == "jax" and ours == []
    # The warning changes nothing: int8 outputs stay close to float32.
    assert _relative_error(backbone.predict_on_batch(x)["sequence_output"], reference) < 0.05
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tiny_backbone(vocabulary_size=120, hidden_dim=32).quantize("float8")
    assert not [w for w in caught if "keras_bert: Keras int8" in str(w.message)]  # int8 only


def test_bfloat16_warns_once_on_jax_cpu_where_it_was_measured_slower(monkeypatch):
    from keras_bert.models import quantization  # the module whose once-per-backend record is reset here

    monkeypatch.setattr(quantization, "_warned_bfloat16", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tiny_backbone(vocabulary_size=120, hidden_dim=32)  # float32: never a warning
        assert not [w for w in caught if "keras_bert: bfloat16" in str(w.message)]
        tiny_backbone(vocabulary_size=120, hidden_dim=32, dtype="bfloat16")
        tiny_backbone(vocabulary_size=120, hidden_dim=32, dtype="mixed_bfloat16")  # once per backend
    ours = [w for w in caught if "keras_bert: bfloat16" in str(w.message)]
    if keras.backend.backend() == "jax":
        assert len(ours) == 1, [str(w.message) for w in ours]
        assert "ran at 0.92x" in str(ours[0].message) and "make bench" in str(ours[0].message)
        # Points at the line that built the backbone (the harness's tiny_backbone), not Keras' internals.
        assert ours[0].filename.endswith("harness.py"), ours[0].filename
    else:  # TensorFlow (oneDNN) and torch measured bfloat16 faster than float32
        assert ours == []
