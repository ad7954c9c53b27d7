"""`keras-bert predict` (issue #20): one output line per input line, a report for windowed or truncated
texts, and a short echo of long inputs; for .keras models (the pipelines) and SavedModels alike."""

import json

import pytest

from keras_bert.cli.main import main
from keras_bert.export import export_saved_model
from pipelines.long_text_reference import hand_windows, task_model
from task_helpers import FIXTURES, fixture_tokenizer

LENGTH = 16
LONG = "good " * 14 + "terrible dull " * 17  # 48 wordpieces: windows of 14 every 7
SAVED_MODEL_ONLY = pytest.mark.only_backend(
    "tensorflow", reason="exporting a SavedModel runs TensorFlow (other backends export through a child process)"
)


def predict(capsys, *args):
    """`keras-bert predict ARGS`: (exit status, JSON records, stderr lines)."""
    code = main(["predict", *map(str, args)])
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], [line for line in err.splitlines() if line]


@pytest.fixture(scope="module")
def keras_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("predict") / "classifier.keras"
    task_model("classifier", seed=3).save(path)
    return path


def keras_args(keras_file):
    return [keras_file, "--tokenizer", FIXTURES / "vocab.txt", "--sequence-length", LENGTH]


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("predict_sm") / "classifier"
    export_saved_model(task_model("classifier", seed=3), path, fixture_tokenizer(), sequence_length=LENGTH,
                       verbose=False)
    return path


def _check_one_output_per_line(capsys, tmp_path, model_args):
    lines = ["good film", "", "   ", "terrible dull plot"]
    (tmp_path / "in.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, records, err = predict(capsys, *model_args, "--file", tmp_path / "in.txt")
    assert code == 0 and len(records) == len(lines)
    assert [r["input"] for r in records] == lines
    assert "label" in records[0] and "label" in records[3]
    assert records[1]["error"].startswith("empty input") and records[2]["error"].startswith("empty input")
    assert "label" not in records[1]
    assert [e.split(":")[1] for e in err if "empty input" in e] == ["2", "3"]  # in.txt:2, in.txt:3


def _check_windowed_text_is_reported(capsys, model_args):
    code, records, err = predict(capsys, *model_args, "good film", LONG)
    windows = len(hand_windows(48, LENGTH - 2, (LENGTH - 2) // 2))
    assert code == 0 and "long_input" not in records[0]
    assert records[1]["long_input"] == {"tokens": 48, "windows": windows, "truncated_tokens": 0}
    assert err == [f"argument 2: 48 tokens, read in {windows} overlapping windows"]


def test_every_input_line_gets_one_output_line_keras(keras_file, capsys, tmp_path):
    _check_one_output_per_line(capsys, tmp_path, keras_args(keras_file))


@SAVED_MODEL_ONLY
def test_every_input_line_gets_one_output_line_saved_model(saved_model, capsys, tmp_path):
    _check_one_output_per_line(capsys, tmp_path, [saved_model])


def test_a_windowed_text_is_reported_keras(keras_file, capsys):
    _check_windowed_text_is_reported(capsys, keras_args(keras_file))


@SAVED_MODEL_ONLY
def test_a_windowed_text_is_reported_saved_model(saved_model, capsys):
    _check_windowed_text_is_reported(capsys, [saved_model])


def test_a_long_input_is_echoed_short_unless_asked(keras_file, capsys):
    # 2,000 characters (400 wordpieces) are long enough for what is checked: the echo cuts at 80.
    text = ("good film " * 200)[:2_000]
    _, records, _ = predict(capsys, *keras_args(keras_file), text)
    assert records[0]["input"] == text[:80] + "… (2,000 characters)"
    assert records[0]["long_input"]["tokens"] == 400
    _, records, _ = predict(capsys, *keras_args(keras_file), "--full-input", text)
    assert records[0]["input"] == text


@pytest.fixture(scope="module")
def qa_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("predict_qa") / "qa.keras"
    task_model("question_answerer", seed=1).save(path)
    return path


def test_a_truncated_question_is_reported(qa_file, capsys):
    model_file = qa_file
    question = " ".join(["where does marco live"] * 5) + " ?"  # 21 wordpieces; 32 // 2 = 16 are kept
    code, records, err = predict(capsys, model_file, "--tokenizer", FIXTURES / "vocab.txt", "--sequence-length", 32,
                                 f"{question}\tmarco lives in rome .")
    assert code == 0 and records[0]["long_input"] == {"tokens": 5, "windows": 1, "truncated_tokens": 5}
    assert err == ["argument 1: 5 tokens; 5 tokens dropped (of the question past max_query_length)"]


def test_an_empty_field_is_a_per_line_error(qa_file, capsys):
    model_file = qa_file
    code, records, _ = predict(capsys, model_file, "--tokenizer", FIXTURES / "vocab.txt", "--sequence-length", 32,
                               "who ?\t", "who met ivan ?\tanna met ivan .")
    assert code == 0 and records[0]["error"] == "field 2 (context) is empty: nothing to predict"
    assert records[1]["answer"] and records[1]["input"] == ["who met ivan ?", "anna met ivan ."]


def test_help_says_what_a_blank_line_gives(capsys):
    with pytest.raises(SystemExit):
        main(["predict", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "one JSON line per input line" in text and '{"input": "", "error": "..."}' in text
    assert "overlapping windows" in text


@pytest.mark.only_backend("torch", reason="--traced runs torch.export, a torch-backend feature")
def test_traced_predictions_equal_the_keras_models(capsys, keras_file):
    texts = ["good film", LONG, "terrible dull plot"]
    code, plain, _ = predict(capsys, *keras_args(keras_file), *texts)
    code_traced, traced, _ = predict(capsys, *keras_args(keras_file), "--traced", *texts)
    assert code == code_traced == 0
    assert [r["label"] for r in traced] == [r["label"] for r in plain]
    assert [r["score"] for r in traced] == pytest.approx([r["score"] for r in plain], abs=1e-6)


@pytest.mark.not_backend("torch", reason="checks the refusal every backend but torch gives")
def test_traced_elsewhere_names_the_backend_to_use(capsys, keras_file):
    code = main(["predict", *map(str, keras_args(keras_file)), "--traced", "good film"])
    assert code != 0
    assert "KERAS_BACKEND=torch" in capsys.readouterr().err
