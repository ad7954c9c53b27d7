"""The one resolver of "a model the user names": what a reference is, where its vocabulary and casing are."""

import json
import shutil

import pytest

from harness import tiny_backbone
from keras_bert.loading import find_model, load_tokenizer, reported_as, resolve_model
from keras_bert.models import BertPretrainer
from task_helpers import FIXTURES

pytestmark = pytest.mark.only_backend("jax", reason="resolving files is the same on every backend")
VOCAB = FIXTURES / "vocab.txt"


@pytest.fixture(scope="module")
def keras_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "backbone.keras"
    tiny_backbone().save(path)
    return path


def _run_folder(folder, keras_file, record="config.json", lowercase=False):
    folder.mkdir()
    shutil.copy(keras_file, folder / "model.keras")
    shutil.copy(VOCAB, folder / "vocab.txt")
    (folder / record).write_text(json.dumps({"job": {"lowercase": lowercase, "sequence_length": 16}}))
    return folder


def test_a_run_folder_and_its_model_keras_name_the_same_files(tmp_path, keras_file):
    run = _run_folder(tmp_path / "run", keras_file)
    for reference in (run, run / "model.keras"):
        files = resolve_model(reference)
        assert (files.kind, files.path, files.vocabulary) == ("keras", str(run / "model.keras"), str(run / "vocab.txt"))
        assert files.lowercase is False and files.run.kind == "pretrain" and files.job["sequence_length"] == 16
        assert find_model(reference) == files
    assert load_tokenizer(resolve_model(run)).lowercase is False  # the record's casing


def test_a_keras_file_elsewhere_brings_its_sidecars_or_the_vocab_beside_it(tmp_path, keras_file):
    lone = tmp_path / "lone" / "bert.keras"
    lone.parent.mkdir()
    shutil.copy(keras_file, lone)
    assert resolve_model(lone).vocabulary is None
    with pytest.raises(FileNotFoundError, match=r"no tokenizer found beside the model .*bert\.vocab\.txt.*--tokenizer"):
        load_tokenizer(resolve_model(lone), flag="--tokenizer")
    shutil.copy(VOCAB, lone.parent / "vocab.txt")
    assert resolve_model(lone).vocabulary == str(lone.parent / "vocab.txt")
    shutil.copy(VOCAB, lone.parent / "bert.vocab.txt")  # what `keras-bert convert` writes
    (lone.parent / "bert.tokenizer_config.json").write_text('{"do_lower_case": false}')
    files = resolve_model(lone)
    assert (files.vocabulary, files.lowercase, files.run) == (str(lone.parent / "bert.vocab.txt"), False, None)


def test_sizes_checkpoints_and_missing_references(tmp_path):
    assert resolve_model("tiny", sizes=True).kind == "size"
    with pytest.raises(ValueError, match="'tiny' is not a file or folder, nor a preset name"):
        resolve_model("tiny")  # a size is a reference only where random weights are
    with pytest.raises(FileNotFoundError, match=r"nope: no such file or folder \(nor a size name: \["):
        resolve_model(str(tmp_path / "nope"), sizes=True)
    (tmp_path / "hf").mkdir()
    shutil.copy(VOCAB, tmp_path / "hf" / "vocab.txt")
    files = resolve_model(tmp_path / "hf")
    assert (files.kind, files.vocabulary, files.lowercase) == ("checkpoint", str(tmp_path / "hf" / "vocab.txt"), None)
    assert files.description == f"checkpoint {tmp_path / 'hf'}"


def test_find_model_takes_keras_files_and_job_folders_only(tmp_path, keras_file):
    (tmp_path / "empty").mkdir()
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "broken.keras").write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(FileNotFoundError, match="nope: no such file$"):
        find_model(tmp_path / "nope")
    with pytest.raises(FileNotFoundError, match="the folder has no model.keras"):
        find_model(tmp_path / "empty")
    with pytest.raises(ValueError, match="expected a .keras file or a finetune folder"):
        find_model(tmp_path / "notes.txt")
    with pytest.raises(ValueError, match=r"broken.keras: not a .keras file \(not a zip archive"):
        find_model(tmp_path / "broken.keras")
    with pytest.raises(FileNotFoundError, match="^--teacher: .*nope: no such file"):
        with reported_as("--teacher"):
            find_model(tmp_path / "nope")


def test_init_loads_the_backbone_of_a_pretraining_run_with_its_vocabulary(tmp_path):
    from keras_bert.loading import load_init

    run = tmp_path / "run"
    run.mkdir()
    BertPretrainer(tiny_backbone()).save(run / "model.keras")
    shutil.copy(VOCAB, run / "vocab.txt")
    (run / "config.json").write_text('{"job": {"lowercase": false}}')
    backbone, tokenizer, description = load_init(run, dropout=0.0)
    assert description == f".keras file {run / 'model.keras'}" and backbone.dropout == 0.0
    assert tokenizer.lowercase is False and tokenizer.vocabulary_size() == backbone.vocabulary_size
    with pytest.raises(ValueError, match="--init tiny starts from random weights and needs --vocab"):
        load_init("tiny")
