"""Progress bars for pretraining, which counts steps, not passes over the data."""

import keras


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
