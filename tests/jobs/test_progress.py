"""Job progress: plain lines every few seconds in a log, Keras' bar on a terminal (`JobRunner.fit`)."""

import io
import re
import sys

import keras
import numpy as np
import pytest

from keras_bert.jobs.progress import CheckpointIntervalProgbar, PlainProgressLogger, interactive
from keras_bert.jobs.runner import JobRunner

STEPS, EPOCHS, BATCH = 8, 3, 4
CONTROL = re.compile(r"[\r\x08\x1b]")  # carriage return, backspace, ANSI escape


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_plain_lines_come_every_interval_with_speed_and_eta():
    clock, stream = FakeClock(), io.StringIO()
    logger = PlainProgressLogger(interval=5.0, stream=stream, clock=clock)
    logger.set_params({"epochs": 2, "steps": 10, "verbose": 0})
    logger.on_train_begin()
    for epoch in range(2):
        logger.on_epoch_begin(epoch)
        for batch in range(10):
            clock.now += 1.0  # one step per second
            logger.on_train_batch_end(batch, {"loss": np.float32(0.5), "accuracy": 0.75})
        logger.on_epoch_end(epoch, {"loss": 0.5, "val_loss": 0.25})
    lines = stream.getvalue().splitlines()
    assert lines == [
        # The first step (compiling) is left out of the speed: from step 1 at t=101 to step 5 at t=105.
        "step 5/20 (25%) loss 0.5 accuracy 0.75 - 1 steps/s, ETA 15s",
        "epoch 1/2 done (step 10/20): loss 0.5 val_loss 0.25 - 10s",
        "step 15/20 (75%) loss 0.5 accuracy 0.75 - 1 steps/s, ETA 5s",
        "epoch 2/2 done (step 20/20): loss 0.5 val_loss 0.25 - 10s",
    ]
    with pytest.raises(ValueError, match="interval=-1"):
        PlainProgressLogger(interval=-1)


def test_interactive_is_what_the_stream_says():
    assert interactive(FakeTerminal()) and not interactive(io.StringIO())


def fit(tmp_path, **runner_options):
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss="mse")

    def batches():
        while True:
            yield np.ones((BATCH, 4), "float32"), np.zeros((BATCH, 2), "float32")

    runner = JobRunner(tmp_path, {"steps": STEPS * EPOCHS}, (), tensorboard=False, **runner_options)
    return runner.fit(model, batches(), epochs=EPOCHS, steps_per_epoch=STEPS)


def test_a_log_gets_plain_lines_and_no_control_codes(tmp_path, capsys):
    fit(tmp_path, progress_interval=0.0)  # a line after every step: the most a log can get
    out = capsys.readouterr().out
    assert not CONTROL.search(out), repr(out[:200])
    lines = out.splitlines()
    # Every step but an epoch's last (its epoch line follows at once), and one line per epoch.
    assert len(lines) == EPOCHS * STEPS
    assert lines[-1].startswith(f"epoch {EPOCHS}/{EPOCHS} done (step {EPOCHS * STEPS}/{EPOCHS * STEPS}): loss ")
    assert sum(line.startswith("step ") for line in lines) == EPOCHS * (STEPS - 1)


def test_a_terminal_keeps_keras_bar(tmp_path, monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    fit(tmp_path, callbacks=[CheckpointIntervalProgbar()])
    out = terminal.getvalue()
    monkeypatch.undo()
    assert "\x08" in out or "\r" in out  # Keras redraws its bar
    assert f"Steps 1-{STEPS} of {EPOCHS * STEPS} (checkpoint 1 of {EPOCHS})" in out
    assert " done (step " not in out
