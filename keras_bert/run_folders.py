"""The output folders of keras-bert's jobs, read in one place.

`keras-bert pretrain --out F` and `keras-bert finetune --out F` both leave
`F/model.keras` and `F/vocab.txt`, and a record of the job: `finetune.json` or
`config.json` (pretraining), each a JSON object whose "job" holds the job's
arguments (task, lowercase, sequence_length, ...). Whatever takes a model
(fine-tuning's `--init`, export, predict, pipelines) reads such a folder
through `read_run_folder`, so all of them accept the same folders.

A run is finished once its model.keras and then its record are written (the
last two writes of every job); until then the folder holds only its
checkpoints, history and logs (`unfinished_run` describes it). A new run in a
folder clears an earlier run's outputs before it starts (`clear_run`; all but
vocab.txt, which it may read and rewrites when it finishes), so a folder never
holds parts of two runs.
"""

import dataclasses
import glob
import os
import shutil

from keras_bert.json_files import read_json

MODEL_FILE = "model.keras"
VOCAB_FILE = "vocab.txt"
# A tokenizer that a vocab.txt cannot give (byte-level BPE, SentencePiece), as `Tokenizer.from_pretrained` reads it
# (keras_bert.preprocessing.tokenizer.SAVED_TOKENIZER_FILE; named here too: this module imports nothing of TensorFlow).
TOKENIZER_FILE = "keras_bert_tokenizer.json"
CHECKPOINT_DIR = "checkpoints"
CHECKPOINT_STATE_FILE = "checkpoint.json"  # `keras_bert.jobs.checkpointing`'s commit record
# The record each job writes, in the order they are looked for.
RECORD_FILES = {"finetune": "finetune.json", "pretrain": "config.json", "distill": "distill.json"}
# Every file and folder a job writes into its output folder: what `clear_run` deletes, in this order. The
# records and model.keras go first, so that a clear cut short leaves a folder that no longer looks finished.
RUN_OUTPUTS = (
    *RECORD_FILES.values(), MODEL_FILE, "adapter.npz", VOCAB_FILE, TOKENIZER_FILE, "labels.json", "metrics.json",
    "eval_predictions.jsonl", "predictions.json", "test_predictions.jsonl", "test_predictions.json",
    "history.csv", "logs", CHECKPOINT_DIR,
)
_FOLDERS = ("logs", CHECKPOINT_DIR)


@dataclasses.dataclass(frozen=True)
class RunFolder:
    """A job's output folder.

    Attributes:
        folder: the folder.
        model_file: its `model.keras`.
        vocab_file: its `vocab.txt`, or None when there is none.
        tokenizer_file: its `keras_bert_tokenizer.json` (a tokenizer other than WordPiece), or None.
        kind: "finetune", "pretrain" or "distill" (whose record was found), or None.
        job: the record's "job" dict (the job's arguments), or None.
    """

    folder: str
    model_file: str
    vocab_file: object
    kind: object
    job: object
    tokenizer_file: object = None

    @property
    def lowercase(self):
        """The vocabulary's casing the job recorded, or None."""
        if self.job is not None and self.job.get("lowercase") is not None:  # None: a tokenizer without casing
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
    tokenizer_file = os.path.join(folder, TOKENIZER_FILE)
    return RunFolder(folder, model_file, vocab_file if os.path.isfile(vocab_file) else None, kind, job,
                     tokenizer_file if os.path.isfile(tokenizer_file) else None)


def unfinished_run(folder):
    """`folder`'s run in a few words when it has started but not finished, else None.

    "an unfinished run (its last checkpoint is step 2 of 4; no model.keras
    yet)": a run that has written a checkpoint but not yet its model.keras and
    record (it was interrupted, failed, or is still training); `--resume` continues it.

    Raises:
        ValueError: a checkpoint record that cannot be read.
    """
    folder = os.fspath(folder)
    state = read_json(os.path.join(folder, CHECKPOINT_DIR, CHECKPOINT_STATE_FILE), "checkpoint record", expected=None,
                      if_missing=None)
    if not isinstance(state, dict) or not isinstance(state.get("step"), int):
        return None
    final = final_outputs(folder)
    if MODEL_FILE in final and len(final) > 1:  # model.keras and the record after it: finished
        return None
    missing = "job record" if MODEL_FILE in final else MODEL_FILE
    steps = (state.get("job") or {}).get("steps")
    of = f" of {steps}" if isinstance(steps, int) else ""
    return f"an unfinished run (its last checkpoint is step {state['step']}{of}; no {missing} yet)"


def final_outputs(folder):
    """The names of the files a finished run leaves last that `folder` holds: model.keras and job records."""
    names = (MODEL_FILE, *RECORD_FILES.values())
    return [name for name in names if _written_by_a_job(name, os.path.join(os.fspath(folder), name))]


def remove_final_outputs(folder):
    """Deletes `final_outputs(folder)`: a run that writes them again when it finishes is not finished before then."""
    for name in final_outputs(folder):
        os.remove(os.path.join(os.fspath(folder), name))


def clear_run(folder):
    """Deletes an earlier run's outputs from `folder` (`RUN_OUTPUTS`, in that order), and leftovers of their writes.

    Kept: vocab.txt (a new run may read it as its `--vocab`; it writes its own
    when it finishes), other files (an output folder may hold the user's own),
    and outputs' names that hold something else: a config.json that is not a
    job record (a Hugging Face checkpoint's), a logs/ folder with more than
    TensorBoard's train/ and validation/.
    """
    folder = os.fspath(folder)
    for name in RUN_OUTPUTS:
        path = os.path.join(folder, name)
        if name in _FOLDERS and _written_by_a_job(name, path):
            shutil.rmtree(path)
        elif name != VOCAB_FILE and _written_by_a_job(name, path):
            os.remove(path)
        # A write killed before its rename leaves `<name>.tmp-<pid>` (`model.tmp-<pid>.keras`): see atomic_files.
        stem = name[: -len(".keras")] if name.endswith(".keras") else name
        for leftover in glob.glob(os.path.join(glob.escape(folder), glob.escape(stem) + ".tmp-*")):
            os.remove(leftover)


def _written_by_a_job(name, path):
    """Whether `path`, an output's name in a folder, holds what the job writes there (checked for generic names)."""
    if name == RECORD_FILES["pretrain"]:
        try:
            record = read_json(path, "job record", expected=None, if_missing=None)
        except ValueError:  # unreadable: not known to be a record, so it stays
            return False
        return isinstance(record, dict) and isinstance(record.get("job"), dict)
    if name not in _FOLDERS:
        return os.path.isfile(path)
    if not os.path.isdir(path) or os.path.islink(path):
        return False
    return name != "logs" or set(os.listdir(path)) <= {"train", "validation"}  # keras.callbacks.TensorBoard's
