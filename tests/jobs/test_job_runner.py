"""The runner both jobs share: the resume-argument check, TensorBoard logs, and task names in job records.

Exact resumption after a kill is tests/robustness/test_interrupted_training.py's.
"""

import json
import shutil

import pytest

from keras_bert.jobs.finetune import finetune
from keras_bert.jobs.pretrain import pretrain
from keras_bert.jobs.runner import check_same_job
from keras_bert.preprocessing.pretraining.config import PretrainingDataConfig
from task_helpers import FIXTURES, classify_rows, write_rows

VOCAB = str(FIXTURES / "vocab.txt")

# What is checked here (argument records, refusals, folder rules, task names, which logs are written) is Python
# around `fit`; training itself, and resuming it to the same weights, is checked on every backend elsewhere.
pytestmark = pytest.mark.only_backend("torch", reason="the runner's records, checks and folder rules are the same "
                                      "Python on every backend; once, on torch, whose tiny models run eagerly")


def test_check_same_job_names_every_differing_key_and_skips_unrecorded_ones():
    recorded = {"learning_rate": 1e-3, "seed": 1, "steps": 6}
    job = {"learning_rate": 2e-3, "seed": 2, "steps": 6, "pack_sequences": False}
    with pytest.raises(ValueError) as error:
        check_same_job(recorded, job, ("learning_rate", "seed", "steps", "pack_sequences"), "out/checkpoints")
    message = str(error.value)
    assert "learning_rate: checkpoint 0.001 vs now 0.002" in message and "seed: checkpoint 1 vs now 2" in message
    assert "steps" not in message and "pack_sequences" not in message
    assert "use the same arguments, or another --out folder" in message
    check_same_job(recorded, {**recorded, "pack_sequences": True}, ("steps", "pack_sequences"), "out")


# ----------------------------------------------------------------------------- pretrain
@pytest.fixture(scope="module")
def corpus(tmp_path_factory, shared_data):
    path = tmp_path_factory.mktemp("corpus") / "train.txt"
    lines = (shared_data / "austen" / "persuasion.txt").read_text(encoding="utf-8").splitlines()[200:400]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def run_pretrain(corpus, out, data_options=(("sequence_length", 32), ("batch_size", 8)), **overrides):
    options = dict(size="tiny", steps=2, checkpoint_every=1, learning_rate=1e-3, seed=3, tensorboard=False, verbose=0)
    options.update(data_options)
    return pretrain(corpus=[str(corpus)], vocabulary=VOCAB, output_dir=str(out), **{**options, **overrides})


@pytest.fixture(scope="module")
def pretrained(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("pretrained")
    run_pretrain(corpus, out)
    return out


@pytest.mark.parametrize(
    "change, named",
    [({"learning_rate": 2e-3}, "learning_rate: checkpoint 0.001 vs now 0.002"),
     ({"masking": "whole-word"}, "masking: checkpoint 'token' vs now 'whole-word'"),
     ({"size": "mini", "seed": 4}, "size: checkpoint 'tiny' vs now 'mini', seed: checkpoint 3 vs now 4")],
)
def test_pretrain_resume_refuses_a_checkpoint_of_other_arguments(corpus, pretrained, change, named):
    before = (pretrained / "config.json").read_text()
    with pytest.raises(ValueError, match="different job") as error:
        run_pretrain(corpus, pretrained, resume=True, **change)
    assert named in str(error.value)
    assert (pretrained / "config.json").read_text() == before


def test_pretrain_resume_with_the_same_arguments_and_a_data_config(corpus, pretrained):
    """The checkpoint has finished training: resuming with the same job trains nothing and saves again."""
    data = PretrainingDataConfig(sequence_length=32, batch_size=8)
    summary = run_pretrain(corpus, pretrained, data_options=(), resume=True, data=data)
    assert summary["resumed_from_step"] == 2 and summary["final_metrics"] == {}
    job = json.loads((pretrained / "config.json").read_text())["job"]
    assert job["sequence_length"] == 32 and job["masking"] == "token" and job["pack_sequences"] is False


def test_pretrain_rejects_unknown_data_options(corpus, tmp_path):
    with pytest.raises(TypeError, match="sequence_lenght"):
        run_pretrain(corpus, tmp_path, sequence_lenght=32)


# ----------------------------------------------------------------------------- finetune
@pytest.fixture(scope="module")
def train_file(tmp_path_factory):
    header, rows = classify_rows()
    return write_rows(tmp_path_factory.mktemp("finetune_data") / "train.tsv", header, rows[:32])


def run_finetune(task, train_file, out, **overrides):
    options = dict(vocab=VOCAB, sequence_length=16, batch_size=16, epochs=1, seed=5, verbose=0)
    return finetune(task, "tiny", train_file, out, **{**options, **overrides})


@pytest.mark.parametrize("task", ["classify", "classifier"])
def test_finetune_takes_either_task_spelling_records_the_registry_name_and_writes_tensorboard_logs(
    task, train_file, tmp_path
):
    run_finetune(task, train_file, tmp_path)
    assert json.loads((tmp_path / "finetune.json").read_text())["job"]["task"] == "classifier"
    assert json.loads((tmp_path / "checkpoints" / "checkpoint.json").read_text())["job"]["task"] == "classifier"
    assert list((tmp_path / "logs" / "train").glob("events.out.tfevents.*"))


def test_finetune_without_tensorboard_writes_no_logs(train_file, tmp_path):
    run_finetune("classifier", train_file, tmp_path, tensorboard=False)
    assert (tmp_path / "model.keras").exists() and not (tmp_path / "logs").exists()


def test_finetune_resumes_a_checkpoint_that_recorded_the_cli_word(train_file, tmp_path):
    run_finetune("classify", train_file, tmp_path, tensorboard=False)
    state_file = tmp_path / "checkpoints" / "checkpoint.json"
    state = json.loads(state_file.read_text())
    state["job"]["task"] = "classify"  # as checkpoints written before the registry recorded it
    state_file.write_text(json.dumps(state))
    summary = run_finetune("classifier", train_file, tmp_path, tensorboard=False, resume=True)
    assert summary["resumed_from_step"] == state["step"] == 2
    with pytest.raises(ValueError, match="learning_rate: checkpoint 3e-05 vs now 0.001") as error:
        run_finetune("classify", train_file, tmp_path, tensorboard=False, resume=True, learning_rate=1e-3)
    assert "task:" not in str(error.value)


def test_finetune_rejects_unknown_options_and_tasks(train_file, tmp_path):
    with pytest.raises(TypeError, match="text_colum"):
        run_finetune("classify", train_file, tmp_path, text_colum="sentence")
    with pytest.raises(ValueError, match="Unknown task 'summarize'"):
        run_finetune("summarize", train_file, tmp_path)


# ----------------------------------------------------------------------------- an earlier run in --out
def test_pretrain_refuses_an_output_folder_with_an_earlier_run_and_overwrite_starts_over(corpus, pretrained, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(pretrained, out)  # the module's 2-step run as the earlier one (a copy: the fixture stays as it is)
    state_file = out / "checkpoints" / "checkpoint.json"
    before = state_file.read_text()
    earlier = sorted(path.name for path in (out / "checkpoints").glob("checkpoint-*.keras"))
    assert earlier == ["checkpoint-00000002.keras"]
    with pytest.raises(FileExistsError, match=r"holds an earlier run \(a checkpoint at step 2\); pass --resume"):
        run_pretrain(corpus, out, steps=4)
    assert state_file.read_text() == before  # nothing touched
    summary = run_pretrain(corpus, out, steps=4, checkpoint_every=4, overwrite=True)
    assert summary["resumed_from_step"] == 0
    assert json.loads(state_file.read_text())["step"] == 4
    # None of the earlier run's left.
    assert sorted(path.name for path in (out / "checkpoints").glob("checkpoint-*.keras")) == ["checkpoint-00000004.keras"]


def test_finetune_refuses_a_folder_that_holds_only_a_model(train_file, tmp_path):
    (tmp_path / "model.keras").write_bytes(b"an earlier model")
    with pytest.raises(FileExistsError, match=r"holds an earlier run \(a model.keras\)"):
        run_finetune("classifier", train_file, tmp_path, tensorboard=False)
    assert (tmp_path / "model.keras").read_bytes() == b"an earlier model"
    run_finetune("classifier", train_file, tmp_path, tensorboard=False, overwrite=True)
    assert (tmp_path / "model.keras").read_bytes() != b"an earlier model"
