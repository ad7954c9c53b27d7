"""The pretraining job: runs end to end and writes its files.

That an interrupted run resumes to the weights of an uninterrupted one is
tests/robustness/test_interrupted_training.py's: the same job (tiny,
whole-word masking, 6 steps, checkpoints every 2, stopped at step 5), there
SIGKILLed in a child process rather than interrupted by an exception here.
"""

import json
import warnings

import keras
import pytest

from keras_bert.jobs.pretrain import pretrain


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


def test_rejects_checkpoint_interval_not_dividing_steps(small_corpus, tmp_path):
    with pytest.raises(ValueError, match="checkpoint_every=4, steps=6"):
        run(small_corpus, tmp_path, checkpoint_every=4)


def test_progress_counts_steps_not_passes_and_keras_does_not_warn_about_shuffle(small_corpus, tmp_path, capsys):
    """Keras printed "Epoch 1/3 ... 3/3" (read as three passes over the corpus) and warned about shuffle=True.

    Captured output is no terminal: the progress is plain lines (tests/jobs/test_progress.py has the terminal's bar).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run(small_corpus, tmp_path, verbose=1)
    out = capsys.readouterr().out
    ends = [line.split(":")[0] for line in out.splitlines() if line.startswith("checkpoint ")]
    assert ends == ["checkpoint 1/3 done (step 2/6)", "checkpoint 2/3 done (step 4/6)", "checkpoint 3/3 done (step 6/6)"]
    assert "Epoch 1/3" not in out and "\r" not in out and "\x08" not in out
    assert not [w for w in caught if "shuffle" in str(w.message)], [str(w.message) for w in caught]
