"""The fine-tuning job's SQuAD and entity scores, from a model's outputs to the metrics, against references.

The metrics themselves are pure Python (tests/metrics/test_squad_metrics_reference.py
and test_entity_metrics_reference.py check them against the official SQuAD
scripts' logic and seqeval, on one backend). What they score comes from the
backend: the job's evaluation runs the model on its features' `tf.data`
batches (`model.predict`, what each backend's trainer does with them) and
decodes the outputs (answer spans of the windows, one tag per word). Here
that route is compared, on every backend, with one that shares none of it:
windows and inputs packed by hand, the model called on numpy arrays, the
outputs decoded as run_squad.py and the first-wordpiece rule say
(tests/pipelines/long_text_reference.py), and the texts or tags scored by the
official logic and seqeval. Tiny model, a few held-out questions and sentences.
"""

import numpy as np
import pytest
from seqeval.metrics import accuracy_score, f1_score, precision_score, recall_score

from keras_bert.jobs.finetune_handlers import QuestionAnswererJob, TokenClassifierJob
from keras_bert.preprocessing.task_data.ner_data import read_conll
from keras_bert.preprocessing.task_data.squad_data import read_squad
from metrics import squad_reference as official
from pipelines.long_text_reference import TAGS, ids_of, pack, qa_answer, stack, task_model
from task_helpers import FIXTURES, fixture_tokenizer

# Windows of 24 hold 13-18 context tokens beside the question: the fixture's contexts of about
# 25 tokens are read in 2-4 windows every 4 tokens, so max-context decides between windows.
QA_OPTIONS = dict(sequence_length=24, doc_stride=4, max_query_length=8, max_answer_length=30, n_best_size=20,
                  allow_no_answer=False, null_score_diff_threshold=0.0)
NER_LENGTH = 8  # 6 wordpieces: longer sentences are cut, their last words tagged "O"


@pytest.fixture(scope="module")
def tokenizer():
    return fixture_tokenizer()


def test_squad_scores_of_the_job_match_hand_decoding_and_the_official_logic(tokenizer):
    model = task_model("question_answerer", seed=1)  # its answers to these: one exact, some overlapping, some wrong
    examples = read_squad(FIXTURES / "squad_v1_dev.json")[:7]
    # The third context takes 4 windows, the others 3 each: without it, every batch below (the job's of 3
    # windows, the hand route's of one context) has one shape, compiled once on JAX.
    del examples[2]
    job = QuestionAnswererJob(dict(QA_OPTIONS))
    features = job.features(examples, tokenizer, training=False)
    metrics, predictions = job.evaluate(model, features, examples, batch_size=3)

    length, stride, query = (job.options[k] for k in ("sequence_length", "doc_stride", "max_query_length"))
    want, windows = {}, 0
    for e in examples:
        start, end, _, num_windows, _ = qa_answer(model, tokenizer, e.question, e.context, length, stride, query)
        want[e.id] = e.context[start:end] if start >= 0 else ""
        windows += num_windows
    assert {p["id"]: p["prediction"] for p in predictions} == want
    assert windows == 3 * len(examples)
    dataset = [{"paragraphs": [{"qas": [{"id": e.id, "answers": [{"text": t} for t in e.answer_texts]}
                                        for e in examples]}]}]
    expected = official.evaluate_v1(dataset, want)
    assert (metrics["exact_match"], metrics["f1"]) == pytest.approx((expected["exact_match"], expected["f1"]), abs=1e-9)
    assert 0 < metrics["exact_match"] < metrics["f1"] < 100  # the comparison is not of zeros


def _hand_word_tags(model, tokenizer, sentences):
    """Each word's tag: the argmax at its first wordpiece of `[CLS] pieces [SEP]` cut to NER_LENGTH; "O" past it."""
    pieces = [[ids_of(tokenizer, word) for word in s.words] for s in sentences]
    room = NER_LENGTH - 2
    rows = [pack(tokenizer, [i for word in words for i in word][:room], None, NER_LENGTH) for words in pieces]
    logits = np.asarray(model.predict(stack(rows), verbose=0))
    tags = []
    for row, words in zip(logits, pieces):
        first, sentence = 0, []
        for word in words:
            sentence.append(TAGS[int(np.argmax(row[1 + first]))] if word and first < room else "O")
            first += len(word)
        tags.append(sentence)
    return tags


def test_entity_scores_of_the_job_match_hand_tagging_and_seqeval(tokenizer):
    model = task_model("token_classifier", seed=1)
    sentences = [s for s in read_conll(FIXTURES / "ner_dev.conll") if set(s.tags) <= set(TAGS)][:12]
    job = TokenClassifierJob({"sequence_length": NER_LENGTH, "word_column": 0, "tag_column": -1, "dropout": 0.0})
    job.label_names = TAGS
    features = job.features(sentences, tokenizer, training=False)
    metrics, predictions = job.evaluate(model, features, sentences, batch_size=len(sentences))  # the hand batch's shape

    want = _hand_word_tags(model, tokenizer, sentences)
    assert [p["predicted"] for p in predictions] == want
    assert features.info["num_truncated_words"] > 0  # the cut is part of what is compared
    true = [s.tags for s in sentences]
    expected = (precision_score(true, want), recall_score(true, want), f1_score(true, want), accuracy_score(true, want))
    ours = (metrics["precision"], metrics["recall"], metrics["f1"], metrics["word_accuracy"])
    assert ours == pytest.approx(expected, abs=1e-12)
    assert metrics["num_predicted"] > 0 and metrics["f1"] > 0  # entities found and some right
