"""`finetune`'s test file chooses nothing: the validation file picks the epoch, the test file is only reported.

The validation file holds training sentences with their labels swapped (as in test_finetune_best_epoch.py):
its loss is lowest after the first epoch, so selection visibly happens. The test file is scored once, on the
chosen weights. Swapping only the test file's labels must change nothing but the test figures.
"""

import json

import keras
import numpy as np
import pytest

from keras_bert.cli import main as cli
from keras_bert.jobs.finetune import finetune
from task_helpers import classify_rows, save_tiny_init, swapped, write_rows

PLUMBING = "which set chooses is job plumbing, the same on every backend (selection itself runs on every backend in " \
           "test_finetune_best_epoch.py)"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("test_set")
    save_tiny_init(folder, num_layers=1, dropout=0.0)
    header, rows = classify_rows()
    write_rows(folder / "train.tsv", header, rows[:64])
    write_rows(folder / "validation.tsv", header, swapped(rows[:64]))
    write_rows(folder / "test.tsv", header, rows[200:260])
    write_rows(folder / "test_swapped.tsv", header, swapped(rows[200:260]))
    return folder


def run(files, out, test):
    return finetune("classify", files / "backbone.keras", files / "train.tsv", out, eval=files / "validation.tsv",
                    test=files / test, sequence_length=16, batch_size=16, epochs=3, learning_rate=3e-3, seed=1,
                    dropout=0.0, verbose=0, tensorboard=False)


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_the_test_file_chooses_nothing_and_is_reported_in_its_own_section(files, tmp_path):
    first, second = run(files, tmp_path / "a", "test.tsv"), run(files, tmp_path / "b", "test_swapped.tsv")
    sections = json.loads((tmp_path / "a" / "metrics.json").read_text())
    assert set(sections) == {"validation", "test", "selection"}
    assert sections == first["metrics"]
    # Selection happened (the last epoch is not the chosen one) and was made on the validation file.
    assert sections["selection"]["epoch"] < sections["selection"]["epochs_run"]
    assert sections["selection"]["chosen_on"] == "validation" and sections["selection"]["monitor"] == "val_loss"
    # Swapping the test labels changes no choice, no weight and no validation figure ...
    assert second["metrics"]["selection"] == first["metrics"]["selection"]
    assert second["metrics"]["validation"] == first["metrics"]["validation"]
    a = keras.saving.load_model(tmp_path / "a" / "model.keras").get_weights()
    b = keras.saving.load_model(tmp_path / "b" / "model.keras").get_weights()
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    # ... only the test figures, which are the chosen model's on the test file: a binary accuracy flips.
    assert second["metrics"]["test"]["accuracy"] == pytest.approx(1.0 - first["metrics"]["test"]["accuracy"])
    rows = [json.loads(line) for line in (tmp_path / "a" / "test_predictions.jsonl").read_text().splitlines()]
    assert len(rows) == 60
    assert np.mean([r["label"] == r["prediction"] for r in rows]) == pytest.approx(sections["test"]["accuracy"])
    assert json.loads((tmp_path / "a" / "finetune.json").read_text())["counts"]["test"]["examples"] == 60


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_the_printout_names_each_set_by_what_it_did(files, tmp_path, capsys):
    argv = ["finetune", "--task", "classify", "--init", str(files / "backbone.keras"), "--train",
            str(files / "train.tsv"), "--eval", str(files / "validation.tsv"), "--test", str(files / "test.tsv"),
            "--sequence-length", "16", "--batch-size", "16", "--epochs", "2", "--learning-rate", "3e-3",
            "--no-tensorboard", "--out", str(tmp_path / "run")]
    assert cli(argv) == 0
    printed = capsys.readouterr().out
    sections = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert f"validation (--eval, chose the epoch): accuracy {sections['validation']['accuracy']:.4f}" in printed
    assert f"test (--test, chose nothing): accuracy {sections['test']['accuracy']:.4f}" in printed
    assert cli([*argv, "--overwrite", "--quiet"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(line) == {"validation", "test", "best_epoch", "model"}


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_a_test_file_that_trains_or_chooses_is_refused_before_any_work(files, tmp_path):
    for flag in ("train", "validation"):
        with pytest.raises(ValueError, match=f"--test .* is also the --{'eval' if flag == 'validation' else flag} "
                                             "file: the test set must be one that neither trains nor chooses"):
            finetune("classify", files / "backbone.keras", files / "train.tsv", tmp_path / flag,
                     eval=files / "validation.tsv", test=files / f"{flag}.tsv", verbose=0)
        assert not (tmp_path / flag).exists()
    with pytest.raises(FileNotFoundError, match="--test: no such file"):
        finetune("classify", files / "backbone.keras", files / "train.tsv", tmp_path / "c", test=files / "nope.tsv",
                 verbose=0)
