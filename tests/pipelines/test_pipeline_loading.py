"""`pipeline_for` and `load_pipeline` find each task's pipeline through the task registry."""

import json
import pathlib

import pytest

from keras_bert.models import (
    BertBackbone,
    BertClassifier,
    BertMultipleChoice,
    BertQuestionAnswerer,
    BertTokenClassifier,
)
from keras_bert.pipelines import (
    MultipleChoicePipeline,
    QuestionAnswererPipeline,
    TextClassifierPipeline,
    TokenClassifierPipeline,
    load_pipeline,
    pipeline_for,
)

VOCAB = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "vocab.txt"


def _backbone():
    vocabulary_size = len(VOCAB.read_text(encoding="utf-8").splitlines())
    return BertBackbone(vocabulary_size=vocabulary_size, num_layers=1, num_heads=2, hidden_dim=16,
                        intermediate_dim=32, max_sequence_length=64, dropout=0.0)


@pytest.mark.parametrize(
    "make_model, pipeline_class",
    [
        (lambda b: BertClassifier(b, num_classes=3), TextClassifierPipeline),
        (lambda b: BertClassifier(b, num_classes=1), TextClassifierPipeline),
        (lambda b: BertTokenClassifier(b, num_classes=3, label_names=["O", "B-X", "I-X"]), TokenClassifierPipeline),
        (lambda b: BertQuestionAnswerer(b), QuestionAnswererPipeline),
        (lambda b: BertMultipleChoice(b), MultipleChoicePipeline),
    ],
    ids=["classifier", "regressor", "token_classifier", "question_answerer", "multiple_choice"],
)
def test_pipeline_for_picks_the_task_pipeline(make_model, pipeline_class):
    model = make_model(_backbone())
    pipeline = pipeline_for(model, tokenizer=None, sequence_length=32)
    assert type(pipeline) is pipeline_class and pipeline.model is model and pipeline.sequence_length == 32


def test_pipeline_for_refuses_a_backbone():
    with pytest.raises(ValueError, match="No text pipeline for a BertBackbone"):
        pipeline_for(_backbone(), tokenizer=None)


def _finetune_folder(folder, task):
    folder.mkdir()
    BertQuestionAnswerer(_backbone()).save(folder / "model.keras")
    (folder / "vocab.txt").write_text(VOCAB.read_text(encoding="utf-8"), encoding="utf-8")
    job = {"task": task, "lowercase": True, "sequence_length": 48, "doc_stride": 16, "allow_no_answer": True}
    (folder / "finetune.json").write_text(json.dumps({"job": job}), encoding="utf-8")
    return folder


@pytest.mark.parametrize("task", ["qa", "question_answerer"])  # older records use the CLI word
def test_load_pipeline_reads_the_run_record(tmp_path, task):
    pipeline = load_pipeline(_finetune_folder(tmp_path / "run", task), batch_size=3)
    assert type(pipeline) is QuestionAnswererPipeline
    assert (pipeline.sequence_length, pipeline.doc_stride, pipeline.allow_no_answer) == (48, 16, True)
    assert pipeline.batch_size == 3 and pipeline.tokenizer.lowercase
    answer = pipeline("who?", "ada wrote it.")
    assert set(answer) == {"answer", "start", "end", "score"}


def test_load_pipeline_refuses_a_folder_without_a_finetune_record(tmp_path):
    folder = _finetune_folder(tmp_path / "run", "qa")
    (folder / "finetune.json").unlink()
    with pytest.raises(FileNotFoundError, match="not a `keras-bert finetune` output folder"):
        load_pipeline(folder)


def _classifier_folder(folder, window_stride):
    folder.mkdir()
    BertClassifier(_backbone(), num_classes=2).save(folder / "model.keras")
    (folder / "vocab.txt").write_text(VOCAB.read_text(encoding="utf-8"), encoding="utf-8")
    job = {"task": "classifier", "lowercase": True, "sequence_length": 16, "window_stride": window_stride}
    (folder / "finetune.json").write_text(json.dumps({"job": job}), encoding="utf-8")
    return folder


def test_load_pipeline_reads_long_texts_with_the_runs_window_stride(tmp_path):
    folder = _classifier_folder(tmp_path / "run", window_stride=5)
    assert load_pipeline(folder).window_stride == 5
    assert load_pipeline(folder, window_stride=3).window_stride == 3


@pytest.mark.only_backend("tensorflow", reason="the SavedModel is written by TensorFlow on every backend")
def test_export_serves_long_texts_with_the_runs_window_stride(tmp_path):
    from keras_bert.cli.main import main  # the CLI module: only this test needs it

    folder = _classifier_folder(tmp_path / "run", window_stride=5)
    assert main(["export", str(folder), "--out", str(tmp_path / "sm")]) == 0
    metadata = json.loads((tmp_path / "sm" / "assets" / "keras_bert_export.json").read_text())
    assert metadata["windows"] == {"window_stride": 5}


def test_a_tagger_whose_labels_are_not_entity_tags_gives_word_tags_and_no_entities():
    """Part-of-speech labels are not B/I/E/S tags: decoding entities from them would refuse the labels."""
    from task_helpers import fixture_tokenizer  # the tests' tokenizer fixture; only this test needs it

    model = BertTokenClassifier(_backbone(), num_classes=3, label_names=["NOUN", "VERB", "DET"])
    result = TokenClassifierPipeline(model, fixture_tokenizer(), sequence_length=16)("the cat sat", return_words=True)
    assert result["entities"] == []
    assert [w["text"] for w in result["words"]] == ["the", "cat", "sat"]
    assert {w["tag"] for w in result["words"]} <= {"NOUN", "VERB", "DET"}
