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
