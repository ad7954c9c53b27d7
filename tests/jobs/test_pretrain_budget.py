"""Pretraining under a wall-clock budget: the steps it chooses, its refusals, and the job it runs."""

import json
import types

import pytest

from keras_bert.jobs import pretrain_budget
from keras_bert.jobs.pretrain_budget import (
    BUDGET_RECIPE,
    StepClock,
    pretrain_within_budget,
    steps_for_budget,
    with_budget_recipe,
)


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory, shared_data):
    """150 lines of Persuasion and a vocabulary learned on them."""
    from keras_bert.preprocessing.vocabulary import learn_vocabulary, write_vocabulary

    folder = tmp_path_factory.mktemp("corpus")
    text = (shared_data / "austen" / "persuasion.txt").read_text(encoding="utf-8").splitlines()[200:350]
    (folder / "train.txt").write_text("\n".join(text), encoding="utf-8")
    write_vocabulary(learn_vocabulary([str(folder / "train.txt")], 500), str(folder / "vocab.txt"))
    return folder


def options(folder):
    return dict(corpus=[str(folder / "train.txt")], vocabulary=str(folder / "vocab.txt"), size="tiny",
                sequence_length=32, batch_size=8, learning_rate=1e-3, pack_sequences=False, seed=3,
                tensorboard=False, verbose=0)


def test_steps_fill_what_is_left_in_whole_checkpoints():
    # 100 s left, 5% kept for saving: 95 - 10 set-up - 4 x 2.5 evaluations = 75 s = 600 steps of 0.125 s.
    assert steps_for_budget(100, 10, 0.125, 2.5, 4) == 600
    assert steps_for_budget(100, 10, 0.125, 2.5, 7) == 539  # 67.5 s: 540 steps, cut to whole checkpoints
    assert steps_for_budget(20, 10, 0.125, 2.5, 4) == 0  # set-up and evaluations eat it all
    assert steps_for_budget(5, 10, 0.125, 0.0, 1) == 0


@pytest.mark.parametrize("budget", [0, -1, "20", True, float("nan")])
def test_a_budget_that_is_not_a_positive_number_is_named(small_corpus, tmp_path, budget):
    with pytest.raises(ValueError, match="budget_minutes"):
        pretrain_within_budget(output_dir=tmp_path / "run", budget_minutes=budget, **options(small_corpus))
    assert not (tmp_path / "run").exists()


def test_steps_set_by_hand_conflict_with_a_budget(small_corpus, tmp_path):
    with pytest.raises(ValueError, match="steps=50"):
        pretrain_within_budget(output_dir=tmp_path / "run", budget_minutes=5, steps=50, **options(small_corpus))


@pytest.mark.only_backend("torch", reason="the calibration is a short `pretrain` run, the same job on every backend "
                          "(below and in test_pretraining_job.py); timing it once checks the measurement")
def test_a_budget_too_short_for_one_step_names_what_the_calibration_measured(small_corpus, tmp_path):
    with pytest.raises(ValueError, match=r"budget_minutes=0.01 is too short .* s a step") as raised:
        pretrain_within_budget(output_dir=tmp_path / "run", budget_minutes=0.01, calibration_steps=4,
                               **options(small_corpus))
    assert "Nothing was written" in str(raised.value)
    assert not (tmp_path / "run").exists()


def test_the_clock_stops_the_calibration_once_its_window_is_timed(monkeypatch):
    # Steps end every 0.5 s; the first 3 compile. A 2-second window is full at the 7th step end (4 intervals after
    # the 3rd), unless the minimum number of steps is larger.
    model = types.SimpleNamespace(stop_training=False)
    for min_steps, stopped_at in ((4, 7), (10, 10)):
        ticks = iter(0.5 * k for k in range(100))
        monkeypatch.setattr(pretrain_budget.time, "perf_counter", lambda: next(ticks))
        clock = StepClock(window_seconds=2.0, min_steps=min_steps)
        clock.set_model(model)
        model.stop_training = False
        clock.on_train_begin()
        while not model.stop_training:
            clock.on_train_batch_end(len(clock.batch_ends))
        assert len(clock.batch_ends) == stopped_at and clock.timed_seconds() >= 2.0
        assert clock.step_seconds() == 0.5
    clock = StepClock()  # no window: never stops a run
    clock.set_model(model)
    model.stop_training = False
    for _ in range(50):
        clock.on_train_batch_end(0)
    assert model.stop_training is False


@pytest.mark.only_backend("torch", reason="the calibration is a `pretrain` run that Keras' fit stops; stopping a fit "
                          "and its evaluation afterwards are Keras', the same on every backend")
def test_the_calibration_times_steps_for_its_window_then_one_evaluation(small_corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(pretrain_budget.tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(pretrain_budget, "_CALIBRATION_MAX_STEPS", 2000)  # a clock that never stops fails, not hangs
    heldout = tmp_path / "heldout.txt"  # its text does not matter here: only the evaluation is timed
    heldout.write_text("\n".join((small_corpus / "train.txt").read_text(encoding="utf-8").splitlines()[:40]))
    job = dict(options(small_corpus), eval_corpus=[str(heldout)], eval_batches=2)
    corpus, vocabulary = job.pop("corpus"), job.pop("vocabulary")
    clock = pretrain_budget._calibrate(corpus, vocabulary, 4, job.pop("verbose"), job, window_seconds=3.0)
    ends = clock.batch_ends
    # It stopped at the first step end where both held: at least 4 steps, and 3 s timed after the compiling ones.
    assert len(ends) >= 4 and clock.timed_seconds() >= 3.0 and len(ends) < 2000
    assert len(ends) == 4 or ends[-2] - ends[pretrain_budget._COMPILE_STEPS - 1] < 3.0
    assert len(clock.evaluations) == 1 and clock.evaluations[0] > 0  # the held-out evaluation still ran, once
    assert not list(tmp_path.glob("keras_bert_budget_*"))  # its folder is gone


@pytest.mark.only_backend("torch", reason="the steps a budget allows are arithmetic on the calibration, the same on "
                          "every backend; each backend's pretraining run is test_pretraining_job.py's")
def test_the_run_takes_the_steps_the_calibration_allows(small_corpus, tmp_path, monkeypatch):
    # A calibration that measured 1 s of set-up and 0.5 s a step: 0.1 minutes then leave room for
    # (6 x 0.95 - 1) / 0.5 = 9.4 steps, i.e. 8 in whole checkpoints of 2 (the machine's own
    # speed is the test above's; here the budget arithmetic is wired into the job).
    clock = StepClock()
    clock.started, clock.batch_ends, clock.evaluations = 0.0, [1.0, 1.5, 2.0, 2.5, 3.0], []
    monkeypatch.setattr(pretrain_budget, "_calibrate", lambda *args: clock)
    summary = pretrain_within_budget(output_dir=tmp_path / "run", budget_minutes=0.1, checkpoints=4,
                                     **options(small_corpus))
    assert summary["budget"]["steps"] == 8 and summary["steps"] == 8
    assert summary["budget"]["timed_steps"] == 2  # the steps after the 3 compiling ones
    recorded = json.loads((tmp_path / "run" / "config.json").read_text())["job"]
    assert recorded["steps"] == 8 and recorded["checkpoint_every"] == 2
    assert len((tmp_path / "run" / "history.csv").read_text().splitlines()) == 1 + 4


def test_resume_continues_with_the_recorded_steps_without_calibrating(tmp_path, monkeypatch):

    calls = []
    monkeypatch.setattr(pretrain_budget, "has_checkpoint", lambda folder: True)
    monkeypatch.setattr(pretrain_budget, "read_checkpoint_state",
                        lambda folder: {"step": 4, "job": {"steps": 40, "checkpoint_every": 10}})
    monkeypatch.setattr(pretrain_budget, "_calibrate", lambda *args: pytest.fail("a resumed run calibrated"))
    monkeypatch.setattr(pretrain_budget, "pretrain", lambda *args, **kwargs: calls.append(kwargs) or {})
    resumed = pretrain_within_budget("corpus.txt", "vocab.txt", tmp_path, budget_minutes=3, resume=True)
    assert resumed["budget"] == {"minutes": 3, "resumed": True, "steps": 40, "recipe": BUDGET_RECIPE}
    assert calls[0]["steps"] == 40 and calls[0]["checkpoint_every"] == 10 and calls[0]["resume"] is True


def test_settings_left_out_come_from_the_budget_recipe_and_are_reported(tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(pretrain_budget, "has_checkpoint", lambda folder: True)
    monkeypatch.setattr(pretrain_budget, "read_checkpoint_state",
                        lambda folder: {"step": 4, "job": {"steps": 40, "checkpoint_every": 10}})
    monkeypatch.setattr(pretrain_budget, "pretrain", lambda *args, **kwargs: calls.append(kwargs) or {})
    summary = pretrain_within_budget("corpus.txt", "vocab.txt", tmp_path, budget_minutes=3, resume=True,
                                     size="mini", learning_rate=None)
    recipe = {k: v for k, v in BUDGET_RECIPE.items() if k != "size"}
    assert calls[0]["size"] == "mini"  # given: kept
    assert {k: calls[0][k] for k in recipe} == recipe  # left out, or None: the recipe's
    assert summary["budget"]["recipe"] == recipe
    assert BUDGET_RECIPE["size"] == "tiny" and BUDGET_RECIPE["masking"] == "whole-word"
    options, filled = with_budget_recipe({"size": "base", "learning_rate": 5e-5, "sequence_length": 512,
                                          "pack_sequences": False, "masking": "span"})
    assert filled == {} and options["size"] == "base"  # every setting given: nothing filled


@pytest.mark.parametrize("objective", [{"objective": "electra"}, {"sentence_task": "sop"}, {"sentence_task": "none"}])
def test_the_recipe_packs_only_mlm_and_nsp_rows(objective):
    options, filled = with_budget_recipe(objective)
    assert options["pack_sequences"] is False and filled["pack_sequences"] is False
    assert with_budget_recipe({"sentence_task": "nsp"})[0]["pack_sequences"] is True
    assert with_budget_recipe({**objective, "pack_sequences": True})[0]["pack_sequences"] is True  # asked for
