"""The model and the tokenizer of resolved `ModelFiles`, with errors that name the file and what to pass.

    files = find_model("runs/sst")                 # or resolve_model(...)
    model = load_keras_model(files)
    tokenizer = load_tokenizer(files, flag="--tokenizer")
"""

import os

import keras

from keras_bert.converters.tokenizer_files import keras_sidecar_files
from keras_bert.loading.model_files import KERAS


def load_keras_model(files, compile=False):
    """The model in the `.keras` file of `files` (kind "keras").

    Args:
        files: `ModelFiles` of kind "keras".
        compile: restore the compiled state the file holds (optimizer, losses).

    Raises:
        ValueError: the file does not hold a model Keras can load.
    """
    if files.kind != KERAS:
        raise ValueError(f"{files.reference}: expected a .keras file or a job's output folder")
    import keras_bert.models  # noqa: F401  (registers the model classes for load_model)

    try:
        return keras.saving.load_model(files.path, compile=compile)
    except Exception as error:  # Keras raises many types for a file that is not a model
        raise ValueError(f"{files.path}: cannot load the model: {' '.join(str(error).split())[:300]}") from None


def load_tokenizer(files, vocabulary=None, lowercase=None, flag="--vocab"):
    """The `BertTokenizer` of `files`: its vocabulary and casing, each unless given.

    Args:
        files: `ModelFiles`.
        vocabulary: what `BertTokenizer.from_pretrained` reads instead of the
            model's vocabulary (a vocab.txt, a checkpoint folder, a `.keras`
            file with its sidecar, a preset name).
        lowercase: the casing; default: the one the model's files record,
            else the vocabulary's own (its tokenizer_config.json, ...).
        flag: the option that names a vocabulary, for the message when there is none.

    Raises:
        FileNotFoundError: no vocabulary was given and none belongs to the model.
    """
    # defers TensorFlow: the tokenizer is tensorflow-text's
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    vocabulary = vocabulary or files.vocabulary
    if vocabulary is None:
        sidecar = f" or a {os.path.basename(keras_sidecar_files(files.path)[0])} sidecar" if files.kind == KERAS else ""
        raise FileNotFoundError(
            f"{files.path}: no tokenizer found beside the model (a vocab.txt in its folder{sidecar}); pass {flag}"
        )
    lowercase = files.lowercase if lowercase is None else lowercase
    return BertTokenizer.from_pretrained(vocabulary, **({} if lowercase is None else {"lowercase": lowercase}))
