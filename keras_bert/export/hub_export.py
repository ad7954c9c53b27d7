"""`export_hub_encoder`: a backbone as TF Hub-style encoder + preprocessor SavedModels, for further training.

    keras_bert.export.export_hub_encoder(backbone, "saved_models/minilm_hub", tokenizer, seq_length=128)

writes two SavedModels that follow the conventions of tfhub.dev's BERT models:

    saved_models/minilm_hub/encoder/        {input_word_ids, input_mask, input_type_ids} →
                                            {pooled_output, sequence_output, encoder_outputs, default};
                                            trainable variables, callable with training=True/False
    saved_models/minilm_hub/preprocessor/   strings → encoder inputs; .tokenize, .bert_pack_inputs

so a classifier is fine-tuned on the exported encoder with `hub.KerasLayer(
".../encoder", trainable=True)` under tf-keras, or `keras.layers.TFSMLayer(
".../encoder", call_training_endpoint="serve_training", trainable=True)` under
Keras 3, and `BertBackbone.from_pretrained(".../encoder")` reads the weights
back on any backend. Unlike `export_saved_model` (raw strings in, a task's
answers out, for serving), these are building blocks for training.

Each SavedModel has `assets/keras_bert_export.json` (its format, the backbone
config, the tokenizer options, versions). Export runs on the TensorFlow
backend; on JAX or torch the model goes through a `.keras` file to a
TensorFlow child process, as for `export_saved_model`. Both SavedModels are
written to a hidden staging folder and renamed into place together.
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
from keras_bert.export.saved_model_export import METADATA_FILE, _fsync_tree, _move_into_place, _write_lines

ENCODER_FORMAT = "keras_bert.hub_encoder"
PREPROCESSOR_FORMAT = "keras_bert.hub_preprocessor"
FORMAT_VERSION = 1
ENCODER_DIR = "encoder"
PREPROCESSOR_DIR = "preprocessor"


def _backbone_of(model):
    backbone = model if _is_backbone(model) else getattr(model, "backbone", None)
    if not _is_backbone(backbone):
        raise ValueError(
            f"export_hub_encoder takes a BertBackbone or a model with one (e.g. a BertClassifier); "
            f"received a {type(model).__name__}."
        )
    return backbone


def _is_backbone(model):
    return any(cls.__name__ == "BertBackbone" for cls in type(model).__mro__)


def export_hub_encoder(model, directory, tokenizer, seq_length=128, overwrite=False, verbose=True):
    """Writes `directory/encoder` and `directory/preprocessor` (see the module docstring).

    Args:
        model: a `BertBackbone`, or a task model whose backbone is exported
            (its head is not), on any backend.
        directory: the folder to create.
        tokenizer: the `BertTokenizer` the backbone was trained with; it
            becomes the preprocessor's graph.
        seq_length: the sequence length of the preprocessor's default call
            (`bert_pack_inputs` takes any); at most the model's
            `max_sequence_length`.
        overwrite: replace an existing `directory` (atomically).
        verbose: print what was written.

    Returns:
        `{"encoder": path, "preprocessor": path}`.

    Raises:
        ValueError: for a model without a BertBackbone, a packed-input
            backbone, a missing or mismatched tokenizer, a bad `seq_length`
            or an existing directory (without `overwrite`), before anything
            is written.
    """
    directory = os.path.abspath(os.fspath(directory))
    backbone = _backbone_of(model)
    if getattr(backbone, "packed_inputs", False):
        raise ValueError(
            "A backbone with packed_inputs=True takes sequence_ids and position_ids, which TF Hub's encoder API "
            "does not have; rebuild it unpacked: BertBackbone.from_pretrained(path, packed_inputs=False)."
        )
    if tokenizer is None:
        raise ValueError("`tokenizer` is required: it becomes the preprocessor SavedModel (pass the BertTokenizer "
                         "the model was trained with, e.g. BertTokenizer.from_pretrained(path)).")
    if tokenizer.vocabulary_size() != backbone.vocabulary_size:
        raise ValueError(
            f"The tokenizer has {tokenizer.vocabulary_size()} tokens but the model's vocabulary_size is "
            f"{backbone.vocabulary_size}: they do not belong together."
        )
    if not isinstance(seq_length, int) or not 3 <= seq_length <= backbone.max_sequence_length:
        raise ValueError(
            f"`seq_length` must be an int in [3, {backbone.max_sequence_length}] (the model's "
            f"max_sequence_length); received {seq_length!r}"
        )
    if os.path.exists(directory) and not overwrite:
        raise ValueError(f"{directory} already exists; pass overwrite=True (--overwrite) to replace it.")
    parent = os.path.dirname(directory)
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise ValueError(f"{parent} is not a directory (the export's parent must be a folder).")
    if keras.backend.backend() != "tensorflow":
        _export_in_tensorflow_process(backbone, tokenizer, directory, seq_length, overwrite, verbose)
    else:
        _export_here(backbone, tokenizer, directory, seq_length, overwrite, verbose)
    return {"encoder": os.path.join(directory, ENCODER_DIR), "preprocessor": os.path.join(directory, PREPROCESSOR_DIR)}


def _export_in_tensorflow_process(backbone, tokenizer, directory, seq_length, overwrite, verbose):
    """Saves `.keras` + tokenizer settings, then runs this export in a TensorFlow child process."""
    with tempfile.TemporaryDirectory(prefix="keras_bert_hub_export-") as scratch:
        model_path = os.path.join(scratch, "backbone.keras")
        backbone.save(model_path)
        spec = {
            "format": "hub-encoder",
            "model": model_path,
            # The whole tokenizer, as keras serialises it (the export worker reads every kind this way).
            "tokenizer": keras.saving.serialize_keras_object(tokenizer),
            "directory": directory,
            "overwrite": overwrite,
            "options": {"seq_length": seq_length},
            "verbose": verbose,
        }
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
            raise RuntimeError(f"Hub SavedModel export in the TensorFlow process failed: {reason}")


def _export_here(backbone, tokenizer, directory, seq_length, overwrite, verbose):
    # defers TensorFlow: only the TensorFlow process that writes the SavedModels needs it
    import tensorflow as tf

    # defers TensorFlow (the modules are TF code), as above
    from keras_bert.export.hub_encoder_module import HubEncoderModule
    from keras_bert.export.hub_preprocessor_module import HubPreprocessorModule  # TF code too, as above

    parent, name = os.path.dirname(directory), os.path.basename(directory)
    os.makedirs(parent or ".", exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{name}.partial-", dir=parent)
    umask = os.umask(0)  # mkdtemp makes a private (0700) folder; the export is an ordinary one
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)
    sources = tempfile.mkdtemp(prefix="keras_bert_hub_assets-")
    try:
        vocab_file = os.path.join(sources, "vocab.txt")
        _write_lines(tokenizer.get_vocabulary(), vocab_file)
        metadata = {}
        for part, fmt in ((ENCODER_DIR, ENCODER_FORMAT), (PREPROCESSOR_DIR, PREPROCESSOR_FORMAT)):
            os.makedirs(os.path.join(sources, part))
            metadata[part] = os.path.join(sources, part, METADATA_FILE)
            with open(metadata[part], "w", encoding="utf-8") as f:
                json.dump(_metadata(fmt, backbone, tokenizer, seq_length), f, indent=2)
        # The export is for further training: a backbone frozen in this session (a head-only
        # fine-tune) still offers all its weights as trainable_variables.
        frozen, backbone.trainable = not backbone.trainable, True
        try:
            encoder = HubEncoderModule(backbone, vocab_file, metadata[ENCODER_DIR])
            tf.saved_model.save(encoder, os.path.join(staging, ENCODER_DIR), signatures=encoder.signatures())
        finally:
            backbone.trainable = not frozen
        preprocessor = HubPreprocessorModule(tokenizer, seq_length, vocab_file, metadata[PREPROCESSOR_DIR])
        tf.saved_model.save(
            preprocessor, os.path.join(staging, PREPROCESSOR_DIR), signatures=preprocessor.signatures()
        )
        _fsync_tree(staging)
        _move_into_place(staging, directory, overwrite)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(sources, ignore_errors=True)
    if verbose:
        print(f"exported a TF Hub-style encoder ({backbone.num_layers} layers, {len(backbone.trainable_weights)} "
              f"trainable variables) and preprocessor (seq_length {seq_length}) to {directory}")


def _metadata(fmt, backbone, tokenizer, seq_length):
    # defers TensorFlow: imported only to record the versions the SavedModels were written with
    import tensorflow as tf
    import tensorflow_text  # its version goes into the metadata too

    config = {k: v for k, v in backbone.get_config().items() if k not in ("name", "trainable")}
    return {
        "format": fmt,
        "format_version": FORMAT_VERSION,
        "backbone_class": type(backbone).__name__,
        "backbone_config": config,
        "seq_length": seq_length,
        "tokenizer": {k: v for k, v in tokenizer.get_config().items() if k != "vocabulary"}
        | {"vocabulary_size": tokenizer.vocabulary_size()},
        "export_backend": keras.backend.backend(),
        "versions": {
            "keras_bert": keras_bert.__version__,
            "keras": keras.__version__,
            "tensorflow": tf.__version__,
            "tensorflow_text": tensorflow_text.__version__,
        },
        "exported_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
