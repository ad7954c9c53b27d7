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
tensorflow` (`keras_bert.export.tensorflow_worker`: torch cannot write
SavedModels; jax2tf cannot export the dynamic sequence length, see
ARCHITECTURE.md). Everything is written to a hidden
staging directory next to the target and renamed into place at the end: a
failed or interrupted export leaves no partial directory behind.
"""

import dataclasses
import json
import os
import tempfile

import keras

from keras_bert.atomic_files import staging_folder
from keras_bert.export.export_arguments import check_target, check_tokenizer
from keras_bert.export.export_files import METADATA_FILE, export_time, library_versions, write_lines
from keras_bert.export.saved_model.serving_options import ServingOptions
from keras_bert.export.tensorflow_worker import run_in_tensorflow

FORMAT = "keras_bert.saved_model"
FORMAT_VERSION = 1
_OPTION_NAMES = tuple(field.name for field in dataclasses.fields(ServingOptions))


def export_saved_model(
    model, directory, tokenizer, sequence_length=None, label_names=None, text_pair=False, overwrite=False, verbose=True,
    **options,
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
        verbose: print what was written.
        **options: the other `ServingOptions`, with their defaults there:
            `window_stride` (tokens between window starts over long texts,
            as the pipelines' `window_stride`); `max_query_length`,
            `doc_stride`, `max_answer_length`, `n_best_size`,
            `allow_no_answer`, `null_score_diff_threshold` (question
            answering, as in `QuestionAnswererPipeline`; the query length
            and stride are cut to fit as it cuts them); `training_backend`
            (recorded in the metadata; default the backend of this process).

    Returns:
        The metadata dict written to `assets/keras_bert_export.json`.

    Raises:
        ValueError: for a model that cannot be served, a missing or
            mismatched tokenizer, bad options, or an existing directory
            (without `overwrite`) — all before anything is written.
        TypeError: an option `ServingOptions` does not have.
    """
    # defers TensorFlow (task_outputs is TF graph code): `import keras_bert.export` must not import it
    from keras_bert.export.task_outputs import task_kind

    unknown = sorted(set(options) - set(_OPTION_NAMES))
    if unknown:
        raise TypeError(f"export_saved_model() got unexpected options {unknown}; it takes {list(_OPTION_NAMES)}")
    directory = os.path.abspath(os.fspath(directory))
    task = task_kind(model)
    backbone = model if task == "backbone" else model.backbone
    check_tokenizer(tokenizer, backbone, task)
    options = ServingOptions(sequence_length=sequence_length, label_names=label_names, text_pair=text_pair, **options)
    options = options.resolved(model, task, backbone, getattr(tokenizer, "separators_between", 1))
    check_target(directory, overwrite)
    arguments = {"directory": directory, "overwrite": overwrite, "options": dataclasses.asdict(options),
                 "verbose": verbose}
    return run_in_tensorflow(write_saved_model, model, tokenizer, arguments, "SavedModel export", verbose)


def write_saved_model(model, tokenizer, directory, overwrite, options, verbose):
    """Writes the SavedModel in this (TensorFlow) process, through a staging folder renamed into place.

    Args:
        model, tokenizer: as `export_saved_model` takes them, checked.
        directory: the absolute path of the SavedModel to create.
        overwrite: replace an existing `directory`.
        options: `ServingOptions` resolved for `model`, as a dict.
        verbose: print what was written.

    Returns:
        The metadata dict written to `assets/keras_bert_export.json`.
    """
    # defers TensorFlow: only the TensorFlow process that writes the SavedModel needs it
    import tensorflow as tf

    # defers TensorFlow (the serving module and task_outputs are TF code), as above
    from keras_bert.export.saved_model.serving_module import BertServingModule
    from keras_bert.export.task_outputs import task_kind  # TF graph code too, as above

    task = task_kind(model)
    options = ServingOptions(**options)
    metadata = _metadata(model, task, tokenizer, options)
    with tempfile.TemporaryDirectory(prefix="keras_bert_export_assets-") as sources:
        vocab_file = os.path.join(sources, "vocab.txt")
        write_lines(tokenizer.get_vocabulary(), vocab_file)
        labels_file = None
        if options.label_names:
            labels_file = os.path.join(sources, "labels.txt")
            write_lines(options.label_names, labels_file)
        metadata_file = os.path.join(sources, METADATA_FILE)
        with open(metadata_file, "w", encoding="utf-8") as f:
            json.dump(metadata, f, indent=2)
        module = BertServingModule(model, task, tokenizer, options, vocab_file, metadata_file, labels_file)
        signatures = module.signatures()
        with staging_folder(directory, overwrite) as staging:
            tf.saved_model.save(module, staging, signatures=signatures)
    if verbose:
        inputs = ", ".join(metadata["signatures"]["serve_text"])
        print(f"exported {task} to {directory} (serve_text({inputs}), serve_token_ids)")
    return metadata


def _metadata(model, task, tokenizer, options):
    backbone = model if task == "backbone" else model.backbone
    text_inputs = {
        "question_answerer": ["question", "context"],
        "multiple_choice": ["context", "choices"],
    }.get(task, ["text", "text_pair"] if options.text_pair else ["text"])
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "task": task,
        "model_class": type(model).__name__,
        "model_config": model.get_config(),
        "backbone_config": backbone.get_config(),
        "sequence_length": options.sequence_length,
        "label_names": options.label_names,
        "text_pair": options.text_pair,
        "windows": {"window_stride": options.window_stride},
        "question_answering": options.question_answering() if task == "question_answerer" else None,
        # Options only: the vocabulary is an asset, a SentencePiece model or BPE merges are in the graph.
        "tokenizer": {k: v for k, v in tokenizer.get_config().items() if k not in ("vocabulary", "proto", "merges")}
        | {"vocabulary_size": tokenizer.vocabulary_size(), "class": type(tokenizer).__name__},
        "signatures": {"serve_text": text_inputs, "serve_token_ids": ["token_ids", "segment_ids", "padding_mask"]},
        "training_backend": options.training_backend,
        "export_backend": keras.backend.backend(),
        "versions": library_versions("tensorflow_text"),
        "exported_at": export_time(),
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

