"""`keras-bert finetune`'s evaluation report: the majority-class baseline, which F1 it is, the best epoch; --help.

The baseline is recomputed here from the files: the most frequent label of
the training file, and the share of held-out rows that carry it.
"""

import collections
import json

import pytest

from keras_bert.cli import main as cli
from task_helpers import classify_rows, save_tiny_init, write_rows

# Run in torch's pass: the shortest, and two tiny fine-tuning runs there compile nothing (18 s on JAX).
PLUMBING = "the report is job plumbing, the same on every backend (the heads train on every backend elsewhere)"


def labels_of(path):
    return [line.split("\t")[-1] for line in path.read_text(encoding="utf-8").splitlines()[1:]]


def majority_baseline(train, dev):
    """(label, held-out share) of the training file's most frequent label."""
    (label, count), (_, second) = collections.Counter(labels_of(train)).most_common(2)
    assert count > second, "a tie would make the majority class a matter of tie-breaking"
    held_out = labels_of(dev)
    return label, held_out.count(label) / len(held_out)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reports")
    save_tiny_init(folder, num_layers=1)
    header, rows = classify_rows()
    write_rows(folder / "train.tsv", header, rows[:48])
    write_rows(folder / "dev.tsv", header, rows[200:240])
    # Three classes: every third positive text becomes "mixed".
    relabel = [f"{r.split(chr(9))[0]}\tmixed" if i % 3 == 0 and r.endswith("positive") else r for i, r in enumerate(rows)]
    write_rows(folder / "train3.tsv", header, relabel[:48])
    write_rows(folder / "dev3.tsv", header, relabel[200:240])
    return folder


def argv(files, train, dev, out, *extra):
    return [
        "finetune", "--task", "classify", "--init", str(files / "backbone.keras"), "--train", str(files / train),
        "--eval", str(files / dev), "--sequence-length", "16", "--batch-size", "16", "--epochs", "2",
        "--learning-rate", "3e-3", "--no-tensorboard", "--out", str(out), *extra,
    ]


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_binary_report_gives_the_majority_baseline_and_the_f1_class(files, tmp_path, capsys):
    assert cli(argv(files, "train.tsv", "dev.tsv", tmp_path / "run")) == 0
    printed = capsys.readouterr().out
    label, share = majority_baseline(files / "train.tsv", files / "dev.tsv")
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())["validation"]
    assert metrics["majority_class"] == label and metrics["majority_class_accuracy"] == pytest.approx(share)
    assert metrics["f1_class"] == "positive"  # of negative/positive, the second
    assert f"validation (--eval, chose the epoch): accuracy {metrics['accuracy']:.4f} (majority-class baseline " \
           f"{share:.4f}: always '{label}', the training labels' most frequent)" in printed
    assert "test (" not in printed and "held-out" not in printed  # no --test: nothing is called so
    assert f"F1 of the positive class 'positive' {metrics['f1']:.4f}" in printed
    assert f"macro F1 (unweighted mean over the classes) {metrics['macro_f1']:.4f}" in printed
    best = json.loads((tmp_path / "run" / "finetune.json").read_text())["best_epoch"]
    assert f"best epoch {best['epoch']} by val_loss {best['value']:.4f}" in printed
    if best["epoch"] == 1:
        assert "(epoch 1, the best; the last epoch's weights are in checkpoints/ for --resume)" in printed


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_quiet_multi_class_line_has_the_baseline_and_no_single_class_f1(files, tmp_path, capsys):
    assert cli([*argv(files, "train3.tsv", "dev3.tsv", tmp_path / "run"), "--quiet"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert len(printed) == 1
    line = json.loads(printed[0])
    label, share = majority_baseline(files / "train3.tsv", files / "dev3.tsv")
    held_out = line["validation"]
    assert held_out["majority_class"] == label and held_out["majority_class_accuracy"] == pytest.approx(share, abs=1e-4)
    assert "f1" not in held_out and "f1_class" not in held_out and "macro_f1" in held_out
    assert json.loads((tmp_path / "run" / "labels.json").read_text()) == ["mixed", "negative", "positive"]
    assert line["best_epoch"]["monitor"] == "val_loss" and line["best_epoch"]["epochs_run"] == 2


def test_help_states_the_label_format_and_the_new_options(capsys):
    with pytest.raises(SystemExit):
        cli(["finetune", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "classify: a class name per row" in text and "with two, F1 is reported for the second" in text
    for option in ("--strategy", "--mesh", "--monitor", "--early-stopping-patience", "--keep-last-epoch",
                   "--no-tensorboard", "--test"):
        assert option in text, option
    # What each evaluation file does, said truthfully: the validation file chooses, the test file does not.
    assert "--eval EVAL validation file: scored every epoch, it chooses the epoch model.keras keeps" in text
    assert "--test TEST test file: evaluated once after training, on the weights model.keras holds; it chooses " \
           "nothing" in text


def test_early_stopping_without_a_held_out_file_is_one_line(files, tmp_path, capsys):
    arguments = [word for word in argv(files, "train.tsv", "dev.tsv", tmp_path / "run") if word != "--eval"]
    arguments.remove(str(files / "dev.tsv"))
    assert cli([*arguments, "--early-stopping-patience", "2"]) == 2
    assert "--early-stopping-patience watches a validation metric: it needs an --eval file" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
