"""Reading BERT checkpoints, whatever their format, into canonical tensors.

`read_checkpoint` detects the format from what `path` holds:

- a Hugging Face folder: `config.json` + `model.safetensors` (or sharded, or
  `pytorch_model.bin`);
- a Google TF1 folder: `bert_config.json` + `bert_model.ckpt.index` (+ data),
  or a checkpoint prefix such as `folder/model.ckpt-100000`;
- a `.keras` file saved by keras_bert;
- an encoder SavedModel written by `export_hub_encoder` (TF Hub's BERT
  conventions), or the folder holding it as `encoder/`;
- `hf://owner/name[@revision]`: a Hugging Face Hub repository, fetched with
  `huggingface_hub.snapshot_download` (from the local cache when offline);
- a preset name (`bert_base_en_uncased`, `google-bert/bert-base-uncased`, ...;
  see `presets`), read as the `hf://` repository it names.

A Hugging Face folder of a task class (`BertForSequenceClassification`, ...)
also says which head it holds (`Checkpoint.task_head`, see `hf_tasks`).

Every format is read into canonical tensors (see `weight_map`) and loaded all
or nothing: a missing, unused (other than known heads, buffers and optimizer
state) or mis-shaped tensor, or a `vocab.txt` of the wrong size, raises a
ValueError that names it, before any variable is written.
`keras_bert.models.pretrained` builds new models from a `Checkpoint`.
"""

import os
import shlex
import zipfile

import keras

from keras_bert.converters import presets, tokenizer_files
from keras_bert.converters.hf_checkpoint import is_hf_checkpoint, read_hf_config, read_hf_model_type, read_hf_weights
from keras_bert.converters.hf_tasks import read_task_head
from keras_bert.converters.hub_saved_model import (
    assign_by_path,
    hub_encoder_dir,
    is_serving_saved_model,
    read_hub_encoder_config,
    read_hub_encoder_lowercase,
    read_hub_encoder_weights,
)
from keras_bert.converters.tf1_checkpoint import (
    canonical_to_tf1_name,
    read_tf1_config,
    read_tf1_weights,
    tf1_checkpoint_prefix,
)
from keras_bert.converters.weight_map import assign_canonical_weights, canonical_weights, is_encoder_backbone
from keras_bert.run_folders import read_run_folder

HUB_SCHEME = "hf://"

# What a hub download fetches: configs (shard indexes among them), safetensors
# and the vocabulary; `pytorch_model.bin`, or its shards
# `pytorch_model-00001-of-00003.bin`, ..., only when a repository has no safetensors.
_HUB_PATTERNS = ["*.json", "*.safetensors", "vocab.txt"]
_HUB_FALLBACK_PATTERNS = ["*.json", "pytorch_model*.bin", "vocab.txt"]

FORMATS = {
    "hf": "Hugging Face folder",
    "tf1": "Google TF1 checkpoint",
    "keras": ".keras file",
    "hub": "TF Hub-style encoder SavedModel",
}


def _hub_offline():
    import huggingface_hub.constants  # defers huggingface_hub: needed for hub names only

    flag = os.environ.get("HF_HUB_OFFLINE", "").strip().lower()
    return flag in ("1", "true", "yes", "on") or bool(huggingface_hub.constants.HF_HUB_OFFLINE)


def hub_cache_dir(cache_dir=None):
    """The Hugging Face cache folder hub names are read from and downloaded to.

    `cache_dir` when given; else `HF_HUB_CACHE`, else `HF_HOME/hub`, read now
    (huggingface_hub reads them once, at its import; a process that sets them
    later, as a test does, still gets them here); else huggingface_hub's default.
    """
    if cache_dir is not None:
        return os.fspath(cache_dir)
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    if os.environ.get("HF_HOME"):
        return os.path.join(os.environ["HF_HOME"], "hub")
    import huggingface_hub.constants  # defers huggingface_hub: needed for hub names only

    return huggingface_hub.constants.HF_HUB_CACHE


def _fetch_command(name, cache):
    """The shell command that puts `name` (a preset or hf:// path) into the cache `cache`, for messages."""
    environment = "HF_HUB_OFFLINE=0 " + (f"HF_HUB_CACHE={shlex.quote(cache)} " if cache != hub_cache_dir() else "")
    code = f'import keras_bert; keras_bert.BertBackbone.from_preset("{name}")'
    return f"{environment}python -c {shlex.quote(code)}"


def resolve_hub_path(path, cache_dir=None, name=None):
    """The local snapshot folder of `hf://owner/name[@revision]`, downloading it when online.

    Args:
        path: str starting with `hf://`.
        cache_dir: the Hugging Face cache folder (default: `hub_cache_dir()`).
        name: what the user asked for, when not `path` itself (a preset name), for messages.

    Returns:
        The path of the snapshot folder.

    Raises:
        FileNotFoundError: the repository is not in the cache and cannot be
            downloaded (offline, `HF_HUB_OFFLINE=1`, no network, or no such
            repository). One message names it, the cache folder, and the
            command that fetches it.
    """
    try:
        from huggingface_hub import snapshot_download  # defers huggingface_hub: needed for hub names only
    except ImportError:
        raise ImportError(f"Loading {name or path} needs huggingface_hub (pip install huggingface_hub).") from None
    repo_id, _, revision = path[len(HUB_SCHEME) :].partition("@")
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise ValueError(f"A hub name has the form hf://owner/name[@revision]. Received: {path!r}")
    offline = _hub_offline()
    cache = hub_cache_dir(cache_dir)

    def download(patterns):
        return snapshot_download(
            repo_id,
            revision=revision or None,
            cache_dir=cache,
            local_files_only=offline,
            allow_patterns=patterns,
        )

    try:
        folder = download(_HUB_PATTERNS)
        if not is_hf_checkpoint(folder) and not offline:
            folder = download(_HUB_FALLBACK_PATTERNS)
    except (OSError, ValueError) as error:
        what = f"preset {name!r} ({path})" if name and name != path else path
        why = "downloads are off (HF_HUB_OFFLINE=1)" if offline else "it could not be downloaded"
        raise FileNotFoundError(
            f"{what} is not in the Hugging Face cache {cache} and {why}. Fetch it once with network access: "
            f"{_fetch_command(name or path, cache)} (or: hf download {repo_id}). [{type(error).__name__}: {error}]"
        ) from None
    return folder


def resolve_location(location, cache_dir=None):
    """`(local path, Hub repository id or None)` of a checkpoint location.

    A preset name (see `keras_bert.converters.presets`) or an `hf://` path is
    found in the Hugging Face cache (downloaded when online); an existing
    local path is itself. A path is always taken over a preset of the same name.

    Raises:
        ValueError: `location` is neither a file nor a known preset, and looks
            like a preset name: the message gives the closest names.
    """
    location = os.fspath(location)
    if location.startswith(HUB_SCHEME):
        return resolve_hub_path(location, cache_dir), location[len(HUB_SCHEME) :].partition("@")[0]
    if os.path.exists(location) or os.path.exists(location + ".index"):  # a TF1 prefix names no file
        return location, None
    preset = presets.find_preset(location)
    if preset is not None:
        return resolve_hub_path(preset.hub_path, cache_dir, name=location), preset.hub_id
    if presets.looks_like_preset_name(location):
        raise presets.unknown_preset_error(location)
    return location, None


class Checkpoint:
    """What a checkpoint holds: a backbone config, canonical tensors, and its tokenizer files.

    Made by `read_checkpoint`; fills models with `load_into`
    (`keras_bert.models.pretrained.build_from_checkpoint` builds new ones).

    Attributes:
        location: the path or hub name as given.
        path: the local path read.
        format: "hf", "tf1", "keras" or "hub".
        config: dict of backbone constructor arguments.
        model_type: the family, as Hugging Face names it ("bert", "albert", ...;
            see `hf_families`): which backbone class `config` is for.
        vocabulary_file: path of the checkpoint's `vocab.txt`, or None.
        do_lower_case: bool, whether its tokenizer lowercases.
        keras_model: for `.keras` files, the loaded model; else None.
        keras_arrays: for hub encoder SavedModels, Keras variable path →
            numpy array (already in our layouts); else None.
        hub_id: the Hugging Face repository of a preset or `hf://` location, else None.
        task_head: for Hugging Face folders of a task class (BertForSequenceClassification,
            ...), its `hf_tasks.TaskHead`; else None.
    """

    def __init__(
        self, location, path, format, config, tensors=None, names=None, keras_model=None, model_type="bert",
        keras_arrays=None, hub_id=None,
    ):
        self.location = location
        self.path = path
        self.format = format
        self.config = config
        self.model_type = model_type
        self._tensors = tensors
        self._names = names or {}
        self.keras_model = keras_model
        self.keras_arrays = keras_arrays
        self.hub_id = hub_id
        self.vocabulary_file = tokenizer_files.find_vocabulary(path)
        # A snapshot folder is named by its commit: the repository's name says uncased_/cased_ instead.
        self.do_lower_case = tokenizer_files.read_do_lower_case(path, name=hub_id and hub_id.split("/")[-1])
        self.task_head = read_task_head(path, tensors) if format == "hf" else None

    @property
    def format_name(self):
        """The format in words, e.g. "Google TF1 checkpoint"."""
        if self.location.startswith(HUB_SCHEME):
            return "Hugging Face Hub checkpoint"
        if self.hub_id is not None:
            return f"preset (hf://{self.hub_id})"
        return FORMATS[self.format]

    @property
    def description(self):
        return f"{self.format_name} {self.location}"

    @property
    def tensors(self):
        """Canonical name -> numpy array (computed on first use for `.keras` files)."""
        if self.format == "hub":
            raise ValueError(
                f"{self.description} holds Keras variables, not canonical tensors: load it into a model "
                "(BertBackbone.from_pretrained) and read them from there."
            )
        if self._tensors is None:
            self._tensors = canonical_weights(self.keras_model)
        return self._tensors

    def describe(self, canonical_name):
        """How the checkpoint itself names a canonical tensor (for messages)."""
        if self.format != "tf1":
            return canonical_name
        if canonical_name in self._names:
            shape = tuple(self.tensors[canonical_name].shape)
            # Messages give canonical (out, in) shapes; say how TF1 stores it.
            stored = shape[::-1] if self._names[canonical_name].endswith("/kernel") else shape
            return f"{self._names[canonical_name]} (stored shape {stored})"
        return canonical_to_tf1_name(canonical_name)

    @property
    def heads(self):
        """The pretraining heads the checkpoint holds: a subset of {"masked_lm", "next_sentence"}."""
        if self.format == "hub":
            return set()  # an encoder: no pretraining heads
        if self.keras_model is not None:
            return {
                head
                for head, attribute in (("masked_lm", "masked_lm_head"), ("next_sentence", "next_sentence_head"))
                if getattr(self.keras_model, attribute, None) is not None
            }
        heads = set()
        if "cls.predictions.transform.dense.weight" in self.tensors:
            heads.add("masked_lm")
        if "cls.seq_relationship.weight" in self.tensors:
            heads.add("next_sentence")
        return heads

    def check_vocabulary(self):
        """Raises ValueError when `vocab.txt` and the token embedding disagree in size."""
        if self.vocabulary_file is None:
            return
        if self.format in ("keras", "hub"):
            rows, name = self.config["vocabulary_size"], "token_embedding"
        else:
            table = self.tensors.get("embeddings.word_embeddings.weight")
            if table is None:
                return  # reported as a missing tensor when loading
            rows, name = table.shape[0], self.describe("embeddings.word_embeddings.weight").split(" (")[0]
        tokenizer_files.check_vocabulary_size(self.vocabulary_file, rows, name)

    def load_into(self, model):
        """Loads the checkpoint's weights into `model`, all or nothing.

        Args:
            model: a `BertBackbone`, `BertPretrainer` or `BertMaskedLM` of a
                matching architecture.

        Returns:
            `model`.
        """
        self.check_vocabulary()
        if self.format == "hub":
            self._load_keras_arrays(model)
            return model
        assign_canonical_weights(model, self.tensors, self.description, strict=True, describe=self.describe)
        return model

    def _load_keras_arrays(self, model):
        """A hub encoder's weights into `model`'s backbone, by Keras path, all or nothing."""
        heads = [name for name in ("masked_lm_head", "next_sentence_head") if getattr(model, name, None) is not None]
        if heads:
            raise ValueError(
                f"{self.description} is an encoder without pretraining heads; {type(model).__name__} needs "
                f"{heads}. Load a BertBackbone (or a task model that adds its own head) from it. Nothing was loaded."
            )
        backbone = model if is_encoder_backbone(model) else model.backbone
        assign_by_path(backbone.weights, self.keras_arrays, self.description)


def detect_format(path):
    """"hf", "tf1" or "keras" for a local path; None when it is none of them."""
    path = os.fspath(path)
    if path.endswith(".keras") and os.path.isfile(path):
        return "keras"
    if hub_encoder_dir(path) is not None:
        return "hub"
    if is_hf_checkpoint(path):
        return "hf"
    if tf1_checkpoint_prefix(path) is not None:
        return "tf1"
    return None


def _readable(path):
    """Whether `read_checkpoint` would take `path` (a checkpoint, or a keras-bert run folder)."""
    try:
        return detect_format(path) is not None or read_run_folder(path) is not None
    except ValueError:  # a run folder with a broken job record: not worth suggesting
        return False


def _not_a_checkpoint(path):
    if not os.path.exists(path) and not os.path.exists(path + ".index"):
        return FileNotFoundError(f"No checkpoint at {path}")
    hint = ""
    if os.path.isdir(path):
        present = sorted(os.listdir(path))[:12]
        hint = f" It holds: {present}."
        if "bert_config.json" in present:
            hint += " (A TF1 folder needs bert_model.ckpt.index and its data file, or a `checkpoint` file.)"
        elif "config.json" in present:
            hint += " (A Hugging Face folder needs model.safetensors or pytorch_model.bin.)"
        inside = [os.path.join(path, name) for name in present if _readable(os.path.join(path, name))]
        if inside:
            hint += f" Did you mean {inside[0]}?"  # e.g. a pip-installed checkpoint keeps it in model/
    if is_serving_saved_model(path):
        hint += (
            " (It is a serving SavedModel of export_saved_model, which keeps no weights by name: export the "
            "encoder with `keras-bert export MODEL --format hub-encoder`, or load the model's .keras file.)"
        )
    return ValueError(
        f"{path} is not a checkpoint keras_bert can read: expected a Hugging Face folder (config.json + "
        "model.safetensors or pytorch_model.bin), a Google TF1 folder (bert_config.json + bert_model.ckpt.index), "
        f"a TF1 checkpoint prefix, a .keras file, an encoder SavedModel of export_hub_encoder, or hf://owner/name.{hint}"
    )


def read_checkpoint(path, cache_dir=None):
    """Reads a checkpoint of any supported format.

    Args:
        path: a Hugging Face folder, a Google TF1 folder or checkpoint prefix,
            a `.keras` file, `hf://owner/name[@revision]`, or a preset name
            (`keras_bert.list_presets()`).
        cache_dir: Hugging Face cache folder for presets and `hf://` names.

    Returns:
        A `Checkpoint`.
    """
    location = os.fspath(path)
    local, hub_id = resolve_location(location, cache_dir)
    run = read_run_folder(local) if os.path.isdir(local) else None
    if run is not None:
        local = run.model_file  # a keras-bert job's --out folder stands for its model.keras
    kind = detect_format(local)
    if kind is None:
        raise _not_a_checkpoint(local)
    if kind == "hf":
        model_type = read_hf_model_type(local)
        config = read_hf_config(local)  # refuses an unsupported model_type, naming the supported ones
        tensors = read_hf_weights(local, model_type)
        return Checkpoint(location, local, "hf", config, tensors, model_type=model_type, hub_id=hub_id)
    if kind == "tf1":
        tensors, names = read_tf1_weights(local)
        return Checkpoint(location, local, "tf1", read_tf1_config(local), tensors, names, hub_id=hub_id)
    if kind == "hub":
        return _read_hub(location, local)
    return _read_keras(location, local)


def _read_hub(location, path):
    folder = hub_encoder_dir(path)
    checkpoint = Checkpoint(
        location, folder, "hub", read_hub_encoder_config(folder), keras_arrays=read_hub_encoder_weights(folder)
    )
    # The export's own vocabulary and casing (its assets), not a vocab.txt beside the SavedModel.
    vocabulary = os.path.join(folder, "assets", tokenizer_files.VOCABULARY_FILE)
    checkpoint.vocabulary_file = vocabulary if os.path.isfile(vocabulary) else None
    lowercase = read_hub_encoder_lowercase(folder)
    if lowercase is not None:
        checkpoint.do_lower_case = lowercase
    return checkpoint


def load_keras_backbone(path):
    """(model, its backbone) of a `.keras` file, with errors that name what is wrong with it.

    Keras deserialises our classes by their registered names: `import keras_bert`
    registers them (it imports `keras_bert.models`, which is above this module).
    """
    if not zipfile.is_zipfile(path):
        # Keras itself would report "File not found" for a file that is there.
        raise ValueError(f"{path} is not a .keras file: not a zip archive (truncated, or another format?)")
    try:
        model = keras.saving.load_model(path)
    except Exception as error:  # keras raises many types for a broken or foreign file
        raise ValueError(f"Cannot load the .keras file {path}: {type(error).__name__}: {error}") from None
    backbone = model if is_encoder_backbone(model) else getattr(model, "backbone", None)
    if not is_encoder_backbone(backbone):
        raise ValueError(
            f"{path} holds a {type(model).__name__}, which is neither a keras_bert BertBackbone (or another "
            "family's backbone: AlbertBackbone, ...) nor a model with one."
        )
    return model, backbone


def _read_keras(location, path):
    model, backbone = load_keras_backbone(path)
    config = {k: v for k, v in backbone.get_config().items() if k not in ("name", "trainable")}
    return Checkpoint(location, path, "keras", config, keras_model=model, model_type=backbone.model_type)


def load_weights(model, path, cache_dir=None):
    """Loads a checkpoint's weights into an existing model, all or nothing.

    Args:
        model: a `BertBackbone`, `BertPretrainer` or `BertMaskedLM` whose
            architecture matches the checkpoint.
        path: any checkpoint `read_checkpoint` reads.
        cache_dir: Hugging Face cache folder for `hf://` names.

    Returns:
        `model`, its weights replaced; on any error it is left untouched.
    """
    return read_checkpoint(path, cache_dir).load_into(model)
