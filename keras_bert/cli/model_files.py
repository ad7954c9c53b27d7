"""The model `keras-bert export` and `keras-bert predict` are given: a .keras file or a job's output folder.

A job's folder (`keras-bert finetune --out F`, or `F/model.keras`) is read
through `keras_bert.run_folders`: its vocab.txt, casing and recorded options
(sequence length, sentence pairs, ...) become the defaults. A .keras file
elsewhere brings its tokenizer as a `<name>.keras.vocab.txt` sidecar, or the
user names one with `--tokenizer`.
"""

import os
import zipfile

from keras_bert.cli.errors import UserError
from keras_bert.run_folders import MODEL_FILE, read_run_folder


def find_model(model_path):
    """`(model file, RunFolder or None)` of a .keras path or a job's output folder.

    Raises:
        UserError: no model file there, or a job record that cannot be read.
    """
    if os.path.isdir(model_path):
        model_file = os.path.join(model_path, MODEL_FILE)
        if not os.path.isfile(model_file):
            raise UserError(f"{model_path}: the folder has no model.keras (expected a `keras-bert finetune` --out folder)")
    else:
        model_file = model_path
        if not os.path.isfile(model_file):
            raise UserError(f"{model_path}: no such file")
        if not model_file.endswith(".keras"):
            raise UserError(f"{model_path}: expected a .keras file or a finetune folder")
    if not zipfile.is_zipfile(model_file):
        raise UserError(f"{model_file}: not a .keras file (not a zip archive: truncated or corrupt?)")
    try:
        run = read_run_folder(model_path)
    except ValueError as error:
        raise UserError(str(error)) from None
    return model_file, run


def load_tokenizer(path, model_file, run):
    """The tokenizer named by `--tokenizer`, else the run folder's vocab.txt, else the model's sidecar.

    Raises:
        UserError: none of them exists.
    """
    # defers TensorFlow (the tokenizer is tensorflow-text): `keras-bert --help` must not import it
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    if path:
        return BertTokenizer.from_pretrained(path)
    if run is not None and run.vocab_file is not None and run.lowercase is not None:
        return BertTokenizer(run.vocab_file, lowercase=run.lowercase)
    try:
        return BertTokenizer.from_pretrained(model_file)
    except ValueError:
        raise UserError(
            f"{model_file}: no tokenizer found beside the model (vocab.txt of a finetune folder or a "
            f"{os.path.basename(model_file)}.vocab.txt sidecar); pass --tokenizer"
        ) from None


def load_keras_model(model_file):
    """The model in `model_file`, uncompiled.

    Raises:
        UserError: the file does not hold a model Keras can load.
    """
    # defers keras: `keras-bert --help` and argument errors must not wait for it
    import keras

    import keras_bert.models  # noqa: F401  (registers the model classes for load_model)

    try:
        return keras.saving.load_model(model_file, compile=False)
    except Exception as error:  # Keras raises many types for a file that is not a model
        raise UserError(f"{model_file}: cannot load the model: {' '.join(str(error).split())[:300]}") from None
