"""Long inputs in the Python pipelines (issue #22): every window read, each task's aggregation, BERT's max-context rule.

Expected values come from long_text_reference.py: windows built by hand, the
model run on each, aggregated in numpy. Each test also checks that its text
needs the later windows (reading only the first, or ignoring the stride,
gives a different answer), so a pipeline that did either would fail here.
"""

import numpy as np
import pytest

from keras_bert.pipelines import (
    MultipleChoicePipeline,
    QuestionAnswererPipeline,
    TextClassifierPipeline,
    TokenClassifierPipeline,
)
from keras_bert.preprocessing.task_data.squad_data import SquadExample, decode_answers, squad_features
from keras_bert.preprocessing.task_data.task_features import max_context_mask, pair_window_spans, window_spans
from long_text_reference import (
    LONG_NER_TEXT,
    classifier_logits,
    hand_pair_windows,
    hand_windows,
    ids_of,
    is_max_context,
    pack,
    qa_answer,
    softmax,
    stack,
    tagger_word_tags,
    task_model,
)
from task_helpers import fixture_tokenizer

LENGTH = 16
# 48 wordpieces (three sequences of 16): a positive first window, negative words after it.
SHIFTING_TEXT = "good " * 14 + "terrible dull " * 17
SHORT = "good film"


@pytest.fixture(scope="module")
def tokenizer():
    return fixture_tokenizer()


@pytest.fixture(scope="module")
def classifier():
    return task_model("classifier", seed=3)


def test_max_context_mask_follows_run_squad():
    # run_squad's own example: "the man went to the store and bought a gallon of milk", spans of 5 every 3;
    # "bought" (token 7) has 4 left / 0 right in span B, 1 left / 3 right in span C: C scores it.
    spans = window_spans(12, 5, 3)
    assert spans == hand_windows(12, 5, 3) == [(0, 5), (3, 8), (6, 11), (9, 12)]
    masks = max_context_mask(spans)
    assert not masks[1][7 - 3] and masks[2][7 - 6]
    for w, (start, end) in enumerate(spans):
        assert masks[w].tolist() == [is_max_context(spans, w, p) for p in range(start, end)]
    # Equal context and equal length: the earlier window; equal context, longer window: the longer one.
    assert [m.tolist() for m in max_context_mask([(0, 5), (2, 7)])][0][3] is True
    assert [m.tolist() for m in max_context_mask([(0, 4), (1, 6)])][1][2 - 1] is True


def test_pair_windows_cover_the_longer_segment():
    for length_a, length_b in [(3, 40), (40, 3), (20, 20), (5, 6), (2, 50), (30, 9)]:
        spans = pair_window_spans(length_a, length_b, LENGTH, 5)
        assert spans == hand_pair_windows(length_a, length_b, LENGTH, 5)
        longer = 1 if length_b >= length_a else 0
        assert spans[-1][longer][1] == max(length_a, length_b)  # the last window reaches the end
        assert all((a[1] - a[0]) + (b[1] - b[0]) <= LENGTH - 3 for a, b in spans)


@pytest.mark.parametrize("stride", [7, 4])
def test_classifier_reads_every_window_with_its_stride(classifier, tokenizer, stride):
    pipeline = TextClassifierPipeline(classifier, tokenizer, sequence_length=LENGTH, window_stride=stride)
    expected, num_windows = classifier_logits(classifier, tokenizer, SHIFTING_TEXT, LENGTH, stride)
    first_only, _ = classifier_logits(classifier, tokenizer, SHIFTING_TEXT, LENGTH, stride, first_window_only=True)
    assert num_windows >= 5
    # The later windows change the label: positive on the first window, negative over all of them.
    assert softmax(first_only).argmax() == 2 and softmax(expected).argmax() == 0
    result = pipeline(SHIFTING_TEXT)
    np.testing.assert_allclose(list(result["probabilities"].values()), softmax(expected), atol=1e-5)
    assert result["label"] == "negative"
    assert pipeline.input_stats(SHIFTING_TEXT) == {"tokens": 48, "windows": num_windows, "truncated_tokens": 0}


def test_regressor_averages_its_windows(tokenizer):
    model = task_model("regressor", seed=3)
    expected, _ = classifier_logits(model, tokenizer, SHIFTING_TEXT, LENGTH, 7)
    first_only, _ = classifier_logits(model, tokenizer, SHIFTING_TEXT, LENGTH, 7, first_window_only=True)
    assert abs(expected[0] - first_only[0]) > 0.05
    value = TextClassifierPipeline(model, tokenizer, sequence_length=LENGTH)(SHIFTING_TEXT)["value"]
    assert value == pytest.approx(expected[0], abs=1e-5)


@pytest.mark.parametrize("long_side", ["second", "first"])
def test_pairs_are_windowed_over_the_longer_text(classifier, tokenizer, long_side):
    text, pair = (SHORT, SHIFTING_TEXT) if long_side == "second" else (SHIFTING_TEXT, SHORT)
    pipeline = TextClassifierPipeline(classifier, tokenizer, sequence_length=LENGTH)
    stride = (LENGTH - 2) // 2
    expected, num_windows = classifier_logits(classifier, tokenizer, text, LENGTH, stride, pair=pair)
    first_only, _ = classifier_logits(classifier, tokenizer, text, LENGTH, stride, pair=pair, first_window_only=True)
    assert num_windows >= 5 and np.abs(softmax(expected) - softmax(first_only)).max() > 0.05
    result = pipeline([text], pairs=[pair])
    np.testing.assert_allclose(list(result[0]["probabilities"].values()), softmax(expected), atol=1e-5)
    assert pipeline.input_stats([text], [pair])[0] == {"tokens": 50, "windows": num_windows, "truncated_tokens": 0}


def test_token_classifier_averages_overlapping_windows_with_its_stride(tokenizer):
    model = task_model("token_classifier", seed=1)
    stride = 5
    tags, scores, num_windows, _ = tagger_word_tags(model, tokenizer, LONG_NER_TEXT, LENGTH, stride)
    side_by_side, *_ = tagger_word_tags(model, tokenizer, LONG_NER_TEXT, LENGTH, LENGTH - 2)
    assert num_windows >= 8 and sum(a != b for a, b in zip(tags, side_by_side)) >= 5  # the stride matters
    pipeline = TokenClassifierPipeline(model, tokenizer, sequence_length=LENGTH, window_stride=stride)
    words = pipeline(LONG_NER_TEXT, return_words=True)["words"]
    assert [w["tag"] for w in words] == tags
    np.testing.assert_allclose([w["score"] for w in words], scores, atol=1e-5)
    assert words[-1]["end"] == len(LONG_NER_TEXT)  # the last word of the text is tagged too
    assert pipeline.input_stats(LONG_NER_TEXT)["windows"] == num_windows


def test_question_answerer_finds_the_answer_in_a_later_window(tokenizer):
    model = task_model("question_answerer", seed=0)
    question, length, stride, query = "where does marco live ?", 32, 8, 16
    start, end, probability, num_windows, window = qa_answer(
        model, tokenizer, question, LONG_NER_TEXT, length, stride, query)
    first_start, first_end, *_ = qa_answer(model, tokenizer, question, LONG_NER_TEXT, length, stride, query, windows=[0])
    assert num_windows >= 4 and window > 0 and (first_start, first_end) != (start, end)
    pipeline = QuestionAnswererPipeline(model, tokenizer, sequence_length=length, doc_stride=stride,
                                        max_query_length=query)
    answer = pipeline(question, LONG_NER_TEXT)
    assert (answer["start"], answer["end"]) == (start, end)
    assert answer["answer"] == LONG_NER_TEXT[start:end]
    assert answer["score"] == pytest.approx(probability, abs=1e-5)
    assert pipeline.input_stats(question, LONG_NER_TEXT)["windows"] == num_windows


def test_a_token_starts_an_answer_only_in_its_max_context_window(tokenizer):
    # 20 context tokens, windows of 8 every 4: token 7 is in windows 0 (0 tokens right of it) and 1 (3 left, 4 right).
    context = "a b c d e f g h i j k l m n o p q r s t"  # one token each
    words = context.split()
    example = SquadExample("q", "what ?", context)
    features = squad_features([example], tokenizer, sequence_length=13, doc_stride=4, max_query_length=2)
    assert features.info["num_windows"][0] == 4
    first = 2 + len(ids_of(tokenizer, "what ?"))  # [CLS] what ? [SEP]
    start = np.zeros((4, 13), "float32")
    end = np.zeros((4, 13), "float32")
    start[0, first + 7], end[0, first + 7] = 10.0, 10.0  # token 7 alone, scored where it lacks context
    start[1, first + 3], end[1, first + 5] = 6.0, 6.0  # tokens 7-9, in token 7's max-context window
    decoded = decode_answers({"start": start, "end": end}, features, [example])["q"]
    assert decoded["text"] == " ".join(words[7:10])
    # Without the rule (every context token allowed to start), token 7 alone would win.
    features.info["max_context"] = features.info["offsets"][..., 0] >= 0
    assert decode_answers({"start": start, "end": end}, features, [example])["q"]["text"] == words[7]


def test_multiple_choice_windows_each_choice_and_averages(tokenizer):
    model = task_model("multiple_choice", seed=3)
    choices = ["good film", "terrible dull plot"]
    stride = (LENGTH - 2) // 2
    a = ids_of(tokenizer, SHIFTING_TEXT)
    means, firsts = [], []
    for choice in choices:
        b = ids_of(tokenizer, " " + choice)
        spans = hand_pair_windows(len(a), len(b), LENGTH, stride)
        rows = stack([pack(tokenizer, a[s:e], b[bs:be], LENGTH) for (s, e), (bs, be) in spans])
        logits = model.predict({k: v[:, None, :] for k, v in rows.items()}, verbose=0)[:, 0]
        means.append(logits.mean())
        firsts.append(logits[0])
    assert np.abs(softmax(means) - softmax(firsts)).max() > 0.02  # the later windows matter
    result = MultipleChoicePipeline(model, tokenizer, sequence_length=LENGTH)(SHIFTING_TEXT, choices)
    np.testing.assert_allclose(result["probabilities"], softmax(means), atol=1e-5)
    assert result["choice"] == int(np.argmax(means))
