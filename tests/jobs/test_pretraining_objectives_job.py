"""`keras-bert pretrain` with the objectives that are data options: span / n-gram masking, SOP, MLM only.

The MLM-only run (RoBERTa's full sentences, span masking, packed) trains the
one new model, `BertPretrainer(sentence_head=False)`, so it runs on every
backend; sentence-order prediction and n-gram masking change only the tf.data
batches of the NSP model every backend trains in test_pretraining_job.py, so
their run is checked once. tests/robustness/test_interrupted_training.py
kills and resumes an MLM-only span run.
"""

import json

import keras
import numpy as np
import pytest

from harness import REPO_ROOT, SHARED_DATA, run_saving_test
from keras_bert.cli import main

VOCAB = REPO_ROOT / "tests" / "fixtures" / "tasks" / "vocab.txt"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    for name, source, lines in (("train.txt", "persuasion.txt", (200, 700)), ("heldout.txt", "emma.txt", (300, 500))):
        text = (SHARED_DATA / "austen" / source).read_text(encoding="utf-8").splitlines()[lines[0] : lines[1]]
        (folder / name).write_text("\n".join(text), encoding="utf-8")
    return folder


def argv(corpus, out, *extra):
    return [
        "pretrain", "--corpus", str(corpus / "train.txt"), "--eval-corpus", str(corpus / "heldout.txt"),
        "--eval-batches", "2", "--vocab", str(VOCAB), "--size", "tiny", "--sequence-length", "32",
        "--batch-size", "8", "--steps", "2", "--checkpoint-every", "2", "--learning-rate", "1e-3", "--seed", "5",
        "--no-tensorboard", "--out", str(out), *extra,
    ]


def packed_batch(slots):
    """One packed row of two examples, `[CLS] a [SEP] b [SEP]` and `[CLS] c [SEP]`, with `slots` NSP slots (0: none)."""
    batch = {
        "token_ids": [[2, 7, 8, 3, 9, 3, 2, 10, 3, 0]], "segment_ids": [[0, 0, 0, 0, 1, 1, 0, 0, 0, 0]],
        "padding_mask": [[1] * 9 + [0]], "sequence_ids": [[1] * 6 + [2] * 3 + [0]],
        "position_ids": [[0, 1, 2, 3, 4, 5, 0, 1, 2, 0]], "mask_positions": [[1, 4, 7]],
    }
    if slots:
        batch["nsp_positions"] = [[0, 6, 0][:slots]]
    return {k: np.array(v, "int32") for k, v in batch.items()}


@pytest.mark.only_backend("torch", reason="span masking and packing change only tf.data batches of the MLM model; each "
                          "backend's pretraining run is test_pretraining_job.py's")
def test_mlm_only_full_sentences_with_span_masking_packed(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    status = main(argv(corpus, out, "--sentence-task", "none", "--masking", "span", "--pack-sequences"))
    assert status == 0
    assert "held-out MLM accuracy" in capsys.readouterr().out
    config = json.loads((out / "config.json").read_text())
    assert config["job"]["sentence_task"] == "none" and config["job"]["masking"] == "span"
    assert list(config["heldout"]) == ["mlm_accuracy"] and 0.0 <= config["heldout"]["mlm_accuracy"] <= 1.0
    assert "val_nsp_accuracy_majority_label" not in config["baselines"]
    model = keras.saving.load_model(str(out / "model.keras"))
    assert model.next_sentence_head is None and model.backbone.packed_inputs
    run_saving_test(model, packed_batch(0), tmp_path)


@pytest.mark.only_backend("torch", reason="SOP and n-gram masking change only tf.data batches of the NSP model")
def test_ngram_masking_with_sentence_order_packed_static(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    status = main(argv(corpus, out, "--masking", "ngram", "--max-ngram", "2", "--sentence-task", "sop",
                       "--pack-sequences", "--mode", "static", "--dupe-factor", "1"))
    assert status == 0
    printed = capsys.readouterr().out
    assert "held-out SOP accuracy" in printed
    config = json.loads((out / "config.json").read_text())
    assert config["job"]["sentence_task"] == "sop" and config["job"]["masking"] == "ngram"
    assert config["job"]["max_ngram"] == 2
    assert set(config["heldout"]) == {"mlm_accuracy", "sop_accuracy"}
    assert 0.0 <= config["heldout"]["sop_accuracy"] <= 1.0
    model = keras.saving.load_model(str(out / "model.keras"))
    assert model.sentence_head and model.backbone.packed_inputs
    run_saving_test(model, packed_batch(3), tmp_path)


@pytest.mark.only_backend("torch", reason="argument checks before any training; backend-independent")
@pytest.mark.parametrize("flag, value", [("--span-p", "0"), ("--max-span-length", "0"), ("--max-ngram", "-1")])
def test_bad_objective_options_name_the_value_and_write_nothing(corpus, tmp_path, capsys, flag, value):
    status = main(argv(corpus, tmp_path / "run", "--masking", "span", flag, value))
    assert status != 0
    assert f"received {float(value) if flag == '--span-p' else int(value)!r}" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.only_backend("torch", reason="the options reach BertBackbone's constructor, tested on every backend in "
                          "tests/models/test_bert_backbone.py; the job's wiring is backend-independent")
def test_the_small_compute_recipe_options_reach_the_model_and_the_record(corpus, tmp_path, capsys):
    out = tmp_path / "run"
    status = main(argv(corpus, out, "--sentence-task", "none", "--normalize-first", "--gated-feed-forward",
                       "--no-biases", "--masking-rate", "0.3", "--dropout", "0"))
    assert status == 0, capsys.readouterr().err
    config = json.loads((out / "config.json").read_text())
    assert config["job"]["encoder"] == {"normalize_first": True, "gated_feed_forward": True, "attention_bias": False,
                                        "feed_forward_bias": False, "layer_norm_bias": False}
    assert config["job"]["masking_rate"] == 0.3 and config["job"]["dropout"] == 0.0
    backbone = keras.saving.load_model(str(out / "model.keras")).backbone
    assert backbone.normalize_first and backbone.gated_feed_forward and not backbone.layer_norm_bias
    # A resumed run must have the same encoder: another one is refused by name.
    status = main(argv(corpus, out, "--sentence-task", "none", "--normalize-first", "--masking-rate", "0.3",
                       "--dropout", "0", "--resume"))
    assert status != 0 and "encoder" in capsys.readouterr().err


@pytest.mark.only_backend("torch", reason="argument checks before any training; backend-independent")
def test_encoder_options_are_refused_where_the_family_fixes_its_encoder(corpus, tmp_path, capsys):
    status = main(argv(corpus, tmp_path / "run", "--family", "modernbert", "--gated-feed-forward"))
    assert status != 0
    assert "family='modernbert'" in capsys.readouterr().err and not (tmp_path / "run" / "model.keras").exists()
    with pytest.raises(SystemExit):  # refused while parsing
        main(argv(corpus, tmp_path / "run2", "--masking-rate", "1.5"))
    assert "Received: masking_rate=1.5" in capsys.readouterr().err and not (tmp_path / "run2").exists()
