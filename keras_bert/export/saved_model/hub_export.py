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

import json
import os
import tempfile

import keras

from keras_bert.atomic_files import staging_folder
from keras_bert.export.export_arguments import check_sequence_length, check_target, check_tokenizer
from keras_bert.export.export_files import METADATA_FILE, export_time, library_versions, write_lines
from keras_bert.export.tensorflow_worker import run_in_tensorflow

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
    check_tokenizer(tokenizer, backbone, role="it becomes the preprocessor SavedModel")
    check_sequence_length(seq_length, backbone, name="seq_length")
    check_target(directory, overwrite)
    arguments = {"directory": directory, "seq_length": seq_length, "overwrite": overwrite, "verbose": verbose}
    run_in_tensorflow(write_hub_encoder, backbone, tokenizer, arguments, "Hub SavedModel export", verbose)
    return {"encoder": os.path.join(directory, ENCODER_DIR), "preprocessor": os.path.join(directory, PREPROCESSOR_DIR)}


def write_hub_encoder(backbone, tokenizer, directory, seq_length, overwrite, verbose):
    """Writes both SavedModels in this (TensorFlow) process, into one staging folder renamed into place.

    Args:
        backbone, tokenizer, seq_length: as `export_hub_encoder` takes them, checked.
        directory: the absolute path of the folder to create.
        overwrite: replace an existing `directory`.
        verbose: print what was written.
    """
    # defers TensorFlow: only the TensorFlow process that writes the SavedModels needs it
    import tensorflow as tf

    # defers TensorFlow (the modules are TF code), as above
    from keras_bert.export.saved_model.hub_encoder_module import HubEncoderModule
    from keras_bert.export.saved_model.hub_preprocessor_module import HubPreprocessorModule  # TF code too, as above

    with tempfile.TemporaryDirectory(prefix="keras_bert_hub_assets-") as sources:
        vocab_file = os.path.join(sources, "vocab.txt")
        write_lines(tokenizer.get_vocabulary(), vocab_file)
        metadata = {}
        for part, fmt in ((ENCODER_DIR, ENCODER_FORMAT), (PREPROCESSOR_DIR, PREPROCESSOR_FORMAT)):
            os.makedirs(os.path.join(sources, part))
            metadata[part] = os.path.join(sources, part, METADATA_FILE)
            with open(metadata[part], "w", encoding="utf-8") as f:
                json.dump(_metadata(fmt, backbone, tokenizer, seq_length), f, indent=2)
        with staging_folder(directory, overwrite) as staging:
            # The export is for further training: a backbone frozen in this session (a head-only
            # fine-tune) still offers all its weights as trainable_variables.
            frozen, backbone.trainable = not backbone.trainable, True
            try:
                encoder = HubEncoderModule(backbone, vocab_file, metadata[ENCODER_DIR])
                trainable = len(encoder.trainable_variables)
                tf.saved_model.save(encoder, os.path.join(staging, ENCODER_DIR), signatures=encoder.signatures())
            finally:
                backbone.trainable = not frozen
            preprocessor = HubPreprocessorModule(tokenizer, seq_length, vocab_file, metadata[PREPROCESSOR_DIR])
            tf.saved_model.save(
                preprocessor, os.path.join(staging, PREPROCESSOR_DIR), signatures=preprocessor.signatures()
            )
    if verbose:
        print(f"exported a TF Hub-style encoder ({backbone.num_layers} layers, {trainable} "
              f"trainable variables) and preprocessor (seq_length {seq_length}) to {directory}")


def _metadata(fmt, backbone, tokenizer, seq_length):
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
        "versions": library_versions("tensorflow_text"),
        "exported_at": export_time(),
    }
