"""The model and the tokenizer of resolved `ModelFiles`, with errors that name the file and what to pass.

    files = find_model("runs/sst")                 # or resolve_model(...)
    model = load_keras_model(files)
    tokenizer = load_tokenizer(files, flag="--tokenizer")   # WordPiece, or what the model's files name
"""

import inspect
import os

import keras

from keras_bert.converters.tokenizer_files import keras_sidecar_files
from keras_bert.loading.model_files import CHECKPOINT, KERAS


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
    """The tokenizer of `files`, of the class its files need (`Tokenizer.from_pretrained`), and its casing.

    What is read, first found: `vocabulary`; a job folder's saved tokenizer
    (`keras_bert_tokenizer.json`, written for tokenizers a vocab.txt cannot
    give: ModernBERT's byte-level BPE, ...); the model's vocab.txt; a
    checkpoint folder itself (a Hugging Face folder whose `model_type` names
    a tokenizer of its own files, e.g. ModernBERT's tokenizer.json).

    Args:
        files: `ModelFiles`.
        vocabulary: what `Tokenizer.from_pretrained` reads instead of the
            model's files (a vocab.txt, a checkpoint folder, a `.keras` file
            with its sidecar, a preset name, a saved tokenizer file).
        lowercase: the casing, for tokenizers that have one (WordPiece,
            SentencePiece); default: the one the model's files record, else
            the vocabulary's own (its tokenizer_config.json, ...).
        flag: the option that names a vocabulary, for the message when there is none.

    Raises:
        FileNotFoundError: no vocabulary was given and none belongs to the model.
    """
    # defers TensorFlow: the tokenizers are TensorFlow code
    from keras_bert.preprocessing.tokenizer import Tokenizer, tokenizer_class

    source = vocabulary or _tokenizer_source(files, tokenizer_class)
    if source is None:
        sidecar = f" or a {os.path.basename(keras_sidecar_files(files.path)[0])} sidecar" if files.kind == KERAS else ""
        raise FileNotFoundError(
            f"{files.path}: no tokenizer found beside the model (a vocab.txt in its folder{sidecar}); pass {flag}"
        )
    lowercase = files.lowercase if lowercase is None else lowercase
    takes_casing = "lowercase" in inspect.signature(tokenizer_class(source).__init__).parameters
    return Tokenizer.from_pretrained(source, **({"lowercase": lowercase} if takes_casing and lowercase is not None else {}))


def _tokenizer_source(files, tokenizer_class):
    """What `Tokenizer.from_pretrained` reads for the tokenizer that belongs to `files`, or None."""
    if files.run is not None and files.run.tokenizer_file is not None:
        return files.run.tokenizer_file
    if files.vocabulary is not None:
        return files.vocabulary
    # A Hugging Face folder whose model_type's tokenizer is not a vocab.txt (ModernBERT's tokenizer.json, ...).
    is_hf_folder = files.kind == CHECKPOINT and os.path.isfile(os.path.join(files.path, "config.json"))
    if is_hf_folder and tokenizer_class(files.path).__name__ != "BertTokenizer":
        return files.path
    return None
