"""`export_onnx` and `export_litert`: a model's token-id graph for ONNX Runtime or LiteRT, its tokenizer beside it.

    keras_bert.export.export_onnx(classifier, "saved_models/sst_onnx", tokenizer, quantize="int8")
    keras_bert.export.ExportedModel("saved_models/sst_onnx").predict(["a gorgeous, witty movie."])

The directory holds the graph (`model.onnx`, with `quantize="int8"` also
`model.int8.onnx`; or `model.tflite`), the tokenizer (`tokenizer.json`, the
Keras serialisation of the tokenizer object, and `vocab.txt`), `labels.txt`
and `keras_bert_export.json` (format `keras_bert.onnx` / `keras_bert.litert`,
task, graph inputs and outputs, opset, the files, pipeline options).

Unlike the SavedModel, the graph takes token ids, not strings:
`ExportedModel` tokenizes with the keras_bert tokenizer (tensorflow-text)
and reads long texts in windows with the Python pipelines, so its results
are the pipelines' on the same texts. Graph inputs are int32 `token_ids`,
`segment_ids`, `padding_mask` of shape `(batch, length)` (`(batch,
num_choices, length)` for multiple choice): ONNX takes any batch and any
length up to the model's `max_sequence_length`; LiteRT any batch and exactly
the exported `sequence_length` (pad shorter inputs; padding is masked).

Conversion runs on the TensorFlow backend (tf2onnx, TFLiteConverter); called
on JAX or torch, the model is saved as `.keras` and converted by the same
TensorFlow child process as the SavedModel export (`tensorflow_worker`).
"""

import importlib.util
import json
import os

import keras

from keras_bert.atomic_files import staging_folder
from keras_bert.export.export_arguments import (
    check_label_names,
    check_sequence_length,
    check_target,
    check_tokenizer,
    default_sequence_length,
)
from keras_bert.export.export_files import METADATA_FILE, export_time, library_versions, write_lines
from keras_bert.export.tensorflow_worker import run_in_tensorflow

FORMATS = {"onnx": "keras_bert.onnx", "litert": "keras_bert.litert"}
# What each format's conversion and runtime import, and the extra that installs them.
_REQUIREMENTS = {"onnx": ("onnx", "onnxruntime", "tf2onnx"), "litert": ("ai_edge_litert",)}
_DESCRIPTIONS = {"onnx": "ONNX export", "litert": "LiteRT export"}
_PIPELINE_OPTIONS = ("window_stride", "doc_stride", "max_query_length", "max_answer_length", "allow_no_answer",
                     "null_score_diff_threshold", "lowercase")


def runtime_format(directory):
    """"onnx" or "litert" for a directory written by `export_onnx` / `export_litert`, else None."""
    path = os.path.join(os.fspath(directory), METADATA_FILE)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        found = json.load(f).get("format")
    return next((name for name, value in FORMATS.items() if value == found), None)


def read_runtime_metadata(directory):
    """The `keras_bert_export.json` of an ONNX or LiteRT export, with clear errors for what is not one."""
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise ValueError(f"{directory} is not a directory (expected an ONNX or LiteRT export).")
    if runtime_format(directory) is None:
        raise ValueError(f"{directory} has no {METADATA_FILE} of an ONNX or LiteRT export (keras-bert export --format onnx).")
    with open(os.path.join(directory, METADATA_FILE), encoding="utf-8") as f:
        metadata = json.load(f)
    for file in metadata["files"].values():
        if not os.path.isfile(os.path.join(directory, file)):
            raise ValueError(f"{directory}: {file} is missing (the export is incomplete).")
    return metadata


def require_runtime(format):
    """Raises ImportError naming the pip extra when `format`'s packages are not installed."""
    missing = [name for name in _REQUIREMENTS[format] + ("tensorflow",) if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(
            f"exporting to {format} needs {', '.join(missing)}, which is not installed: "
            f"pip install 'keras-bert[{format}]'"
        )


def export_onnx(model, directory, tokenizer, quantize=None, opset=None, **options):
    """Exports `model`'s token-id graph as ONNX with dynamic batch and length, its tokenizer beside it.

    Args:
        model: a `BertBackbone` or a keras_bert task model (any backend).
        directory: the directory to create.
        tokenizer: the tokenizer the model was trained with (saved beside the graph).
        quantize: None (fp32 only) or "int8": also write `model.int8.onnx`,
            dynamically quantized, which `ExportedModel` then runs by default.
        opset: the ONNX opset, 13 to 18 (default 17).
        **options: `sequence_length` (what `ExportedModel` packs texts to;
            the graph takes any length), `label_names`, `text_pair`,
            `window_stride`, question answering options, `overwrite`,
            `verbose`, as `export_saved_model` takes them; `lowercase`
            for a text embedder whose pipeline lowercases texts (recorded,
            and applied by `ExportedModel`).

    Returns:
        The metadata dict written to `keras_bert_export.json`.

    Raises:
        ImportError: onnx, onnxruntime or tf2onnx is not installed (names the extra).
        ValueError: bad options, as `export_saved_model` raises them.
    """
    if quantize not in (None, "int8"):
        raise ValueError(f"`quantize` must be None or 'int8'; received {quantize!r}")
    # 18: the newest opset tf2onnx 1.17 writes; 13: the oldest with the ops BERT needs as we convert them.
    if opset is not None and (not isinstance(opset, int) or not 13 <= opset <= 18):
        raise ValueError(f"`opset` must be an int in [13, 18] (what tf2onnx writes); received {opset!r}")
    return _export("onnx", model, directory, tokenizer, dict(quantize=quantize, opset=opset or 17), options)


def export_litert(model, directory, tokenizer, **options):
    """Exports `model`'s token-id graph as LiteRT (`.tflite`): any batch, a fixed `sequence_length`.

    Args and raises as `export_onnx` (without `quantize` and `opset`); the
    graph's length is `sequence_length` (default 128, 384 for question
    answering, at most the model's `max_sequence_length`).
    """
    return _export("litert", model, directory, tokenizer, {}, options)


def _export(format, model, directory, tokenizer, graph_options, options):
    require_runtime(format)
    # defers TensorFlow (task_outputs is TF graph code): `import keras_bert.export` must not import it
    from keras_bert.export.task_outputs import task_kind

    overwrite, verbose = options.pop("overwrite", False), options.pop("verbose", True)
    known = {"sequence_length", "label_names", "text_pair", "training_backend"} | set(_PIPELINE_OPTIONS) | {"n_best_size"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"export_{format}() got unexpected options {unknown}")
    directory = os.path.abspath(os.fspath(directory))
    task = task_kind(model)
    backbone = model if task == "backbone" else model.backbone
    check_tokenizer(tokenizer, backbone, task, role="it is saved beside the graph, which takes token ids")
    if format == "onnx" and (backbone.compute_dtype != "float32" or backbone.variable_dtype != "float32"):
        # tf2onnx writes mixed float16/bfloat16 types into the projections' Gemm, which onnxruntime
        # refuses to load; its CPU kernels are float32 and int8 anyway.
        raise ValueError(
            f"ONNX export takes a float32 model; this one computes in {backbone.compute_dtype} with "
            f"{backbone.variable_dtype} weights. Load or rebuild it with dtype='float32' and export that "
            "(quantize='int8' makes the smaller, faster graph)."
        )
    if format == "litert" and task == "multiple_choice":
        raise ValueError("LiteRT export takes (batch, length) inputs; a multiple-choice model needs ONNX or a SavedModel.")
    length = options.get("sequence_length")
    if length is None:
        length = default_sequence_length(model, task, backbone)
    check_sequence_length(length, backbone)
    label_names = check_label_names(model, task, options.get("label_names") or getattr(model, "label_names", None))
    if options.get("text_pair") and task not in ("classifier", "regressor"):
        raise ValueError(f"`text_pair` applies to classifiers, not to a {task}.")
    check_target(directory, overwrite)
    spec_options = {
        **graph_options,
        "sequence_length": length,
        "label_names": label_names,
        "text_pair": bool(options.get("text_pair")),
        "pipeline": {k: options[k] for k in _PIPELINE_OPTIONS if options.get(k) is not None},
        "training_backend": options.get("training_backend") or keras.backend.backend(),
    }
    arguments = {"format": format, "directory": directory, "overwrite": overwrite, "options": spec_options,
                 "verbose": verbose}
    return run_in_tensorflow(write_runtime_export, model, tokenizer, arguments, _DESCRIPTIONS[format], verbose)


def write_runtime_export(model, tokenizer, format, directory, overwrite, options, verbose=True):
    """Converts in this (TensorFlow) process into a staging folder, then renames it into place.

    Args:
        model, tokenizer: as `export_onnx` / `export_litert` take them, checked.
        format: "onnx" or "litert".
        directory: the absolute path of the export to create.
        overwrite: replace an existing `directory`.
        options: the checked options: `sequence_length`, `label_names`,
            `text_pair`, `pipeline` (the pipeline options to record),
            `training_backend`, and for ONNX `quantize` and `opset`.
        verbose: print what was written.

    Returns:
        The metadata dict written to `keras_bert_export.json`.
    """
    # defers TensorFlow and the converters: only the TensorFlow process that converts needs them
    from keras_bert.export.onnx_litert import graph_conversion
    from keras_bert.export.task_outputs import task_kind  # TF graph code, as above

    task = task_kind(model)
    with staging_folder(directory, overwrite) as staging:
        files = {}
        if format == "onnx":
            names = graph_conversion.to_onnx(model, task, os.path.join(staging, "model.onnx"), options["opset"])
            files["fp32"] = "model.onnx"
            if options["quantize"] == "int8":
                graph_conversion.quantize_int8(os.path.join(staging, "model.onnx"), os.path.join(staging, "model.int8.onnx"))
                files["int8"] = "model.int8.onnx"
        else:
            names = graph_conversion.to_litert(model, task, os.path.join(staging, "model.tflite"), options["sequence_length"])
            files["fp32"] = "model.tflite"
        write_lines(tokenizer.get_vocabulary(), os.path.join(staging, "vocab.txt"))
        with open(os.path.join(staging, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(keras.saving.serialize_keras_object(tokenizer), f)
        if options["label_names"]:
            write_lines(options["label_names"], os.path.join(staging, "labels.txt"))
        metadata = _metadata(format, model, task, options, names, files)
        with open(os.path.join(staging, METADATA_FILE), "w", encoding="utf-8") as f:
            json.dump(metadata, f, indent=2)
    if verbose:
        sizes = ", ".join(f"{f} {os.path.getsize(os.path.join(directory, f)) / 2**20:.1f} MiB" for f in files.values())
        print(f"exported {task} to {directory} ({sizes})")
    return metadata


def _metadata(format, model, task, options, names, files):
    backbone = model if task == "backbone" else model.backbone
    text_inputs = {"question_answerer": ["question", "context"], "multiple_choice": ["context", "choices"]}.get(
        task, ["text", "text_pair"] if options["text_pair"] else ["text"]
    )
    return {
        "format": FORMATS[format],
        "format_version": 1,
        "task": task,
        "model_class": type(model).__name__,
        "backbone_config": backbone.get_config(),
        "num_classes": getattr(model, "num_classes", None),
        "sequence_length": options["sequence_length"],
        "label_names": options["label_names"],
        "text_pair": options["text_pair"],
        "text_inputs": text_inputs,
        "pipeline_options": options["pipeline"],
        "inputs": ["token_ids", "segment_ids", "padding_mask"],
        "outputs": names,
        # The graph returns one tensor (logits, embeddings) or a dict (question answering, backbone).
        "output_is_dict": isinstance(model.output, dict),
        "files": files,
        "default_precision": "int8" if "int8" in files else "fp32",
        "opset": options.get("opset"),
        "dynamic_axes": ["batch", "length"] if format == "onnx" else ["batch"],
        "training_backend": options["training_backend"],
        "export_backend": keras.backend.backend(),
        "versions": library_versions(*_REQUIREMENTS[format]),
        "exported_at": export_time(),
    }

