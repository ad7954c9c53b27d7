"""The served question answerer and `QuestionAnswererPipeline` let the same tokens start answers, by run_squad's rule.

A context token that lies in several overlapping windows may start an
answer only in the window where it has the most context. The rule is Google's
run_squad.py `_check_is_max_context`: the score of a window for a token is
`min(left, right) + 0.01 * window length` (tokens of the window before and
after it), and the first window with the highest score wins a tie. Both the
SavedModel's `serve_text` graph (`task_outputs.question_answerer_outputs`
of a `BertServingModule` built from the export options, run eagerly here:
the export traces the same function) and the pipeline
(`squad_features` + `decode_answers`) hand `answer_spans.nbest_spans` a
mask of the positions that may start an answer; that mask is what decides
which answers exist. Here it is taken from both readers, with no model (the
logits are zeros: the mask does not depend on them) and no export, over a
grid of sequence lengths, question lengths, doc strides and context lengths,
and compared with each other and with `_check_is_max_context` written out
below from its definition.

The grid holds many ties (a token equally central in two windows of equal
length), and the test checks that they decide: reversing the tie-break on
either side, or giving the served graph too few neighbouring windows to
compare with, fails here.
"""

import functools
import types

import numpy as np
import pytest
import tensorflow as tf

from keras_bert.export import task_outputs
from keras_bert.export.saved_model.serving_module import BertServingModule
from keras_bert.export.saved_model.serving_options import ServingOptions
from keras_bert.pipelines import QuestionAnswererPipeline
from keras_bert.postprocessing import answer_spans
from task_helpers import FIXTURES, fixture_tokenizer

pytestmark = pytest.mark.only_backend(
    "tensorflow",
    reason="windows, max-context masks and the served graph are TensorFlow ops whatever the Keras backend, and "
    "no model runs here: the same masks on every backend",
)

# Words of one token each (in the fixtures' vocabulary): a question of n words is n tokens, a context of n words n.
QUESTION_WORD, CONTEXT_WORD = "car", "a"
CONTEXT_LENGTHS = (1, 2, 5, 8, 13, 21, 34, 50)
# (sequence_length, max_query_length, doc strides), each with questions of every length up to a token past
# max_query_length: windows of 2 to 14 tokens, strides from 1 token to the longest question's whole room,
# and strides over half a window (a token in at most 2 windows: the served graph then compares no further).
SETTINGS = ((9, 4, (1, 2)), (12, 3, (4, 5, 6)), (18, 9, (1, 2, 3, 4, 5, 6)))


def run_squad_spans(num_tokens, room, doc_stride):
    """run_squad's `doc_spans`: `(start, length)` of windows of `room` tokens, each `doc_stride` after the last."""
    spans, start = [], 0
    while start < num_tokens:
        length = min(num_tokens - start, room)
        spans.append((start, length))
        if start + length == num_tokens:
            break
        start += min(length, doc_stride)
    return spans


def check_is_max_context(spans, cur_span_index, position, later_wins_ties=False):
    """run_squad's `_check_is_max_context`, word for word; `later_wins_ties` the reversed tie-break.

    Its float scores order windows exactly here: different scores differ by
    at least 0.01 while windows are under 100 tokens, and equal ones are the same sum.
    """
    best_score, best_span_index = None, None
    for span_index, (start, length) in enumerate(spans):
        end = start + length - 1
        if position < start or position > end:
            continue
        score = min(position - start, end - position) + 0.01 * length
        if best_score is None or score > best_score or (later_wins_ties and score == best_score):
            best_score, best_span_index = score, span_index
    return cur_span_index == best_span_index


@functools.lru_cache(maxsize=None)
def reference_windows(num_tokens, room, doc_stride, later_wins_ties=False):
    """Each window's tokens that may start an answer there: a tuple of bool tuples, one per window."""
    spans = run_squad_spans(num_tokens, room, doc_stride)
    return tuple(
        tuple(check_is_max_context(spans, w, start + j, later_wins_ties) for j in range(length))
        for w, (start, length) in enumerate(spans)
    )


def reference_masks(pairs, sequence_length, max_query_length, doc_stride, later_wins_ties=False):
    """bool `(num_windows, sequence_length)`: the packed positions that may start an answer, window after window.

    `pairs` holds `(question tokens, context tokens)` per example.
    """
    rows = []
    for q, n in pairs:
        q = min(q, max_query_length)
        first, room = q + 2, sequence_length - 3 - q  # [CLS] question [SEP] context [SEP]
        for window in reference_windows(n, room, doc_stride, later_wins_ties):
            row = np.zeros(sequence_length, bool)
            row[first : first + len(window)] = window
            rows.append(row)
    return np.stack(rows)


class _ServedWithoutModel(BertServingModule):
    """The serving module, its options and graph code as exported, with zero logits in place of a model."""

    def _call_model(self, inputs):
        zeros = tf.zeros(tf.shape(inputs["token_ids"]), tf.float32)
        return {"start": zeros, "end": zeros}


class _PipelineWithoutModel(QuestionAnswererPipeline):
    """The pipeline's windows and decoding, with zero logits in place of a model."""

    def _predict(self, x):
        zeros = np.zeros(np.shape(x["token_ids"]), "float32")
        return {"start": zeros, "end": zeros}


@pytest.fixture
def start_masks(monkeypatch):
    """The `can_start` masks `answer_spans.nbest_spans` is called with, in order of the calls."""
    masks, nbest_spans = [], answer_spans.nbest_spans

    def spy(start_logits, end_logits, owner, num_examples, can_start, *args, **kwargs):
        masks.append(np.asarray(can_start))
        return nbest_spans(start_logits, end_logits, owner, num_examples, can_start, *args, **kwargs)

    monkeypatch.setattr(answer_spans, "nbest_spans", spy)
    return masks


def test_served_graph_and_pipeline_start_answers_where_run_squad_does(start_masks, tmp_path):
    tokenizer, vocab_file, metadata_file = fixture_tokenizer(), FIXTURES / "vocab.txt", tmp_path / "metadata.json"
    metadata_file.write_text("{}")
    backbone = types.SimpleNamespace(vocabulary_size=tokenizer.vocabulary_size(), num_segments=2,
                                     max_sequence_length=64)
    model = types.SimpleNamespace(backbone=backbone, variables=[])
    windows = ties = calls = 0
    for sequence_length, max_query_length, doc_strides in SETTINGS:
        pairs = [(q, n) for q in range(1, max_query_length + 2) for n in CONTEXT_LENGTHS]
        questions = [" ".join([QUESTION_WORD] * q) for q, _ in pairs]
        contexts = [" ".join([CONTEXT_WORD] * n) for _, n in pairs]
        for doc_stride in doc_strides:
            options = ServingOptions(sequence_length=sequence_length, doc_stride=doc_stride,
                                     max_query_length=max_query_length).resolved(model, "question_answerer", backbone)
            assert (options.max_query_length, options.doc_stride) == (max_query_length, doc_stride)  # none cut
            served = _ServedWithoutModel(model, "question_answerer", tokenizer, options, str(vocab_file),
                                         str(metadata_file))
            task_outputs.question_answerer_outputs(served, tf.constant(questions), tf.constant(contexts))
            pipeline = _PipelineWithoutModel(model, tokenizer, sequence_length, doc_stride, max_query_length)
            pipeline(questions, contexts)
            calls += 2
            assert len(start_masks) == calls
            served_mask, pipeline_mask = start_masks[-2:]
            setting = dict(sequence_length=sequence_length, max_query_length=max_query_length, doc_stride=doc_stride)
            want = reference_masks(pairs, **setting)
            np.testing.assert_array_equal(pipeline_mask, want, err_msg=f"pipeline, {setting}")
            np.testing.assert_array_equal(served_mask, want, err_msg=f"served graph, {setting}")
            windows += len(want)
            ties += int(np.any(want != reference_masks(pairs, **setting, later_wins_ties=True), axis=1).sum())
    # The grid tells the tie-breaks apart: many windows where the reversed rule starts answers elsewhere.
    assert ties > windows // 4, (ties, windows)
