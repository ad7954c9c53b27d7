"""`keras-bert explain` (issue #45): attributions.jsonl, report.html and PNGs from a .keras model; bad input
ends with a one-line error and nothing written."""

import json

import pytest

from keras_bert.cli.main import main
from pipelines.long_text_reference import task_model
from task_helpers import FIXTURES

pytestmark = pytest.mark.only_backend(
    "torch", reason="command-line plumbing; the attributions themselves are checked on every backend in tests/explain"
)


@pytest.fixture(scope="module")
def keras_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("explain") / "classifier.keras"
    task_model("classifier", seed=3, max_sequence_length=16).save(path)
    return path


def explain(capsys, keras_file, *args):
    code = main(["explain", str(keras_file), "--tokenizer", str(FIXTURES / "vocab.txt"), "--steps", "8",
                 *map(str, args)])
    _, err = capsys.readouterr()
    return code, err


def test_explain_writes_rows_page_pictures_and_a_deletion_curve(keras_file, capsys, tmp_path):
    out = tmp_path / "explained"
    code, err = explain(capsys, keras_file, "good film", "--out", out, "dull plot , weak show", "--deletion-curve",
                        "--deletion-words", "2", "--deletion-draws", "2")
    assert code == 0, err
    rows = [json.loads(line) for line in (out / "attributions.jsonl").read_text().splitlines()]
    assert [r["words"] for r in rows] == [["good", "film"], ["dull", "plot", ",", "weak", "show"]]
    assert all(r["method"] == "ig" and r["steps"] == 8 and r["score_baseline"] is not None for r in rows)
    assert sorted(p.name for p in out.iterdir()) == [
        "attributions.jsonl", "deletion_curve.json", "explanation_001.png", "explanation_002.png", "report.html"]
    curve = json.loads((out / "deletion_curve.json").read_text())
    assert curve["ks"] == [0, 1, 2] and curve["texts"] == 2 and curve["draws"] == 2
    assert "wrote 2 explanation(s)" in err and "deletion curve over 2 texts" in err


def test_target_and_method_options(keras_file, capsys, tmp_path):
    code, err = explain(capsys, keras_file, "good film", "--out", tmp_path / "o", "--target", "neutral",
                        "--method", "grad_x_input")
    assert code == 0, err
    row = json.loads((tmp_path / "o" / "attributions.jsonl").read_text())
    assert row["target"] == {"name": "neutral", "index": 1} and row["score_baseline"] is None


@pytest.mark.parametrize("inputs, message", [
    (["good film", "--target", "happy"], "target 'happy' is not a class"),
    (["good film and a great cast " * 5], "longer than the 16 an explanation reads"),
    (["good film", "--steps", "0"], "--steps must be at least 1"),
    (["good film", "--sequence-length", "99"], "longer than the model's max_sequence_length 16"),
])
def test_bad_input_is_one_line_and_writes_nothing(keras_file, capsys, tmp_path, inputs, message):
    code, err = explain(capsys, keras_file, *inputs, "--out", tmp_path / "never")
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "never").exists()


def test_an_empty_line_writes_nothing(keras_file, capsys, tmp_path):
    (tmp_path / "in.txt").write_text("good film\n\ndull plot\n", encoding="utf-8")
    code, err = explain(capsys, keras_file, "--file", tmp_path / "in.txt", "--out", tmp_path / "never")
    assert code == 2 and "in.txt:2: empty input" in err
    assert not (tmp_path / "never").exists()
