"""SQuAD v1.1 / v2.0 EM and F1 against the official scripts' logic (tests/metrics/squad_reference.py).

Hand-made cases (articles, punctuation, Unicode case and whitespace, gold
answers that normalise to nothing, unanswerable questions), the project's
SQuAD fixture files, and random answers drawn with hypothesis. Our keys map
to the scripts' ones: v1.1 `exact_match`, `f1`; v2.0 `exact` = our
`exact_match`, `HasAns_exact` = `has_answer_exact_match`, and so on. Both
give percentages; `squad_exact_match` / `squad_f1` give one question's score
in [0, 1].

The random tests are derandomized (the same examples on every run) with
`random_draws.MAX_EXAMPLES` of them. To search much further locally:

    KERAS_BERT_HYPOTHESIS_EXAMPLES=20000 KERAS_BERT_HYPOTHESIS_RANDOM=1 \
        python -m pytest tests/metrics/test_squad_metrics_reference.py -q

Pure Python: nothing here runs Keras (importing keras_bert imports it), so
every backend runs the same numbers. What the metrics score does depend on
the backend (the model's start and end logits, decoded into answers):
tests/jobs/test_finetune_evaluation_reference.py checks that route against
hand decoding and this file's official logic on every backend.
"""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

import squad_reference as official
from random_draws import RANDOM_DRAWS
from task_helpers import FIXTURES
from keras_bert.metrics import normalize_answer, squad_exact_match, squad_f1, squad_metrics

# Pure Python (see above): one pass runs it; torch's is the shortest pass of the suite.
pytestmark = pytest.mark.only_backend(
    "torch", reason="pure-Python SQuAD metrics against the official logic: the same numbers on every backend "
    "(the backend's answers are scored on every pass in tests/jobs/test_finetune_evaluation_reference.py)"
)

V2_KEYS = {
    "exact": "exact_match", "f1": "f1", "total": "total",
    "HasAns_exact": "has_answer_exact_match", "HasAns_f1": "has_answer_f1", "HasAns_total": "has_answer_total",
    "NoAns_exact": "no_answer_exact_match", "NoAns_f1": "no_answer_f1", "NoAns_total": "no_answer_total",
}


def as_dataset(references):
    """{id: [answer texts]} in the SQuAD JSON layout the official scripts read."""
    qas = [{"id": qid, "answers": [{"text": t} for t in answers]} for qid, answers in references.items()]
    return [{"paragraphs": [{"qas": qas}]}]


def assert_agrees(predictions, references, version):
    ours = squad_metrics(predictions, references, version=version)
    assert ours["version"] == version
    dataset = as_dataset(references)
    if version == "1.1":
        expected = official.evaluate_v1(dataset, predictions)
        mine = {"exact_match": ours["exact_match"], "f1": ours["f1"]}
        assert ours["total"] == len(references) and not any(k.startswith(("has_", "no_")) for k in ours)
    else:
        expected = official.evaluate_v2(dataset, predictions)
        mine = {official_key: ours[key] for official_key, key in V2_KEYS.items() if key in ours}
        assert set(ours) - set(V2_KEYS.values()) == {"version"}
    assert mine == pytest.approx(expected, abs=1e-12), (predictions, references)
    for qid, answers in references.items():
        if qid not in predictions:
            continue
        prediction = predictions[qid]
        exact, f1 = (official.v1_exact, official.v1_f1) if version == "1.1" else (official.v2_exact, official.v2_f1)
        golds = answers if version == "1.1" else official.v2_gold(answers)
        assert squad_exact_match(prediction, answers, version=version) == max(exact(prediction, g) for g in golds)
        assert squad_f1(prediction, answers, version=version) == pytest.approx(
            max(f1(prediction, g) for g in golds), abs=1e-15
        ), (prediction, answers, version)
    return ours


# (prediction, gold answers); [] = unanswerable (v2.0 only).
HAND_CASES = [
    ("the Eiffel Tower.", ["Eiffel tower", "Paris"]),
    ("Eiffel", ["Eiffel tower"]),
    ("tower in paris", ["the tower", "in paris"]),
    ("a a b", ["a b b"]),
    ("cat cat dog", ["cat dog dog"]),
    # Gold answers that normalise to nothing: v1.1 keeps them (EM 1, F1 0 for an empty
    # prediction), v2.0 drops them (the question becomes unanswerable, EM 1 and F1 1).
    ("", ["The"]),
    ("the", ["The"]),
    ("An", ["the", "cat"]),
    ("cat", ["the", "cat"]),
    ("an", ["a"]),
    ("", []),
    ("something", []),
    ("the", []),
    ("!?", []),
    # Only ASCII punctuation goes (string.punctuation); Unicode quotes and dashes stay.
    ("\u00abParis\u00bb", ["Paris"]),
    ("Paris\u2014France", ["Paris France"]),
    ("\u201cParis\u201d", ["Paris"]),
    # str.split() splits on Unicode whitespace; str.lower() is Unicode lowercasing.
    ("Paris\u00a0France", ["paris france"]),
    ("\u6771\u4eac\u3000\u30bf\u30ef\u30fc", ["\u6771\u4eac \u30bf\u30ef\u30fc"]),
    ("NA\u00cfVE caf\u00e9", ["na\u00efve Caf\u00c9"]),
    ("STRASSE", ["stra\u00dfe"]),
    ("\u0130stanbul", ["i\u0307stanbul"]),
    ("\ufb01sh", ["fish"]),
    # Punctuation goes before articles: "the-end" is one word "theend"; articles only as words.
    ("the-end", ["theend"]),
    ("another theatre", ["other theatre"]),
    ("a.b.c", ["abc"]),
    ("the cat's toy", ["cats toy"]),
    ("l'an 2000", ["lan 2000"]),
    ("   ", ["x"]),
    ("\tThe\nanswer\r", ["answer"]),
    ("x y z", ["x", "y z", "x y z w"]),
]


def test_hand_cases_agree_with_the_official_logic():
    predictions = {f"q{i}": prediction for i, (prediction, _) in enumerate(HAND_CASES)}
    references = {f"q{i}": answers for i, (_, answers) in enumerate(HAND_CASES)}
    answerable = {qid: answers for qid, answers in references.items() if answers}
    assert_agrees(predictions, answerable, "1.1")
    both = assert_agrees(predictions, references, "2.0")
    assert both["has_answer_total"] == len(answerable) and both["no_answer_total"] == len(HAND_CASES) - len(answerable)
    # Without `version`, data with an unanswerable question is v2.0, without one v1.1.
    assert squad_metrics(predictions, references) == both
    assert squad_metrics(predictions, answerable) == squad_metrics(predictions, answerable, version="1.1")


def test_where_v1_and_v2_differ_by_hand():
    # Both sides empty after normalisation: EM 1 in both; F1 0 in v1.1, 1 in v2.0.
    assert (squad_exact_match("", ["The"], version="1.1"), squad_f1("", ["The"], version="1.1")) == (1.0, 0.0)
    assert (squad_exact_match("", ["The"], version="2.0"), squad_f1("", ["The"], version="2.0")) == (1.0, 1.0)
    # v2.0 drops the gold "the": "An" no longer matches anything.
    assert squad_exact_match("An", ["the", "cat"], version="1.1") == 1.0
    assert squad_exact_match("An", ["the", "cat"]) == 0.0
    # A gold list of ["The"] is answerable for the HasAns/NoAns split, whatever its text normalises to.
    results = squad_metrics({"q1": "", "q2": ""}, {"q1": ["The"], "q2": []})
    assert (results["has_answer_total"], results["no_answer_total"]) == (1, 1)
    assert (results["exact_match"], results["f1"]) == (100.0, 100.0)
    with pytest.raises(ValueError, match="v1.1 has no unanswerable questions"):
        squad_metrics({"q1": ""}, {"q1": []}, version="1.1")
    with pytest.raises(ValueError, match=r"`version` must be one of \('1.1', '2.0'\). Received: version='2'"):
        squad_f1("a", ["a"], version="2")


def test_only_unanswerable_questions_give_the_no_answer_split():
    results = squad_metrics({"q1": "", "q2": "x"}, {"q1": [], "q2": []})
    assert results["version"] == "2.0" and "has_answer_total" not in results
    assert (results["no_answer_exact_match"], results["no_answer_total"]) == (50.0, 2)


def _fixture_references(name):
    dataset = json.loads((FIXTURES / name).read_text(encoding="utf-8"))["data"]
    references = {qa["id"]: [a["text"] for a in qa["answers"]] for qa in official.questions(dataset)}
    return dataset, references


def _fixture_predictions(references):
    """Deterministic predictions of every kind: exact, decorated, partial, wrong, empty."""
    ids = list(references)
    predictions = {}
    for i, qid in enumerate(ids):
        gold = references[qid][0] if references[qid] else ""
        other = references[ids[(i + 1) % len(ids)]]
        predictions[qid] = [
            gold,
            f"The {gold.upper()}!",
            gold.split()[0] if gold.split() else "",
            f"{gold} and {other[0] if other else 'more'}",
            other[0] if other else "",
            "",
        ][i % 6]
    return predictions


@pytest.mark.parametrize(
    "name, version",
    [("squad_v1_dev.json", "1.1"), ("squad_v1_train.json", "1.1"), ("squad_v2_dev.json", "2.0"),
     ("squad_v2_train.json", "2.0")],
)
def test_fixture_files_agree_with_the_official_logic(name, version):
    dataset, references = _fixture_references(name)
    predictions = _fixture_predictions(references)
    ours = assert_agrees(predictions, references, version)
    assert squad_metrics(predictions, references) == ours
    assert 0 < ours["exact_match"] < ours["f1"] < 100
    perfect = {qid: answers[0] if answers else "" for qid, answers in references.items()}
    assert assert_agrees(perfect, references, version)["exact_match"] == 100.0
    if version == "1.1":
        # A question without a prediction scores 0 and counts, as the v1.1 script says.
        partial = {qid: text for i, (qid, text) in enumerate(predictions.items()) if i % 4}
        assert_agrees(partial, references, "1.1")


def test_missing_predictions_score_zero_in_v2_too():
    # The v2.0 script leaves a question without a prediction out of `total` (and then fails on
    # the HasAns/NoAns split); we keep v1.1's rule: it scores 0 and counts.
    _, references = _fixture_references("squad_v2_dev.json")
    predictions = _fixture_predictions(references)
    kept = {qid: text for i, (qid, text) in enumerate(predictions.items()) if i % 3}
    on_kept = official.evaluate_v2(as_dataset({qid: references[qid] for qid in kept}), kept)
    ours = squad_metrics(kept, references, version="2.0")
    assert ours["total"] == len(references)
    assert ours["exact_match"] == pytest.approx(on_kept["exact"] * len(kept) / len(references), abs=1e-12)
    assert ours["f1"] == pytest.approx(on_kept["f1"] * len(kept) / len(references), abs=1e-12)
    with pytest.raises(KeyError):
        official.evaluate_v2(as_dataset(references), kept)


WORDS = ["the", "The", "a", "An", "an", "cat", "Cat", "cat.", "dog", "(dog)", "theatre", "another", "\u2014",
         "\u00abx\u00bb", "na\u00efve", "NA\u00cfVE", "stra\u00dfe", "\u0130", "!!", "'s", "a-b", "l'an", "2000",
         "\u6771\u4eac", "..."]
SEPARATORS = [" ", "  ", "\t", "\n", "\u00a0", "\u3000", "", "-", ", "]


@st.composite
def _text(draw):
    if draw(st.integers(0, 4)) == 0:
        return draw(st.text(alphabet="aAnNtThHeE .,!'\u2014\u00a0\u00e9\u00c9xy", max_size=12))
    words = draw(st.lists(st.sampled_from(WORDS), max_size=5))
    return "".join(w + draw(st.sampled_from(SEPARATORS)) for w in words).strip(draw(st.sampled_from(["", " "])))


@st.composite
def _squad_case(draw, version):
    references, predictions = {}, {}
    for i in range(draw(st.integers(1, 6))):
        answers = draw(st.lists(_text(), min_size=1 if version == "1.1" else 0, max_size=3))
        references[f"q{i}"] = answers
        if answers and draw(st.booleans()):
            # Near misses of a gold answer are where normalisation matters.
            base = draw(st.sampled_from(answers))
            prediction = draw(st.sampled_from([base, base.upper(), f"the {base}", f"{base}.", f"{base} cat"]))
        else:
            prediction = draw(_text())
        if version == "2.0" or draw(st.integers(0, 5)):
            predictions[f"q{i}"] = prediction
    return predictions, references


@RANDOM_DRAWS
@given(_squad_case("1.1"))
def test_random_answers_agree_with_the_official_v1_logic(case):
    assert_agrees(*case, "1.1")


@RANDOM_DRAWS
@given(_squad_case("2.0"))
def test_random_answers_agree_with_the_official_v2_logic(case):
    assert_agrees(*case, "2.0")


@RANDOM_DRAWS
@given(_text())
def test_random_text_normalises_as_the_official_scripts(text):
    assert normalize_answer(text) == official.normalize(text)
