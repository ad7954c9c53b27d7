"""SQuAD data: JSON checks, windows over long contexts, answer positions, and decoding back to exact text."""

import json

import numpy as np
import pytest

from keras_bert.preprocessing.task_data.squad_data import (
    SquadExample,
    answer_token_span,
    decode_answers,
    read_squad,
    squad_features,
)
from task_helpers import FIXTURES, fixture_tokenizer, write


# Text preprocessing and metrics are TensorFlow / NumPy code that does the
# same thing whatever KERAS_BACKEND is; one pass keeps the suite in budget.
pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="backend-independent preprocessing (tf.data / NumPy), tested once"
)


def squad_json(qas, context="anna has a red car ."):
    return json.dumps({"version": "v2.0", "data": [{"title": "t", "paragraphs": [{"context": context, "qas": qas}]}]})


def test_reads_v1_and_v2_fixtures():
    stats = {}
    v1 = read_squad(FIXTURES / "squad_v1_dev.json", stats=stats)
    assert stats == {"questions": 120, "unanswerable": 0, "skipped_mismatched_answers": 0}
    assert all(e.context[s : s + len(t)] == t for e in v1 for t, s in e.answers)
    v2 = read_squad(FIXTURES / "squad_v2_dev.json", stats=stats)
    assert stats["unanswerable"] > 10 and all(not e.answers for e in v2 if e.is_impossible)


def test_mismatched_answer_offsets_raise_or_are_skipped_and_counted(tmp_path):
    qas = [
        {"id": "q1", "question": "what color ?", "answers": [{"text": "red", "answer_start": 11}]},
        {"id": "q2", "question": "what thing ?", "answers": [{"text": "car", "answer_start": 13}]},  # off by one
    ]
    path = write(tmp_path / "train.json", squad_json(qas))
    with pytest.raises(
        ValueError,
        match=r"train\.json: data\[0\]\.paragraphs\[0\]\.qas\[1\] \(id 'q2'\)\.answers\[0\]: answer 'car' at "
        r"answer_start=13 does not match the context there \('d c'\)",
    ):
        read_squad(path)
    stats = {}
    examples = read_squad(path, on_mismatch="skip", stats=stats)
    assert [e.id for e in examples] == ["q1"] and stats["skipped_mismatched_answers"] == 1


@pytest.mark.parametrize(
    "qas, message",
    [
        ([{"id": "q", "question": "x ?", "answers": [{"text": "red", "answer_start": 11}], "is_impossible": True}],
         r"\(id 'q'\): marked is_impossible but has 1 answer"),
        ([{"id": "q", "question": "x ?", "answers": []}], r"\(id 'q'\): no answers and not marked is_impossible"),
        ([{"id": "q", "answers": []}], r"qas\[0\] \(id 'q'\): missing 'question'"),
        ([{"id": "q", "question": " ", "answers": []}], r"\(id 'q'\): empty question"),
        ([{"id": "q", "question": "a ?", "answers": [], "is_impossible": True}] * 2, r"qas\[1\] \(id 'q'\): duplicate id"),
        ([{"id": "q", "question": "a ?", "answers": [{"text": "red", "answer_start": "11"}]}],
         r"answers\[0\]: 'answer_start' must be a int, found str"),
    ],
)
def test_bad_squad_json_names_file_and_question(tmp_path, qas, message):
    path = write(tmp_path / "bad.json", squad_json(qas))
    with pytest.raises(ValueError, match=message):
        read_squad(path)


def test_not_squad_json(tmp_path):
    with pytest.raises(ValueError, match=r"bad\.json:1: not valid JSON"):
        read_squad(write(tmp_path / "bad.json", "{nope"))
    with pytest.raises(ValueError, match=r"missing 'data'"):
        read_squad(write(tmp_path / "list.json", "[]"))


# A context of 30 tokens: "w0 w1 ... " built from vocabulary words so every word is one token.
WORDS = "anna ben carla dev ella femi gus hana ivan jo red blue green yellow black".split()
CONTEXT_WORDS = (WORDS * 2)[:30]
CONTEXT = " ".join(CONTEXT_WORDS)


def char_start(word_index):
    return len(" ".join(CONTEXT_WORDS[:word_index])) + (1 if word_index else 0)


def example(first, last, qid="q"):
    text = " ".join(CONTEXT_WORDS[first : last + 1])
    start = char_start(first)
    assert CONTEXT[start : start + len(text)] == text
    return SquadExample(qid, "who has it ?", CONTEXT, [(text, start)])


def windows_of(examples, **options):
    options = {"sequence_length": 20, "doc_stride": 5, "max_query_length": 8, **options}
    return squad_features(examples, fixture_tokenizer(), **options)


def test_windows_over_a_long_context_and_answers_across_window_edges():
    # Question: 4 tokens -> [CLS] q [SEP] ... [SEP] leaves 20 - 7 = 13 context tokens per window.
    # Windows start every 5 tokens: [0,13) [5,18) [10,23) [15,28) [20,30).
    features = windows_of([example(11, 13)])
    assert features.info["num_windows"].tolist() == [5]
    starts, ends = features.y["start"].tolist(), features.y["end"].tolist()
    # Tokens 11-13 cross the first window's edge (it ends at 12): that window says "no answer" (0).
    # In [5,18) they sit at 11 - 5 + 6 = 12 (6 = [CLS] + 4 question tokens + [SEP]); in [10,23) at 7.
    assert list(zip(starts, ends)) == [(0, 0), (12, 14), (7, 9), (0, 0), (0, 0)]
    tokenizer = fixture_tokenizer()
    for row, (s, e) in enumerate(zip(starts, ends)):
        if s:
            pieces = [tokenizer.id_to_token(i) for i in features.x["token_ids"][row, s : e + 1]]
            assert pieces == CONTEXT_WORDS[11:14]
    assert features.x["segment_ids"][1].tolist() == [0] * 6 + [1] * 14
    # Every context position's offsets point at its word in the original context.
    offsets = features.info["offsets"][2]
    for position in range(6, 19):
        s, e = offsets[position]
        assert CONTEXT[s:e] == CONTEXT_WORDS[10 + position - 6]
    assert offsets[0].tolist() == [-1, -1] and offsets[19].tolist() == [-1, -1]


def test_answer_in_the_last_window_only():
    features = windows_of([example(28, 29)])
    starts, ends = features.y["start"].tolist(), features.y["end"].tolist()
    # Only [20,30) holds tokens 28-29: positions 28 - 20 + 6 = 14 and 15.
    assert list(zip(starts, ends)) == [(0, 0)] * 4 + [(14, 15)]
    # The last window is shorter: 10 context tokens, then [SEP] and padding.
    assert features.x["padding_mask"][4].sum() == 6 + 10 + 1


def test_an_answer_between_punctuation_takes_only_its_own_tokens():
    # "(Paris)": the tokens touching the answer's first and last characters from outside are not in it (two
    # mutations, >= for > at either end, made the label span take the brackets and passed the other tests of this file).
    starts, ends = [0, 1, 6], [1, 6, 7]
    assert answer_token_span(starts, ends, 1, 6) == (1, 1)
    assert answer_token_span(starts, ends, 0, 7) == (0, 2) and answer_token_span(starts, ends, 7, 9) is None


def test_doc_stride_must_leave_no_gaps():
    with pytest.raises(ValueError, match=r"`doc_stride` must be in \[1, 9\]"):
        windows_of([example(1, 1)], doc_stride=10, max_query_length=8)


def one_hot_logits(features, window, start, end, value=10.0):
    shape = features.x["token_ids"].shape
    logits = {"start": np.zeros(shape, "float32"), "end": np.zeros(shape, "float32")}
    logits["start"][window, start] = value
    logits["end"][window, end] = value
    return logits


def test_decoding_returns_the_exact_original_characters():
    context = "Zoë  LIVES in Café-Noir, São Paulo ;  really."
    answer = "Café-Noir, São Paulo"
    start = context.index(answer)
    item = SquadExample("q", "where does she live ?", context, [(answer, start)])
    features = squad_features([item], fixture_tokenizer(), sequence_length=18, doc_stride=4, max_query_length=8)
    # Train labels point at the answer's tokens in some window; decode those positions back.
    window = int(np.nonzero(features.y["start"])[0][0])
    s, e = features.y["start"][window], features.y["end"][window]
    decoded = decode_answers(one_hot_logits(features, window, s, e), features, [item])
    assert decoded["q"]["text"] == answer
    assert (decoded["q"]["start"], decoded["q"]["end"]) == (start, start + len(answer))
    assert decoded["q"]["nbest"][0]["probability"] == pytest.approx(decoded["q"]["score"])
    assert features.info["answers_not_on_token_boundaries"] == 0


def test_decoding_limits_answer_length_and_picks_no_answer_when_cls_wins():
    item = example(3, 5)
    features = windows_of([item])
    window = int(np.nonzero(features.y["start"])[0][0])
    s, e = int(features.y["start"][window]), int(features.y["end"][window])
    logits = one_hot_logits(features, window, s, e)
    assert decode_answers(logits, features, [item])["q"]["text"] == "dev ella femi"
    # With at most 2 tokens the 3-token span is out; the best remaining span differs.
    short = decode_answers(logits, features, [item], max_answer_length=2)["q"]
    assert short["text"] != "dev ella femi" and len(short["text"].split()) <= 2
    # [CLS] scores 12 + 12 in every window: SQuAD 2.0 decoding says "no answer".
    for key in ("start", "end"):
        logits[key][:, 0] = 12.0
    no_answer = decode_answers(logits, features, [item], allow_no_answer=True)["q"]
    assert (no_answer["text"], no_answer["start"]) == ("", -1)
    assert no_answer["null_score"] == pytest.approx(24.0)
    # Unless the threshold asks for a larger margin, or no-answer is not allowed (SQuAD 1.1).
    assert decode_answers(logits, features, [item], allow_no_answer=True, null_score_diff_threshold=5.0)["q"]["text"] == "dev ella femi"
    assert decode_answers(logits, features, [item], allow_no_answer=False)["q"]["text"] == "dev ella femi"


def test_question_positions_are_never_answers():
    item = example(3, 5)
    features = windows_of([item])
    # The highest logits sit on question tokens (positions 1-4): they are skipped.
    logits = one_hot_logits(features, 0, 2, 3, value=50.0)
    logits["start"][0, 9] = 5.0
    logits["end"][0, 11] = 5.0
    decoded = decode_answers(logits, features, [item], allow_no_answer=False)["q"]
    assert decoded["text"] == " ".join(CONTEXT_WORDS[3:6])
