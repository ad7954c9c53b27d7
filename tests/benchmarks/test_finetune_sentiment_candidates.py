"""The demo recipe study's candidates: what `--candidates` accepts and what it refuses (issue 44: the recipe is
chosen on validation, so every option a candidate sets must reach the job and its record)."""

import argparse

import pytest

from benchmarks import finetune_sentiment as study

pytestmark = pytest.mark.only_backend("torch", reason="parses command-line text; the same on every backend")


def test_a_candidate_is_rate_pooling_epochs_and_options_by_name():
    assert study.parse_candidate("1e-4:mean:1") == {"learning_rate": 1e-4, "pooling": "mean", "epochs": 1}
    assert study.parse_candidate("2e-4:cls:2:dropout=0:weight_decay=0.1") == {
        "learning_rate": 2e-4, "pooling": "cls", "epochs": 2, "dropout": 0.0, "weight_decay": 0.1}


@pytest.mark.parametrize("text", ["1e-4:mean", "1e-4:mean:1:dropout", "1e-4:mean:1:dropuot=0", "x:mean:1",
                                  "1e-4:mean:1:dropout=none"])
def test_a_malformed_candidate_or_an_unknown_option_is_refused_with_the_syntax(text):
    with pytest.raises(argparse.ArgumentTypeError, match="learning_rate:pooling:epochs"):
        study.parse_candidate(text)


def test_the_printed_line_names_each_option_a_candidate_set():
    assert study.options({"learning_rate": 2e-4, "dropout": 0.0, "warmup_ratio": 0.06}) == \
        ", dropout 0, warmup ratio 0.06"
    assert study.options({"learning_rate": 2e-4}) == ""
