"""What "a model the user names" is, and where its parts are: one resolver for every command and job.

A reference is a path, a preset name, `hf://owner/name` or a BERT size name:

| reference                                      | kind         | `path` read                      |
|------------------------------------------------|--------------|----------------------------------|
| a job's `--out` folder (or the model.keras in it) | "keras"   | its model.keras                  |
| any other `.keras` file                        | "keras"      | the file                         |
| a Hugging Face / TF1 folder, a TF1 prefix, an encoder SavedModel | "checkpoint" | the folder or prefix |
| a preset name or `hf://owner/name`             | "checkpoint" | the Hugging Face cache's snapshot |
| "tiny", "mini", ... (`resolve_model(sizes=True)`) | "size"    | none: random weights             |

A resolved `ModelFiles` also says where the vocabulary is and, when the model's
own files record it, the casing: a job record (`run_folders`), a `.keras`
file's sidecars (`<name>.vocab.txt`, `<name>.tokenizer_config.json`, written by
`keras-bert convert`) or a hub repository's name. `loaders` builds models and
tokenizers from it. Errors are one-line `FileNotFoundError` / `ValueError`s
that name the reference, which the command line prints as they are.
"""

import contextlib
import dataclasses
import os
import zipfile

from keras_bert.converters.checkpoint import resolve_location
from keras_bert.converters.tokenizer_files import find_vocabulary, keras_sidecar_files, read_do_lower_case
from keras_bert.models.bert_sizes import BERT_SIZES
from keras_bert.run_folders import MODEL_FILE, VOCAB_FILE, RunFolder, read_job_record, read_run_folder, unfinished_run

KERAS, CHECKPOINT, SIZE = "keras", "checkpoint", "size"


@dataclasses.dataclass(frozen=True)
class ModelFiles:
    """The files behind a model reference (made by `resolve_model` and `find_model`).

    Attributes:
        reference: the reference as given.
        kind: "keras" (a `.keras` file), "checkpoint" (what
            `BertBackbone.from_pretrained` reads) or "size" (random weights of `reference`).
        path: the local file, folder or TF1 prefix to read (the size name for "size").
        vocabulary: the vocab.txt that belongs to the model, or None.
        lowercase: the casing the model's own files record (sidecar, job record,
            hub repository name), or None: then the vocabulary's folder says.
        run: the `RunFolder` when `path` is a job's model.keras, else None.
        hub_id: the Hugging Face repository of a preset or `hf://` reference, else None.
    """

    reference: str
    kind: str
    path: str
    vocabulary: object = None
    lowercase: object = None
    run: RunFolder = None
    hub_id: object = None

    @property
    def job(self):
        """The job record's arguments (`{}` for anything but a job's folder)."""
        return dict(self.run.job) if self.run is not None and self.run.job is not None else {}

    @property
    def description(self):
        """The model in a few words, for progress lines ("preset bert_base_en_uncased (hf://...)")."""
        if self.kind == SIZE:
            return f"random {self.reference} BERT"
        if self.kind == KERAS:
            return f".keras file {self.path}"
        if self.hub_id is not None:
            return f"preset {self.reference} (hf://{self.hub_id})"
        return f"checkpoint {self.path}"


def resolve_model(reference, sizes=False, cache_dir=None):
    """The `ModelFiles` of any model reference (`finetune --init`, ...).

    Args:
        reference: a job's output folder, a `.keras` file, a checkpoint
            folder or TF1 prefix, a preset name, `hf://owner/name[@revision]`,
            or with `sizes` a BERT size name (`BERT_SIZES`) for random weights.
        sizes: whether a size name is a reference.
        cache_dir: the Hugging Face cache for presets and hub names.

    Raises:
        FileNotFoundError: nothing of that name, or a hub name that is not
            in the cache and cannot be downloaded.
        ValueError: an unknown preset-like name (the closest names given), a
            broken job record, or a `.keras` file that is not a zip archive.
    """
    reference = os.fspath(reference)
    if os.path.exists(reference) or os.path.exists(reference + ".index"):  # a TF1 prefix names no file
        local, hub_id = reference, None
    elif sizes and reference in BERT_SIZES:
        return ModelFiles(reference, SIZE, reference)
    else:
        try:
            local, hub_id = resolve_location(reference, cache_dir)
        except ValueError as error:  # an unknown preset: the closest names
            raise ValueError(f"{error}{_size_hint(sizes)}") from None
        if hub_id is None:
            raise FileNotFoundError(f"{reference}: no such file or folder{_size_hint(sizes, ' (nor a size name: {})')}")
    run = read_run_folder(local)
    if run is not None:
        return _keras_files(reference, run.model_file, run)
    if local.endswith(".keras") and os.path.isfile(local):
        return _keras_files(reference, local, None)
    # A snapshot folder is named by its commit: the repository's name says uncased_/cased_ instead.
    lowercase = read_do_lower_case(local, name=hub_id.split("/")[-1]) if hub_id else None
    return ModelFiles(reference, CHECKPOINT, local, _vocabulary_beside(local), lowercase, hub_id=hub_id)


def find_model(reference):
    """The `ModelFiles` of a `.keras` file or a job's output folder (`export`, `predict`, `embed`, `distill`).

    Raises:
        FileNotFoundError: no such file, or a folder without model.keras.
        ValueError: not a `.keras` file, or a job record that cannot be read.
    """
    reference = os.fspath(reference)
    if os.path.isdir(reference):
        model_file = os.path.join(reference, MODEL_FILE)
        if not os.path.isfile(model_file):
            unfinished = unfinished_run(reference)
            if unfinished:
                raise FileNotFoundError(f"{reference}: {unfinished}: it was interrupted or is still training; "
                                        f"--resume continues it")
            raise FileNotFoundError(
                f"{reference}: the folder has no model.keras (expected a `keras-bert finetune` --out folder)"
            )
    else:
        model_file = reference
        if not os.path.isfile(model_file):
            raise FileNotFoundError(f"{reference}: no such file")
        if not model_file.endswith(".keras"):
            raise ValueError(f"{reference}: expected a .keras file or a finetune folder")
    return _keras_files(reference, model_file, read_run_folder(reference))


@contextlib.contextmanager
def reported_as(flag):
    """Prefixes `flag` ("--init", "--teacher") to the one-line errors raised inside: which argument named the model."""
    try:
        yield
    except FileNotFoundError as error:
        raise FileNotFoundError(f"{flag}: {error}") from None
    except ValueError as error:
        raise ValueError(f"{flag}: {error}") from None


def _keras_files(reference, model_file, run):
    """`ModelFiles` of a `.keras` file (checked to be a zip archive before anything reads it)."""
    if not zipfile.is_zipfile(model_file):
        raise ValueError(f"{model_file}: not a .keras file (not a zip archive: truncated or corrupt?)")
    if run is not None and run.vocab_file is not None:
        return ModelFiles(reference, KERAS, model_file, run.vocab_file, run.lowercase, run)
    sidecar_vocabulary, sidecar_config = keras_sidecar_files(model_file)
    if os.path.isfile(sidecar_config):
        lowercase = read_do_lower_case(model_file)
    else:
        lowercase = run.lowercase if run is not None else _recorded_lowercase(os.path.dirname(model_file))
    return ModelFiles(reference, KERAS, model_file, find_vocabulary(model_file) or _vocabulary_beside(model_file),
                      lowercase, run)


def _vocabulary_beside(path):
    """The vocab.txt in the folder of `path` (a folder, a file or a TF1 prefix), or None."""
    folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    vocabulary = os.path.join(folder, VOCAB_FILE)
    return vocabulary if os.path.isfile(vocabulary) else None


def _recorded_lowercase(folder):
    """The casing a keras-bert job's record in `folder` gives, or None."""
    try:
        _, job = read_job_record(folder)
    except ValueError:  # an unreadable record beside a .keras file says nothing about its casing
        return None
    return bool(job["lowercase"]) if job is not None and "lowercase" in job else None


def _size_hint(sizes, form=" Sizes for random weights: {}."):
    return form.format(sorted(BERT_SIZES)) if sizes else ""
