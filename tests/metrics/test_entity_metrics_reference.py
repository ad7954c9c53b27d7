"""Entity F1 against seqeval (the reference implementation), on fixtures, edge cases and random tags.

`get_entities`, `entity_metrics` and `token_accuracy` must give seqeval's
numbers: the default (conlleval) mode for IOB1 / IOB2 / IOBES tags, and
`mode="strict"` with `scheme=IOB2` / `IOBES` for our `scheme="IOB2"` /
`"IOBES"`: micro precision / recall / F1, every per-type row of
`classification_report`, the supports, the entity spans themselves.

The random-tag tests draw with hypothesis, derandomized (the same examples
on every run; CI stays deterministic) and `random_draws.MAX_EXAMPLES` of them. To search
much further locally, raise the count and, for new draws on every run,
switch derandomisation off:

    KERAS_BERT_HYPOTHESIS_EXAMPLES=20000 KERAS_BERT_HYPOTHESIS_RANDOM=1 \
        python -m pytest tests/metrics/test_entity_metrics_reference.py -q

Pure Python (and numpy's mean): nothing here runs Keras (importing
keras_bert imports it), so every backend runs the same numbers. What the
metrics score does depend on the backend (the model's token logits, read as
one tag per word): tests/jobs/test_finetune_evaluation_reference.py checks
that route against hand tagging and seqeval on every backend.
"""

import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st
from seqeval.metrics import accuracy_score, classification_report, f1_score, precision_score, recall_score
from seqeval.metrics.sequence_labeling import get_entities as seqeval_get_entities
from seqeval.scheme import IOB2, IOBES, Entities

from random_draws import RANDOM_DRAWS
from task_helpers import FIXTURES
from keras_bert.metrics import are_entity_tags, entity_metrics, get_entities, token_accuracy

# Pure Python (see above): one pass runs it; torch's is the shortest pass of the suite.
pytestmark = pytest.mark.only_backend(
    "torch", reason="pure-Python metrics against seqeval: the same numbers on every backend (the backend's "
    "tags are scored on every pass in tests/jobs/test_finetune_evaluation_reference.py)"
)

SEQEVAL_SCHEMES = {"IOB2": IOB2, "IOBES": IOBES}
# Types include "_" (what seqeval gives a bare prefix) and one with an inner hyphen.
TYPES = ["PER", "LOC", "X-Y", "_"]


def _seqeval_kwargs(scheme):
    return {} if scheme is None else {"mode": "strict", "scheme": SEQEVAL_SCHEMES[scheme]}


def assert_agrees_with_seqeval(true, pred, scheme=None):
    """Every number entity_metrics and token_accuracy give, against seqeval's."""
    kwargs = _seqeval_kwargs(scheme)
    ours = entity_metrics(true, pred, scheme=scheme)
    with warnings.catch_warnings():
        # seqeval warns about 0/0 precision or recall and returns 0, our documented value.
        warnings.simplefilter("ignore")
        report = classification_report(true, pred, output_dict=True, **kwargs)
        reference = {
            "precision": precision_score(true, pred, **kwargs),
            "recall": recall_score(true, pred, **kwargs),
            "f1": f1_score(true, pred, **kwargs),
        }
    context = f"scheme={scheme}, true={true}, pred={pred}"
    for name, value in reference.items():
        assert ours[name] == pytest.approx(value, abs=1e-12), context
        assert ours[name] == pytest.approx(report["micro avg"]["f1-score" if name == "f1" else name], abs=1e-12)
    assert ours["num_true"] == report["micro avg"]["support"], context
    per_type = {k: v for k, v in report.items() if not k.endswith(" avg")}
    assert sorted(ours["per_type"]) == sorted(per_type), context
    for kind, row in per_type.items():
        mine = ours["per_type"][kind]
        assert (mine["precision"], mine["recall"], mine["f1"], mine["support"]) == pytest.approx(
            (row["precision"], row["recall"], row["f1-score"], row["support"]), abs=1e-12
        ), f"{kind}: {context}"
    if any(true):
        assert token_accuracy(true, pred) == pytest.approx(accuracy_score(true, pred), abs=1e-12)
    assert_same_entities(true, scheme)
    assert_same_entities(pred, scheme)
    return ours


def assert_same_entities(sentences, scheme):
    ours = get_entities(sentences, scheme=scheme)
    if scheme is None:
        assert ours == seqeval_get_entities([list(s) for s in sentences]), sentences
        for sentence in sentences:
            assert get_entities(sentence) == seqeval_get_entities(list(sentence)), sentence
        return
    # seqeval's strict entities are (sentence, type, start, end exclusive); ours count over
    # the sentences end to end with one "O" after each.
    offsets, offset = [], 0
    for sentence in sentences:
        offsets.append(offset)
        offset += len(sentence) + 1
    per_sentence = Entities([list(s) for s in sentences], SEQEVAL_SCHEMES[scheme]).entities
    reference = {
        (e.tag, offsets[e.sent_id] + e.start, offsets[e.sent_id] + e.end - 1) for found in per_sentence for e in found
    }
    assert set(ours) == reference and len(ours) == len(reference), sentences


def read_tags(path):
    """The tag column (the last) of a CoNLL file, one list per sentence (-DOCSTART- lines skipped)."""
    sentences, current = [], []
    for line in path.read_text(encoding="utf-8").splitlines() + [""]:
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if current:
                sentences.append(current)
            current = []
        else:
            current.append(fields[-1])
    return sentences


def to_iob1(sentence):
    """IOB2 -> IOB1: B- only where an entity directly follows one of the same type."""
    out = []
    for i, tag in enumerate(sentence):
        previous = sentence[i - 1] if i else "O"
        if tag.startswith("B-") and not (previous != "O" and previous[2:] == tag[2:]):
            tag = "I-" + tag[2:]
        out.append(tag)
    return out


def to_iobes(sentence):
    """IOB2 -> IOBES: single-word entities become S-, last words E-."""
    out = []
    for i, tag in enumerate(sentence):
        following = sentence[i + 1] if i + 1 < len(sentence) else "O"
        last = not following.startswith("I-")
        if tag.startswith("B-") and last:
            tag = "S-" + tag[2:]
        elif tag.startswith("I-") and last:
            tag = "E-" + tag[2:]
        out.append(tag)
    return out


def perturb(sentences, step):
    """Deterministic wrong predictions: every `step`-th tag changed (type swapped, B<->I, or "O")."""
    out, count = [], 0
    for sentence in sentences:
        tags = []
        for tag in sentence:
            count += 1
            if count % step == 0:
                tag = {"O": "B-LOC", "B": "I" + tag[1:], "I": "B-PER"}.get(tag[0], "O") if count % 2 else "O"
            tags.append(tag)
        out.append(tags)
    return out


@pytest.mark.parametrize("name", ["ner_dev.conll", "ner_train.conll"])
def test_fixture_files_agree_with_seqeval(name):
    gold = read_tags(FIXTURES / name)
    assert len(gold) > 50 and sum(len(s) for s in gold) > 500
    predictions = {
        "gold": gold,
        "all O": [["O"] * len(s) for s in gold],
        "every 3rd tag wrong": perturb(gold, 3),
        "every 7th tag wrong": perturb(gold, 7),
        "shifted by one word": [["O"] + s[:-1] for s in gold],
    }
    for label, pred in predictions.items():
        ours = assert_agrees_with_seqeval(gold, pred)
        assert_agrees_with_seqeval(gold, pred, scheme="IOB2")
        # IOB1 files read as conlleval reads them: the same entities as the IOB2 ones.
        assert_agrees_with_seqeval([to_iob1(s) for s in gold], [to_iob1(s) for s in pred])
        assert entity_metrics([to_iob1(s) for s in gold], [to_iob1(s) for s in pred]) == ours, label
        iobes_gold, iobes_pred = [to_iobes(s) for s in gold], [to_iobes(s) for s in pred]
        assert_agrees_with_seqeval(iobes_gold, iobes_pred)
        assert_agrees_with_seqeval(iobes_gold, iobes_pred, scheme="IOBES")
    assert entity_metrics(gold, gold)["f1"] == 1.0
    assert 0.0 < entity_metrics(gold, predictions["every 7th tag wrong"])["f1"] < 1.0


# The NER reader's test sentences (tests/preprocessing/task_data/test_ner_data.py) and the edge cases
# the issue names; each pair is (true, predicted).
EDGE_CASES = {
    "reader sentence": ([["B-PER", "I-PER", "O", "O", "B-LOC", "O"]], [["B-PER", "O", "O", "O", "B-LOC", "I-LOC"]]),
    "reader, two sentences": (
        [["B-PER", "O", "O", "O", "B-LOC", "I-LOC", "O"], ["B-PER", "O", "O", "B-LOC", "O"]],
        [["B-PER", "O", "O", "O", "B-LOC", "O", "O"], ["B-PER", "O", "O", "B-LOC", "O"]],
    ),
    "I- after O": ([["O", "B-PER", "I-PER"]], [["O", "I-PER", "I-PER"]]),
    "I- of another type": ([["B-PER", "I-PER", "O"]], [["B-PER", "I-LOC", "O"]]),
    "B- of the same type splits": ([["B-PER", "I-PER"]], [["B-PER", "B-PER"]]),
    "E- and S-": ([["B-PER", "E-PER", "S-LOC", "O"]], [["B-PER", "E-PER", "O", "S-LOC"]]),
    "E- after O, E- after E-": ([["O", "E-PER", "E-PER", "S-PER"]], [["B-PER", "I-PER", "E-PER", "S-PER"]]),
    "I- after E- and S-": ([["B-LOC", "E-LOC", "I-LOC", "S-PER", "I-PER"]], [["S-LOC", "S-LOC", "I-LOC", "S-PER", "E-PER"]]),
    "unclosed B- I-": ([["B-PER", "I-PER", "O"]], [["B-PER", "I-PER", "E-PER"]]),
    "no gold entities": ([["O", "O"], ["O"]], [["B-PER", "O"], ["O"]]),
    "empty predictions": ([["B-PER", "O"], ["S-LOC"]], [["O", "O"], ["O"]]),
    "nothing anywhere": ([["O"]], [["O"]]),
    "empty sentences": ([[], ["B-PER"], []], [[], ["B-PER"], []]),
    "entity at a sentence end and start": ([["O", "B-PER"], ["I-PER", "O"]], [["O", "B-PER"], ["B-PER", "O"]]),
    "bare prefixes and the _ type": ([["B", "I", "O", "B-_"]], [["B", "I", "O", "I"]]),
    "type with a hyphen": ([["B-X-Y", "I-X-Y"]], [["B-X-Y", "I-X"]]),
}


@pytest.mark.parametrize("case", list(EDGE_CASES))
def test_edge_cases_agree_with_seqeval(case):
    true, pred = EDGE_CASES[case]
    assert_agrees_with_seqeval(true, pred)
    uses = {tag[0] for sentence in true + pred for tag in sentence}
    if uses <= set("BIO"):
        assert_agrees_with_seqeval(true, pred, scheme="IOB2")
    assert_agrees_with_seqeval(true, pred, scheme="IOBES")


def test_edge_cases_by_hand():
    # The spans themselves, written out (seqeval's agreement is checked above).
    assert get_entities(["O", "I-PER", "I-PER"]) == [("PER", 1, 2)]
    assert get_entities(["O", "I-PER", "I-PER"], scheme="IOB2") == []
    assert get_entities(["B-PER", "I-LOC"]) == [("PER", 0, 0), ("LOC", 1, 1)]
    assert get_entities(["B-PER", "I-LOC"], scheme="IOB2") == [("PER", 0, 0)]
    assert get_entities(["B-PER", "E-PER", "S-LOC"]) == [("PER", 0, 1), ("LOC", 2, 2)]
    assert get_entities(["B-PER", "I-PER", "O"], scheme="IOBES") == []
    assert get_entities(["B-PER", "I-PER", "E-PER", "E-PER"], scheme="IOBES") == [("PER", 0, 2)]
    assert get_entities([["S-PER"], ["S-PER"]], scheme="IOBES") == [("PER", 0, 0), ("PER", 2, 2)]
    results = entity_metrics([["O", "O"]], [["B-PER", "O"]])
    assert (results["precision"], results["recall"], results["f1"], results["num_predicted"]) == (0.0, 0.0, 0.0, 1)
    assert results["per_type"] == {"PER": {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}}


@pytest.mark.parametrize(
    "tag", ["PER", "U-PER", "L-PER", "", "B--X", "B-X-", "O-PER", "b-PER", "BPER", None, 3]
)
def test_tags_outside_the_schemes_are_refused_by_name(tag):
    # seqeval only warns ("seems not to be NE tag") and then scores these its own way.
    with pytest.raises(ValueError, match="is not an entity tag"):
        get_entities(["O", tag])
    with pytest.raises(ValueError, match="is not an entity tag"):
        entity_metrics([["O", "O"]], [["O", tag]])


def test_unsupported_schemes_and_prefixes_are_refused():
    for scheme in ["IOB1", "IOE2", "BILOU", "iob2", "strict"]:
        with pytest.raises(ValueError, match=r"`scheme` must be None .* Received: scheme="):
            entity_metrics([["O"]], [["O"]], scheme=scheme)
    # seqeval refuses these too (ValueError "Invalid token"); so do we, naming the scheme.
    for tag in ["E-PER", "S-PER"]:
        with pytest.raises(ValueError, match="not part of the IOB2 scheme"):
            entity_metrics([["O"]], [[tag]], scheme="IOB2")
        with pytest.raises(ValueError, match="Invalid token"):
            f1_score([["O"]], [[tag]], mode="strict", scheme=IOB2)


def test_ragged_inputs_are_refused():
    with pytest.raises(ValueError, match="Sentence 1 has 1 true tags but 2 predicted ones"):
        token_accuracy([["O"], ["O"]], [["O"], ["O", "O"]])
    with pytest.raises(ValueError, match="2 true sentences but 1 predicted"):
        entity_metrics([["O"], ["O"]], [["O"]])
    # No words at all: seqeval's accuracy_score divides by zero; ours is documented as 0.0.
    assert token_accuracy([[]], [[]]) == 0.0


def _tags(prefixes):
    return st.one_of(
        st.just("O"),
        st.builds(lambda p, t: f"{p}-{t}", st.sampled_from(prefixes), st.sampled_from(TYPES)),
        st.sampled_from(prefixes),
    )


@st.composite
def _true_and_predicted(draw, prefixes):
    true = draw(st.lists(st.lists(_tags(prefixes), max_size=9), min_size=1, max_size=4))
    # Predictions of the same shape, each tag kept or redrawn, so that they share some entities.
    pred = [[draw(_tags(prefixes)) if draw(st.booleans()) else tag for tag in sentence] for sentence in true]
    return true, pred


@RANDOM_DRAWS
@given(_true_and_predicted("BIES"))
def test_random_tags_agree_with_seqeval_default_mode(pair):
    assert_agrees_with_seqeval(*pair)


@RANDOM_DRAWS
@given(_true_and_predicted("BI"))
def test_random_tags_agree_with_seqeval_strict_iob2(pair):
    assert_agrees_with_seqeval(*pair, scheme="IOB2")


@RANDOM_DRAWS
@given(_true_and_predicted("BIES"))
def test_random_tags_agree_with_seqeval_strict_iobes(pair):
    assert_agrees_with_seqeval(*pair, scheme="IOBES")


def test_are_entity_tags_tells_entity_taggers_from_other_token_classifiers():
    assert are_entity_tags(["O", "B-PER", "I-PER", "E-LOC", "S-LOC", "B", "I"])
    assert not are_entity_tags(["NOUN", "VERB", "ADJ"])
    assert not are_entity_tags(["O", "PER"])
