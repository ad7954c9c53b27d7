"""ExportedModel: an exported SavedModel, ONNX or LiteRT export loaded back, predicting on raw strings.

    served = keras_bert.export.ExportedModel("saved_models/sst")
    served.predict(["a gorgeous, witty, seductive movie."])
    # [{"label": "positive", "score": 0.98, "probabilities": {"negative": 0.02, "positive": 0.98}}]

It uses TensorFlow and tensorflow-text only (no Keras): this is what a
serving process does, and what `keras-bert predict DIR` runs. Results have
the same keys as the Python pipelines (`keras_bert.pipelines`).

An ONNX or LiteRT directory (`export_onnx`, `export_litert`) holds the
token-id graph only: it is run by onnxruntime / the LiteRT interpreter
behind the Python pipeline of its task, with the tokenizer saved beside it
(tensorflow-text, keras and keras_bert needed), so texts are read exactly as
the Keras model's pipeline reads them.
"""

import inspect
import json
import os

import numpy as np

from keras_bert.export.onnx_litert.onnx_litert_export import runtime_format
from keras_bert.export.saved_model.saved_model_export import read_metadata


class ExportedModel:
    """A keras_bert SavedModel: its metadata and `serve_text` as Python results.

    Args:
        directory: a directory written by `export_saved_model`, `export_onnx`
            or `export_litert`.
        precision: ONNX exports with int8: "fp32" or "int8" (default: int8).
        tokenizer: ONNX / LiteRT: a tokenizer to use instead of the saved
            `tokenizer.json` (one already traced saves seconds per instance).
        num_threads: ONNX / LiteRT: the runtime's intra-op threads (default its own).

    Raises:
        ValueError: when the directory is not a keras_bert SavedModel or
            cannot be loaded (e.g. a missing asset), naming the problem.
    """

    def __init__(self, directory, precision=None, tokenizer=None, num_threads=None):
        self._pipeline = None
        if runtime_format(directory) is not None:
            self._open_runtime(directory, precision, tokenizer, num_threads)
            return
        if precision is not None or tokenizer is not None or num_threads is not None:
            raise ValueError(
                f"`precision`, `tokenizer` and `num_threads` apply to ONNX / LiteRT exports; {directory} is a SavedModel."
            )
        # defers TensorFlow: `import keras_bert.export` (and `keras-bert --help`) must not import it
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)

        self.directory = directory
        self.metadata = read_metadata(directory)
        try:
            self._loaded = tf.saved_model.load(directory)
        except (tf.errors.OpError, OSError, ValueError) as error:
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise ValueError(f"{directory}: the SavedModel cannot be loaded: {first_line}") from None
        self.serve_text = self._loaded.signatures["serve_text"]
        self.serve_token_ids = self._loaded.signatures["serve_token_ids"]
        self.task = self.metadata["task"]
        self.text_inputs = self.metadata["signatures"]["serve_text"]
        self.label_names = self.metadata.get("label_names")

    def _open_runtime(self, directory, precision, tokenizer, num_threads):
        """An ONNX / LiteRT export: its graph (RuntimeModel) behind its task's Python pipeline."""
        import keras  # defers keras: a SavedModel is served without it

        import keras_bert.preprocessing  # noqa: F401  (registers the tokenizer classes; defers TensorFlow)
        from keras_bert.export.runtime.runtime_model import RuntimeModel  # defers onnxruntime / LiteRT, as above
        from keras_bert.task_registry import get_task  # the registry names each task's pipeline (imported with it)

        self.directory = directory
        self.runtime_model = RuntimeModel(directory, precision=precision, num_threads=num_threads)
        self.metadata = self.runtime_model.metadata
        self.task = self.metadata["task"]
        self.text_inputs = self.metadata["text_inputs"]
        self.label_names = self.metadata["label_names"]
        if self.task == "backbone":
            raise ValueError(
                f"{directory}: ExportedModel predicts with task models and text embedders; run this backbone's "
                "graph with keras_bert.export.RuntimeModel(directory).outputs(token_ids...) instead."
            )
        if tokenizer is None:
            with open(os.path.join(directory, "tokenizer.json"), encoding="utf-8") as f:
                tokenizer = keras.saving.deserialize_keras_object(json.load(f))
        self.tokenizer = tokenizer
        pipeline_class = get_task(self.task).load("pipeline")
        accepted = inspect.signature(pipeline_class).parameters
        options = {k: v for k, v in self.metadata["pipeline_options"].items() if k in accepted}
        self._pipeline = pipeline_class(
            self.runtime_model, tokenizer, sequence_length=self.metadata["sequence_length"], **options
        )

    def __repr__(self):
        return f"ExportedModel({self.directory!r}, task={self.task!r}, inputs={self.text_inputs})"

    def predict(self, *inputs, batch_size=32):
        """Results for a batch of raw inputs, one list per `serve_text` input (see `predict_with_stats`)."""
        return self.predict_with_stats(*inputs, batch_size=batch_size)[0]

    def predict_with_stats(self, *inputs, batch_size=32):
        """Results for a batch of raw inputs, and how each input was read.

        Args:
            *inputs: lists of strings in the order of `self.text_inputs`
                (`text`; `text`, `text_pair`; `question`, `context`;
                `context`, `choices` with a list of choices per context).
            batch_size: strings per call of the signature.

        Returns:
            `(results, stats)`: a list of dicts, one per example (see
            `keras_bert.pipelines` for the keys), and per example
            `{"tokens", "windows", "truncated_tokens"}` as the pipelines'
            `input_stats` give them (None for a SavedModel exported before
            `serve_text` reported them).
        """
        import tensorflow as tf  # defers TensorFlow, as in __init__

        if len(inputs) != len(self.text_inputs):
            raise ValueError(f"This {self.task} model takes {len(self.text_inputs)} inputs {self.text_inputs}; received {len(inputs)}.")
        columns = [_string_column(name, column, self.task) for name, column in zip(self.text_inputs, inputs)]
        sizes = {len(c) for c in columns}
        if len(sizes) != 1:
            raise ValueError(f"Inputs {self.text_inputs} have different lengths: {[len(c) for c in columns]}.")
        if self.task == "multiple_choice":
            counts = {len(choices) for choices in columns[1]}
            if len(counts) > 1:
                raise ValueError(f"Every context needs the same number of choices; received {sorted(counts)}.")
        if self._pipeline is not None:
            return self._pipeline_results(columns, batch_size)
        results, stats = [], []
        total = sizes.pop()
        for start in range(0, total, batch_size):
            feed = {
                name: tf.constant(column[start : start + batch_size], tf.string)
                for name, column in zip(self.text_inputs, columns)
            }
            outputs = {k: v.numpy() for k, v in self.serve_text(**feed).items()}
            results.extend(self._results(outputs, [c[start : start + batch_size] for c in columns]))
            stats.extend(_stats(outputs, len(columns[0][start : start + batch_size])))
        return results, stats

    def _pipeline_results(self, columns, batch_size):
        """`(results, stats)` of an ONNX / LiteRT export, through its task's pipeline."""
        self._pipeline.batch_size = batch_size
        if not columns[0]:
            return [], []
        results = self._pipeline(*columns)
        if self.task == "text_embedder":  # the pipeline's (texts, width) array, as the SavedModel's results
            results = [{"embedding": vector.tolist()} for vector in np.asarray(results)]
        return results, self._pipeline.input_stats(*columns)

    def _results(self, outputs, columns):
        task, n = self.task, len(columns[0])
        if task == "classifier":
            names = self.label_names or [str(i) for i in range(outputs["probabilities"].shape[-1])]
            return [
                {
                    "label": outputs["label"][i].decode("utf-8"),
                    "score": float(outputs["score"][i]),
                    "probabilities": {name: float(p) for name, p in zip(names, outputs["probabilities"][i])},
                }
                for i in range(n)
            ]
        if task == "regressor":
            return [{"value": float(v)} for v in outputs["value"]]
        if task == "token_classifier":
            return [
                [
                    {
                        "type": outputs["entity_type"][i, j].decode("utf-8"),
                        "text": outputs["entity_text"][i, j].decode("utf-8", errors="replace"),
                        "start": int(outputs["entity_start"][i, j]),
                        "end": int(outputs["entity_end"][i, j]),
                        "score": float(outputs["entity_score"][i, j]),
                    }
                    for j in range(int(outputs["num_entities"][i]))
                ]
                for i in range(n)
            ]
        if task == "question_answerer":
            return [
                {
                    "answer": outputs["answer"][i].decode("utf-8", errors="replace"),
                    "start": int(outputs["answer_start"][i]),
                    "end": int(outputs["answer_end"][i]),
                    "score": float(outputs["score"][i]),
                }
                for i in range(n)
            ]
        if task == "multiple_choice":
            return [
                {
                    "choice": int(outputs["choice"][i]),
                    "text": outputs["choice_text"][i].decode("utf-8", errors="replace"),
                    "score": float(outputs["score"][i]),
                    "probabilities": [float(p) for p in outputs["probabilities"][i]],
                }
                for i in range(n)
            ]
        if task == "text_embedder":
            return [{"embedding": np.asarray(outputs["embeddings"][i]).tolist()} for i in range(n)]
        # backbone: the [CLS] sentence embedding (pooled output).
        return [{"pooled_output": np.asarray(outputs["pooled_output"][i]).tolist()} for i in range(n)]


def _stats(outputs, n):
    """Per example `{"tokens", "windows", "truncated_tokens"}` from `serve_text`'s outputs, or None each."""
    if "num_windows" not in outputs:
        return [None] * n
    return [
        {
            "tokens": int(outputs["num_tokens"][i]),
            "windows": int(outputs["num_windows"][i]),
            "truncated_tokens": int(outputs["num_truncated_tokens"][i]),
        }
        for i in range(n)
    ]


def _string_column(name, column, task):
    """`column` as a list, refusing what `serve_text` would misread.

    Without this check a bare string is split into its characters, a nested
    list becomes a rank-2 tensor that the loaded signature flattens into more
    answers than inputs (the extra ones dropped), and `None` or a number
    fails inside TensorFlow with a message that names neither the input nor the item.
    """
    if isinstance(column, (str, bytes)) or not hasattr(column, "__iter__"):
        raise ValueError(f"`{name}` must be a list of strings, not {type(column).__name__}.")
    column = list(column)
    for i, item in enumerate(column):
        values = [item]
        if task == "multiple_choice" and name == "choices":  # a list of choices per context
            if isinstance(item, (str, bytes)) or not hasattr(item, "__iter__"):
                raise ValueError(f"`{name}` item {i} must be a list of strings, not {type(item).__name__}.")
            values = list(item)
        for value in values:
            if not isinstance(value, (str, bytes)):
                raise ValueError(f"`{name}` item {i} must be a string, not {type(value).__name__}.")
    return column
