"""Reading a sentence-transformers folder: where its BERT is, how it pools, whether it normalises.

A sentence-transformers model folder (e.g. all-MiniLM-L6-v2) holds:

- `modules.json`: the pipeline, a list of `{"idx", "name", "path", "type"}`,
  e.g. Transformer (path "" = this folder, or "0_Transformer"), Pooling
  ("1_Pooling"), Normalize ("2_Normalize", a folder that may be absent);
- in the Transformer's folder a Hugging Face BERT (config.json + weights,
  vocab.txt) and `sentence_bert_config.json` (`max_seq_length`, `do_lower_case`);
- in the Pooling folder `config.json`: the mode, as legacy booleans
  (`pooling_mode_mean_tokens`: true, ...) or as `pooling_mode` ("mean", ...).

`read_sentence_embedding_config` reads that into plain values; a folder with
a module or pooling mode we do not implement fails with a ValueError naming
it (never an embedding that silently differs from the original). A plain
Hugging Face BERT folder (no modules.json) gets mean pooling without
normalisation, the common default for BERT sentence embeddings.
"""

import os

from keras_bert.json_files import read_json

MODULES_FILE = "modules.json"
SENTENCE_BERT_CONFIG = "sentence_bert_config.json"
# Pooling modes we implement (keras_bert.layers.SentencePooling.MODES), by sentence-transformers' names.
SUPPORTED_POOLING = ("mean", "cls", "max", "mean_sqrt_len_tokens")
# The legacy boolean keys of a Pooling config, and the mode each one turns on.
_LEGACY_POOLING_KEYS = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
# Module kinds by the last part of their type ("sentence_transformers.models.Pooling" -> "Pooling").
_KINDS = ("Transformer", "Pooling", "Normalize")


def is_sentence_transformers_folder(path):
    """Whether `path` is a folder with a sentence-transformers `modules.json`."""
    return os.path.isdir(os.fspath(path)) and os.path.isfile(os.path.join(path, MODULES_FILE))


def _pooling_mode(config, file):
    """The one pooling mode of a Pooling `config.json`, in either of its formats."""
    modes = config.get("pooling_mode")
    if modes is None:
        modes = [mode for key, mode in _LEGACY_POOLING_KEYS.items() if config.get(key)]
    elif isinstance(modes, str):
        modes = [modes]
    modes = list(modes)
    unsupported = [mode for mode in modes if mode not in SUPPORTED_POOLING]
    if unsupported or len(modes) != 1:
        raise ValueError(
            f"{file}: unsupported pooling {modes!r}; keras_bert implements exactly one of {list(SUPPORTED_POOLING)}."
        )
    return modes[0]


def _modules(folder):
    """`[(kind, module folder, type)]` of `modules.json`, in order, with unsupported modules named."""
    file = os.path.join(folder, MODULES_FILE)
    entries = read_json(file, "sentence-transformers module list", expected=list)
    if not all(isinstance(e, dict) and "type" in e for e in entries):
        raise ValueError(f"{file}: expected a list of modules with a `type` each. Received: {entries!r:.200}")
    modules = []
    for entry in sorted(entries, key=lambda e: e.get("idx", 0)):
        kind = str(entry["type"]).rsplit(".", 1)[-1]
        if kind not in _KINDS:
            raise ValueError(
                f"{file}: unsupported module {entry['type']!r} (path {entry.get('path', '')!r}); keras_bert "
                f"reads sentence-transformers models made of {' -> '.join(_KINDS)} only."
            )
        modules.append((kind, os.path.normpath(os.path.join(folder, entry.get("path") or "")), entry["type"]))
    kinds = [kind for kind, _, _ in modules]
    if kinds[:2] != ["Transformer", "Pooling"] or kinds.count("Transformer") != 1 or kinds.count("Pooling") != 1:
        raise ValueError(
            f"{file}: unsupported module order {kinds}; expected Transformer, Pooling and optionally Normalize."
        )
    return modules


def read_sentence_embedding_config(path):
    """How the model at `path` turns text into one vector.

    Args:
        path: a sentence-transformers folder, or a Hugging Face BERT folder.

    Returns:
        A dict: `transformer_path` (the Hugging Face folder of the encoder),
        `pooling` (one of `SUPPORTED_POOLING`), `normalize` (bool),
        `max_seq_length` (int, or None when the folder gives none) and
        `do_lower_case` (sentence-transformers lowercases the text itself:
        True, False, or None when not a sentence-transformers folder).

    Raises:
        ValueError: a module, module order or pooling mode keras_bert does
            not implement (named), or a config that cannot be read.
    """
    path = os.fspath(path)
    if not is_sentence_transformers_folder(path):
        return {"transformer_path": path, "pooling": "mean", "normalize": False, "max_seq_length": None,
                "do_lower_case": None}
    modules = _modules(path)
    transformer_path = modules[0][1]
    pooling_file = os.path.join(modules[1][1], "config.json")
    pooling = _pooling_mode(read_json(pooling_file, "pooling config"), pooling_file)
    settings = {}
    settings_file = os.path.join(transformer_path, SENTENCE_BERT_CONFIG)
    if os.path.isfile(settings_file):
        settings = read_json(settings_file, "sentence-transformers settings")
    max_seq_length = settings.get("max_seq_length")
    if max_seq_length is not None and (not isinstance(max_seq_length, int) or max_seq_length < 3):
        raise ValueError(f"{settings_file}: `max_seq_length` must be an int >= 3. Received: {max_seq_length!r}")
    return {
        "transformer_path": transformer_path,
        "pooling": pooling,
        "normalize": any(kind == "Normalize" for kind, _, _ in modules),
        "max_seq_length": max_seq_length,
        "do_lower_case": bool(settings.get("do_lower_case", False)),
    }
