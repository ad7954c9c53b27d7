"""`export_saved_model`: a keras_bert model + its tokenizer → a TF SavedModel that takes raw strings.

    keras_bert.export_saved_model(classifier, "saved_models/sst", tokenizer=tokenizer, sequence_length=128)

    # anywhere, with no keras and no keras_bert installed:
    import tensorflow as tf, tensorflow_text  # tensorflow_text registers the tokenizer's ops
    served = tf.saved_model.load("saved_models/sst")
    served.signatures["serve_text"](text=tf.constant(["a gorgeous, witty, seductive movie."]))

The directory holds `saved_model.pb`, the variables, and as assets the
vocabulary (`vocab.txt`), the label names (`labels.txt`, one per line) and
`keras_bert_export.json` (task, model config, sequence length, tokenizer
options, the backend it was trained and exported on, library versions).

Export runs on the TensorFlow backend. Called on JAX or torch, the model is
saved as `.keras` and exported by a child process with `KERAS_BACKEND=
tensorflow` (torch cannot write SavedModels; jax2tf cannot export the dynamic
sequence length, see ARCHITECTURE.md). Everything is written to a hidden
staging directory next to the target and renamed into place at the end: a
failed or interrupted export leaves no partial directory behind.
"""

import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile

import keras

import keras_bert

METADATA_FILE = "keras_bert_export.json"
_WINDOW_OPTIONS = ("window_stride",)
_QA_OPTIONS = (
    "max_query_length", "doc_stride", "max_answer_length", "n_best_size", "allow_no_answer", "null_score_diff_threshold",
)
FORMAT = "keras_bert.saved_model"
FORMAT_VERSION = 1


def export_saved_model(
    model,
    directory,
    tokenizer,
    sequence_length=None,
    label_names=None,
    text_pair=False,
    overwrite=False,
    window_stride=None,
    max_query_length=64,
    doc_stride=128,
    max_answer_length=30,
    n_best_size=20,
    allow_no_answer=False,
    null_score_diff_threshold=0.0,
    training_backend=None,
    verbose=True,
):
    """Exports `model` with `serve_token_ids` and `serve_text` signatures.

    Args:
        model: a `BertBackbone`, `BertClassifier` (classes or regression),
            `BertTokenClassifier`, `BertQuestionAnswerer` or
            `BertMultipleChoice`, on any backend.
        directory: the SavedModel directory to create.
        tokenizer: the tokenizer the model was trained with: a
            `BertTokenizer`, or for ALBERT a `SentencePieceTokenizer` and for
            RoBERTa a `BytePairTokenizer` (classifiers, regressors, multiple
            choice and backbones; taggers and question answerers need a
            `BertTokenizer`'s offsets); required (it becomes part of the
            graph of `serve_text`).
        sequence_length: length texts are packed to in `serve_text` (default
            128, 384 for question answering, at most the model's
            `max_sequence_length`). Longer texts are read in overlapping
            windows exactly as the Python pipelines read them (a backbone's
            embeddings truncate instead). `serve_token_ids` takes any length
            up to `max_sequence_length`.
        label_names: names of the classes / tags; default `model.label_names`.
            Without names a classifier's `label` output is the class index.
        text_pair: whether a classifier's `serve_text` takes a second text
            (`text_pair`), for models fine-tuned on sentence pairs.
        overwrite: replace an existing `directory` (atomically).
        window_stride: tokens between window starts over long texts, as the
            pipelines' `window_stride` (default `(sequence_length - 2) // 2`;
            0: windows side by side).
        max_query_length, doc_stride, max_answer_length, n_best_size,
            allow_no_answer, null_score_diff_threshold: question answering
            options, as in `QuestionAnswererPipeline` (the query length and
            stride are cut to fit as it cuts them).
        training_backend: recorded in the metadata; default the backend of
            this process.
        verbose: print what was written.

    Returns:
        The metadata dict written to `assets/keras_bert_export.json`.

    Raises:
        ValueError: for a model that cannot be served, a missing or
            mismatched tokenizer, bad options, or an existing directory
            (without `overwrite`) — all before anything is written.
    """
    # defers TensorFlow (task_outputs is TF graph code): `import keras_bert.export` must not import it
    from keras_bert.export.task_outputs import task_kind

    directory = os.path.abspath(os.fspath(directory))
    task = task_kind(model)
    backbone = model if task == "backbone" else model.backbone
    _check_tokenizer(tokenizer, task, backbone)
    if sequence_length is None and task == "text_embedder":
        sequence_length = model.sequence_length  # the checkpoint's max_seq_length (None: as the others)
    if sequence_length is None:
        sequence_length = min(384 if task == "question_answerer" else 128, backbone.max_sequence_length)
    if not isinstance(sequence_length, int) or not 3 <= sequence_length <= backbone.max_sequence_length:
        raise ValueError(
            f"`sequence_length` must be an int in [3, {backbone.max_sequence_length}] (the model's "
            f"max_sequence_length); received {sequence_length!r}"
        )
    if label_names is None:
        label_names = getattr(model, "label_names", None)
    label_names = _check_label_names(model, task, label_names)
    if text_pair and task not in ("classifier", "regressor", "backbone"):
        raise ValueError(f"`text_pair` applies to classifiers and backbones, not to a {task}.")
    if task == "question_answerer":
        # The pipeline's rule (question at most half the sequence), so both read the same windows.
        max_query_length, doc_stride = _fit_qa_lengths(sequence_length, doc_stride, max_query_length)
    if window_stride is None:
        window_stride = (sequence_length - 2) // 2
    if not isinstance(window_stride, int) or window_stride < 0:
        raise ValueError(f"`window_stride` must be an int >= 0; received {window_stride!r}")
    if os.path.exists(directory) and not overwrite:
        raise ValueError(f"{directory} already exists; pass overwrite=True (--overwrite) to replace it.")
    parent = os.path.dirname(directory)
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise ValueError(f"{parent} is not a directory (the export's parent must be a folder).")

    options = dict(
        sequence_length=sequence_length,
        label_names=label_names,
        text_pair=bool(text_pair),
        window_stride=window_stride,
        max_query_length=max_query_length,
        doc_stride=doc_stride,
        max_answer_length=max_answer_length,
        n_best_size=n_best_size,
        allow_no_answer=bool(allow_no_answer),
        null_score_diff_threshold=float(null_score_diff_threshold),
        training_backend=training_backend or keras.backend.backend(),
    )
    if keras.backend.backend() != "tensorflow":
        return _export_in_tensorflow_process(model, tokenizer, directory, overwrite, options, verbose)
    return _export_here(model, task, tokenizer, directory, overwrite, options, verbose)


def _check_tokenizer(tokenizer, task, backbone):
    """Raises ValueError for a missing tokenizer, one that cannot serve `task`, or another vocabulary."""
    if tokenizer is None:
        raise ValueError(
            "`tokenizer` is required: `serve_text` tokenizes raw strings inside the graph. Pass the "
            "BertTokenizer the model was trained with, e.g. BertTokenizer.from_pretrained(path)."
        )
    if task in ("token_classifier", "question_answerer") and not hasattr(tokenizer, "tokenize_with_offsets"):
        raise ValueError(
            f"A {task}'s serve_text maps tokens back to characters, which needs a tokenizer with "
            f"`tokenize_with_offsets` (BertTokenizer); {type(tokenizer).__name__} has none."
        )
    if tokenizer.vocabulary_size() != backbone.vocabulary_size:
        raise ValueError(
            f"The tokenizer has {tokenizer.vocabulary_size()} tokens but the model's vocabulary_size is "
            f"{backbone.vocabulary_size}: they do not belong together."
        )


def _fit_qa_lengths(sequence_length, doc_stride, max_query_length):
    # defers TensorFlow (squad_data tokenizes with it): `import keras_bert.export` must not import it
    from keras_bert.preprocessing.tasks.squad_data import fit_qa_lengths

    max_query_length, doc_stride = fit_qa_lengths(sequence_length, doc_stride, max_query_length)
    if doc_stride < 1:
        raise ValueError(f"`doc_stride` must be >= 1; received {doc_stride!r}")
    return max_query_length, doc_stride


def _check_label_names(model, task, label_names):
    if task in ("backbone", "regressor", "question_answerer", "multiple_choice", "text_embedder"):
        return None
    if label_names is None:
        if task == "token_classifier":
            raise ValueError(
                "A token classifier needs `label_names` (its BIO tags, e.g. ['O', 'B-PER', 'I-PER']) to "
                "decode entities; pass label_names=... or set them on the model."
            )
        return None
    label_names = [str(n) for n in label_names]
    if len(label_names) != model.num_classes:
        raise ValueError(f"{len(label_names)} label names for a model with {model.num_classes} classes.")
    for name in label_names:
        if not name or "\n" in name or "\r" in name or name != name.strip():
            raise ValueError(f"Label name {name!r} cannot be exported: names must be non-empty single lines.")
    return label_names


def _export_in_tensorflow_process(model, tokenizer, directory, overwrite, options, verbose):
    """Saves `.keras` + tokenizer settings, then runs this export in a TensorFlow child process."""
    spec = {"directory": directory, "overwrite": overwrite, "options": options, "verbose": verbose}
    _run_worker(model, tokenizer, spec, verbose)
    return read_metadata(directory)


def _run_worker(model, tokenizer, spec, verbose):
    """Runs `export_worker.py` on `model` saved as `.keras`, with `spec` (format, directory, options).

    Raises:
        RuntimeError: the child process failed, with the last line of its stderr.
    """
    with tempfile.TemporaryDirectory(prefix="keras_bert_export-") as scratch:
        model_path = os.path.join(scratch, "model.keras")
        model.save(model_path)
        # The whole tokenizer (any of the three classes), as keras serialises it.
        spec = {**spec, "model": model_path, "tokenizer": keras.saving.serialize_keras_object(tokenizer)}
        spec_path = os.path.join(scratch, "spec.json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump(spec, f)
        env = dict(os.environ, KERAS_BACKEND="tensorflow")
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        if verbose:
            print(f"exporting in a TensorFlow process (this process runs {keras.backend.backend()}) ...", flush=True)
        result = subprocess.run(
            [sys.executable, "-m", "keras_bert.export.export_worker", spec_path],
            env=env, stdout=None if verbose else subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        if result.returncode != 0:
            lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
            reason = lines[-1] if lines else f"exit code {result.returncode}"
            what = {"onnx": "ONNX export", "litert": "LiteRT export"}.get(spec.get("format"), "SavedModel export")
            raise RuntimeError(f"{what} in the TensorFlow process failed: {reason}")


def _export_here(model, task, tokenizer, directory, overwrite, options, verbose):
    # defers TensorFlow: only the TensorFlow process that writes the SavedModel needs it
    import tensorflow as tf

    # defers TensorFlow (the serving module is TF code), as above
    from keras_bert.export.serving_module import BertServingModule

    metadata = _metadata(model, task, tokenizer, options)
    parent = os.path.dirname(directory)
    name = os.path.basename(directory)
    os.makedirs(parent or ".", exist_ok=True)  # as the training jobs create their --out folders
    staging = tempfile.mkdtemp(prefix=f".{name}.partial-", dir=parent)
    # mkdtemp makes a private (0700) folder; the export is an ordinary folder (0777 less the umask).
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)
    sources = tempfile.mkdtemp(prefix="keras_bert_export_assets-")
    try:
        vocab_file = os.path.join(sources, "vocab.txt")
        _write_lines(tokenizer.get_vocabulary(), vocab_file)
        labels_file = None
        if options["label_names"]:
            labels_file = os.path.join(sources, "labels.txt")
            _write_lines(options["label_names"], labels_file)
        metadata_file = os.path.join(sources, METADATA_FILE)
        with open(metadata_file, "w", encoding="utf-8") as f:
            json.dump(metadata, f, indent=2)
        module = BertServingModule(
            model,
            task,
            tokenizer,
            options["sequence_length"],
            vocab_file=vocab_file,
            metadata_file=metadata_file,
            labels_file=labels_file,
            label_names=options["label_names"],
            text_pair=options["text_pair"],
            **{k: options[k] for k in _WINDOW_OPTIONS + _QA_OPTIONS},
        )
        signatures = module.signatures()
        tf.saved_model.save(module, staging, signatures=signatures)
        _fsync_tree(staging)
        _move_into_place(staging, directory, overwrite)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(sources, ignore_errors=True)
    if verbose:
        inputs = ", ".join(metadata["signatures"]["serve_text"])
        print(f"exported {task} to {directory} (serve_text({inputs}), serve_token_ids)")
    return metadata


def _metadata(model, task, tokenizer, options):
    # defers TensorFlow: imported only to record the versions the SavedModel was written with
    import tensorflow as tf
    import tensorflow_text  # its version goes into the metadata too

    backbone = model if task == "backbone" else model.backbone
    text_inputs = {
        "question_answerer": ["question", "context"],
        "multiple_choice": ["context", "choices"],
    }.get(task, ["text", "text_pair"] if options["text_pair"] else ["text"])
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "task": task,
        "model_class": type(model).__name__,
        "model_config": model.get_config(),
        "backbone_config": backbone.get_config(),
        "sequence_length": options["sequence_length"],
        "label_names": options["label_names"],
        "text_pair": options["text_pair"],
        "windows": {k: options[k] for k in _WINDOW_OPTIONS},
        "question_answering": {k: options[k] for k in _QA_OPTIONS} if task == "question_answerer" else None,
        # Options only: the vocabulary is an asset, a SentencePiece model or BPE merges are in the graph.
        "tokenizer": {k: v for k, v in tokenizer.get_config().items() if k not in ("vocabulary", "proto", "merges")}
        | {"vocabulary_size": tokenizer.vocabulary_size(), "class": type(tokenizer).__name__},
        "signatures": {"serve_text": text_inputs, "serve_token_ids": ["token_ids", "segment_ids", "padding_mask"]},
        "training_backend": options["training_backend"],
        "export_backend": keras.backend.backend(),
        "versions": {
            "keras_bert": keras_bert.__version__,
            "keras": keras.__version__,
            "tensorflow": tf.__version__,
            "tensorflow_text": tensorflow_text.__version__,
        },
        "exported_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def read_metadata(directory):
    """The `keras_bert_export.json` of an exported directory, with clear errors for what is not one."""
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise ValueError(f"{directory} is not a directory (expected an exported SavedModel).")
    if not os.path.isfile(os.path.join(directory, "saved_model.pb")):
        raise ValueError(f"{directory} is not a SavedModel: it has no saved_model.pb.")
    path = os.path.join(directory, "assets", METADATA_FILE)
    if not os.path.isfile(path):
        raise ValueError(
            f"{directory} has no assets/{METADATA_FILE}: not exported by keras_bert, or its assets are missing."
        )
    with open(path, encoding="utf-8") as f:
        metadata = json.load(f)
    if metadata.get("format") != FORMAT:
        raise ValueError(f"{path} is not keras_bert export metadata.")
    return metadata


def _write_lines(lines, path):
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(line + "\n" for line in lines))


def _fsync_tree(root):
    for folder, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                os.fsync(f.fileno())


def _move_into_place(staging, directory, overwrite):
    """Renames the finished export to `directory`; an old one is swapped out first, then deleted."""
    if not os.path.exists(directory):
        os.rename(staging, directory)
        return
    if not overwrite:
        raise ValueError(f"{directory} appeared during the export; not replacing it.")
    old = tempfile.mkdtemp(prefix=f".{os.path.basename(directory)}.old-", dir=os.path.dirname(directory))
    os.rmdir(old)
    os.rename(directory, old)
    os.rename(staging, directory)
    shutil.rmtree(old, ignore_errors=True)
