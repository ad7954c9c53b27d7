"""Reading Hugging Face BERT checkpoints (config.json + safetensors or .bin).

Handles `BertModel` (names without prefix), `BertForPreTraining` and
`BertForMaskedLM` (names under `bert.` with `cls.` heads), single-file and
sharded safetensors, `pytorch_model.bin` (needs torch), and the old
`LayerNorm.gamma/beta` spelling.
"""

import json
import os

import numpy as np

WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")


def is_hf_checkpoint(path):
    return os.path.isdir(path) and os.path.exists(os.path.join(path, "config.json")) and any(
        os.path.exists(os.path.join(path, f)) for f in WEIGHT_FILES
    )


def read_hf_config(path):
    """BertBackbone constructor arguments from a Hugging Face `config.json`."""
    return read_bert_json(os.path.join(path, "config.json"))


def read_bert_json(config_path):
    """BertBackbone constructor arguments from a BERT config file.

    Hugging Face's `config.json` and Google's `bert_config.json` share the
    keys that matter (`vocab_size`, `hidden_size`, ...).

    Args:
        config_path: path of the JSON file.

    Returns:
        A dict of `BertBackbone` constructor arguments.
    """
    try:
        with open(config_path, encoding="utf-8") as f:
            hf = json.load(f)
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"Cannot read the BERT config {config_path}: {error}") from None
    if not isinstance(hf, dict):
        raise ValueError(f"{config_path} must hold a JSON object. Received: {type(hf).__name__}")
    model_type = hf.get("model_type", "bert")
    if model_type != "bert":
        raise ValueError(f"{config_path}: model_type is {model_type!r}; only 'bert' checkpoints are supported.")
    activation = hf.get("hidden_act", "gelu")
    if activation != "gelu":
        raise ValueError(
            f"{config_path}: hidden_act={activation!r}; keras_bert uses BERT's exact GELU ('gelu') only."
        )
    position_type = hf.get("position_embedding_type", "absolute")
    if position_type != "absolute":
        raise ValueError(f"{config_path}: position_embedding_type={position_type!r}; only 'absolute' is supported.")
    try:
        return {
            "vocabulary_size": int(hf["vocab_size"]),
            "num_layers": int(hf["num_hidden_layers"]),
            "num_heads": int(hf["num_attention_heads"]),
            "hidden_dim": int(hf["hidden_size"]),
            "intermediate_dim": int(hf["intermediate_size"]),
            "dropout": float(hf.get("hidden_dropout_prob", 0.1)),
            "max_sequence_length": int(hf.get("max_position_embeddings", 512)),
            "num_segments": int(hf.get("type_vocab_size", 2)),
            "layer_norm_epsilon": float(hf.get("layer_norm_eps", 1e-12)),
        }
    except KeyError as error:
        raise ValueError(f"{config_path} lacks the key {error.args[0]!r}.") from None


def _read_safetensors(file):
    from safetensors import SafetensorError  # defers safetensors: an optional dependency (the hf extra)
    from safetensors.numpy import load_file  # defers safetensors, as above

    try:
        return load_file(file)
    except (SafetensorError, OSError, ValueError) as error:
        raise ValueError(f"Cannot read {file} (truncated or not a safetensors file?): {error}") from None


def _read_torch_bin(file):
    try:
        import torch  # defers torch: only .bin checkpoints need it
    except ImportError:
        raise ImportError(f"Reading {file} needs torch (pip install torch), or convert it to safetensors.") from None
    try:
        state = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises many types for a broken file
        raise ValueError(f"Cannot read {file} (truncated or not a PyTorch checkpoint?): {error}") from None
    return {name: tensor.float().numpy() if tensor.is_floating_point() else tensor.numpy() for name, tensor in state.items()}


def read_hf_weights(path):
    """All tensors of the checkpoint in `path` as numpy arrays, under canonical names.

    Canonical names drop the `bert.` prefix of the task models and spell
    LayerNorm parameters `weight`/`bias`. A sharded checkpoint (an
    `*.index.json` beside its shards, as `save_pretrained(max_shard_size=...)`
    writes it) is read shard by shard.

    Raises:
        FileNotFoundError: a shard the index names is not in `path`.
        ValueError: no weights file; an index or shard that cannot be read, or
            a shard that lacks a tensor its index places there.
    """
    for filename, reader in (
        ("model.safetensors", _read_safetensors),
        ("model.safetensors.index.json", _read_safetensors),
        ("pytorch_model.bin", _read_torch_bin),
        ("pytorch_model.bin.index.json", _read_torch_bin),
    ):
        file = os.path.join(path, filename)
        if not os.path.exists(file):
            continue
        tensors = _read_shards(file, reader) if filename.endswith(".index.json") else reader(file)
        return canonicalize_names(tensors)
    raise ValueError(f"{path} has no weights file (looked for {', '.join(WEIGHT_FILES)}).")


def _read_shard_index(index_file):
    """`{shard file name: [tensor names]}` of a sharded checkpoint's index file, in shard order."""
    try:
        with open(index_file, encoding="utf-8") as f:
            weight_map = json.load(f)["weight_map"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as error:
        raise ValueError(f"Cannot read the shard index {index_file} (a JSON object with a 'weight_map'): {error!r}") from None
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise ValueError(f"{index_file}: 'weight_map' must map tensor names to shard file names.")
    shards = {}
    for name, shard in weight_map.items():
        shards.setdefault(shard, []).append(name)
    return dict(sorted(shards.items()))


def _read_shards(index_file, reader):
    """The tensors of every shard that `index_file` names, each checked against the index."""
    folder = os.path.dirname(index_file)
    shards = _read_shard_index(index_file)
    missing = [shard for shard in shards if not os.path.isfile(os.path.join(folder, shard))]
    if missing:
        held = sum(len(shards[shard]) for shard in missing)
        raise FileNotFoundError(
            f"{folder} is a sharded checkpoint whose index {os.path.basename(index_file)} names {len(shards)} shards; "
            f"missing: {', '.join(missing)} ({held} of {sum(map(len, shards.values()))} tensors, e.g. "
            f"{shards[missing[0]][0]}). Download or copy every shard into the folder."
        )
    tensors = {}
    for shard, names in shards.items():
        file = os.path.join(folder, shard)
        found = reader(file)
        absent = [name for name in names if name not in found]
        if absent:
            raise ValueError(
                f"{file} lacks {len(absent)} tensors that {os.path.basename(index_file)} places there, e.g. "
                f"{absent[0]} (a shard of another save?)."
            )
        tensors.update(found)
    return tensors


def canonicalize_names(tensors):
    canonical = {}
    for name, array in tensors.items():
        if name.startswith("bert."):
            name = name[len("bert.") :]
        if "LayerNorm." in name:
            name = name.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        canonical[name] = np.asarray(array)
    return canonical
