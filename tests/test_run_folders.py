"""read_run_folder: the one reader of jobs' output folders."""

import json

import pytest

from keras_bert.run_folders import read_job_record, read_run_folder


def _folder(tmp_path, record_name="finetune.json", job=None, model=True, vocab=True):
    if record_name:
        (tmp_path / record_name).write_text(json.dumps({"job": job or {"task": "classify", "lowercase": False}}))
    if model:
        (tmp_path / "model.keras").write_bytes(b"PK")
    if vocab:
        (tmp_path / "vocab.txt").write_text("[PAD]\n")
    return tmp_path


@pytest.mark.parametrize("record_name, kind", [("finetune.json", "finetune"), ("config.json", "pretrain")])
def test_a_job_folder_and_its_model_file_name_the_same_run(tmp_path, record_name, kind):
    folder = _folder(tmp_path, record_name)
    for path in (folder, folder / "model.keras"):
        run = read_run_folder(path)
        assert run.kind == kind and run.lowercase is False
        assert run.model_file == str(folder / "model.keras") and run.vocab_file == str(folder / "vocab.txt")


def test_not_a_run_folder(tmp_path):
    assert read_run_folder(_folder(tmp_path, record_name=None)) is None  # no record
    assert read_run_folder(tmp_path / "other.keras") is None
    assert read_job_record(tmp_path) == (None, None)


def test_a_broken_record_is_named(tmp_path):
    (tmp_path / "finetune.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"Cannot read the job record .*finetune\.json"):
        read_run_folder(tmp_path)
    (tmp_path / "finetune.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="no 'job' object"):
        read_job_record(tmp_path)


def test_a_hugging_face_folder_is_not_a_run_folder(tmp_path):
    """Its config.json is the model's configuration, not a job record."""
    _folder(tmp_path, record_name=None)
    (tmp_path / "config.json").write_text('{"model_type": "bert", "hidden_size": 384}')
    assert read_run_folder(tmp_path) is None
    assert read_job_record(tmp_path) == (None, None)
    (tmp_path / "config.json").write_text('{"job": 3}')  # a job record gone wrong is still named
    with pytest.raises(ValueError, match="no 'job' object"):
        read_job_record(tmp_path)
