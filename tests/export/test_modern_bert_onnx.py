"""A ModernBERT classifier through `keras-bert export --format onnx --quantize int8` (and `--format litert`): the
blocked local attention converts, the fp32 graph equals Keras to 1e-5 on padded rows longer than the window, and
`ExportedModel` reads raw strings with the `ModernBertTokenizer` saved beside the graph, as the Keras pipeline does.

The classifier has three blocks with a 6-token window (radius 3) and global attention every third layer: block 0
is global, block 1 local over every position (the blocked form of `local_attention`), block 2 local at [CLS]
only (the last block of a CLS-pooled predict, the masked form).
"""

import contextlib
import io
import json

import keras
import numpy as np
import pytest

from export_helpers import LONG_TEXTS, sharpen
from preprocessing_helpers import write_modernbert_tokenizer_folder

pytestmark = pytest.mark.only_backend(
    "tensorflow",
    reason="the conversion is TensorFlow code whatever backend trained the model (JAX and torch reach it through "
    "the export worker, checked for BERT in test_runtime_export.py); ModernBERT's numbers on three backends are "
    "checked against transformers in tests/converters/test_hf_modernbert_tasks.py",
)
LENGTH = 16
LABELS = ["negative", "neutral", "positive"]
# Rows of 3 to 16 tokens: padded rows; runs of spaces and [MASK] are added tokens of ModernBERT's tokenizer.
TEXTS = ["It was a truth universally acknowledged.", "Dull.", "She   smiled, and [MASK] laughed", "Emma"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """`(model, tokenizer, export directory)`: a tiny ModernBertClassifier exported by the command line."""
    from keras_bert import ModernBertBackbone, ModernBertClassifier, ModernBertTokenizer
    from keras_bert.cli.main import main

    root = tmp_path_factory.mktemp("modernbert_onnx")
    folder = write_modernbert_tokenizer_folder(root / "tokenizer", vocab_size=400)
    tokenizer = ModernBertTokenizer.from_pretrained(folder)
    keras.utils.set_random_seed(4)
    backbone = ModernBertBackbone(
        vocabulary_size=tokenizer.vocabulary_size(), num_layers=3, num_heads=2, hidden_dim=16, intermediate_dim=24,
        max_sequence_length=64, padding_id=tokenizer.pad_token_id, local_attention_window=6,
        global_attention_every_n_layers=3, global_rope_wavelength=500.0, local_rope_wavelength=50.0,
    )  # fmt: skip
    model = sharpen(ModernBertClassifier(backbone, num_classes=3, label_names=LABELS))
    model.save(root / "classifier.keras")
    directory = root / "classifier_onnx"
    argv = ["export", str(root / "classifier.keras"), "--tokenizer", str(folder), "--format", "onnx", "--quantize",
            "int8", "--sequence-length", str(LENGTH), "--out", str(directory)]  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    return model, tokenizer, directory, root, folder


def test_fp32_logits_equal_keras_on_padded_rows_longer_than_the_window(exported):
    from keras_bert.export import RuntimeModel
    from keras_bert.preprocessing import BertInputPacker

    model, tokenizer, directory, _, _ = exported
    runtime = RuntimeModel(directory, precision="fp32")
    for length in (LENGTH, 40):  # 40: longer than the export's 16 (the graph takes any length up to 64)
        x = {k: v.numpy() for k, v in BertInputPacker.from_tokenizer(tokenizer, length)(TEXTS + LONG_TEXTS[:1]).items()}
        real = x["padding_mask"].sum(axis=1)
        assert real.min() < length and real.max() > 6  # padded rows; rows longer than the 6-token window
        expected = np.asarray(model.predict_on_batch(x))
        delta = np.abs(runtime.predict_on_batch(x) - expected).max()
        print(f"ModernBERT ONNX fp32 vs Keras at length {length}: max |delta| {delta:.1e}")
        assert delta <= 1e-5, delta
        # The graph takes BERT's three inputs so one runtime feeds every family; ModernBERT ignores segment_ids.
        shuffled = runtime.predict_on_batch({**x, "segment_ids": np.ones_like(x["segment_ids"])})
        np.testing.assert_array_equal(shuffled, runtime.predict_on_batch(x))


def test_int8_graph_quantizes_every_weight_matmul(exported):
    import onnx

    from keras_bert.export import RuntimeModel

    _, _, directory, _, _ = exported
    metadata = json.loads((directory / "keras_bert_export.json").read_text())
    assert metadata["files"] == {"fp32": "model.onnx", "int8": "model.int8.onnx"} and metadata["default_precision"] == "int8"
    ops = [node.op_type for node in onnx.load(str(directory / "model.int8.onnx")).graph.node]
    # 4 per block (Wqkv, Wo, the GeGLU's Wi and Wo), the prediction head's dense and the output layer.
    assert ops.count("MatMulInteger") == 4 * 3 + 2 and "Gemm" not in ops, sorted(set(ops))
    logits = RuntimeModel(directory).predict_on_batch(_packed(exported, TEXTS))
    assert logits.shape == (len(TEXTS), 3) and np.isfinite(logits).all()


def test_exported_model_reads_texts_with_the_saved_modernbert_tokenizer(exported):
    """tokenizer.json beside the graph is the Keras serialisation of the ModernBertTokenizer (vocabulary, merges,
    added tokens), not transformers' file: `ExportedModel` rebuilds it and reads texts as the Keras pipeline."""
    from keras_bert import ModernBertTokenizer
    from keras_bert.export import ExportedModel
    from keras_bert.pipelines.loading import pipeline_for

    model, tokenizer, directory, _, _ = exported
    served = ExportedModel(directory, precision="fp32")  # no tokenizer given: the saved one
    assert isinstance(served.tokenizer, ModernBertTokenizer)
    assert served.tokenizer.get_config() == tokenizer.get_config()
    texts = TEXTS + LONG_TEXTS  # the long ones are read in windows by both
    assert _packed(exported, texts)["token_ids"].tolist() == _packed((model, served.tokenizer, None), texts)["token_ids"].tolist()
    expected = pipeline_for(model, tokenizer, sequence_length=LENGTH)(texts)
    results, stats = served.predict_with_stats(texts)
    assert [r["label"] for r in results] == [e["label"] for e in expected]
    for result, want in zip(results, expected):
        np.testing.assert_allclose(list(result["probabilities"].values()), list(want["probabilities"].values()), atol=1e-5)
    assert stats[-1]["windows"] > 1


def _packed(exported, texts):
    from keras_bert.preprocessing import BertInputPacker

    return {k: v.numpy() for k, v in BertInputPacker.from_tokenizer(exported[1], LENGTH)(texts).items()}


def test_litert_graph_equals_keras_and_reads_texts(exported):
    from keras_bert.cli.main import main
    from keras_bert.export import ExportedModel, RuntimeModel
    from keras_bert.pipelines.loading import pipeline_for

    model, tokenizer, _, root, folder = exported
    directory = root / "classifier_litert"
    argv = ["export", str(root / "classifier.keras"), "--tokenizer", str(folder), "--format", "litert",
            "--sequence-length", str(LENGTH), "--out", str(directory)]  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(argv) == 0
    x = _packed(exported, TEXTS)
    delta = np.abs(RuntimeModel(directory).predict_on_batch(x) - np.asarray(model.predict_on_batch(x))).max()
    print(f"ModernBERT LiteRT vs Keras at length {LENGTH}: max |delta| {delta:.1e}")
    assert delta <= 1e-5, delta
    expected = pipeline_for(model, tokenizer, sequence_length=LENGTH)(TEXTS)
    assert [r["label"] for r in ExportedModel(directory).predict(TEXTS)] == [e["label"] for e in expected]
