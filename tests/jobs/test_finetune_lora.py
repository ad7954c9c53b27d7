"""`keras-bert finetune --lora-rank`: the adapter file, the merged model.keras, the record, resume, bad ranks.

The held-out file holds the training sentences with their labels swapped (as in
test_finetune_best_epoch.py), so the best epoch (1) differs from the last and
both the best-epoch selection and the resumed run have adapters to get right.
"""

import json

import keras
import numpy as np
import pytest

from harness import random_bert_inputs
from keras_bert.jobs.finetune import finetune
from keras_bert.models.lora import load_adapter, lora_info
from resume_helpers import Interrupted, interrupted_at_checkpoint_commit
from task_helpers import classify_rows, save_tiny_init, swapped, write_rows

EXAMPLES, BATCH, RANK = 64, 16, 2  # 4 steps per epoch

# The adapter file, the merged model, the record and resume are the job's; the LoRA model itself (its layers,
# training, merging and saving) runs on every backend in tests/models/test_lora.py.
pytestmark = pytest.mark.only_backend("torch", reason="the LoRA job's files, records and resume are the same Python on "
                                      "every backend; the LoRA model is tested on each in tests/models/test_lora.py")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lora")
    header, rows = classify_rows()
    write_rows(folder / "train.tsv", header, rows[:EXAMPLES])
    write_rows(folder / "flipped.tsv", header, swapped(rows[:EXAMPLES]))
    save_tiny_init(folder, num_layers=1)
    return folder


def run(files, out, **overrides):
    options = dict(
        eval=files / "flipped.tsv", sequence_length=16, batch_size=BATCH, epochs=2, learning_rate=3e-2, seed=5,
        verbose=0, tensorboard=False, dropout=0.0, lora_rank=RANK, lora_alpha=8,
    )
    return finetune("classify", files / "backbone.keras", files / "train.tsv", out, **{**options, **overrides})


def outputs(model):
    return keras.ops.convert_to_numpy(model(random_bert_inputs(4, 16, 147, seed=3), training=False))


def adapter_arrays(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


@pytest.fixture(scope="module")
def straight(files, tmp_path_factory):
    out = tmp_path_factory.mktemp("straight")
    return run(files, out), out


def test_lora_run_saves_the_adapter_and_the_merged_model(files, straight):
    summary, out = straight
    assert summary["best_epoch"]["epoch"] == 1 and summary["best_epoch"]["epochs_run"] == 2
    record = json.loads((out / "finetune.json").read_text())
    assert record["job"]["lora_rank"] == RANK and record["job"]["lora_alpha"] == 8
    lora = record["lora"]
    assert lora["rank"] == RANK and lora["adapter_file"] == "adapter.npz"
    assert 0 < lora["trainable"] < lora["total"] and lora["share"] == pytest.approx(lora["trainable"] / lora["total"])

    merged = keras.saving.load_model(out / "model.keras")
    assert lora_info(merged) is None  # plain kernels: exports and loads as any fine-tuned model
    # The adapter on the untouched base gives model.keras's outputs: both are the best epoch's (1).
    base = keras.saving.load_model(out / "model.keras")
    backbone = keras.saving.load_model(files / "backbone.keras")
    for variable, value in zip(base.backbone.weights, backbone.weights, strict=True):
        variable.assign(value)
    assert np.max(np.abs(outputs(base) - outputs(merged))) > 1e-4  # the adapters did change the model
    load_adapter(base, out / "adapter.npz")
    np.testing.assert_allclose(outputs(base), outputs(merged), atol=1e-6)
    metrics = json.loads((out / "metrics.json").read_text())["validation"]
    assert metrics["accuracy"] == pytest.approx(summary["history"]["val_accuracy"][0], abs=1e-6)


def test_an_interrupted_lora_run_resumes_to_the_same_adapters(files, straight, tmp_path, monkeypatch):
    with interrupted_at_checkpoint_commit(monkeypatch, commit=2), pytest.raises(Interrupted):
        run(files, tmp_path)
    with pytest.raises(ValueError, match="lora_rank: checkpoint 2 vs now 3"):
        run(files, tmp_path, resume=True, lora_rank=3)
    summary = run(files, tmp_path, resume=True)
    assert summary["resumed_from_step"] == 4
    expected, out = straight
    for name in ("adapter.npz", "checkpoints/best.adapter.npz"):
        want, got = adapter_arrays(out / name), adapter_arrays(tmp_path / name)
        assert want.keys() == got.keys()
        for key in want:
            if key != "__lora__":
                np.testing.assert_array_equal(got[key], want[key], err_msg=f"{name}: {key}")
    np.testing.assert_array_equal(outputs(keras.saving.load_model(tmp_path / "model.keras")),
                                  outputs(keras.saving.load_model(out / "model.keras")))


def test_bad_lora_arguments_are_refused_before_training(files, tmp_path):
    with pytest.raises(ValueError, match="positive int. Received: lora_rank=0"):
        run(files, tmp_path / "a", lora_rank=0)
    with pytest.raises(ValueError, match="cannot go with --freeze-backbone"):
        run(files, tmp_path / "b", freeze_backbone=True)
    with pytest.raises(ValueError, match="--lora-alpha needs --lora-rank"):
        run(files, tmp_path / "c", lora_rank=None, lora_alpha=4)
    # tiny_backbone: hidden 16, 2 heads: the fused QKV kernel's head_dim 8 is the largest rank.
    with pytest.raises(ValueError, match=r"rank 9 is larger .* at most 8"):
        run(files, tmp_path / "d", lora_rank=9)


def test_cli_lora_flags_reach_the_job(files, tmp_path, capsys):
    from keras_bert.cli.main import main  # the CLI's argparse lives in keras_bert.cli

    out = tmp_path / "cli"
    status = main(["finetune", "--task", "classify", "--init", str(files / "backbone.keras"), "--train",
                   str(files / "train.tsv"), "--sequence-length", "16", "--batch-size", "16", "--epochs", "1",
                   "--lora-rank", "2", "--lora-alpha", "4", "--no-tensorboard", "--out", str(out)])
    assert status in (0, None)
    printed = capsys.readouterr().out
    assert "LoRA rank 2 (alpha 4.0) on qkv, attention_output, intermediate, feedforward_output: " in printed
    assert "parameters train (" in printed
    assert json.loads((out / "finetune.json").read_text())["lora"]["alpha"] == 4.0
    assert (out / "adapter.npz").is_file()
