"""`keras_bert.postprocessing.answer_spans`: the n-best decoding the pipelines, the SQuAD evaluation and the
SavedModel share, on hand-set logits.

(Long contexts through the whole pipeline and SavedModel, against run_squad's
rule written out by hand, are in tests/export/test_pipelines_match_saved_models.py.)
"""

import numpy as np
import pytest
import tensorflow as tf

from keras_bert.postprocessing import answer_spans

pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="TensorFlow ops whatever the Keras backend: the same numbers on every backend"
)


def _decode(start_logits, end_logits, owner, num_examples, can_start, can_end, offsets, **options):
    char_start = np.asarray(offsets)[..., 0]
    char_end = np.asarray(offsets)[..., 1]
    spans = answer_spans.nbest_spans(
        tf.constant(start_logits, tf.float32), tf.constant(end_logits, tf.float32), tf.constant(owner, tf.int32),
        num_examples, tf.constant(can_start), tf.constant(can_end), char_start, char_end, **options
    )
    return {k: v.numpy() for k, v in spans.items()}


def test_spans_need_a_max_context_start_an_order_and_a_length_limit():
    # One window of 6 positions: [CLS], q, context tokens 2-5 (characters 0-3, 4-7, 8-11, 12-15).
    offsets = [[[-1, -1], [-1, -1], [0, 3], [4, 7], [8, 11], [12, 15]]]
    can_end = [[False, False, True, True, True, True]]
    can_start = [[False, False, True, False, True, True]]  # token 3 has more context in another window
    start = [[9.0, 8.0, 1.0, 7.0, 2.0, 0.5]]
    end = [[9.0, 8.0, 0.0, 1.0, 3.0, 6.0]]
    spans = _decode(start, end, [0], 1, can_start, can_end, offsets, max_answer_length=3)
    ranked = list(zip(spans["char_start"][0], spans["char_end"][0], spans["logit"][0]))
    # Starting at token 3 (7 + ...) is refused; token 2 to 5 is 4 tokens, over the limit.
    assert ranked[:3] == [(8, 15, 8.0), (12, 15, 6.5), (8, 11, 5.0)]
    assert (0, 15) not in [(s, e) for s, e, _ in ranked]
    assert spans["null_score"].tolist() == [18.0]


def test_one_character_span_keeps_its_best_logit_at_its_first_place():
    # Two windows of one example hold tokens with the same characters (a character that became two wordpieces):
    # the span counts once, with the best of its logits, ranked where it was first found.
    offsets = [[[-1, -1], [0, 2], [0, 2]], [[-1, -1], [0, 2], [3, 5]]]
    every = [[False, True, True], [False, True, True]]
    start = [[0.0, 2.0, 2.0], [-1.0, 5.0, 1.0]]
    end = [[0.0, 1.0, 1.0], [-0.5, 1.0, 1.0]]
    spans = _decode(start, end, [0, 0], 1, every, every, offsets, n_best_size=3)
    ranked = [(s, e, float(x)) for s, e, x in zip(spans["char_start"][0], spans["char_end"][0], spans["logit"][0])]
    assert ranked == [(0, 2, 6.0), (0, 5, 6.0), (3, 5, 2.0)]
    # "No answer" scores the lowest [CLS] pair over the example's windows (run_squad's score_null, transformers'
    # min_null_prediction): 0 + 0 in the first, -1 - 0.5 in the second.
    assert spans["null_score"].tolist() == [-1.5]


def test_choose_answers_with_and_without_no_answer():
    nbest = tf.constant([[3.0, 1.0], [-np.inf, -np.inf], [2.0, -np.inf]], tf.float32)
    null = tf.constant([5.0, 0.0, 1.0], tf.float32)
    answered, score, probabilities = (t.numpy() for t in answer_spans.choose_answers(nbest, null))
    assert answered.tolist() == [True, False, True]
    e = np.exp([3.0, 1.0])
    np.testing.assert_allclose(score, [e[0] / e.sum(), 0.0, 1.0])
    np.testing.assert_allclose(probabilities[0], e / e.sum())
    answered, score, probabilities = (t.numpy() for t in answer_spans.choose_answers(nbest, null, True, 1.0))
    # Example 0: null 5 beats 3 by more than 1; example 1: nothing but "no answer"; example 2: 1 - 2 < 1.
    assert answered.tolist() == [False, False, True]
    e = np.exp([3.0, 1.0, 5.0])
    np.testing.assert_allclose(score, [e[2] / e.sum(), 1.0, np.exp(2.0) / (np.exp(2.0) + np.exp(1.0))])
    assert probabilities.shape == (3, 3)
