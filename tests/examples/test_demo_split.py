"""`make demo`'s three sets: disjoint, fixed by position, every rated sentence in exactly one.

The demo reports the test set's accuracy; the validation set chose its epoch. Were a sentence in two sets, or
the test set the one that chose, the printed figure would be selected on itself (issue 44).
"""

import pytest

from harness import SHARED_DATA
from keras_bert.examples.demo import split_rated_sentences
from keras_bert.examples.sentiment_data import read_rated_sentences

REVIEWS = SHARED_DATA / "sentiment" / "movieReviewSnippets_GroundTruth.txt"


@pytest.mark.only_backend("jax", reason="splitting text files uses no backend; it runs once")
def test_the_demo_sets_are_disjoint_and_cover_every_rated_sentence():
    rows = read_rated_sentences(REVIEWS)
    splits, dropped = split_rated_sentences(rows)
    assert len(rows) == 10_605 and dropped == sum(rating == 0 for _, rating in rows)
    assert sum(len(examples) for examples in splits.values()) == len(rows) - dropped
    # Each set holds exactly the rated sentences of its positions: test = index % 10 == 9, validation = 8.
    for split, positions in (("test", {9}), ("validation", {8}), ("train", set(range(8)))):
        expected = [" ".join(text.split()) for index, (text, rating) in enumerate(rows)
                    if index % 10 in positions and rating != 0]
        assert [text for text, _ in splits[split]] == expected, split
    assert len(splits["test"]) > 1000 and len(splits["validation"]) > 1000
    # Labels are the sign of the mean human rating.
    ratings = {" ".join(text.split()): rating for text, rating in rows if rating != 0}
    assert all((label == "positive") == (ratings[text] > 0) for text, label in splits["test"])
