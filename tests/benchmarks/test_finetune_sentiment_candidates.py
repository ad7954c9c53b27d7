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


def test_the_recipe_is_chosen_by_its_mean_validation_accuracy_over_seeds_and_only_its_test_figures_are_kept(
        monkeypatch):
    # Candidate 0 has the single best validation run (seed 0) but the lower mean; candidate 1 must be chosen,
    # and the test figures reported must be candidate 1's, one per seed, never candidate 0's.
    validation = {(0, 0): 0.87, (0, 1): 0.84, (0, 2): 0.84, (1, 0): 0.86, (1, 1): 0.86, (1, 2): 0.85}
    test = {(0, 0): 0.99, (0, 1): 0.99, (0, 2): 0.99, (1, 0): 0.85, (1, 1): 0.86, (1, 2): 0.87}

    def fake_run(name, init, files, out, recipe, seed, common, vocab=None):
        key = (recipe["index"], seed)
        return ({**recipe, "seed": seed, "validation_accuracy": validation[key], "wall_minutes": 1.0},
                {"test_accuracy": test[key], "test_f1": test[key], "test_majority_class_accuracy": 0.5})

    monkeypatch.setattr(study, "run_candidate", fake_run)
    result = study.study("m", "init", [{"index": 0}, {"index": 1}], [0, 1, 2], {}, "work", {})
    chosen = result["chosen"]
    assert chosen["index"] == 1
    assert chosen["validation_accuracy"]["mean"] == 0.8567
    assert chosen["test_accuracy"]["values"] == [0.85, 0.86, 0.87]
    assert chosen["test_accuracy"]["mean"] == 0.86
    # t(2) = 4.303; standard deviation 0.01 over 3 seeds.
    assert chosen["test_accuracy"]["ci95"] == round(4.303 * 0.01 / 3 ** 0.5, 4)
    assert [c["validation_accuracy"]["mean"] for c in result["candidates"]] == [0.85, 0.8567]
    assert study.figure(chosen["test_accuracy"]) == "0.8600 ± 0.0248"


def test_a_tie_in_mean_validation_goes_to_the_candidate_listed_first():
    runs = [[({"validation_accuracy": 0.85}, {}), ({"validation_accuracy": 0.86}, {})],
            [({"validation_accuracy": 0.86}, {}), ({"validation_accuracy": 0.85}, {})]]
    assert study.choose(runs) == 0
    assert study.choose(runs[::-1]) == 0


def test_a_candidate_may_set_its_own_batch_size_and_one_seed_prints_without_an_interval():
    assert study.parse_candidate("1e-4:mean:1:batch_size=16")["batch_size"] == 16
    assert study.figure({"mean": 0.8605, "ci95": None}) == "0.8605"
