"""Distributed fine-tuning on CPU devices gives the same losses and held-out figures as one device.

The fine-tuning counterpart of test_distribution.py: each device layout runs in
its own process, shared with the pretraining and shard tests (conftest.py;
the runs are finetune_runs.py's), the local ones through `keras-bert
finetune --strategy ...`. The held-out file has 10 texts, which 4 devices
cannot split evenly: its one batch is replicated (`_UnevenBatchesReplicated`).
Numbers are compared within one backend.
"""

import keras
import numpy as np
import pytest

from keras_bert.cli import main as cli
from scenario_processes import ONE_PROCESS


def assert_same_run(actual, expected, label):
    """Per-step training losses and per-epoch validation losses within 1e-4; the same validation metrics and epoch."""
    for key in ("loss", "val_loss"):
        delta = np.max(np.abs(np.array(actual[key]) - np.array(expected[key])))
        print(f"{label}: {key} {actual[key]} vs one device {expected[key]}: max |Δ| = {delta:.2g}")
        assert len(actual[key]) == len(expected[key]) == 3
        np.testing.assert_allclose(actual[key], expected[key], atol=1e-4, rtol=0)
    assert actual["metrics"]["validation"] == pytest.approx(expected["metrics"]["validation"], abs=1e-6)
    assert actual["metrics"]["selection"]["epoch"] == expected["metrics"]["selection"]["epoch"]


@pytest.mark.only_backend("jax", reason=f"keras.distribution runs on JAX; {ONE_PROCESS}")
def test_jax_data_and_model_parallel_finetuning_match_one_device(jax_local):
    result = jax_local["finetune"]
    assert result["devices"] == 4
    assert_same_run(result["data-parallel"], result["single"], "data-parallel, 4 devices (CLI)")
    assert_same_run(result["model-parallel"], result["single"], "model-parallel, --mesh 2x2 (CLI)")
    for name, replicas, mesh in (("data-parallel", 4, None), ("model-parallel", 2, [2, 2])):
        job = result[name]["job"]
        assert (job["strategy"], job["mesh_shape"], job["data_parallel_size"]) == (name, mesh, replicas)


@pytest.mark.only_backend("tensorflow", reason=f"tf.distribute needs TensorFlow; {ONE_PROCESS}")
def test_mirrored_finetuning_matches_one_device(tf_runs):
    result = tf_runs["local"]["finetune"]
    assert result["mirrored"]["job"]["data_parallel_size"] == 2
    assert "must split evenly over the 2 data-parallel replicas. Received: a training batch of 15" in result["uneven"]
    assert_same_run(result["mirrored"], result["single"], "mirrored, 2 replicas (CLI)")


@pytest.mark.only_backend("tensorflow", reason="MultiWorkerMirroredStrategy is tf.distribute's; two processes")
def test_two_worker_finetuning_matches_one_device_and_only_the_chief_writes(tf_runs):
    chief, other = (worker["finetune"] for worker in tf_runs["workers"])
    assert chief["replicas"] == other["replicas"] == 2
    assert (chief["chief"], other["chief"]) == (True, False)
    assert_same_run(chief["multi-worker"], tf_runs["local"]["finetune"]["single"], "multi-worker, 2 processes")
    for name in ("model.keras", "vocab.txt", "labels.json", "metrics.json", "finetune.json", "history.csv",
                 "checkpoints/checkpoint.json", "checkpoints/best.json", "checkpoints/best.weights.h5"):
        assert name in chief["files"], name
    assert other["files"] == [] and not (tf_runs["workers_out"] / "finetune" / "worker1").exists()


def test_cli_strategy_on_the_wrong_backend_says_what_runs(finetune_data, tmp_path, capsys):
    backend = keras.backend.backend()
    wanted = {"torch": "data-parallel", "tensorflow": "data-parallel", "jax": "mirrored"}[backend]
    expected = {
        "torch": "on the torch backend keras_bert trains on one device",
        "tensorflow": "keras_bert supports on the JAX backend (current backend: tensorflow)",
        "jax": "needs KERAS_BACKEND=tensorflow (current backend: jax)",
    }[backend]
    arguments = ["finetune", "--task", "classify", "--init", str(finetune_data / "backbone.keras"), "--train",
                 str(finetune_data / "train.tsv"), "--sequence-length", "16", "--out", str(tmp_path / "unused")]
    assert cli([*arguments, "--strategy", wanted]) == 2
    assert expected in capsys.readouterr().err
    if backend == "torch":  # every strategy, tf.distribute ones included
        assert cli([*arguments, "--strategy", "mirrored"]) == 2
        assert "torch backend keras_bert trains on one device" in capsys.readouterr().err
    # Refused before any training or writing.
    assert not (tmp_path / "unused").exists()


@pytest.mark.only_backend("jax", reason="the mesh is checked against the devices by keras.distribution, which runs on JAX")
def test_cli_mesh_that_does_not_fit_the_devices_is_refused(finetune_data, tmp_path, capsys):
    arguments = ["finetune", "--task", "classify", "--init", str(finetune_data / "backbone.keras"), "--train",
                 str(finetune_data / "train.tsv"), "--out", str(tmp_path / "unused")]
    # One device in this process: a 2x2 mesh cannot be built from it.
    assert cli([*arguments, "--strategy", "model-parallel", "--mesh", "2x2"]) == 2
    assert "data * model = 1 devices. Received: (2, 2)" in capsys.readouterr().err
    assert not (tmp_path / "unused").exists()
