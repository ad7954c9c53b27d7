"""The fine-tuning job: command-line arguments to a saved, evaluated task model, for every task."""

import argparse
import json
import shutil

import keras
import numpy as np
import pytest

from keras_bert import BertPretrainer
from harness import tiny_backbone
from keras_bert.jobs.finetune import finetune
from keras_bert.metrics.entities import get_entities
from keras_bert.pipelines import load_pipeline
from task_helpers import FIXTURES, classify_rows, write, write_rows

VOCAB = str(FIXTURES / "vocab.txt")
# The job's files, reports and error paths do not depend on the backend; every head trains and predicts
# on every backend in tests/models/test_task_learning.py and test_task_models.py, and the pair-classification job below
# runs end to end on all three.
PLUMBING = "job plumbing is backend-independent; the heads train on every backend in tests/models/test_task_learning.py"


def parse(argv):
    # The CLI's argparse lives in keras_bert.cli.finetune; the job tests below call `finetune` directly.
    from keras_bert.cli.finetune import add_finetune_arguments

    parser = argparse.ArgumentParser(prog="keras-bert finetune")
    add_finetune_arguments(parser)
    return parser.parse_args(argv)


@pytest.fixture(scope="module")
def init_files(tmp_path_factory):
    """A tiny backbone and a tiny pretrainer saved as .keras files, with the vocabulary beside them."""
    folder = tmp_path_factory.mktemp("init")
    keras.utils.set_random_seed(0)
    backbone = tiny_backbone(max_sequence_length=64, hidden_dim=16, num_layers=1)
    backbone.save(folder / "backbone.keras")
    BertPretrainer(tiny_backbone(max_sequence_length=64, hidden_dim=16, num_layers=1)).save(folder / "pretrainer.keras")
    shutil.copy(VOCAB, folder / "vocab.txt")
    return folder


def test_cli_pair_classification_end_to_end(init_files, tmp_path, capsys):
    from keras_bert.cli.finetune import run_finetune

    out = tmp_path / "run"
    args = parse([
        "--task", "classify", "--init", str(init_files / "backbone.keras"),
        "--train", str(FIXTURES / "pairs_train.tsv"), "--eval", str(FIXTURES / "pairs_dev.tsv"),
        "--text-column", "sentence1", "--pair-column", "sentence2", "--label-column", "label",
        "--sequence-length", "24", "--epochs", "2", "--learning-rate", "3e-3", "--out", str(out), "--quiet",
    ])
    assert run_finetune(args) == 0
    printed = capsys.readouterr().out.strip().splitlines()  # --quiet: no progress, one line of results
    assert len(printed) == 1 and set(json.loads(printed[0])) == {"validation", "best_epoch", "model"}
    for name in ("model.keras", "vocab.txt", "labels.json", "metrics.json", "finetune.json", "history.csv",
                 "eval_predictions.jsonl"):
        assert (out / name).exists(), name
    assert json.loads((out / "labels.json").read_text()) == ["negative", "positive"]
    sections = json.loads((out / "metrics.json").read_text())
    assert set(sections) == {"validation", "selection"}  # no --test: nothing is called test
    metrics = sections["validation"]
    assert set(metrics) == {"accuracy", "f1", "f1_class", "macro_f1", "majority_class", "majority_class_accuracy"}
    job = json.loads((out / "finetune.json").read_text())
    assert job["metrics"] == sections and sections["selection"]["chosen_on"] == "validation"
    assert job["job"]["steps"] == 2 * 12 and job["job"]["warmup_steps"] == 2  # 400 // 32 full batches
    assert job["counts"]["train"]["examples"] == 400
    assert len((out / "history.csv").read_text().splitlines()) == 3
    rows = [json.loads(line) for line in (out / "eval_predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 100 and {"text", "pair", "label", "prediction", "score"} <= set(rows[0])
    # The folder is a pipeline: same tokenizer, same sequence length.
    pipeline = load_pipeline(out)
    assert pipeline.sequence_length == 24
    assert pipeline("a good film .", pairs="a great cast .")["label"] in ("negative", "positive")
    accuracy = np.mean([r["label"] == r["prediction"] for r in rows])
    assert accuracy == pytest.approx(metrics["accuracy"])


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_ner_job_from_a_pretrainer_file(init_files, tmp_path):
    summary = finetune(
        "ner", init_files / "pretrainer.keras", FIXTURES / "ner_train.conll", tmp_path, eval=FIXTURES / "ner_dev.conll",
        sequence_length=24, epochs=2, learning_rate=3e-3, verbose=0,  # one epoch, warmup included, tags all "O"
    )
    assert {"precision", "recall", "f1", "word_accuracy"} <= set(summary["metrics"]["validation"])
    model = keras.saving.load_model(tmp_path / "model.keras")
    assert model.label_names == json.loads((tmp_path / "labels.json").read_text())
    # The folder's pipeline, on raw text, finds the entities the job predicted for the same held-out sentences.
    pipeline = load_pipeline(tmp_path)
    rows = [json.loads(line) for line in (tmp_path / "eval_predictions.jsonl").read_text().splitlines()]
    with_entities = [r for r in rows if get_entities(r["predicted"]) and len(r["words"]) <= 20]
    assert with_entities, "the fixture run predicts entities on the held-out file"
    for row in with_entities:
        expected = [(kind, " ".join(row["words"][a : b + 1])) for kind, a, b in get_entities(row["predicted"])]
        found = pipeline(" ".join(row["words"]))
        assert [(e["type"], e["text"]) for e in found] == expected
        assert all(0.0 < e["score"] <= 1.0 for e in found)


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_qa_job_writes_squad_predictions(init_files, tmp_path):
    summary = finetune(
        "qa", init_files / "backbone.keras", FIXTURES / "squad_v2_train.json", tmp_path,
        eval=FIXTURES / "squad_v2_dev.json", sequence_length=32, doc_stride=8, max_query_length=16, epochs=1,
        learning_rate=3e-3, verbose=0,
    )
    predictions = json.loads((tmp_path / "predictions.json").read_text())
    assert len(predictions) == 120 and all(isinstance(v, str) for v in predictions.values())
    assert {"exact_match", "f1", "has_answer_f1", "no_answer_f1"} <= set(summary["metrics"]["validation"])
    job = json.loads((tmp_path / "finetune.json").read_text())["job"]
    assert job["allow_no_answer"] is True and job["doc_stride"] == 8
    assert summary["counts"]["train"]["windows"] > summary["counts"]["train"]["questions"]


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_multiple_choice_and_regression_jobs(init_files, tmp_path):
    summary = finetune(
        "multiple-choice", init_files / "backbone.keras", FIXTURES / "mc_train.csv", tmp_path / "mc",
        eval=FIXTURES / "mc_dev.csv", sequence_length=16, epochs=1, verbose=0,
    )
    assert 0.0 <= summary["metrics"]["validation"]["accuracy"] <= 1.0 and summary["counts"]["train"]["choices"] == 4
    summary = finetune(
        "regress", init_files / "backbone.keras", FIXTURES / "regress_train.tsv", tmp_path / "regress",
        eval=FIXTURES / "regress_dev.tsv", label_column="score", sequence_length=16, epochs=1, freeze_backbone=True,
        length_buckets=[8, 12], verbose=0,
    )
    assert {"pearson", "spearman", "mse"} == set(summary["metrics"]["validation"])
    assert len(summary["history"]["loss"]) == 1
    model = keras.saving.load_model(tmp_path / "regress" / "model.keras")
    assert model.num_classes == 1 and not model.backbone.trainable
    assert not (tmp_path / "regress" / "labels.json").exists()


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_job_errors_are_clear_and_early(init_files, tmp_path):
    backbone = str(init_files / "backbone.keras")
    dev = write(tmp_path / "dev.tsv", "sentence\tlabel\nfine film\tpositive\nodd film\tneutral\n")
    with pytest.raises(ValueError, match=r"dev\.tsv:3: label 'neutral' is not one of the 2 labels"):
        finetune("classify", backbone, FIXTURES / "classify_train.tsv", tmp_path / "a", eval=dev, sequence_length=24,
                 verbose=0)
    assert not (tmp_path / "a" / "model.keras").exists()
    with pytest.raises(ValueError, match="longer than the model's max_sequence_length=64"):
        finetune("classify", backbone, FIXTURES / "classify_train.tsv", tmp_path / "b", sequence_length=128, verbose=0)
    with pytest.raises(ValueError, match="--init tiny starts from random weights and needs --vocab"):
        finetune("classify", "tiny", FIXTURES / "classify_train.tsv", tmp_path / "c", verbose=0)
    with pytest.raises(FileNotFoundError, match="--train: no such file"):
        finetune("classify", backbone, tmp_path / "missing.tsv", tmp_path / "d", verbose=0)
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        finetune("classify", tmp_path / "nothing_here", FIXTURES / "classify_train.tsv", tmp_path / "e", verbose=0)
    wrong_vocab = write(tmp_path / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nfilm\n")
    with pytest.raises(ValueError, match="has 6 tokens but the model's embedding has"):
        finetune("classify", backbone, FIXTURES / "classify_train.tsv", tmp_path / "f", vocab=wrong_vocab, verbose=0)


def test_cli_rejects_an_unknown_task():
    with pytest.raises(SystemExit):
        parse(["--task", "summarize", "--init", "x", "--train", "y", "--out", "z"])


# In torch's pass: the shortest, and where one epoch of a 22M-parameter model traces and compiles nothing.
@pytest.mark.only_backend("torch", reason="loading a real Hugging Face folder is backend-independent "
                                     "(the converter tests cover all backends); one 22M-parameter run is enough")
def test_finetune_from_a_real_hugging_face_folder(minilm_path, tmp_path):
    header, rows = classify_rows()
    train = write_rows(tmp_path / "train.tsv", header, rows[:24])
    summary = finetune("classify", str(minilm_path), train, tmp_path / "run", eval=train, sequence_length=16,
                       batch_size=8, epochs=1, verbose=0)
    job = json.loads((tmp_path / "run" / "finetune.json").read_text())
    assert job["job"]["lowercase"] is True and job["backbone"]["hidden_dim"] == 384
    assert len((tmp_path / "run" / "vocab.txt").read_text().splitlines()) == 30522
    assert 0.0 <= summary["metrics"]["validation"]["accuracy"] <= 1.0
    assert load_pipeline(tmp_path / "run")("A charming film.")["label"] in ("negative", "positive")
