"""Pretraining under a wall-clock budget: `keras-bert pretrain --budget-minutes N`.

A learning-rate schedule needs the number of steps up front, and how many steps
fit in N minutes depends on the machine, the model size, the sequence length
and the objective. So the budget is spent in two parts:

1. calibration: a short run of the same job (at least `calibration_steps`
   steps, and as many more as fill a window of 2% of the budget, at most 30
   seconds; one held-out evaluation) into a temporary folder, timed by
   `StepClock`: the set-up before the first step (tokenizing the corpus,
   building and compiling the model), the median step after the first few
   (which compile), and one held-out evaluation;
2. the run itself, with `steps` chosen so that set-up, steps, one evaluation
   per checkpoint and saving fit in what is left of the budget.

The calibration counts against the budget, so a budget run takes about N
minutes in all. The chosen steps are recorded in the job (config.json and the
checkpoint), so `--resume` continues the same run without calibrating again.
"""

import os
import shutil
import tempfile
import time

import keras
import numpy as np

from keras_bert.jobs.checkpointing import has_checkpoint, read_checkpoint_state
from keras_bert.jobs.job_options import positive_number
from keras_bert.jobs.pretrain import pretrain

# What a budget run trains where its caller leaves a setting out (`keras-bert pretrain --budget-minutes N`
# without --size, --sequence-length, --learning-rate, --pack-sequences or --masking). It is the best setting of
# `benchmarks/studies/pretraining_sweep/pretraining_sweep.py`'s grid (size tiny/mini x length 64/128 x peak learning rate 1e-3/2e-3 x
# packing off/on), ranked by held-out masked-token accuracy after 3-minute budgets on a 2-core CPU, and
# checked at a 20-minute budget (README, "Pretraining under a wall-clock budget"). At budgets of minutes on a
# CPU, `tiny` at length 64 takes about 8x the steps `mini` at 128 does and learns more in the same time.
# Masking kinds were compared downstream at the full budget instead (a masked span is harder to predict
# than a masked word, so their MLM accuracies do not rank them): span led whole-word by less than the
# spread between fine-tuning seeds, and whole-word masking is the setting the 20-minute check ran.
BUDGET_RECIPE = {"size": "tiny", "sequence_length": 64, "learning_rate": 2e-3, "pack_sequences": True,
                 "masking": "whole-word"}
# Packing was measured on MLM + NSP rows, and ELECTRA's backbone takes no packed rows: the recipe packs
# only the BERT objective with next-sentence pairs.
_PACKED_RECIPE_OBJECTIVE = {"objective": "bert", "sentence_task": "nsp"}

# The first steps compile (and on TensorFlow trace); they are not the step time.
_COMPILE_STEPS = 3
# Saving the model and the checkpoints' writes, as a share of the time left: measured saves of a
# mini model take seconds, and an over-run costs more than a few steps fewer.
_SAFETY_SHARE = 0.05
# How long the calibration times steps: a share of the budget, at most `_CALIBRATION_WINDOW_SECONDS`. Twelve
# steps of `tiny` take about a second on two CPU cores, too short a sample: on 2026-11-29 an idle run's twelve
# calibration steps measured 0.098 s a step, its run then took 0.085, and its 20-minute budget ended after
# 16.2 minutes (benchmarks/studies/pretraining_payoff, section three_way_split_mean_pooling_pretraining_seed2).
_CALIBRATION_SHARE = 0.02
_CALIBRATION_WINDOW_SECONDS = 30.0
# The calibration run's length in steps, never reached in practice: the window ends it first.
_CALIBRATION_MAX_STEPS = 1_000_000


class StepClock(keras.callbacks.Callback):
    """Wall-clock marks of a `fit`: its start, every batch's end, every evaluation's span.

    With `window_seconds`, it stops the training (Keras then still runs the epoch's
    evaluation) once at least `min_steps` steps have ended and the steps after the
    compiling ones have taken `window_seconds`.
    """

    def __init__(self, window_seconds=None, min_steps=_COMPILE_STEPS + 1):
        super().__init__()
        self.window_seconds = window_seconds
        self.min_steps = min_steps
        self.started = None
        self.batch_ends = []
        self.evaluations = []
        self._test_started = None

    def on_train_begin(self, logs=None):
        self.started = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.batch_ends.append(time.perf_counter())
        if (self.window_seconds is not None and len(self.batch_ends) >= self.min_steps
                and self.timed_seconds() >= self.window_seconds):
            self.model.stop_training = True

    def on_test_begin(self, logs=None):
        self._test_started = time.perf_counter()

    def on_test_end(self, logs=None):
        self.evaluations.append(time.perf_counter() - self._test_started)

    def timed_seconds(self):
        """The span of the steps after the compiling ones (0 before the first of them has ended)."""
        if len(self.batch_ends) <= _COMPILE_STEPS:
            return 0.0
        return self.batch_ends[-1] - self.batch_ends[_COMPILE_STEPS - 1]

    def step_seconds(self):
        """The median step after the compiling ones."""
        steps = np.diff(self.batch_ends[_COMPILE_STEPS - 1:])
        if len(steps) == 0:
            raise RuntimeError(f"calibration needs more than {_COMPILE_STEPS} steps to time one")
        return float(np.median(steps))


def with_budget_recipe(pretrain_options):
    """`(options, filled)`: `pretrain_options` with `BUDGET_RECIPE`'s value for every recipe setting they leave
    out or set to None (packing only for MLM + NSP), and `{setting: value}` of those filled in."""
    packable = all(pretrain_options.get(k, v) == v for k, v in _PACKED_RECIPE_OBJECTIVE.items())
    filled = {name: value if name != "pack_sequences" else value and packable
              for name, value in BUDGET_RECIPE.items() if pretrain_options.get(name) is None}
    return {**pretrain_options, **filled}, filled


def steps_for_budget(seconds_left, setup_seconds, step_seconds, evaluation_seconds, checkpoints):
    """The most steps, a multiple of `checkpoints`, whose run fits in `seconds_left`.

    A run costs its set-up, `steps * step_seconds`, one evaluation per checkpoint,
    and a safety share of what is left for saving. Returns 0 when not even one
    step per checkpoint fits.
    """
    usable = seconds_left * (1 - _SAFETY_SHARE) - setup_seconds - checkpoints * evaluation_seconds
    steps = int(usable // step_seconds) if usable > 0 else 0
    return steps - steps % checkpoints


def pretrain_within_budget(
    corpus, vocabulary, output_dir, budget_minutes, *, checkpoints=10, calibration_steps=12, resume=False,
    verbose=1, **pretrain_options,
):
    """`pretrain` with as many steps as fit in `budget_minutes` of wall-clock time (calibration included).

    Args:
        corpus, vocabulary, output_dir: as `pretrain`.
        budget_minutes: the wall-clock minutes for the whole job, calibration included.
        checkpoints: how many checkpoints (and held-out evaluations: the points of
            the learning curve) the run makes; `steps` is a multiple of it.
        calibration_steps: the fewest steps of the timed calibration run (more
            than 3: the first compile); it runs on until its steps after the
            compiling ones have taken 2% of the budget (at most 30 seconds).
        resume: continue the run in `output_dir` with the steps it recorded
            (no new calibration; the budget then only applies to the first start).
        **pretrain_options: everything else `pretrain` takes but `steps` and
            `checkpoint_every` (which the budget sets). `size`, `sequence_length`,
            `learning_rate`, `pack_sequences` and `masking`, where left out
            (or None), come from `BUDGET_RECIPE` (tiny, 64, 2e-3, packed rows
            for MLM + NSP, whole-word masking), not from `pretrain`'s defaults.

    Returns:
        `pretrain`'s summary plus "budget": the minutes given, the calibration's
        measurements, the steps chosen, the minutes the whole job took and
        ("recipe") the settings `BUDGET_RECIPE` filled in.

    Raises:
        ValueError: a budget that is not a positive number, conflicting
            options, or a budget too short for one step per checkpoint after the
            calibration (named with what was measured; nothing written to `output_dir`).
    """
    positive_number("budget_minutes", budget_minutes)  # as `keras-bert pretrain --budget-minutes` checks it
    pretrain_options, filled = with_budget_recipe(pretrain_options)
    if verbose and filled:
        print("Budget recipe for the settings not given: " + ", ".join(f"{k}={v!r}" for k, v in filled.items()))
    for fixed in ("steps", "checkpoint_every"):
        if pretrain_options.get(fixed) is not None:
            raise ValueError(f"`{fixed}` is set by the budget; received {fixed}={pretrain_options[fixed]!r}")
        pretrain_options.pop(fixed, None)
    if not isinstance(checkpoints, int) or checkpoints < 1:
        raise ValueError(f"`checkpoints` must be a positive int; received {checkpoints!r}")
    if not isinstance(calibration_steps, int) or calibration_steps <= _COMPILE_STEPS:
        raise ValueError(f"`calibration_steps` must be an int > {_COMPILE_STEPS}; received {calibration_steps!r}")
    checkpoint_dir = os.path.join(os.fspath(output_dir), "checkpoints")
    if resume and has_checkpoint(checkpoint_dir):
        recorded = read_checkpoint_state(checkpoint_dir).get("job", {})
        summary = pretrain(corpus, vocabulary, output_dir, steps=recorded["steps"],
                           checkpoint_every=recorded["checkpoint_every"], resume=True, verbose=verbose,
                           **pretrain_options)
        summary["budget"] = {"minutes": budget_minutes, "resumed": True, "steps": recorded["steps"],
                             **({"recipe": filled} if filled else {})}
        return summary

    started = time.time()
    window = min(_CALIBRATION_SHARE * budget_minutes * 60, _CALIBRATION_WINDOW_SECONDS)
    clock = _calibrate(corpus, vocabulary, calibration_steps, verbose, pretrain_options, window)
    setup = clock.batch_ends[0] - clock.started  # set-up and the first (compiling) step
    measured = {
        "calibration_seconds": round(time.time() - started, 1),
        "setup_seconds": round(setup, 1),
        "step_seconds": round(clock.step_seconds(), 4),
        "timed_steps": len(clock.batch_ends) - _COMPILE_STEPS,
        "evaluation_seconds": round(max(clock.evaluations, default=0.0), 2),
    }
    seconds_left = budget_minutes * 60 - (time.time() - started)
    steps = steps_for_budget(seconds_left, setup, clock.step_seconds(), max(clock.evaluations, default=0.0),
                             checkpoints)
    if steps < checkpoints:
        raise ValueError(
            f"budget_minutes={budget_minutes} is too short for {checkpoints} checkpoint(s) of at least one step: "
            f"the calibration took {measured['calibration_seconds']} s, set-up {measured['setup_seconds']} s, "
            f"{measured['step_seconds']} s a step, {measured['evaluation_seconds']} s an evaluation. Nothing "
            f"was written to {output_dir}."
        )
    if verbose:
        print(f"Budget {budget_minutes} min: calibration {measured['calibration_seconds']} s, "
              f"{measured['step_seconds']} s a step -> {steps} steps, {checkpoints} checkpoints")
    summary = pretrain(corpus, vocabulary, output_dir, steps=steps, checkpoint_every=steps // checkpoints,
                       resume=resume, verbose=verbose, **pretrain_options)
    summary["budget"] = {"minutes": budget_minutes, **measured, "steps": steps,
                         "job_minutes": round((time.time() - started) / 60, 2), **({"recipe": filled} if filled else {})}
    return summary


def _calibrate(corpus, vocabulary, calibration_steps, verbose, pretrain_options, window_seconds=0.0):
    """A `StepClock` of a short run of the same job in a temporary folder (deleted afterwards): at least
    `calibration_steps` steps, and on until the steps after the compiling ones have taken `window_seconds`."""
    clock = StepClock(window_seconds, min_steps=calibration_steps)
    folder = tempfile.mkdtemp(prefix="keras_bert_budget_")
    # Only the clock: the caller's callbacks (curves, logs) are for the run itself.
    options = dict(pretrain_options, tensorboard=False, callbacks=[clock])
    if verbose:
        print(f"Calibrating the budget: {window_seconds:.0f} s (at least {calibration_steps} steps) of the same job")
    try:
        pretrain(corpus, vocabulary, folder, steps=_CALIBRATION_MAX_STEPS, checkpoint_every=_CALIBRATION_MAX_STEPS,
                 verbose=0, **options)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return clock
