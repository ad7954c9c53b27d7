"""Progress for training jobs: Keras' bar on a terminal, plain lines in a log.

`CheckpointIntervalProgbar` names pretraining's "epochs" as the steps they
cover; `PlainProgressLogger` replaces the bar when stdout is no terminal.
"""

import sys
import time

import keras
import numpy as np


class CheckpointIntervalProgbar(keras.callbacks.ProgbarLogger):
    """Keras' progress bar with each "epoch" named as the steps it covers.

    Pretraining runs `fit` with one "epoch" per checkpoint interval over a
    stream that never ends, so Keras' "Epoch 1/10 ... 10/10" read as ten passes
    over the corpus. This prints "Steps 1-20 of 200 (checkpoint 1 of 10)"
    instead; the bar itself is Keras' (one tick per step of the interval).
    Given among `fit`'s callbacks, it replaces Keras' default progress bar.
    """

    def on_epoch_begin(self, epoch, logs=None):
        self._reset_progbar()
        self._maybe_init_progbar()
        if self.verbose:
            steps = self.target
            first, last = epoch * steps + 1, (epoch + 1) * steps
            print(f"Steps {first}-{last} of {self.epochs * steps} (checkpoint {epoch + 1} of {self.epochs})", flush=True)


def interactive(stream=None):
    """Whether `stream` (default: `sys.stdout`) is a terminal, where a redrawn progress bar reads well."""
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def _duration(seconds):
    seconds = int(round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{seconds:02d}s" if minutes else f"{seconds}s"


def _metrics(logs):
    parts = []
    for name, value in (logs or {}).items():
        try:
            parts.append(f"{name} {float(np.asarray(keras.ops.convert_to_numpy(value))):.4g}")
        except (TypeError, ValueError):  # a metric that is no scalar
            continue
    return " ".join(parts)


class PlainProgressLogger(keras.callbacks.Callback):
    """Progress as plain lines for logs: one every `interval` seconds and one per epoch, no control codes.

    Keras' progress bar redraws itself with "\\r" and backspaces, which a
    terminal shows as one moving line but a log file (CI, `nohup`, captured
    notebook output) keeps as every step's bar run together on one line. This
    callback prints instead, e.g.

        step 120/400 (30%) loss 0.512 accuracy 0.81 - 3.1 steps/s, ETA 1m29s
        epoch 1/3 done (step 133/400): loss 0.498 ... val_loss 0.45 - 43s

    Steps count over the whole run (`epochs * steps`), so a resumed run goes
    on from where it was. Speed and ETA leave out the first step (tracing and compiling).
    `JobRunner.fit` uses it instead of Keras' bar when stdout is not a terminal.

    Args:
        interval: seconds between two step lines (an epoch's last step always gets its epoch line).
        epoch_name: what an epoch is called ("checkpoint" for pretraining, whose epochs are checkpoint intervals).
        stream: where lines go; default `sys.stdout` at the time of writing.
        clock: seconds, monotonic (tests pass a fake one).
    """

    def __init__(self, interval=5.0, epoch_name="epoch", stream=None, clock=time.monotonic):
        super().__init__()
        if not isinstance(interval, (int, float)) or interval < 0:
            raise ValueError(f"`interval` must be a number of seconds >= 0. Received: interval={interval!r}")
        self.interval = interval
        self.epoch_name = epoch_name
        self.stream = stream
        self.clock = clock

    def _print(self, line):
        print(line, file=self.stream if self.stream is not None else sys.stdout, flush=True)

    def on_train_begin(self, logs=None):
        self._steps = (self.params or {}).get("steps")
        self._epochs = (self.params or {}).get("epochs")
        self._first = None  # (step, time) at the end of the first step run now
        self._last_line = self.clock()

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        self._epoch_started = self.clock()

    def _step(self, batch):
        return self._epoch * self._steps + batch + 1 if self._steps else batch + 1

    def _speed(self, step, now):
        """Steps per second since the first step run now (None until there are two)."""
        if self._first is None or step <= self._first[0] or now <= self._first[1]:
            return None
        return (step - self._first[0]) / (now - self._first[1])

    def on_train_batch_end(self, batch, logs=None):
        now, step = self.clock(), self._step(batch)
        if self._first is None:
            self._first = (step, now)
        if now - self._last_line < self.interval or (self._steps and batch + 1 == self._steps):
            return
        self._last_line = now
        total = self._steps * self._epochs if self._steps and self._epochs else None
        line = f"step {step}/{total} ({100 * step // total}%)" if total else f"step {step}"
        line += f" {_metrics(logs)}".rstrip()
        speed = self._speed(step, now)
        if speed:
            line += f" - {speed:.3g} steps/s"
            if total:
                line += f", ETA {_duration((total - step) / speed)}"
        self._print(line)

    def on_epoch_end(self, epoch, logs=None):
        now = self.clock()
        self._last_line = now
        step = (epoch + 1) * self._steps if self._steps else None
        total = self._steps * self._epochs if self._steps and self._epochs else None
        where = f" (step {step}/{total})" if step and total else ""
        self._print(f"{self.epoch_name} {epoch + 1}/{self._epochs} done{where}: {_metrics(logs)} - "
                    f"{_duration(now - self._epoch_started)}")
