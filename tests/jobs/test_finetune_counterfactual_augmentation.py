"""`finetune --counterfactual-augmentation` (issue #45 item 5): the training set gains the swapped copy of each
training text that holds a term, label unchanged, and the validation and test sets stay as their files are;
the run records the option and the copies (finetune.json, metrics.json). Wrong uses are refused before any
model loads."""

import json

import keras
import pytest

from harness import tiny_backbone
from keras_bert.cli.main import main
from keras_bert.jobs import finetune_handlers
from keras_bert.jobs.finetune import finetune
from task_helpers import FIXTURES

# Every word is a wordpiece of the fixtures' vocabulary; the names are paired in PAIRS.
TRAIN = ["anna was superb and lovely .", "the film was dull .", "ben met carla in paris .", "a weak plot .",
         "the cast was great .", "ivan was clumsy ."]
LABELS = ["positive", "negative", "positive", "negative", "positive", "negative"]
# The copies the training set must gain, swapped by hand, in the order of their originals.
COPIES = [("ben was superb and lovely .", "positive"), ("anna met ivan in paris .", "positive"),
          ("carla was clumsy .", "negative")]
HELD_OUT = ["anna was good .", "the film was boring .", "ben was lovely .", "a dull ending ."]
PLUMBING = "which examples reach the features is job plumbing, the same on every backend (heads train elsewhere)"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("augmentation")
    keras.utils.set_random_seed(0)
    tiny_backbone(max_sequence_length=16, num_layers=1).save(folder / "backbone.keras")
    (folder / "vocab.txt").write_bytes((FIXTURES / "vocab.txt").read_bytes())
    for name, texts in (("train.tsv", TRAIN), ("dev.tsv", HELD_OUT), ("test.tsv", HELD_OUT[::-1])):
        rows = "".join(f"{t}\t{y}\n" for t, y in zip(texts, LABELS))
        (folder / name).write_text("sentence\tlabel\n" + rows, encoding="utf-8")
    (folder / "pairs.tsv").write_text("anna\tben\ncarla\tivan\n", encoding="utf-8")
    return folder


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_only_the_training_set_gains_the_swapped_copies(files, tmp_path, monkeypatch):
    seen = []
    features = finetune_handlers.ClassifierJob.features

    def recording(self, examples, tokenizer, training):
        seen.append((training, [(e.text, e.label) for e in examples]))
        return features(self, examples, tokenizer, training)

    monkeypatch.setattr(finetune_handlers.ClassifierJob, "features", recording)
    code = main(["finetune", "--task", "classify", "--init", str(files / "backbone.keras"), "--train",
                 str(files / "train.tsv"), "--eval", str(files / "dev.tsv"), "--test", str(files / "test.tsv"),
                 "--sequence-length", "16", "--batch-size", "3", "--epochs", "1", "--no-tensorboard", "--quiet",
                 "--counterfactual-augmentation", str(files / "pairs.tsv"), "--out", str(tmp_path / "run")])
    assert code == 0
    (_, train), (_, validation), (_, test) = seen
    assert [training for training, _ in seen] == [True, False, False]
    assert train == list(zip(TRAIN, LABELS)) + COPIES
    assert validation == list(zip(HELD_OUT, LABELS)) and test == list(zip(HELD_OUT[::-1], LABELS))
    record = {"pairs": str(files / "pairs.tsv"), "num_pairs": 2, "examples": 6, "copies_added": 3,
              "training_examples": 9}
    run = json.loads((tmp_path / "run" / "finetune.json").read_text(encoding="utf-8"))
    assert run["job"]["counterfactual_augmentation"] == str(files / "pairs.tsv")
    assert run["counts"]["train"]["examples"] == 9 and run["counts"]["train"]["counterfactual_copies"] == 3
    assert run["counts"]["eval"]["examples"] == 4 and run["counts"]["test"]["examples"] == 4
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["counterfactual_augmentation"] == record and "validation" in metrics and "test" in metrics


@pytest.mark.only_backend("torch", reason=PLUMBING)
def test_wrong_uses_are_refused_before_any_model_loads(files, tmp_path, capsys):
    with pytest.raises(ValueError, match="--counterfactual-augmentation swaps terms in the texts of classify"):
        finetune("ner", "no-such-model/", str(files / "train.tsv"), str(tmp_path / "ner"),
                 counterfactual_augmentation="builtin")
    (files / "bad_pairs.tsv").write_text("anna ben\n", encoding="utf-8")
    with pytest.raises(ValueError, match="bad_pairs.tsv:1: expected term<TAB>term"):
        finetune("classify", "no-such-model/", str(files / "train.tsv"), str(tmp_path / "bad"),
                 counterfactual_augmentation=str(files / "bad_pairs.tsv"))
    code = main(["finetune", "--task", "classify", "--init", str(files / "backbone.keras"), "--train",
                 str(files / "train.tsv"), "--counterfactual-augmentation", str(files / "missing.tsv"), "--out",
                 str(tmp_path / "missing")])
    assert code == 2 and "--counterfactual-augmentation: no such file" in capsys.readouterr().err
    assert not (tmp_path / "ner").exists() and not (tmp_path / "bad").exists() and not (tmp_path / "missing").exists()
