"""`keras_bert.postprocessing.entity_spans` decodes tags as `keras_bert.metrics.get_entities` (seqeval's default mode).

The pipelines and the SavedModel decode entities with the TensorFlow version;
the evaluation scores them with the Python one (checked against seqeval in
tests/metrics). Random tag sequences of IOB1, IOB2 and IOBES tags, ill-formed
ones included, over several texts, must give the same entities.
"""

import numpy as np
import pytest
import tensorflow as tf

from keras_bert.metrics import get_entities
from keras_bert.postprocessing import entity_spans

pytestmark = pytest.mark.only_backend(
    "tensorflow", reason="TensorFlow ops whatever the Keras backend: the same numbers on every backend"
)
LABELS = ["O", "B-PER", "I-PER", "E-PER", "S-PER", "B-LOC", "I-LOC", "E-LOC", "S-LOC", "B", "I"]


def _decode(rows, label_names):
    word_row = tf.constant([r for r, tags in enumerate(rows) for _ in tags], tf.int64)
    word_tag = tf.constant([t for tags in rows for t in tags], tf.int64)
    word_score = tf.constant(np.linspace(0.5, 1.0, int(tf.size(word_tag))), tf.float64)
    return entity_spans.entity_spans(word_row, word_tag, word_score, label_names), word_score.numpy()


def test_entities_equal_seqevals_default_mode_on_random_tags():
    rng = np.random.default_rng(0)
    for _ in range(200):
        rows = [rng.integers(0, len(LABELS), rng.integers(0, 9)).tolist() for _ in range(rng.integers(1, 5))]
        got, scores = _decode(rows, LABELS)
        got = {k: v.numpy() for k, v in got.items()}
        expected, first_word = [], 0
        for row, tags in enumerate(rows):
            for kind, first, last in get_entities([LABELS[t] for t in tags]):
                expected.append((row, kind, first_word + first, first_word + last))
            first_word += len(tags)
        mine = [(int(r), t.decode(), int(f), int(la)) for r, t, f, la in
                zip(got["row"], got["type"], got["first_word"], got["last_word"])]
        assert mine == expected, rows
        np.testing.assert_allclose(got["score"], [scores[f : la + 1].mean() for _, _, f, la in expected])


def test_labels_that_are_not_entity_tags_give_no_entities():
    got, _ = _decode([[0, 1, 2], [2, 1]], ["NOUN", "VERB", "ADJ"])
    assert got["row"].shape == (0,)


def test_words_take_the_tag_of_their_first_wordpiece():
    # Two texts: words of 2, 0 and 1 wordpieces; then one word of 3 wordpieces.
    words = tf.ragged.constant([[[5, 6], [], [7]], [[8, 9, 10]]], ragged_rank=2)
    probabilities = tf.constant(
        [[0.1, 0.9], [0.8, 0.2], [0.7, 0.3], [0.4, 0.6], [0.9, 0.1], [0.9, 0.1]], tf.float64
    )
    tagged = {k: v.numpy().tolist() for k, v in entity_spans.tagged_words(words, probabilities, [0, 3]).items()}
    assert tagged == {"row": [0, 0, 1], "first_token": [0, 2, 0], "last_token": [1, 2, 2], "tag": [1, 0, 1],
                      "score": [0.9, 0.7, 0.6]}
