"""Finding a checkpoint's vocabulary and its lowercasing choice, whatever the format.

Google's TF1 folders and Hugging Face folders keep `vocab.txt` beside the
weights; a `.keras` file written by `keras_bert.jobs.convert` keeps it in
sidecar files named after the model (`model.vocab.txt` and
`model.tokenizer_config.json` beside `model.keras`). A tokenizer takes both
answers from here, so it lowercases exactly when the checkpoint was trained on
lowercased text.
"""

import io
import os
import re

from keras_bert._utf8 import read_utf8
from keras_bert.json_files import read_json
from keras_bert.run_folders import read_run_folder

VOCABULARY_FILE = "vocab.txt"
# BertTokenizer's SPECIAL_TOKENS (repeated here: this module stays free of TensorFlow).
REQUIRED_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"

# Google's release folders say it in their names: uncased_L-12_H-768_A-12,
# wwm_cased_L-24_H-1024_A-16, multi_cased_L-12_H-768_A-12, ...
_UNCASED = re.compile(r"(^|[_\-./])uncased([_\-./]|$)")
_CASED = re.compile(r"(^|[_\-./])cased([_\-./]|$)")


def keras_sidecar_files(keras_path):
    """(vocab.txt path, tokenizer_config.json path) that belong to a `.keras` file."""
    stem = os.fspath(keras_path)[: -len(".keras")]
    return f"{stem}.{VOCABULARY_FILE}", f"{stem}.{TOKENIZER_CONFIG_FILE}"


def _checkpoint_folder(path):
    path = os.fspath(path)
    # A TF1 checkpoint prefix (folder/bert_model.ckpt) names a file that does not exist.
    return path if os.path.isdir(path) else os.path.dirname(path)


def find_vocabulary(path):
    """The `vocab.txt` that belongs to a checkpoint, or None.

    Args:
        path: a checkpoint folder (Hugging Face or TF1), a TF1 checkpoint
            prefix, or a `.keras` file.

    Returns:
        The path of the vocabulary file, or None when there is none.
    """
    path = os.fspath(path)
    if path.endswith(".keras"):
        candidate = keras_sidecar_files(path)[0]
        run = None if os.path.isfile(candidate) else read_run_folder(path)
        if run is not None and run.vocab_file:
            candidate = run.vocab_file  # the model.keras of a keras-bert job's --out folder: the job's vocab.txt
    else:
        candidate = os.path.join(_checkpoint_folder(path), VOCABULARY_FILE)
    return candidate if os.path.isfile(candidate) else None


def read_vocabulary_lines(vocabulary_file):
    """The tokens of a `vocab.txt`, one per line, read the way Hugging Face does."""
    try:
        text = read_utf8(vocabulary_file, strip_bom=False)
    except OSError as error:
        raise ValueError(f"Cannot read the vocabulary {vocabulary_file}: {error}") from None
    with io.StringIO(text, newline=None) as f:
        return [line.rstrip("\n") for line in f.readlines()]


def count_vocabulary(vocabulary_file):
    """Number of tokens in a `vocab.txt`: its lines, read the way Hugging Face does."""
    return len(read_vocabulary_lines(vocabulary_file))


def check_vocabulary_tokens(vocabulary_file, tokens=None):
    """Raises ValueError, naming the file and the lines, for duplicated tokens or missing special tokens.

    A token's id is its line number, so a duplicate leaves one of its ids
    unreachable and shifts nothing visibly: the model would silently read
    text with the wrong ids.
    """
    tokens = read_vocabulary_lines(vocabulary_file) if tokens is None else tokens
    first, duplicates = {}, []
    for number, token in enumerate(tokens, start=1):
        if token in first:
            duplicates.append(f"{token!r} on lines {first[token]} and {number}")
        else:
            first[token] = number
    if duplicates:
        raise ValueError(
            f"The vocabulary {vocabulary_file} has {len(duplicates)} duplicated token(s): "
            f"{'; '.join(duplicates[:5])}{' ...' if len(duplicates) > 5 else ''}; every token must appear once."
        )
    missing = [t for t in REQUIRED_TOKENS if t not in first]
    if missing:
        raise ValueError(
            f"The vocabulary {vocabulary_file} lacks the special token(s) {missing}; a BERT vocabulary must "
            f"contain all of {list(REQUIRED_TOKENS)}."
        )


def check_vocabulary_size(vocabulary_file, rows, embedding_name="embeddings.word_embeddings.weight"):
    """Raises ValueError when `vocab.txt` is not a BERT vocabulary or disagrees in size with the token embedding.

    Args:
        vocabulary_file: path of the `vocab.txt`.
        rows: number of rows of the token embedding matrix.
        embedding_name: the embedding's name in the checkpoint, for the message.
    """
    tokens = read_vocabulary_lines(vocabulary_file)
    check_vocabulary_tokens(vocabulary_file, tokens)
    size = len(tokens)
    if size != rows:
        raise ValueError(
            f"The vocabulary {vocabulary_file} has {size} tokens but the token embedding matrix "
            f"`{embedding_name}` has {rows} rows; they must be equal (a token's id is its line number)."
        )


def _field(file, key="do_lower_case"):
    if not os.path.isfile(file):
        return None
    value = read_json(file, "config").get(key)
    if value is not None and not isinstance(value, bool):
        raise ValueError(f"{file}: `{key}` must be true or false. Received: {value!r}")
    return value


def read_do_lower_case(path, name=None):
    """Whether the checkpoint's tokenizer lowercases (and strips accents from) its text.

    In order: a `do_lower_case` field in `tokenizer_config.json` or
    `bert_config.json` (or the `.keras` file's sidecar); the job record of a
    keras-bert run folder the `.keras` file is in; else Google's
    folder-name convention (`uncased_...` -> True, `cased_...` -> False);
    else True, as for most English BERTs.

    Args:
        path: a checkpoint folder (Hugging Face or TF1), a TF1 checkpoint
            prefix, or a `.keras` file.
        name: optional name to read the convention from instead of the
            folder's (e.g. the repository name of a hub download).

    Returns:
        bool.
    """
    path = os.fspath(path)
    folder = _checkpoint_folder(path)
    if path.endswith(".keras"):
        files = [keras_sidecar_files(path)[1]]
    else:
        files = [os.path.join(folder, TOKENIZER_CONFIG_FILE), os.path.join(folder, "bert_config.json")]
    for file in files:
        value = _field(file)
        if value is not None:
            return value
    run = read_run_folder(path) if path.endswith(".keras") else None
    if run is not None and run.lowercase is not None:
        return run.lowercase  # a keras-bert job recorded the casing it trained with
    if name is None:
        name = os.path.basename(path[: -len(".keras")] if path.endswith(".keras") else os.path.normpath(folder))
    name = name.lower()
    if _UNCASED.search(name):
        return True
    if _CASED.search(name):
        return False
    return True


def find_tokenizer_files(path, names, family, alternatives=("tokenizer.json",)):
    """The tokenizer files of a Hugging Face checkpoint, and its `tokenizer_config.json`.

    Args:
        path: a checkpoint folder, or one of the files itself (its folder is
            searched for the others).
        names: the file names needed, e.g. `("vocab.json", "merges.txt")`.
        family: the model family, for the error message ("RoBERTa").
        alternatives: file names that can stand in for all of `names`
            (`tokenizer.json` holds a BPE's vocabulary and merges).

    Returns:
        `(files, config)`: dict file name → path for the names found (all of
        `names`, or else the first alternative found), and the parsed
        `tokenizer_config.json` (an empty dict without one).

    Raises:
        ValueError: naming the path and every file that is missing.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ValueError(f"`path` {path!r} does not exist.")
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    found = {name: os.path.join(folder, name) for name in names}
    if os.path.isfile(path) and os.path.basename(path) not in names and os.path.basename(path) not in alternatives:
        # One file given under another name (e.g. albert.model): it stands for the first.
        found[names[0]] = path
    missing = [name for name, file in found.items() if not os.path.isfile(file)]
    if missing:
        present = [name for name in alternatives if os.path.isfile(os.path.join(folder, name))]
        if not present:
            expected = " + ".join(names) + "".join(f" (or {name})" for name in alternatives)
            raise ValueError(
                f"{path!r} has no {family} tokenizer: missing {', '.join(missing)}; expected {expected} "
                "as a Hugging Face checkpoint folder holds them."
            )
        found = {present[0]: os.path.join(folder, present[0])}
    config_file = os.path.join(folder, TOKENIZER_CONFIG_FILE)
    config = read_json(config_file, "tokenizer config") if os.path.isfile(config_file) else {}
    return found, config
