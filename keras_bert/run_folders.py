"""The output folders of keras-bert's jobs, read in one place.

`keras-bert pretrain --out F` and `keras-bert finetune --out F` both leave
`F/model.keras` and `F/vocab.txt`, and a record of the job: `finetune.json` or
`config.json` (pretraining), each a JSON object whose "job" holds the job's
arguments (task, lowercase, sequence_length, ...). Whatever takes a model
(fine-tuning's `--init`, export, predict, pipelines) reads such a folder
through `read_run_folder`, so all of them accept the same folders.
"""

import dataclasses
import os

from keras_bert.json_files import read_json

MODEL_FILE = "model.keras"
VOCAB_FILE = "vocab.txt"
# The record each job writes, in the order they are looked for.
RECORD_FILES = {"finetune": "finetune.json", "pretrain": "config.json", "distill": "distill.json"}


@dataclasses.dataclass(frozen=True)
class RunFolder:
    """A job's output folder.

    Attributes:
        folder: the folder.
        model_file: its `model.keras`.
        vocab_file: its `vocab.txt`, or None when there is none.
        kind: "finetune", "pretrain" or "distill" (whose record was found), or None.
        job: the record's "job" dict (the job's arguments), or None.
    """

    folder: str
    model_file: str
    vocab_file: object
    kind: object
    job: object

    @property
    def lowercase(self):
        """The vocabulary's casing the job recorded, or None."""
        if self.job is not None and "lowercase" in self.job:
            return bool(self.job["lowercase"])
        return None


def read_job_record(folder):
    """`(kind, job dict)` from the record in `folder`, or `(None, None)` when it has none.

    A `config.json` without a "job" (a Hugging Face checkpoint's) is not a record.

    Raises:
        ValueError: the record exists but is not a JSON object with a "job" object.
    """
    for kind, name in RECORD_FILES.items():
        path = os.path.join(folder, name)
        record = read_json(path, "job record", expected=None, if_missing=None)
        if record is None:
            continue
        job = record.get("job") if isinstance(record, dict) else None
        if kind == "pretrain" and isinstance(record, dict) and "job" not in record:
            continue  # another tool's config.json (a Hugging Face checkpoint's), not a job record
        if not isinstance(job, dict):
            raise ValueError(f"{path}: not a keras-bert job record (no 'job' object)")
        return kind, job
    return None, None


def read_run_folder(path):
    """The `RunFolder` that `path` (a job's folder, or the `model.keras` inside one) names, or None.

    A `.keras` file elsewhere (not called model.keras, or with no job record
    beside it) is not a run folder: None.
    """
    path = os.fspath(path)
    if os.path.isdir(path):
        folder = path
    elif os.path.basename(path) == MODEL_FILE:
        folder = os.path.dirname(os.path.abspath(path))
    else:
        return None
    model_file = os.path.join(folder, MODEL_FILE)
    kind, job = read_job_record(folder)
    if kind is None or not os.path.isfile(model_file):
        return None
    vocab_file = os.path.join(folder, VOCAB_FILE)
    return RunFolder(folder, model_file, vocab_file if os.path.isfile(vocab_file) else None, kind, job)
