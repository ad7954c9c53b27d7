"""`serve_text` on texts three times the sequence length (issue #22): the SavedModel windows in its graph
exactly as the Python pipelines do, for every task.

Each served result is compared with windows built by hand and aggregated in
numpy (tests/pipelines/long_text_reference.py) and with the task's pipeline;
each text needs its later windows (reading only the first window, or
ignoring the stride, gives another answer), so a SavedModel that truncated,
read one window or ignored its stride would fail here.
"""

import numpy as np
import pytest

from export_helpers import LazyExports
from keras_bert.export import ExportedModel, read_metadata
from keras_bert.pipelines import (
    MultipleChoicePipeline,
    QuestionAnswererPipeline,
    TextClassifierPipeline,
    TokenClassifierPipeline,
)
from pipelines.long_text_reference import (
    LONG_CONTEXT,
    LONG_NER_TEXT,
    classifier_logits,
    hand_pair_windows,
    ids_of,
    pack,
    qa_answer,
    softmax,
    stack,
    tagger_word_tags,
)
from task_helpers import fixture_tokenizer

pytestmark = pytest.mark.only_backend(
    "tensorflow",
    reason="the served graph is TensorFlow whatever backend trained the model (JAX/torch export through a "
    "TensorFlow child process, covered in test_saved_model.py); the pipelines' windows are tested on every "
    "backend in tests/pipelines/test_long_inputs.py",
)
LENGTH = 16
# 48 wordpieces = 3 x LENGTH: a positive first window, negative words after it.
SHIFTING_TEXT = "good " * 14 + "terrible dull " * 17
QA_LENGTH, QA_STRIDE, QA_QUERY = 32, 8, 16
QUESTION = "where does marco live ?"
# name -> (task model, seed, export options): the classifier and the tagger with a stride other than the default.
EXPORTS = {
    "classifier": ("classifier", 3, dict(sequence_length=LENGTH, window_stride=4)),
    "pairs": ("classifier", 3, dict(sequence_length=LENGTH, text_pair=True)),
    "regressor": ("regressor", 3, dict(sequence_length=LENGTH)),
    "token_classifier": ("token_classifier", 1, dict(sequence_length=LENGTH, window_stride=5)),
    "question_answerer": ("question_answerer", 1,
                          dict(sequence_length=QA_LENGTH, doc_stride=QA_STRIDE, max_query_length=QA_QUERY)),
    "multiple_choice": ("multiple_choice", 3, dict(sequence_length=LENGTH)),
}


@pytest.fixture(scope="module")
def tokenizer():
    return fixture_tokenizer()


@pytest.fixture(scope="module")
def exported(tokenizer, tmp_path_factory):
    """`exported[name]` → `(model, options, ExportedModel)` of EXPORTS[name]."""
    return LazyExports(tmp_path_factory.mktemp("long_exports"), tokenizer, EXPORTS, ExportedModel)


def test_classifier_serves_every_window_with_the_exported_stride(exported, tokenizer):
    model, _, served = exported["classifier"]
    expected, num_windows = classifier_logits(model, tokenizer, SHIFTING_TEXT, LENGTH, 4)
    first_only, _ = classifier_logits(model, tokenizer, SHIFTING_TEXT, LENGTH, 4, first_window_only=True)
    default_stride, _ = classifier_logits(model, tokenizer, SHIFTING_TEXT, LENGTH, 7)
    assert softmax(first_only).argmax() == 2 and softmax(expected).argmax() == 0  # later windows flip the label
    assert np.abs(softmax(expected) - softmax(default_stride)).max() > 1e-3  # and the stride matters
    results, stats = served.predict_with_stats([SHIFTING_TEXT, "good film"])
    np.testing.assert_allclose(list(results[0]["probabilities"].values()), softmax(expected), atol=1e-5)
    assert results[0]["label"] == "negative"
    assert stats == [{"tokens": 48, "windows": num_windows, "truncated_tokens": 0},
                     {"tokens": 2, "windows": 1, "truncated_tokens": 0}]
    pipeline = TextClassifierPipeline(model, tokenizer, sequence_length=LENGTH, window_stride=4)
    assert pipeline.input_stats([SHIFTING_TEXT, "good film"]) == stats
    for got, want in zip(results, pipeline([SHIFTING_TEXT, "good film"])):
        assert got["label"] == want["label"]
        np.testing.assert_allclose(list(got["probabilities"].values()), list(want["probabilities"].values()), atol=1e-5)
    assert read_metadata(served.directory)["windows"] == {"window_stride": 4}


def test_regressor_serves_the_mean_of_its_windows(exported, tokenizer):
    model, _, served = exported["regressor"]
    expected, _ = classifier_logits(model, tokenizer, SHIFTING_TEXT, LENGTH, 7)
    first_only, _ = classifier_logits(model, tokenizer, SHIFTING_TEXT, LENGTH, 7, first_window_only=True)
    assert abs(expected[0] - first_only[0]) > 0.05
    assert served.predict([SHIFTING_TEXT])[0]["value"] == pytest.approx(expected[0], abs=1e-5)


def test_pairs_are_served_windowed_over_the_longer_text(exported, tokenizer):
    model, _, served = exported["pairs"]
    texts, pairs = ["good film", SHIFTING_TEXT], [SHIFTING_TEXT, "good film"]
    results, stats = served.predict_with_stats(texts, pairs)
    pipeline = TextClassifierPipeline(model, tokenizer, sequence_length=LENGTH)
    for text, pair, got, want in zip(texts, pairs, results, pipeline(texts, pairs=pairs)):
        expected, _ = classifier_logits(model, tokenizer, text, LENGTH, 7, pair=pair)
        first_only, _ = classifier_logits(model, tokenizer, text, LENGTH, 7, pair=pair, first_window_only=True)
        assert np.abs(softmax(expected) - softmax(first_only)).max() > 0.05
        np.testing.assert_allclose(list(got["probabilities"].values()), softmax(expected), atol=1e-5)
        np.testing.assert_allclose(list(want["probabilities"].values()), softmax(expected), atol=1e-5)
    assert stats == pipeline.input_stats(texts, pairs)


def test_token_classifier_serves_the_pipeline_entities_over_all_windows(exported, tokenizer):
    model, _, served = exported["token_classifier"]
    text = LONG_NER_TEXT + " ben met jo ."  # 49 wordpieces
    tags, _, num_windows, probabilities = tagger_word_tags(model, tokenizer, text, LENGTH, 5)
    side_by_side, *_ = tagger_word_tags(model, tokenizer, text, LENGTH, LENGTH - 2)
    assert len(probabilities) >= 3 * LENGTH and sum(a != b for a, b in zip(tags, side_by_side)) >= 5
    served_outputs = served.serve_text(text=np.asarray([text, "anna smith"], object))
    np.testing.assert_allclose(served_outputs["token_probabilities"].numpy()[0], probabilities, atol=1e-5)
    results, stats = served.predict_with_stats([text, "anna smith"])
    pipeline = TokenClassifierPipeline(model, tokenizer, sequence_length=LENGTH, window_stride=5)
    expected = pipeline([text, "anna smith"])
    assert [[{k: e[k] for k in ("type", "text", "start", "end")} for e in r] for r in results] == [
        [{k: e[k] for k in ("type", "text", "start", "end")} for e in r] for r in expected
    ]
    assert any(e["start"] > len(text) * 2 // 3 for e in results[0])  # entities from the last windows
    for got, want in zip(results, expected):
        np.testing.assert_allclose([e["score"] for e in got], [e["score"] for e in want], atol=1e-5)
    assert stats[0] == {"tokens": len(probabilities), "windows": num_windows, "truncated_tokens": 0}


def test_question_answerer_serves_the_answer_of_a_later_window(exported, tokenizer):
    model, _, served = exported["question_answerer"]
    start, end, probability, num_windows, window = qa_answer(
        model, tokenizer, QUESTION, LONG_CONTEXT, QA_LENGTH, QA_STRIDE, QA_QUERY)
    assert len(ids_of(tokenizer, LONG_CONTEXT)) >= 3 * QA_LENGTH and window >= 3
    results, stats = served.predict_with_stats([QUESTION, "who ?"], [LONG_CONTEXT, "anna smith met ivan ."])
    assert (results[0]["start"], results[0]["end"]) == (start, end)
    assert results[0]["answer"] == LONG_CONTEXT[start:end]
    assert results[0]["score"] == pytest.approx(probability, abs=1e-5)
    pipeline = QuestionAnswererPipeline(model, tokenizer, sequence_length=QA_LENGTH, doc_stride=QA_STRIDE,
                                        max_query_length=QA_QUERY)
    expected = pipeline([QUESTION, "who ?"], [LONG_CONTEXT, "anna smith met ivan ."])
    for got, want in zip(results, expected):
        assert (got["answer"], got["start"], got["end"]) == (want["answer"], want["start"], want["end"])
        assert got["score"] == pytest.approx(want["score"], abs=1e-5)
    assert stats[0]["windows"] == num_windows
    assert stats == pipeline.input_stats([QUESTION, "who ?"], [LONG_CONTEXT, "anna smith met ivan ."])


def test_multiple_choice_serves_each_choice_windowed(exported, tokenizer):
    model, _, served = exported["multiple_choice"]
    choices = ["good film", "terrible dull plot"]
    a = ids_of(tokenizer, SHIFTING_TEXT)
    means, firsts = [], []
    for choice in choices:
        b = ids_of(tokenizer, choice)
        spans = hand_pair_windows(len(a), len(b), LENGTH, (LENGTH - 2) // 2)
        rows = stack([pack(tokenizer, a[s:e], b[bs:be], LENGTH) for (s, e), (bs, be) in spans])
        logits = model.predict({k: v[:, None, :] for k, v in rows.items()}, verbose=0)[:, 0]
        means.append(logits.mean())
        firsts.append(logits[0])
    assert np.abs(softmax(means) - softmax(firsts)).max() > 0.02
    results, stats = served.predict_with_stats([SHIFTING_TEXT], [choices])
    np.testing.assert_allclose(results[0]["probabilities"], softmax(means), atol=1e-5)
    expected = MultipleChoicePipeline(model, tokenizer, sequence_length=LENGTH)(SHIFTING_TEXT, choices)
    np.testing.assert_allclose(results[0]["probabilities"], expected["probabilities"], atol=1e-5)
    assert stats[0]["windows"] == len(hand_pair_windows(48, 2, LENGTH, 7))
