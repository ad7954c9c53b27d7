"""Reading Hugging Face checkpoints of the BERT family (config.json + safetensors or .bin).

Handles `BertModel` (names without prefix), `BertForPreTraining` and
`BertForMaskedLM` (names under `bert.` with `cls.` heads), and the same
for every family in `hf_families` (`albert.`, `electra.`, ...), single-file and
sharded safetensors, `pytorch_model.bin` (needs torch), and the old
`LayerNorm.gamma/beta` spelling.
"""

import os

import numpy as np

from keras_bert.converters import hf_bert
from keras_bert.converters.hf_families import family
from keras_bert.json_files import read_json

WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")


def is_hf_checkpoint(path):
    return os.path.isdir(path) and os.path.exists(os.path.join(path, "config.json")) and any(
        os.path.exists(os.path.join(path, f)) for f in WEIGHT_FILES
    )


def read_hf_model_type(path):
    """The `model_type` of the Hugging Face folder `path` ("bert" when config.json names none)."""
    return read_json(os.path.join(path, "config.json"), "config").get("model_type", "bert")


def read_hf_config(path):
    """Backbone constructor arguments from a Hugging Face `config.json`, for the family its `model_type` names.

    Raises:
        ValueError: an unsupported `model_type` (the message names the
            supported ones), or a config the family's backbone cannot follow.
    """
    config_path = os.path.join(path, "config.json")
    hf = read_json(config_path, "config")
    return family(hf.get("model_type", "bert"), config_path).read_config(hf, config_path)


def read_bert_json(config_path):
    """BertBackbone constructor arguments from a BERT config file.

    Hugging Face's `config.json` and Google's `bert_config.json` share the
    keys that matter (`vocab_size`, `hidden_size`, ...).

    Args:
        config_path: path of the JSON file.

    Returns:
        A dict of `BertBackbone` constructor arguments.
    """
    hf = read_json(config_path, "BERT config")
    model_type = hf.get("model_type", "bert")
    if model_type != "bert":
        raise ValueError(f"{config_path}: model_type is {model_type!r}; only 'bert' checkpoints are supported here.")
    return hf_bert.FAMILY.read_config(hf, config_path)


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


def read_hf_weights(path, model_type="bert"):
    """All tensors of the checkpoint in `path` as numpy arrays, under canonical names.

    Canonical names drop the prefix of the task models (`bert.`, or the
    family's of `model_type`: `albert.`, `electra.`, ...) and spell
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
        return canonicalize_names(tensors, family(model_type, path).prefix)
    raise ValueError(f"{path} has no weights file (looked for {', '.join(WEIGHT_FILES)}).")


def _read_shard_index(index_file):
    """`{shard file name: [tensor names]}` of a sharded checkpoint's index file, in shard order."""
    weight_map = read_json(index_file, "shard index").get("weight_map")
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
        absent = sorted(set(names) - found.keys())
        if absent:
            raise ValueError(
                f"{file} lacks {len(absent)} tensors that {os.path.basename(index_file)} places there, e.g. "
                f"{absent[0]} (a shard of another save?)."
            )
        tensors.update(found)
    return tensors


def canonicalize_names(tensors, prefix="bert."):
    canonical = {}
    for name, array in tensors.items():
        if name.startswith(prefix):
            name = name[len(prefix) :]
        if "LayerNorm." in name:
            name = name.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        canonical[name] = np.asarray(array)
    return canonical
