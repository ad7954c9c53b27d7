"""RuntimeModel: an ONNX or LiteRT export run by its runtime, looking like the Keras model to the pipelines.

    model = RuntimeModel("saved_models/sst_onnx")            # model.int8.onnx if exported with int8
    model.predict_on_batch({"token_ids": ..., "segment_ids": ..., "padding_mask": ...})  # the logits

    fast = RuntimeModel.from_model(classifier, tokenizer)    # a Keras model's ONNX Runtime route, int8

The text pipelines (`keras_bert.pipelines`) call a model's `predict` /
`predict_on_batch` on packed int32 arrays and read `num_classes`,
`label_names` and `backbone.max_sequence_length`; this class gives them
exactly that over onnxruntime or the LiteRT interpreter, so an export reads
texts (windows, entity spans, answers) exactly as the Keras model does.
"""

import os
import shutil
import tempfile
import types
import weakref

import numpy as np

from keras_bert.export.batched_predict import predict_in_batches
from keras_bert.export.onnx_litert.onnx_litert_export import (
    export_onnx,
    read_runtime_metadata,
    require_runtime,
    runtime_format,
)

_INPUTS = ("token_ids", "segment_ids", "padding_mask")
# Tasks whose outputs have a sequence axis (axis 1 of `(batch, length, ...)`), cut back after LiteRT's padding.
_PER_TOKEN = {"token_classifier": None, "question_answerer": None, "backbone": ("sequence_output",)}


class RuntimeModel:
    """The graph of an `export_onnx` / `export_litert` directory, called like a Keras task model.

    The pipelines cut each batch to its longest row exactly (`length_multiple`
    1): onnxruntime runs every length without a new trace, and a LiteRT graph
    pads to its one length inside `predict_on_batch` anyway.

    Args:
        directory: the export's directory.
        precision: "fp32" or "int8" (ONNX exported with `quantize="int8"`);
            default the export's `default_precision`.
        num_threads: intra-op threads of the runtime (default: its own choice).

    Raises:
        ValueError: not an ONNX / LiteRT export, or no such precision in it.
        ImportError: the runtime is not installed (names the pip extra).
    """

    # Read by `TaskPipeline._predict_trimmed`: batch lengths need no rounding (a traced Keras step rounds to 8).
    length_multiple = 1

    def __init__(self, directory, precision=None, num_threads=None):
        self.directory = os.fspath(directory)
        self.metadata = read_runtime_metadata(self.directory)
        self.format = runtime_format(self.directory)
        require_runtime(self.format)
        files = self.metadata["files"]
        self.precision = precision or self.metadata["default_precision"]
        if self.precision not in files:
            raise ValueError(f"{self.directory} has no {precision!r} graph; it holds {sorted(files)}.")
        self.path = os.path.join(self.directory, files[self.precision])
        self.task = self.metadata["task"]
        self.label_names = self.metadata["label_names"]
        self.num_classes = self.metadata["num_classes"]
        config = self.metadata["backbone_config"]
        self.backbone = types.SimpleNamespace(
            max_sequence_length=config["max_sequence_length"], hidden_dim=config["hidden_dim"]
        )
        self.sequence_length = self.metadata["sequence_length"]
        self._names = self.metadata["outputs"]
        if self.format == "onnx":
            self._run = self._onnx_runner(num_threads)
        else:
            self._run = self._litert_runner(num_threads)

    @classmethod
    def from_model(cls, model, tokenizer, precision="int8", directory=None, num_threads=None, **options):
        """A Keras model's ONNX Runtime route: exports it (`export_onnx`) and opens the graph, in one call.

        For when inference speed matters more than staying in Keras: the int8 graph is the fastest forward
        pass the package has on a CPU, on every Keras backend (the export converts in a TensorFlow child
        process where the backend is not TensorFlow), and the task pipelines take the result in place of
        the model. Its accuracy: `check_int8_accuracy`, or `keras-bert export --eval-file`.

            fast = RuntimeModel.from_model(classifier, tokenizer)             # int8, a temporary folder
            TextClassifierPipeline(fast, tokenizer)(["a gorgeous, witty movie."])

        Args:
            model: a float32 `BertBackbone` or keras_bert task model, any backend.
            tokenizer: its tokenizer (saved beside the graph, as `export_onnx` does).
            precision: "int8" (dynamically quantized, the fast one) or "fp32".
            directory: where to write the export and keep it; default a temporary
                folder, removed when this object is garbage-collected.
            num_threads: the runtime's intra-op threads (default its own choice).
            **options: `export_onnx`'s options (`sequence_length`, `label_names`, ...).

        Raises:
            ValueError: an unknown precision, or what `export_onnx` refuses.
            ImportError: the ONNX extra is not installed (names it).
        """
        if precision not in ("fp32", "int8"):
            raise ValueError(f"`precision` must be 'fp32' or 'int8'; received {precision!r}")
        scratch = None
        if directory is None:
            scratch = tempfile.mkdtemp(prefix="keras-bert-onnx-")
            directory = os.path.join(scratch, "export")
        try:
            export_onnx(model, directory, tokenizer, quantize="int8" if precision == "int8" else None,
                        verbose=options.pop("verbose", False), **options)
            runtime = cls(directory, precision=precision, num_threads=num_threads)
        except BaseException:
            if scratch:
                shutil.rmtree(scratch, ignore_errors=True)
            raise
        if scratch:
            # onnxruntime holds the graph in memory once the session is made: the folder can go with the object.
            weakref.finalize(runtime, shutil.rmtree, scratch, ignore_errors=True)
        return runtime

    def __repr__(self):
        return f"RuntimeModel({self.directory!r}, format={self.format!r}, precision={self.precision!r}, task={self.task!r})"

    def _onnx_runner(self, num_threads):
        import onnxruntime  # defers the runtime (an extra) until an ONNX export is opened

        options = onnxruntime.SessionOptions()
        if num_threads:
            options.intra_op_num_threads = num_threads
        session = onnxruntime.InferenceSession(self.path, options, providers=["CPUExecutionProvider"])
        return lambda feed: session.run(self._names, feed)

    def _litert_runner(self, num_threads):
        from ai_edge_litert.interpreter import Interpreter  # defers the runtime (an extra) until a LiteRT export is opened

        interpreter = Interpreter(model_path=self.path, num_threads=num_threads)
        runner = interpreter.get_signature_runner()
        length = self.sequence_length

        def run(feed):
            width = feed["token_ids"].shape[-1]
            if width > length:
                raise ValueError(f"this LiteRT export takes sequences of at most {length} tokens; received {width}")
            # The graph's length is fixed: pad to it (padding is masked), then cut per-token outputs back.
            padded = {k: np.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, length - width)]) for k, v in feed.items()}
            outputs = runner(**padded)
            values = [outputs[f"output_{i}"] for i in range(len(self._names))]
            per_token = _PER_TOKEN.get(self.task, ())
            return [v[:, :width] if per_token is None or name in per_token else v for name, v in zip(self._names, values)]

        return run

    def outputs(self, inputs):
        """`{name: array}`: the graph's outputs on a dict of `token_ids`, `segment_ids`, `padding_mask`."""
        missing = [k for k in _INPUTS if k not in inputs]
        if missing:
            raise ValueError(f"inputs need {list(_INPUTS)}; missing {missing}")
        feed = {k: np.asarray(inputs[k]).astype("int32") for k in _INPUTS}
        shapes = {k: v.shape for k, v in feed.items()}
        rank = 3 if self.task == "multiple_choice" else 2
        if len(set(shapes.values())) != 1 or feed["token_ids"].ndim != rank:
            raise ValueError(f"inputs must be int arrays of one shape of rank {rank}; received shapes {shapes}")
        if feed["token_ids"].shape[-1] > self.backbone.max_sequence_length:
            raise ValueError(
                f"sequences of {feed['token_ids'].shape[-1]} tokens are longer than the model's "
                f"max_sequence_length {self.backbone.max_sequence_length}"
            )
        return dict(zip(self._names, self._run(feed)))

    def predict_on_batch(self, inputs):
        """The model's output on one batch, structured as `keras.Model.predict_on_batch` returns it."""
        outputs = self.outputs(inputs)
        return outputs if self.metadata["output_is_dict"] else outputs[self._names[0]]

    def predict(self, inputs, batch_size=32, verbose=0):
        """`predict_on_batch` over batches of `batch_size` rows, concatenated (`verbose` is ignored)."""
        return predict_in_batches(self.predict_on_batch, {k: np.asarray(v) for k, v in inputs.items()}, batch_size)

