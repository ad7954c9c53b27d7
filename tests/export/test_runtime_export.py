"""ONNX and LiteRT export: the runtimes' outputs equal Keras' (1e-4), and texts read as the pipelines read them.

The classifier is exported to ONNX (fp32 + dynamic int8) on TensorFlow and torch
(torch converts through the TensorFlow child process, as JAX would). The rest —
question answering in ONNX, LiteRT, the command line — is the same TensorFlow
conversion code whatever the backend, so it runs once, on TensorFlow.
"""

import contextlib
import io
import json
import warnings

import keras
import numpy as np
import pytest

from export_helpers import LONG_TEXTS, SHORT_TEXTS, VOCAB_FILE, packed, sharpen, tokenizer
from harness import tiny_backbone
from keras_bert.export import ExportedModel, RuntimeModel, export_litert, export_onnx
from keras_bert.export.onnx_litert import onnx_litert_export
from keras_bert.export.runtime.int8_check import accuracy_drop_message

# JAX and torch hand the model to the same TensorFlow child process (a .keras file), so the JAX pass adds
# nothing the torch pass does not check; the served graphs themselves are checked on TensorFlow.
pytestmark = pytest.mark.not_backend("jax", reason="from JAX an export goes exactly as from torch (the model saved "
                                     "as .keras, written by a TensorFlow child: keras_bert.export.tensorflow_worker)")
ON_TENSORFLOW_ONLY = pytest.mark.only_backend(
    "tensorflow",
    reason="the conversion is TensorFlow code whatever backend trained the model (JAX/torch reach it through the "
    "export worker, covered by the classifier tests on every backend)",
)
LENGTH = 16
LABELS = ["negative", "neutral", "positive"]
QUESTIONS = ["Who met Ivan?", "Where does Anna live?"]
CONTEXTS = ["Anna Smith met Ivan in Paris yesterday.", LONG_TEXTS[1]]


@pytest.fixture(scope="module")
def models():
    from keras_bert import BertClassifier, BertQuestionAnswerer

    keras.utils.set_random_seed(11)
    return {
        "classifier": sharpen(BertClassifier(tiny_backbone(max_sequence_length=64), num_classes=3, label_names=LABELS)),
        "question_answerer": sharpen(BertQuestionAnswerer(tiny_backbone(max_sequence_length=64))),
    }


@pytest.fixture(scope="module")
def tok():
    """One tokenizer for the module: each new one traces its TensorFlow functions again (seconds)."""
    return tokenizer()


@pytest.fixture(scope="module")
def exports(models, tok, tmp_path_factory):
    """The classifier through `keras-bert export --format onnx --quantize int8 --eval-file` (every backend);
    on TensorFlow also the question answerer as ONNX and as LiteRT."""
    from keras_bert.cli.main import main

    root = tmp_path_factory.mktemp("runtime_exports")
    model_file = root / "classifier.keras"
    models["classifier"].save(model_file)
    eval_file = root / "eval.tsv"
    eval_file.write_text("sentence\tlabel\n" + "".join(f"{t}\t{LABELS[i % 3]}\n" for i, t in enumerate(SHORT_TEXTS)))
    directories = {"onnx": root / "classifier_onnx"}
    argv = ["export", str(model_file), "--tokenizer", str(VOCAB_FILE), "--format", "onnx", "--quantize", "int8",
            "--eval-file", str(eval_file), "--sequence-length", str(LENGTH), "--out", str(directories["onnx"])]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(argv) == 0
    directories["cli_output"] = printed.getvalue()
    if keras.backend.backend() == "tensorflow":
        directories["qa_onnx"] = root / "qa_onnx"
        export_onnx(models["question_answerer"], directories["qa_onnx"], tok, sequence_length=LENGTH, verbose=False)
        directories["qa_litert"] = root / "qa_litert"
        export_litert(models["question_answerer"], directories["qa_litert"], tok, sequence_length=LENGTH, verbose=False)
    return directories


def test_onnx_logits_equal_keras_at_any_batch_and_length(models, exports):
    runtime = RuntimeModel(exports["onnx"], precision="fp32")
    for texts, length in [(SHORT_TEXTS, LENGTH), (SHORT_TEXTS[:2], 40)]:  # 40: longer than the export's 16
        x = packed(texts, length)
        # A direct call runs every position of the last block; the export computes it at [CLS] only.
        expected = keras.ops.convert_to_numpy(models["classifier"](x, training=False))
        np.testing.assert_allclose(runtime.predict_on_batch(x), expected, atol=1e-4)
    metadata = runtime.metadata
    assert metadata["opset"] == 17 and metadata["dynamic_axes"] == ["batch", "length"]
    assert metadata["outputs"] == ["logits"] and sorted(metadata["files"]) == ["fp32", "int8"]


def test_exported_onnx_reads_texts_as_the_pipeline(models, exports, tok):
    from keras_bert.pipelines.loading import pipeline_for

    texts = SHORT_TEXTS + LONG_TEXTS  # the long ones are read in windows by both
    pipeline = pipeline_for(models["classifier"], tok, sequence_length=LENGTH)
    expected = pipeline(texts)
    results, stats = ExportedModel(exports["onnx"], precision="fp32", tokenizer=tok).predict_with_stats(texts, batch_size=3)
    assert [r["label"] for r in results] == [e["label"] for e in expected]
    for result, want in zip(results, expected):
        np.testing.assert_allclose(list(result["probabilities"].values()), list(want["probabilities"].values()), atol=1e-4)
    assert stats == pipeline.input_stats(texts) and stats[-1]["windows"] > 1


def test_int8_graph_is_quantized_and_served_by_default(exports, tok):
    import onnx

    served = ExportedModel(exports["onnx"], tokenizer=tok)
    assert served.runtime_model.precision == "int8"
    ops = [node.op_type for node in onnx.load(str(exports["onnx"] / "model.int8.onnx")).graph.node]
    assert "DynamicQuantizeLinear" in ops and "Gemm" not in ops, sorted(set(ops))
    # Every weight matmul is int8: 4 per block (QKV, attention output, 2 feed-forward; tf2onnx writes the
    # first two as Gemm, which dynamic quantization skips unless rewritten), the pooler and the head.
    assert ops.count("MatMulInteger") == 4 * 2 + 2, ops.count("MatMulInteger")
    result = served.predict(["a fine film"])[0]
    assert result["label"] in LABELS and abs(sum(result["probabilities"].values()) - 1) < 1e-6


def test_exported_attention_masks_with_one_bias_add(exports):
    """The traced attention adds the mask to the logits as a small bias with a constant scale (`graph_export_form`):
    Keras' own op on TensorFlow traces as Sqrt (the scale from the traced shape) and And/Expand plus casts and
    multiplies of the full (batch, heads, length, length) logits, which tf2onnx keeps and onnxruntime runs."""
    import onnx

    raw = [node.op_type for node in onnx.load(str(exports["onnx"] / "model.onnx")).graph.node]
    assert not {"Sqrt", "And", "Expand"} & set(raw), sorted(set(raw))


@ON_TENSORFLOW_ONLY
def test_question_answering_onnx_returns_the_named_span_logits(models, exports):
    runtime = RuntimeModel(exports["qa_onnx"])
    x = packed(QUESTIONS, 24, CONTEXTS)
    expected = models["question_answerer"].predict_on_batch(x)
    outputs = runtime.predict_on_batch(x)
    assert sorted(outputs) == ["end", "start"]
    for name in ("start", "end"):
        # Padding positions hold -1e9 in both; real positions agree to 1e-4.
        np.testing.assert_allclose(outputs[name], expected[name], atol=1e-4)


@ON_TENSORFLOW_ONLY
def test_litert_outputs_equal_keras_with_a_fixed_length(models, exports):
    runtime = RuntimeModel(exports["qa_litert"])
    assert runtime.format == "litert" and runtime.metadata["dynamic_axes"] == ["batch"]
    x = packed(SHORT_TEXTS, LENGTH)
    expected, outputs = models["question_answerer"].predict_on_batch(x), runtime.predict_on_batch(x)
    for name in ("start", "end"):
        np.testing.assert_allclose(outputs[name], expected[name], atol=1e-4)
    # The batch is dynamic; shorter inputs are padded to the graph's length (padding is masked) and
    # the span logits cut back to the width given.
    one = runtime.predict_on_batch({k: v[:1] for k, v in x.items()})
    np.testing.assert_allclose(one["end"], expected["end"][:1], atol=1e-4)
    short = runtime.predict_on_batch({k: v[:, :12] for k, v in x.items()})
    assert short["start"].shape == (len(SHORT_TEXTS), 12)
    fits = x["padding_mask"][:, 12:].sum(axis=1) == 0  # texts of at most 12 tokens: cutting drops padding only
    assert fits.sum() >= 2
    np.testing.assert_allclose(short["start"][fits], expected["start"][fits, :12], atol=1e-4)
    with pytest.raises(ValueError, match="at most 16 tokens; received 24"):
        runtime.predict_on_batch(packed(SHORT_TEXTS, 24))


def test_cli_export_reports_int8_accuracy_and_predict_serves_it(exports, capsys):
    from keras_bert.cli.main import main

    printed = exports["cli_output"]
    assert f"{len(SHORT_TEXTS)} examples, accuracy fp32" in printed and "int8" in printed and "points lost" in printed
    assert main(["predict", str(exports["onnx"]), SHORT_TEXTS[0]]) == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["input"] == SHORT_TEXTS[0] and record["label"] in LABELS


def test_a_missing_runtime_names_the_pip_extra(models, tmp_path, monkeypatch):
    real = onnx_litert_export.importlib.util.find_spec
    monkeypatch.setattr(onnx_litert_export.importlib.util, "find_spec", lambda name: None if name == "ai_edge_litert" else real(name))
    with pytest.raises(ImportError, match=r"ai_edge_litert.*pip install 'keras-bert\[litert\]'"):
        export_litert(models["classifier"], tmp_path / "x", tokenizer())
    assert not (tmp_path / "x").exists()


def test_bad_options_fail_before_anything_is_written(models, tmp_path):
    with pytest.raises(ValueError, match="`quantize` must be None or 'int8'; received 'int4'"):
        export_onnx(models["classifier"], tmp_path / "a", tokenizer(), quantize="int4")
    with pytest.raises(ValueError, match=r"`sequence_length` must be an int in \[3, 64\].*received 65"):
        export_litert(models["classifier"], tmp_path / "b", tokenizer(), sequence_length=65)
    # tf2onnx writes a bfloat16 model's projections with mixed types that onnxruntime cannot load: refused.
    with pytest.raises(ValueError, match="ONNX export takes a float32 model; this one computes in bfloat16"):
        with warnings.catch_warnings():  # JAX's "bfloat16 is slower on this CPU" warning is not under test here
            warnings.simplefilter("ignore")
            bfloat16_model = tiny_backbone(max_sequence_length=64, dtype="bfloat16")
        export_onnx(bfloat16_model, tmp_path / "c", tokenizer())
    assert not list(tmp_path.iterdir())
    with pytest.raises(ValueError, match="not a directory|no keras_bert_export.json"):
        RuntimeModel(tmp_path)


def test_accuracy_drop_warning_names_the_figures():
    assert accuracy_drop_message(0.864, 0.861) is None  # 0.3 points: within the default 0.5
    message = accuracy_drop_message(0.864, 0.850)
    assert "0.8500" in message and "1.40 points below fp32 0.8640" in message and "tolerance 0.5" in message
    assert accuracy_drop_message(0.864, 0.850, tolerance=2.0) is None


CONVERSION_MEMORY_CHILD = """
import os, resource, sys
os.environ["KERAS_BACKEND"] = "tensorflow"
from keras_bert import BertBackbone
from keras_bert.export.onnx_litert import graph_conversion
backbone = BertBackbone(vocabulary_size=200_000, num_layers=1, num_heads=2, hidden_dim=64, intermediate_dim=128,
                        max_sequence_length=32)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
graph_conversion.to_onnx(backbone, "backbone", sys.argv[1])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before, backbone.count_params() * 4 // 1024)
"""


@ON_TENSORFLOW_ONLY
def test_onnx_conversion_memory_grows_with_the_weights_not_with_tf2onnx_passes(tmp_path):
    """A base model's conversion once took 24 GB and died: frozen weights were copied by every tf2onnx pass.

    A model that is almost all embedding table (51 MB) converted in a fresh process: the peak grew by
    3.9 GB (78x the weights) before the weights became graph inputs, 0.24 GB (5x) after.
    """
    import subprocess
    import sys

    import onnx

    path = tmp_path / "wide_vocabulary.onnx"
    done = subprocess.run([sys.executable, "-c", CONVERSION_MEMORY_CHILD, str(path)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    grown_kib, weights_kib = map(int, done.stdout.split()[-2:])
    assert grown_kib < 12 * weights_kib, f"peak memory grew {grown_kib // 1024} MiB for {weights_kib // 1024} MiB of weights"
    graph = onnx.load(str(path)).graph
    # Each weight is stored once, as an initializer named by its variable's path; the inputs are the token ids.
    assert [item.name for item in graph.input] == ["token_ids", "segment_ids", "padding_mask"]
    tables = [t for t in graph.initializer if t.name == "embeddings/token_embedding/embeddings"]
    assert len(tables) == 1 and list(tables[0].dims) == [200_000, 64]
    assert path.stat().st_size < 1.05 * weights_kib * 1024


@ON_TENSORFLOW_ONLY
def test_text_embedder_onnx_export_serves_the_pipelines_embeddings(tmp_path):
    """`ExportedModel` and `TextEmbedderPipeline` over the ONNX graph give the Keras pipeline's vectors."""
    from keras_bert import BertTextEmbedder
    from keras_bert.pipelines.text_embedder_pipeline import TextEmbedderPipeline
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    keras.utils.set_random_seed(5)
    embedder = BertTextEmbedder(tiny_backbone(max_sequence_length=64), pooling="mean", normalize=True)
    # A cased tokenizer over the uncased vocabulary: only the pipeline's `lowercase` maps "FILM" to "film".
    cased = BertTokenizer(str(VOCAB_FILE), lowercase=False)
    texts = SHORT_TEXTS + [text.upper() for text in SHORT_TEXTS[:2]] + LONG_TEXTS[:1]  # the long one is truncated
    expected = TextEmbedderPipeline(embedder, cased, sequence_length=LENGTH, lowercase=True)(texts)
    assert np.abs(TextEmbedderPipeline(embedder, cased, sequence_length=LENGTH)(texts[-3:-1]) - expected[-3:-1]).max() > 1e-3
    export_onnx(embedder, tmp_path / "embedder", cased, quantize="int8", sequence_length=LENGTH, lowercase=True,
                verbose=False)

    served = ExportedModel(tmp_path / "embedder", precision="fp32")  # with the tokenizer saved beside the graph
    assert served.metadata["pipeline_options"] == {"lowercase": True}
    results, stats = served.predict_with_stats(texts, batch_size=3)
    np.testing.assert_allclose(np.array([r["embedding"] for r in results]), expected, atol=1e-5)
    np.testing.assert_allclose(results[len(SHORT_TEXTS)]["embedding"], expected[0], atol=1e-5)  # upper = lower
    assert stats[-1]["truncated_tokens"] > 0 and served.predict([]) == []
    direct = TextEmbedderPipeline(RuntimeModel(tmp_path / "embedder", precision="fp32"), cased, lowercase=True)
    assert direct.sequence_length == LENGTH and direct([]).shape == (0, 16)
    np.testing.assert_allclose(direct(texts), expected, atol=1e-5)
    int8 = np.array([r["embedding"] for r in ExportedModel(tmp_path / "embedder").predict(texts)])
    assert np.min(np.sum(int8 * expected, axis=1)) > 0.98  # unit vectors: cosine similarity to fp32


@ON_TENSORFLOW_ONLY
def test_a_mean_pooled_classifier_exports_to_onnx_and_saved_model(tok, tmp_path):
    """`BertClassifier(pooling="mean")` through both export paths: padded rows pool their real tokens only."""
    import tensorflow as tf

    from keras_bert import BertClassifier
    from keras_bert.export import export_saved_model

    keras.utils.set_random_seed(12)
    model = sharpen(BertClassifier(tiny_backbone(max_sequence_length=64), num_classes=3, label_names=LABELS,
                                   pooling="mean"))
    export_onnx(model, tmp_path / "onnx", tok, sequence_length=LENGTH, verbose=False)
    runtime = RuntimeModel(tmp_path / "onnx", precision="fp32")
    export_saved_model(model, tmp_path / "saved", tok, sequence_length=LENGTH, verbose=False)
    serve_ids = tf.saved_model.load(str(tmp_path / "saved")).signatures["serve_token_ids"]
    for texts, length in [(SHORT_TEXTS, LENGTH), (SHORT_TEXTS[:2], 40)]:  # rows of several lengths, padded
        x = packed(texts, length)
        expected = np.asarray(model.predict_on_batch(x))
        np.testing.assert_allclose(runtime.predict_on_batch(x), expected, atol=1e-4)
        served = serve_ids(**{k: tf.constant(v, tf.int32) for k, v in x.items()})
        np.testing.assert_allclose(served["logits"].numpy(), expected, atol=1e-5)


def test_from_model_is_the_onnx_route_of_a_keras_model_in_one_call(models, tok):
    import gc
    import os

    from keras_bert.pipelines import TextClassifierPipeline

    classifier = models["classifier"]
    with pytest.raises(ValueError, match="'fp32' or 'int8'"):
        RuntimeModel.from_model(classifier, tok, precision="bf16")
    fast = RuntimeModel.from_model(classifier, tok, sequence_length=LENGTH)  # int8, in a temporary folder
    assert fast.precision == "int8" and fast.task == "classifier" and fast.label_names == LABELS
    x = packed(SHORT_TEXTS, LENGTH)
    expected = keras.ops.convert_to_numpy(classifier(x, training=False))
    # The fp32 graph beside it is the model; int8 (weights on 7 bits) stays within a sharpened model's argmax.
    np.testing.assert_allclose(RuntimeModel(fast.directory, precision="fp32").predict_on_batch(x), expected, atol=1e-4)
    np.testing.assert_array_equal(fast.predict_on_batch(x).argmax(-1), expected.argmax(-1))
    predicted = TextClassifierPipeline(fast, tok, sequence_length=LENGTH)(SHORT_TEXTS)
    assert [p["label"] for p in predicted] == [LABELS[i] for i in expected.argmax(-1)]
    scratch = os.path.dirname(fast.directory)
    del fast
    gc.collect()
    assert not os.path.exists(scratch)  # the temporary export goes with the object
