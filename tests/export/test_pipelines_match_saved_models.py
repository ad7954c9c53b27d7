"""Each task's Python pipeline and its exported SavedModel's `serve_text` give the same answers (issue #42).

Both read texts through `keras_bert.postprocessing` (the pipelines run it
eagerly, the SavedModel traced into its graph); this test holds them to it
from outside. The same texts, most of them several windows long, with
capitals, accents, CJK, an emoji and unknown words, go through a task's
pipeline and through `serve_text` of the task's SavedModel, exported at a
small grid of sequence lengths and strides, and every answer is compared:
labels, probabilities and scores (to float tolerance), entity types, texts
and character offsets, answer texts and offsets, chosen choices, and how
each text was read (tokens, windows, truncated tokens).

The question-answering grid has contexts where a token gets equal context
from two windows (a tie of BERT's max-context rule) and where that tie
decides an answer: the answers must also equal those of run_squad's rule
written out by hand (`long_text_reference.qa_answer`, the earlier window
winning a tie), so reversing the tie-break in the shared code, or in either
reader, fails here.
"""

import numpy as np
import pytest

from export_helpers import LONG_TEXTS, LazyExports
from keras_bert.pipelines import (
    MultipleChoicePipeline,
    QuestionAnswererPipeline,
    TextClassifierPipeline,
    TokenClassifierPipeline,
)
from keras_bert.preprocessing.task_data.squad_data import fit_qa_lengths
from pipelines.long_text_reference import (
    LONG_CONTEXT,
    LONG_NER_TEXT,
    LONG_TEXT,
    hand_windows,
    ids_of,
    qa_answer,
)
from task_helpers import fixture_tokenizer

pytestmark = pytest.mark.only_backend(
    "tensorflow",
    reason="the served graph is TensorFlow whatever backend trained the model; the pipelines run on every "
    "backend in tests/pipelines",
)
SHIFTING_TEXT = "good " * 14 + "terrible dull " * 17
TEXTS = [
    LONG_TEXT, SHIFTING_TEXT, *LONG_TEXTS,
    "Délightful café in Oslo, New York 北京 rocks 🙂 and the plot was dull. " * 3,
    "boring",
]
PAIRS = ["good film", SHIFTING_TEXT, "the cast was great", LONG_TEXT, "Délightful", "the plot was weak and silly " * 4]
TAGGER_TEXTS = [
    LONG_NER_TEXT, LONG_TEXTS[1],
    "Anna Smith met Ivan in Paris, yesterday. Délightful café in Oslo; New York 北京 rocks 🙂 " * 2,
    "anna smith",
]
QUESTIONS = ["where ?", "who met ivan ?", "where does marco live ?", "what did the red car of gus do at the market ?",
             "who joined initech in cairo and who met carla in oslo yesterday ?"]
CONTEXTS = [LONG_CONTEXT, LONG_NER_TEXT, LONG_TEXTS[1], "anna smith met ivan in paris ."]
CHOICES = [["good film", "terrible dull plot", "a show"], ["anna met ivan", "in oslo", "the red car of gus"]]

# name -> (task model, seed, export options); the grid of sequence lengths and strides.
EXPORTS = {
    "classifier": ("classifier", 3, dict(sequence_length=16, window_stride=3)),
    "classifier_pairs": ("classifier", 3, dict(sequence_length=18, window_stride=4, text_pair=True)),
    "regressor": ("regressor", 3, dict(sequence_length=20, window_stride=5)),
    "token_classifier": ("token_classifier", 1, dict(sequence_length=16, window_stride=5)),
    "token_classifier_short": ("token_classifier", 1, dict(sequence_length=13, window_stride=3)),
    "question_answerer": ("question_answerer", 1, dict(sequence_length=32, doc_stride=6, max_query_length=12)),
    "question_answerer_short": ("question_answerer", 0, dict(sequence_length=26, doc_stride=4, max_query_length=9)),
    "multiple_choice": ("multiple_choice", 3, dict(sequence_length=16, window_stride=3)),
}


@pytest.fixture(scope="module")
def tokenizer():
    return fixture_tokenizer()


def _serve_text(folder):
    """The SavedModel's `serve_text` as a function of NumPy texts to NumPy outputs."""
    import tensorflow as tf  # the module runs on TensorFlow only (see pytestmark)

    signature = tf.saved_model.load(str(folder)).signatures["serve_text"]
    return lambda **texts: {k: v.numpy() for k, v in signature(**{n: tf.constant(t) for n, t in texts.items()}).items()}


@pytest.fixture(scope="module")
def exported(tokenizer, tmp_path_factory):
    """`exported[name]` → `(model, options, serve_text)` of EXPORTS[name]."""
    return LazyExports(tmp_path_factory.mktemp("pipelines_vs_saved_models"), tokenizer, EXPORTS, _serve_text)


def _stats(served):
    """The SavedModel's reading report in `input_stats`' form."""
    columns = (served["num_tokens"], served["num_windows"], served["num_truncated_tokens"])
    return [{"tokens": int(n), "windows": int(w), "truncated_tokens": int(d)} for n, w, d in zip(*columns)]


def _text(value):
    return value.decode("utf-8")


@pytest.mark.parametrize("name", ["classifier", "classifier_pairs"])
def test_classifier_labels_and_probabilities(exported, tokenizer, name):
    model, options, serve_text = exported[name]
    pipeline = TextClassifierPipeline(model, tokenizer, options["sequence_length"], options["window_stride"])
    pairs = PAIRS if options.get("text_pair") else None
    want = pipeline(TEXTS, pairs=pairs)
    served = serve_text(text=TEXTS, **({"text_pair": pairs} if pairs else {}))
    assert [_text(label) for label in served["label"]] == [w["label"] for w in want]
    np.testing.assert_allclose(served["probabilities"], [list(w["probabilities"].values()) for w in want], atol=1e-5)
    np.testing.assert_allclose(served["score"], [w["score"] for w in want], atol=1e-5)
    assert _stats(served) == pipeline.input_stats(TEXTS, pairs)
    assert max(s["windows"] for s in _stats(served)) >= 3


def test_regressor_values(exported, tokenizer):
    model, options, serve_text = exported["regressor"]
    pipeline = TextClassifierPipeline(model, tokenizer, options["sequence_length"], options["window_stride"])
    served = serve_text(text=TEXTS)
    np.testing.assert_allclose(served["value"], [w["value"] for w in pipeline(TEXTS)], atol=1e-5)
    assert _stats(served) == pipeline.input_stats(TEXTS)


@pytest.mark.parametrize("name", ["token_classifier", "token_classifier_short"])
def test_token_classifier_entities(exported, tokenizer, name):
    model, options, serve_text = exported[name]
    pipeline = TokenClassifierPipeline(model, tokenizer, options["sequence_length"], options["window_stride"])
    want = pipeline(TAGGER_TEXTS)
    served = serve_text(text=TAGGER_TEXTS)
    for row, entities in enumerate(want):
        count = int(served["num_entities"][row])
        got = [
            {"type": _text(served["entity_type"][row, k]), "text": _text(served["entity_text"][row, k]),
             "start": int(served["entity_start"][row, k]), "end": int(served["entity_end"][row, k])}
            for k in range(count)
        ]
        assert got == [{k: e[k] for k in ("type", "text", "start", "end")} for e in entities], row
        np.testing.assert_allclose(served["entity_score"][row, :count], [e["score"] for e in entities], atol=1e-5)
        for entity in entities:
            assert TAGGER_TEXTS[row][entity["start"] : entity["end"]] == entity["text"]
    assert _stats(served) == pipeline.input_stats(TAGGER_TEXTS)
    assert sum(len(e) for e in want) >= 10 and max(s["windows"] for s in _stats(served)) >= 4


def _qa_inputs():
    """Every question about every context: questions of 2 to 13 tokens give windows of several sizes."""
    return [q for q in QUESTIONS for _ in CONTEXTS], [c for _ in QUESTIONS for c in CONTEXTS]


def _tied_tokens(num_tokens, window, stride):
    """Tokens that two windows give equal context (same `min(left, right)`, same window length)."""
    spans = hand_windows(num_tokens, window, stride)
    tied = 0
    for token in range(num_tokens):
        scores = [(min(token - s, e - 1 - token), e - s) for s, e in spans if s <= token < e]
        tied += len(scores) != len(set(scores))
    return tied


@pytest.mark.parametrize("name", ["question_answerer", "question_answerer_short"])
def test_question_answerer_answers_where_max_context_ties_decide(exported, tokenizer, name):
    model, options, serve_text = exported[name]
    length = options["sequence_length"]
    query, stride = fit_qa_lengths(length, options["doc_stride"], options["max_query_length"])
    pipeline = QuestionAnswererPipeline(model, tokenizer, length, stride, query)
    questions, contexts = _qa_inputs()
    want = pipeline(questions, contexts)
    served = serve_text(question=questions, context=contexts)
    decided_by_ties = 0
    for i, (question, context) in enumerate(zip(questions, contexts)):
        answer = (_text(served["answer"][i]), int(served["answer_start"][i]), int(served["answer_end"][i]))
        assert answer == (want[i]["answer"], want[i]["start"], want[i]["end"]), (question, context[:30])
        assert served["score"][i] == pytest.approx(want[i]["score"], abs=1e-5)
        start, end, probability, *_ = qa_answer(model, tokenizer, question, context, length, stride, query)
        assert (want[i]["start"], want[i]["end"]) == (start, end) and want[i]["answer"] == context[start:end]
        assert want[i]["score"] == pytest.approx(probability, abs=1e-5)
        reversed_tie = qa_answer(model, tokenizer, question, context, length, stride, query, later_wins_ties=True)
        decided_by_ties += reversed_tie[:2] != (start, end) or abs(reversed_tie[2] - probability) > 1e-4
    assert _stats(served) == pipeline.input_stats(questions, contexts)
    # The grid is one that can tell the tie-breaks apart: tied tokens, and answers they change.
    rooms = {length - 3 - min(len(ids_of(tokenizer, q)), query) for q in QUESTIONS}
    context_lengths = {len(ids_of(tokenizer, c)) for c in CONTEXTS}
    assert sum(_tied_tokens(n, room, min(stride, room)) for n in context_lengths for room in rooms) > 0
    assert decided_by_ties > 0


def test_multiple_choice_choices(exported, tokenizer):
    model, options, serve_text = exported["multiple_choice"]
    pipeline = MultipleChoicePipeline(model, tokenizer, options["sequence_length"], options["window_stride"])
    contexts = [SHIFTING_TEXT, LONG_NER_TEXT]
    want = pipeline(contexts, CHOICES)
    served = serve_text(context=contexts, choices=CHOICES)
    assert served["choice"].tolist() == [w["choice"] for w in want]
    assert [_text(t) for t in served["choice_text"]] == [w["text"] for w in want]
    np.testing.assert_allclose(served["probabilities"], [w["probabilities"] for w in want], atol=1e-5)
    np.testing.assert_allclose(served["score"], [w["score"] for w in want], atol=1e-5)
    assert _stats(served) == pipeline.input_stats(contexts, CHOICES)
    assert min(s["windows"] for s in _stats(served)) >= 3
