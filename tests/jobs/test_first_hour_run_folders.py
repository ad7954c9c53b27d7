"""A run folder never mixes two runs (issue 49): --overwrite clears the earlier run before the new one writes, an
interrupted run does not pass for a finished one, and model.keras holds what predicting needs (no optimizer state).

Interrupted here by a callback that raises KeyboardInterrupt (Ctrl-C) at the start of an epoch; a SIGKILL at any
moment is tests/robustness/test_interrupted_training.py's.
"""

import json
import shutil
import zipfile

import keras
import pytest

from keras_bert.jobs.finetune import finetune
from keras_bert.jobs.pretrain import pretrain
from keras_bert.loading import find_model, load_init
from keras_bert.run_folders import RUN_OUTPUTS, read_run_folder, unfinished_run
from task_helpers import FIXTURES, classify_rows, write_rows

pytestmark = pytest.mark.only_backend("torch", reason="the run folder's files are the same on every backend")

VOCAB = str(FIXTURES / "vocab.txt")


class Interrupt(keras.callbacks.Callback):
    """Ctrl-C at the first batch of epoch `epoch` (0-based)."""

    def __init__(self, epoch):
        super().__init__()
        self.epoch = epoch
        self._current = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._current = epoch

    def on_train_batch_begin(self, batch, logs=None):
        if self._current == self.epoch:
            raise KeyboardInterrupt


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("classify")
    header, rows = classify_rows()
    write_rows(folder / "train.tsv", header, rows[:32])  # 2 batches of 16
    write_rows(folder / "test.tsv", header, rows[299:339])
    return folder


def run(files, out, **overrides):
    options = dict(vocab=VOCAB, sequence_length=16, batch_size=16, epochs=1, seed=5, verbose=0, tensorboard=False)
    return finetune("classify", "tiny", files / "train.tsv", out, **{**options, **overrides})


@pytest.fixture(scope="module")
def finished(files, tmp_path_factory):
    """A finished run with validation and test reports and the best epoch's weights (no logs: TensorBoard is slow)."""
    out = tmp_path_factory.mktemp("finished") / "run"
    run(files, out, eval=FIXTURES / "classify_dev.tsv", test=files / "test.tsv")
    return out


def test_every_output_of_a_finished_run_is_one_overwrite_clears(finished):
    # A job that writes a new file must name it in RUN_OUTPUTS, or --overwrite would leave it to the next run.
    assert {path.name for path in finished.iterdir()} <= set(RUN_OUTPUTS)
    assert {"model.keras", "finetune.json", "labels.json", "metrics.json", "test_predictions.jsonl"} <= {
        path.name for path in finished.iterdir()
    }


def test_an_interrupted_overwrite_leaves_nothing_of_the_earlier_run_and_resumes(files, finished, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(finished, out)
    (out / "logs" / "train").mkdir(parents=True)  # the earlier run's TensorBoard logs
    (out / "notes.txt").write_text("mine")  # not a run's output: stays
    with pytest.raises(KeyboardInterrupt):
        run(files, out, epochs=2, overwrite=True, callbacks=[Interrupt(epoch=1)])
    # The new run's first checkpoint and history; vocab.txt stays (a new run may read it as --vocab) until the run
    # writes its own. Nothing that predict, export or --init would take.
    assert sorted(path.name for path in out.iterdir()) == ["checkpoints", "history.csv", "notes.txt", "vocab.txt"]
    assert json.loads((out / "checkpoints" / "checkpoint.json").read_text())["step"] == 2
    assert read_run_folder(out) is None
    assert unfinished_run(out) == "an unfinished run (its last checkpoint is step 2 of 4; no model.keras yet)"
    with pytest.raises(FileNotFoundError, match="unfinished run .*--resume continues it"):
        find_model(out)
    # Resuming finishes it; without the checkpoints kept, the folder is the finished model alone.
    summary = run(files, out, epochs=2, resume=True, keep_checkpoints=False)
    assert summary["resumed_from_step"] == 2 and len(summary["history"]["loss"]) == 1
    assert read_run_folder(out).kind == "finetune" and unfinished_run(out) is None
    assert not (out / "checkpoints").exists() and (out / "notes.txt").read_text() == "mine"
    # Nothing left to resume: said before anything is written, and the finished run stays.
    with pytest.raises(FileExistsError, match=r"\(a model.keras, a finetune.json\) but no checkpoint for --resume"):
        run(files, out, epochs=2, resume=True)
    assert read_run_folder(out).kind == "finetune"


def test_model_keras_holds_no_optimizer_state_and_still_starts_a_new_run(finished):
    """The checkpoint keeps the optimizer's two moments per weight for --resume; model.keras is for predicting."""
    model_file, checkpoint = finished / "model.keras", finished / "checkpoints" / "checkpoint.keras"
    with zipfile.ZipFile(model_file) as archive:
        assert not json.loads(archive.read("config.json")).get("compile_config")  # nothing to rebuild an optimizer
    assert model_file.stat().st_size < 0.5 * checkpoint.stat().st_size
    model = keras.saving.load_model(model_file)
    assert not model.compiled and model.label_names == json.loads((finished / "labels.json").read_text())
    backbone, tokenizer, _ = load_init(str(finished))  # `finetune --init <this folder>`
    assert backbone.vocabulary_size == tokenizer.vocabulary_size()


# ----------------------------------------------------------------------------- pretrain
@pytest.fixture(scope="module")
def corpus(tmp_path_factory, shared_data):
    path = tmp_path_factory.mktemp("corpus") / "train.txt"
    lines = (shared_data / "austen" / "persuasion.txt").read_text(encoding="utf-8").splitlines()[200:400]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def run_pretrain(corpus, out, **overrides):
    options = dict(size="tiny", steps=2, checkpoint_every=1, sequence_length=32, batch_size=8, seed=3,
                   tensorboard=False, verbose=0)
    return pretrain([str(corpus)], VOCAB, str(out), **{**options, **overrides})


def earlier_pretraining_run(out):
    """The files a finished pretraining run leaves (their contents do not matter to what is checked)."""
    (out / "checkpoints").mkdir(parents=True)
    (out / "checkpoints" / "checkpoint.json").write_text('{"step": 6, "model_file": "checkpoint-00000006.keras"}')
    (out / "checkpoints" / "checkpoint-00000006.keras").write_bytes(b"PK")
    (out / "logs").mkdir()
    for name in ("model.keras", "vocab.txt", "history.csv"):
        (out / name).write_text("earlier")
    (out / "config.json").write_text('{"job": {"steps": 6}}')


def test_pretrain_overwrite_clears_the_earlier_model_and_record_before_training(corpus, tmp_path):
    earlier_pretraining_run(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        run_pretrain(corpus, tmp_path, overwrite=True, callbacks=[Interrupt(epoch=0)])
    # The new run had written no checkpoint yet: nothing of the earlier one is left to pass for a finished run.
    assert {path.name for path in tmp_path.iterdir()} <= {"checkpoints", "history.csv", "vocab.txt"}
    assert not (tmp_path / "checkpoints" / "checkpoint.json").exists()
    assert (tmp_path / "history.csv").read_text() != "earlier"


def test_resume_without_a_checkpoint_refuses_a_finished_run_before_writing(corpus, tmp_path):
    """Starting from scratch would train beside the finished model.keras that predict serves."""
    earlier_pretraining_run(tmp_path)
    shutil.rmtree(tmp_path / "checkpoints")
    before = sorted(path.name for path in tmp_path.iterdir())
    with pytest.raises(FileExistsError, match=r"--overwrite to start over in it"):
        run_pretrain(corpus, tmp_path, resume=True)
    assert sorted(path.name for path in tmp_path.iterdir()) == before
    assert (tmp_path / "model.keras").read_text() == "earlier"
