"""Shared pieces of the export tests: a real-word vocabulary, tiny task models, SavedModels exported when first
asked for, a keras-less server."""

import json
import os
from pathlib import Path

import keras
import numpy as np

from harness import run_with_packages_hidden, tiny_backbone

VOCAB_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "vocab.txt"
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
SERVE_SCRIPT = (Path(__file__).resolve().parent / "serve_without_keras.py").read_text(encoding="utf-8")

SHORT_TEXTS = [
    "The film was good!",
    "Anna Smith met Ivan in Paris, yesterday.",
    "Délightful café in Oslo",  # accents are stripped; offsets still index the original
    "boring",
    "New York 北京 rocks 🙂",  # CJK, an emoji and an unknown word
]
# Longer than the exported sequence length: read in windows.
LONG_TEXTS = [
    " ".join(["the movie has a superb cast and a clever plot"] * 4),
    "Marco Jones lives in Rome and works for Acme Corp in Lima with Hana Lee " * 3,
]


class LazyExports(dict):
    """`exports[name]` → `(task model, export options, load(folder))`: the SavedModel of `specs[name]`, a
    `(kind, seed, options)` for tests/pipelines/long_text_reference.task_model and `export_saved_model`, exported
    into `root` the first time a test asks for it (a module's tests share it; a test run alone exports one)."""

    def __init__(self, root, tokenizer, specs, load):
        super().__init__()
        self.root, self.tokenizer, self.specs, self.load = root, tokenizer, specs, load

    def __missing__(self, name):
        from keras_bert.export import export_saved_model
        from pipelines.long_text_reference import task_model

        kind, seed, options = self.specs[name]
        export_saved_model(model := task_model(kind, seed=seed), self.root / name, self.tokenizer, verbose=False,
                           **options)
        self[name] = (model, options, self.load(self.root / name))
        return self[name]


def tokenizer():
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    return BertTokenizer(str(VOCAB_FILE))


def sharpen(model, scale=40.0):
    """Scales the head's output kernel so random models make decisive, varied predictions.

    (A freshly initialised head gives near-uniform probabilities, where an
    argmax could flip on float32 rounding between two frameworks.)
    """
    for layer in model.layers:
        if layer is model.backbone:
            continue
        for weight in layer.trainable_weights:
            if weight.path.endswith("kernel"):
                weight.assign(keras.ops.convert_to_numpy(weight) * scale)
    return model


def task_models():
    """One tiny, seeded model of every exportable kind."""
    from keras_bert import BertClassifier, BertMultipleChoice, BertQuestionAnswerer, BertTokenClassifier

    keras.utils.set_random_seed(7)
    return {
        "classifier": sharpen(BertClassifier(tiny_backbone(max_sequence_length=64), num_classes=3, label_names=["negative", "neutral", "positive"])),
        "regressor": BertClassifier(tiny_backbone(max_sequence_length=64), num_classes=1),
        "token_classifier": sharpen(BertTokenClassifier(tiny_backbone(max_sequence_length=64), num_classes=len(TAGS), label_names=TAGS)),
        "question_answerer": sharpen(BertQuestionAnswerer(tiny_backbone(max_sequence_length=64))),
        "multiple_choice": sharpen(BertMultipleChoice(tiny_backbone(max_sequence_length=64))),
        "backbone": tiny_backbone(max_sequence_length=64),
    }


def packed(texts, sequence_length, pairs=None):
    """Python-side tokenization and packing: what `model.predict` is fed in the comparisons."""
    from keras_bert.preprocessing.input_packer import BertInputPacker

    packer = BertInputPacker.from_tokenizer(tokenizer(), sequence_length)
    outputs = packer(texts) if pairs is None else packer(texts, pairs)
    return {k: v.numpy() for k, v in outputs.items()}


def serve(tmp_path, calls):
    """Runs `calls` (see serve_without_keras.py) in a Python without keras or keras_bert.

    Returns a list with one dict of outputs (or {"error": message}) per call.
    """
    spec = tmp_path / "serve_spec.json"
    out = tmp_path / "served.npz"
    spec.write_text(json.dumps(calls), encoding="utf-8")
    work = tmp_path / "serve_without_keras"
    work.mkdir()
    result = run_with_packages_hidden(
        SERVE_SCRIPT,
        ("keras",),
        work,
        env={"SERVE_SPEC": str(spec), "SERVE_OUT": str(out), "TF_CPP_MIN_LOG_LEVEL": "2"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    with np.load(out, allow_pickle=True) as data:
        arrays = {k: data[k] for k in data.files}
    served = [{} for _ in calls]
    for key, value in arrays.items():
        index, name = key.split("/", 1)
        served[int(index)][name] = value.item() if name == "error" else value
    return served


def text_call(directory, **inputs):
    return {"directory": os.fspath(directory), "signature": "serve_text", "inputs": inputs}


def ids_call(directory, inputs, dtypes=None):
    return {
        "directory": os.fspath(directory),
        "signature": "serve_token_ids",
        "inputs": {k: np.asarray(v).tolist() for k, v in inputs.items()},
        "dtypes": dtypes or {k: "int32" for k in inputs},
    }


def saved_functions(directory):
    """Object-graph paths of the `tf.function`s a SavedModel holds (`root.tokenize`, ...), read from saved_model.pb."""
    # tensorflow is imported here, not at the top: the helpers run on every backend, only this reads the proto
    from tensorflow.core.protobuf import saved_model_pb2

    saved = saved_model_pb2.SavedModel()
    saved.ParseFromString((directory / "saved_model.pb").read_bytes())
    graph = saved.meta_graphs[0].object_graph_def
    paths, queue = {0: "root"}, [0]
    while queue:
        node = queue.pop(0)
        for child in graph.nodes[node].children:
            if child.node_id not in paths:
                paths[child.node_id] = f"{paths[node]}.{child.local_name}"
                queue.append(child.node_id)
    return sorted(paths[i] for i, n in enumerate(graph.nodes) if n.WhichOneof("kind") == "function")
