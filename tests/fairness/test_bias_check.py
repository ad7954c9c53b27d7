"""Counterfactual bias checks on a model (issue #45 item 5): `check_counterfactual_bias` and `keras-bert
bias-check` on a tiny fine-tuning run folder, against predictions of the hand-swapped texts; bad input refused
in one line with nothing written.

The expected numbers come from the pipeline run on texts swapped by hand in this file, not from the package's
swapper: a report that compared the wrong texts, or the wrong probability, disagrees with them.
"""

import json

import pytest

from keras_bert import TextClassifierPipeline, TokenClassifierPipeline, check_counterfactual_bias
from keras_bert.cli.main import main
from pipelines.long_text_reference import task_model
from task_helpers import FIXTURES, fixture_tokenizer

LENGTH = 16
# Names of the fixtures' vocabulary (every word here is one of its wordpieces), paired as a user's list would.
PAIRS = "anna\tben\ncarla\tivan\n"
TEXTS = ["anna was superb and lovely .", "the film was dull .", "ben met carla in paris .", "Anna and Ivan met Ben ."]
# The same texts swapped by hand; the second holds no term.
SWAPPED = {0: "ben was superb and lovely .", 2: "anna met ivan in paris .", 3: "Ben and Carla met Anna ."}
PLUMBING = "command-line checks before any model loads: the same on every backend"
# The regressor and the refused task kinds differ from the classifier only in how the report reads the pipeline's
# results (Python); the model path itself runs on every backend in the tests above.
READING = "reading a pipeline's results and the task kind is Python, the same on every backend"


@pytest.fixture(scope="module")
def classifier():
    return task_model("classifier", seed=3)


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory, classifier):
    """A finetune-style output folder (model.keras, vocab.txt, finetune.json) of a tiny 3-class classifier."""
    folder = tmp_path_factory.mktemp("bias_run")
    classifier.save(folder / "model.keras")
    (folder / "vocab.txt").write_bytes((FIXTURES / "vocab.txt").read_bytes())
    job = {"task": "classifier", "lowercase": True, "sequence_length": LENGTH, "pair_column": None}
    (folder / "finetune.json").write_text(json.dumps({"job": job}), encoding="utf-8")
    (folder / "pairs.tsv").write_text(PAIRS, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def report(run_folder):
    return check_counterfactual_bias(run_folder, TEXTS, str(run_folder / "pairs.tsv"), worst=2)


def bias_check(capsys, *args):
    """`keras-bert bias-check ARGS`: (exit status, stdout, stderr)."""
    code = main(["bias-check", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_report_compares_each_text_with_its_swap(report, classifier):
    pipeline = TextClassifierPipeline(classifier, fixture_tokenizer(), sequence_length=LENGTH)
    before, after = pipeline([TEXTS[i] for i in SWAPPED]), pipeline(list(SWAPPED.values()))
    changes = [abs(a["probabilities"][b["label"]] - b["score"]) for b, a in zip(before, after)]
    flips = [a["label"] != b["label"] for b, a in zip(before, after)]
    assert (report.task, report.texts, report.texts_without_terms, report.num_pairs) == ("classifier", 4, 1, 2)
    assert [e["index"] for e in report.examples] == list(SWAPPED)
    assert [e["swapped"] for e in report.examples] == list(SWAPPED.values())
    assert [e["change"] for e in report.examples] == pytest.approx(changes, abs=1e-5)
    assert [e["flipped"] for e in report.examples] == flips
    assert max(changes) > 0.01  # the weights are far from uniform: a swap moves the answer
    overall = report.overall
    assert overall["texts"] == 3 and overall["flips"] == sum(flips)
    assert overall["mean_abs_change"] == pytest.approx(sum(changes) / 3, abs=1e-5)
    assert overall["max_abs_change"] == pytest.approx(max(changes), abs=1e-5)
    # Per pair: text 0 swaps anna/ben only, text 2 both pairs, text 3 both.
    assert report.per_pair["anna/ben"]["texts"] == 3 and report.per_pair["carla/ivan"]["texts"] == 2
    assert report.per_pair["carla/ivan"]["max_abs_change"] == pytest.approx(max(changes[1:]), abs=1e-5)
    ranked = sorted(range(3), key=lambda k: (flips[k], changes[k]), reverse=True)
    assert [e["index"] for e in report.worst] == [list(SWAPPED)[k] for k in ranked[:2]]


@pytest.mark.only_backend("torch", reason=READING)
def test_a_regressor_reports_the_change_of_its_value_and_no_flips():
    pipeline = TextClassifierPipeline(task_model("regressor", seed=4), fixture_tokenizer(), sequence_length=LENGTH)
    report = check_counterfactual_bias(pipeline, TEXTS[:1], [("anna", "ben")])
    expected = abs(pipeline(SWAPPED[0])["value"] - pipeline(TEXTS[0])["value"])
    assert report.task == "regressor" and report.overall["flips"] is None and report.overall["flip_rate"] is None
    assert report.overall["max_abs_change"] == pytest.approx(expected, abs=1e-5) and expected > 0
    assert "absolute change of the predicted value" in report.summary()


def test_the_command_prints_a_summary_and_writes_report_json(run_folder, report, capsys, tmp_path):
    (tmp_path / "texts.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    code, out, err = bias_check(capsys, run_folder, "--pairs", run_folder / "pairs.tsv", "--file",
                                tmp_path / "texts.txt", "--worst", 2, "--out", tmp_path / "report")
    assert code == 0, err
    written = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert written == json.loads(json.dumps(report.as_dict()))  # the Python call's report, as JSON
    assert written["texts_without_terms"] == 1 and written["overall"]["texts"] == 3
    assert f"3 of 4 texts hold a term of {run_folder / 'pairs.tsv'} (2 pairs); 1 hold none" in out
    assert f"flip rate {written['overall']['flip_rate']:.2%}" in out
    assert f"report: {tmp_path / 'report' / 'report.json'}" in out


@pytest.mark.only_backend("torch", reason=READING)
def test_a_model_that_is_not_a_classifier_is_refused_saying_what_is_checked():
    tagger = TokenClassifierPipeline(task_model("token_classifier"), fixture_tokenizer(), sequence_length=LENGTH)
    with pytest.raises(ValueError, match="a token_classifier model; a bias check compares a classifier's labels"):
        check_counterfactual_bias(tagger, TEXTS, [("anna", "ben")])
    with pytest.raises(ValueError, match="TextClassifierPipeline"):
        check_counterfactual_bias(task_model("classifier"), TEXTS, [("anna", "ben")])


@pytest.mark.only_backend("torch", reason=PLUMBING)
@pytest.mark.parametrize("case, message", [
    ("malformed", "bad.tsv:2: expected term<TAB>term, got 1 tab-separated field(s)"),
    ("twice", "twice.tsv:1: the pair has the same term twice ('anna', 'ANNA')"),
    ("no_terms", "none of the 1 texts holds a term of the pairs"),
    ("empty_text", "argument 2: empty text: nothing to swap or predict"),
    ("missing_pairs", "--pairs: no such file"),
])
def test_bad_input_is_one_line_and_writes_nothing(run_folder, capsys, tmp_path, case, message):
    (tmp_path / "bad.tsv").write_text("anna\tben\ncarla ivan\n", encoding="utf-8")
    (tmp_path / "twice.tsv").write_text("anna\tANNA\n", encoding="utf-8")
    pairs, texts = {"malformed": ("bad.tsv", TEXTS[:1]), "twice": ("twice.tsv", TEXTS[:1]),
                    "no_terms": ("builtin", ["the film was dull ."]), "empty_text": ("builtin", ["he ran", "  "]),
                    "missing_pairs": ("missing.tsv", TEXTS[:1])}[case]
    pairs = pairs if pairs == "builtin" else tmp_path / pairs
    code, out, err = bias_check(capsys, run_folder, *texts, "--pairs", pairs, "--out", tmp_path / "report")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("keras-bert bias-check: error: ")
    assert message in err
    assert not (tmp_path / "report").exists()
