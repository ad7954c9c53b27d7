"""The payoff experiment's bookkeeping: the learning-rate choice on the validation split (the test split reported,
never choosing), and which earlier runs it may reuse. No training here: `finetune_run`'s accuracies are given."""

import argparse
import json
import os
import time

import pytest

from benchmarks.studies.pretraining_payoff import pretraining_payoff as payoff


def _args(rates, extensions=2, **more):
    more.setdefault("finetune_pooling", "cls")
    return argparse.Namespace(finetune_learning_rates=rates, grid_extensions=extensions, quiet=True,
                              finetune_epochs=3, seed=0, **more)


FILES = {"train": "train.tsv", "validation": "validation.tsv", "test": "test.tsv"}


def _choose(monkeypatch, accuracy_by_rate, args):
    tried = []

    def fake_run(init, files, out, args, vocab=None, learning_rate=None):
        tried.append(learning_rate)
        # The test accuracy runs against the validation one: a choice made on test would pick another rate.
        return {"validation_accuracy": accuracy_by_rate[learning_rate], "test_accuracy": 1 - accuracy_by_rate[learning_rate]}

    monkeypatch.setattr(payoff, "finetune_run", fake_run)
    rate, runs = payoff.choose_finetune_learning_rate("tiny", FILES, "out", args)
    return rate, runs, tried


def test_an_inside_best_rate_is_kept_without_growing_the_grid(monkeypatch):
    rate, runs, tried = _choose(monkeypatch, {1e-4: 0.70, 5e-4: 0.77, 1e-3: 0.75}, _args([1e-4, 5e-4, 1e-3]))
    assert rate == 5e-4 and tried == [1e-4, 5e-4, 1e-3] and set(runs) == {1e-4, 5e-4, 1e-3}


def test_a_best_rate_at_the_top_edge_grows_the_grid_until_it_stops_winning(monkeypatch):
    accuracy = {5e-4: 0.72, 1e-3: 0.73, 2e-3: 0.74, 4e-3: 0.71}
    rate, _, tried = _choose(monkeypatch, accuracy, _args([5e-4, 1e-3]))
    assert tried == [5e-4, 1e-3, 2e-3, 4e-3] and rate == 2e-3


def test_a_best_rate_at_the_bottom_edge_grows_the_grid_downwards_within_the_limit(monkeypatch):
    accuracy = {1e-3: 0.70, 2e-3: 0.60, 5e-4: 0.72, 2.5e-4: 0.74}
    rate, _, tried = _choose(monkeypatch, accuracy, _args([1e-3, 2e-3], extensions=2))
    assert tried == [1e-3, 2e-3, 5e-4, 2.5e-4] and rate == 2.5e-4  # two extensions, then it stops


def test_a_tie_keeps_the_first_rate_of_the_grid(monkeypatch):
    rate, _, _ = _choose(monkeypatch, {2e-4: 0.75, 5e-4: 0.77, 1e-3: 0.77}, _args([2e-4, 5e-4, 1e-3]))
    assert rate == 5e-4


def _finished_run(folder, init, learning_rate, test="test.tsv"):
    folder.mkdir()
    job = {"init": init, "train": "train.tsv", "eval": "validation.tsv", "test": test, "learning_rate": learning_rate,
           "epochs": 3, "seed": 0}
    metrics = {"validation": {"accuracy": 0.76, "f1": 0.75}}
    if test:
        metrics["test"] = {"accuracy": 0.75, "f1": 0.74}
    (folder / "finetune.json").write_text(json.dumps({"job": job, "metrics": metrics, "wall_seconds": 60}))


def test_only_a_finished_run_with_the_same_settings_made_after_its_init_is_reused(tmp_path):
    files = dict(FILES)
    args = _args([5e-4])
    _finished_run(tmp_path / "random", "tiny", 5e-4)
    reused = payoff.finished_finetuning(tmp_path / "random", "tiny", files, 5e-4, args)
    assert reused["metrics"]["test"]["accuracy"] == 0.75
    assert payoff.finished_finetuning(tmp_path / "random", "tiny", files, 1e-3, args) is None  # another rate
    assert payoff.finished_finetuning(tmp_path / "random", "tiny", {**files, "validation": "x"}, 5e-4, args) is None
    assert payoff.finished_finetuning(tmp_path / "random", "tiny", {**files, "test": "x"}, 5e-4, args) is None
    assert payoff.finished_finetuning(tmp_path / "nothing", "tiny", files, 5e-4, args) is None
    # A run of the two-way split (its held-out file chose the epoch and was reported; no test section): never reused.
    _finished_run(tmp_path / "two_way", "tiny", 5e-4, test=None)
    assert payoff.finished_finetuning(tmp_path / "two_way", "tiny", {**files, "test": None}, 5e-4, args) is None
    # A run recorded before the head had a choice read [CLS]: it is not a run of the mean head.
    mean_head = _args([5e-4], finetune_pooling="mean")
    assert payoff.finished_finetuning(tmp_path / "random", "tiny", files, 5e-4, mean_head) is None
    pretrained = tmp_path / "pretrain_roberta"
    pretrained.mkdir()
    (pretrained / "model.keras").write_text("weights")
    _finished_run(tmp_path / "roberta", str(pretrained), 5e-4)
    assert payoff.finished_finetuning(tmp_path / "roberta", str(pretrained), files, 5e-4, args) is not None
    later = time.time() + 10  # pretrained again after that fine-tuning: its result is stale
    os.utime(pretrained / "model.keras", (later, later))
    assert payoff.finished_finetuning(tmp_path / "roberta", str(pretrained), files, 5e-4, args) is None


def test_reusing_a_pretraining_run_made_with_other_settings_is_refused_naming_them(tmp_path):
    folder = tmp_path / "pretrain_roberta"
    folder.mkdir()
    (folder / "model.keras").write_text("weights")
    job = {"size": "mini", "sequence_length": 64, "batch_size": 32, "learning_rate": 1e-3, "objective": "bert",
           "masking": "whole-word", "sentence_task": "none", "pack_sequences": False, "dropout": 0.1,
           "seed": 0}
    (folder / "config.json").write_text(json.dumps({"job": job}))
    args = argparse.Namespace(size="tiny", sequence_length=64, batch_size=32, learning_rate=1e-3,
                              pack_sequences=False, seed=0)
    with pytest.raises(ValueError, match=r"'size': \('mini', 'tiny'\)"):
        payoff.reused_pretraining("roberta", tmp_path, args)
    with pytest.raises(ValueError, match="no finished pretraining run"):
        payoff.reused_pretraining("span", tmp_path, args)
    job["size"] = "tiny"
    (folder / "config.json").write_text(json.dumps({"job": job}))
    assert payoff.reused_pretraining("roberta", tmp_path, args)[0] == str(folder)
    # Another pretraining dropout is another run, in its own folder; one found there with the default is refused.
    args.pretraining_dropout = 0.0
    variant = tmp_path / "pretrain_roberta_dropout0"
    variant.mkdir()
    (variant / "model.keras").write_text("weights")
    (variant / "config.json").write_text(json.dumps({"job": job}))
    with pytest.raises(ValueError, match=r"'dropout': \(0.1, 0.0\)"):
        payoff.reused_pretraining("roberta", tmp_path, args)
    (variant / "config.json").write_text(json.dumps({"job": {**job, "dropout": 0.0}}))
    assert payoff.reused_pretraining("roberta", tmp_path, args)[0] == str(variant)
    # A second pretraining seed is looked for in its own folder, and must have been pretrained with that seed.
    args.pretraining_seed = 1
    seeded = tmp_path / "pretrain_roberta_dropout0_seed1"
    seeded.mkdir()
    (seeded / "model.keras").write_text("weights")
    (seeded / "config.json").write_text(json.dumps({"job": {**job, "dropout": 0.0}}))
    with pytest.raises(ValueError, match=r"'seed': \(0, 1\)"):
        payoff.reused_pretraining("roberta", tmp_path, args)
    (seeded / "config.json").write_text(json.dumps({"job": {**job, "dropout": 0.0, "seed": 1}}))
    assert payoff.reused_pretraining("roberta", tmp_path, args)[0] == str(seeded)


def _fake_runs(monkeypatch, validation, test):
    """finetune_run replaced: `validation` / `test` accuracy by (rate, seed); the calls recorded."""
    runs = []

    def fake_run(init, files, out, args, vocab=None, learning_rate=None, seed=None):
        runs.append((out, learning_rate, seed))
        key = (learning_rate, seed)
        return {"validation_accuracy": validation[key], "validation_f1": 0.7, "test_accuracy": test[key],
                "test_f1": 0.6, "finetune_minutes": 1.0}

    monkeypatch.setattr(payoff, "finetune_run", fake_run)
    return runs


def test_several_fine_tuning_seeds_report_the_test_mean_and_spread_at_the_rate_validation_chose(monkeypatch):
    validation = {(5e-4, None): 0.70, (1e-3, None): 0.74, (1e-3, 1): 0.76, (1e-3, 2): 0.78}
    test = {(5e-4, None): 0.90, (1e-3, None): 0.75, (1e-3, 1): 0.77, (1e-3, 2): 0.79}  # test would choose 5e-4
    runs = _fake_runs(monkeypatch, validation, test)
    args = _args([5e-4, 1e-3], extensions=0, finetune_seeds=[0, 1, 2], finetune_learning_rate=None)
    row = payoff.finetune_arm("tiny", FILES, "ft", args)
    # The grid runs once (seed 0; the chosen rate's run is seed 0's), then the other seeds at the chosen rate.
    assert runs == [("ft_lr0.0005", 5e-4, None), ("ft_lr0.001", 1e-3, None), ("ft_lr0.001_seed1", 1e-3, 1),
                    ("ft_lr0.001_seed2", 1e-3, 2)]
    assert row["finetune_learning_rate"] == 1e-3
    assert row["test_accuracy"] == pytest.approx(0.77) and row["test_accuracy_std"] == pytest.approx(0.02)
    assert row["test_accuracy_by_seed"] == {"0": 0.75, "1": 0.77, "2": 0.79} and row["finetune_minutes"] == 3.0
    assert row["validation_accuracy"] == pytest.approx(0.76)
    assert row["validation_accuracy_by_learning_rate"] == {"0.0005": 0.70, "0.001": 0.74}


def test_one_rate_fine_tunes_once_per_seed_into_the_arm_folder(monkeypatch):
    runs = _fake_runs(monkeypatch, {(5e-4, 0): 0.7}, {(5e-4, 0): 0.6})
    args = _args(None, finetune_seeds=None, finetune_learning_rate=5e-4)
    row = payoff.finetune_arm("tiny", FILES, "ft", args)
    assert runs == [("ft", 5e-4, 0)]
    assert row["test_accuracy"] == 0.6 and row["validation_accuracy"] == 0.7 and row["finetune_learning_rate"] == 5e-4
    assert "validation_accuracy_by_learning_rate" not in row


def test_repeated_reviews_are_written_that_many_times_and_pretrained_in_their_own_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(payoff, "AUSTEN", tmp_path / "no_novels")  # the review sentences alone are counted here
    rows = [("a fine film", 1), ("a dull  film", 0)]
    files, heldout = payoff.prepare_corpus(tmp_path, rows, review_repeats=3)
    assert [os.path.basename(f) for f in files] == ["movie_review_train_sentences_x3.txt"]
    lines = open(files[0], encoding="utf-8").read().splitlines()
    assert lines.count("a fine film") == 3 and lines.count("a dull film") == 3
    assert lines.count(payoff.DOCUMENT_SEPARATOR) == 6  # every copy is a document of its own
    plain, _ = payoff.prepare_corpus(tmp_path, rows)
    assert open(plain[0], encoding="utf-8").read().splitlines().count("a fine film") == 1
    assert payoff.corpus_suffix(1) == "" and payoff.corpus_suffix(3) == "_reviews_x3"
    # --reuse-pretraining looks in the repeated corpus's folder, not the plain corpus's.
    args = argparse.Namespace(size="tiny", sequence_length=64, batch_size=32, learning_rate=1e-3,
                              pack_sequences=False, review_repeats=3, seed=0)
    with pytest.raises(ValueError, match="pretrain_roberta_reviews_x3 holds no finished pretraining run"):
        payoff.reused_pretraining("roberta", tmp_path, args)


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "4"])
def test_a_review_repeat_count_that_is_not_a_positive_int_is_refused_naming_it(tmp_path, bad):
    with pytest.raises(ValueError, match=f"review_repeats must be a positive int. Received: {bad!r}"):
        payoff.prepare_corpus(tmp_path, [("a film", 1)], review_repeats=bad)
    assert not (tmp_path / "corpus").exists()  # refused before anything is written


def test_a_pretraining_variant_is_pretrained_with_its_seed_and_dropout_into_its_own_folder(tmp_path, monkeypatch):
    from keras_bert.jobs import pretrain_budget

    calls = []
    monkeypatch.setattr(pretrain_budget, "pretrain_within_budget",
                        lambda files, vocab, out, minutes, **options: calls.append((out, options)) or {})
    args = argparse.Namespace(budget_minutes=20.0, eval_batches=20, size="tiny", sequence_length=64, batch_size=32,
                              learning_rate=2e-3, pack_sequences=False, seed=0, quiet=True, review_repeats=1,
                              pretraining_dropout=0.0, pretraining_seed=1)
    folder, _, _ = payoff.pretrain_run("roberta", ["corpus.txt"], ["heldout.txt"], "vocab.txt", tmp_path, args)
    (out, options), = calls
    assert out == folder == str(tmp_path / "pretrain_roberta_dropout0_seed1")
    assert options["seed"] == 1 and options["dropout"] == 0.0 and options["sentence_task"] == "none"
    args.pretraining_dropout = args.pretraining_seed = None  # the plain run: --seed, and pretrain's own dropout
    folder, _, _ = payoff.pretrain_run("roberta", ["corpus.txt"], ["heldout.txt"], "vocab.txt", tmp_path, args)
    assert folder == str(tmp_path / "pretrain_roberta")
    assert calls[1][1]["seed"] == 0 and "dropout" not in calls[1][1]
