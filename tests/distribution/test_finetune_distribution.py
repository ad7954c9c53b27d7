"""Distributed fine-tuning on CPU devices gives the same losses and held-out figures as one device.

The fine-tuning counterpart of test_distribution.py: each scenario runs in its
own process (see finetune_worker.py), the local ones through `keras-bert
finetune --strategy ...`. The held-out file has 10 texts, which 4 devices
cannot split evenly: its one batch is replicated (`_UnevenBatchesReplicated`).
Numbers are compared within one backend.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

from harness import tiny_backbone
from keras_bert.cli import main as cli
from task_helpers import FIXTURES
from test_distribution import ONE_PROCESS, free_port, result_of

WORKER = Path(__file__).with_name("finetune_worker.py")


def run_worker(*args, env=None):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})}
    return subprocess.Popen(
        [sys.executable, str(WORKER), *map(str, args)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def assert_same_run(actual, expected, label):
    """Per-step training losses and per-epoch validation losses within 1e-4; the same validation metrics and epoch."""
    for key in ("loss", "val_loss"):
        delta = np.max(np.abs(np.array(actual[key]) - np.array(expected[key])))
        print(f"{label}: {key} {actual[key]} vs one device {expected[key]}: max |Δ| = {delta:.2g}")
        assert len(actual[key]) == len(expected[key]) == 3
        np.testing.assert_allclose(actual[key], expected[key], atol=1e-4, rtol=0)
    assert actual["metrics"]["validation"] == pytest.approx(expected["metrics"]["validation"], abs=1e-6)
    assert actual["metrics"]["selection"]["epoch"] == expected["metrics"]["selection"]["epoch"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A tiny backbone .keras with its vocabulary, 16 training texts (one batch) and 10 held-out ones."""
    folder = tmp_path_factory.mktemp("finetune_data")
    keras.utils.set_random_seed(0)
    tiny_backbone(max_sequence_length=16, num_layers=1).save(folder / "backbone.keras")
    (folder / "vocab.txt").write_bytes((FIXTURES / "vocab.txt").read_bytes())
    header, *rows = (FIXTURES / "classify_train.tsv").read_text(encoding="utf-8").splitlines()
    (folder / "train.tsv").write_text("\n".join([header, *rows[:16]]) + "\n", encoding="utf-8")
    (folder / "dev.tsv").write_text("\n".join([header, *rows[100:110]]) + "\n", encoding="utf-8")
    return folder


@pytest.mark.only_backend("jax", reason=f"keras.distribution runs on JAX; {ONE_PROCESS}")
def test_jax_data_and_model_parallel_finetuning_match_one_device(data, tmp_path):
    result = result_of(run_worker("jax-local", env={"DATA": str(data), "OUT": str(tmp_path)}))
    assert result["devices"] == 4
    assert_same_run(result["data-parallel"], result["single"], "data-parallel, 4 devices (CLI)")
    assert_same_run(result["model-parallel"], result["single"], "model-parallel, --mesh 2x2 (CLI)")
    for name, replicas, mesh in (("data-parallel", 4, None), ("model-parallel", 2, [2, 2])):
        job = result[name]["job"]
        assert (job["strategy"], job["mesh_shape"], job["data_parallel_size"]) == (name, mesh, replicas)


@pytest.fixture(scope="module")
def tf_runs(data, tmp_path_factory):
    """tf-local (one device, and mirrored over 2 logical CPUs) and the two MultiWorker processes, started together."""
    local_out, workers_out = tmp_path_factory.mktemp("tf-local"), tmp_path_factory.mktemp("multi-worker")
    addresses = [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]
    workers = []
    for index in range(2):
        config = {"cluster": {"worker": addresses}, "task": {"type": "worker", "index": index}}
        env = {"TF_CONFIG": json.dumps(config), "DATA": str(data), "OUT": str(workers_out)}
        workers.append(run_worker("multi-worker", index, env=env))
    local = run_worker("tf-local", env={"DATA": str(data), "OUT": str(local_out)})
    return {"local": result_of(local), "workers": [result_of(p) for p in workers], "workers_out": workers_out}


@pytest.mark.only_backend("tensorflow", reason=f"tf.distribute needs TensorFlow; {ONE_PROCESS}")
def test_mirrored_finetuning_matches_one_device(tf_runs):
    result = tf_runs["local"]
    assert result["mirrored"]["job"]["data_parallel_size"] == 2
    assert "must split evenly over the 2 data-parallel replicas. Received: a training batch of 15" in result["uneven"]
    assert_same_run(result["mirrored"], result["single"], "mirrored, 2 replicas (CLI)")


@pytest.mark.only_backend("tensorflow", reason="MultiWorkerMirroredStrategy is tf.distribute's; two processes")
def test_two_worker_finetuning_matches_one_device_and_only_the_chief_writes(tf_runs):
    chief, other = tf_runs["workers"]
    assert chief["replicas"] == other["replicas"] == 2
    assert (chief["chief"], other["chief"]) == (True, False)
    assert_same_run(chief["multi-worker"], tf_runs["local"]["single"], "multi-worker, 2 processes")
    for name in ("model.keras", "vocab.txt", "labels.json", "metrics.json", "finetune.json", "history.csv",
                 "checkpoints/checkpoint.json", "checkpoints/best.json", "checkpoints/best.weights.h5"):
        assert name in chief["files"], name
    assert other["files"] == [] and not (tf_runs["workers_out"] / "worker1").exists()


def test_cli_strategy_on_the_wrong_backend_says_what_runs(data, tmp_path, capsys):
    backend = keras.backend.backend()
    wanted = {"torch": "data-parallel", "tensorflow": "data-parallel", "jax": "mirrored"}[backend]
    expected = {
        "torch": "on the torch backend keras_bert trains on one device",
        "tensorflow": "keras_bert supports on the JAX backend (current backend: tensorflow)",
        "jax": "needs KERAS_BACKEND=tensorflow (current backend: jax)",
    }[backend]
    arguments = ["finetune", "--task", "classify", "--init", str(data / "backbone.keras"), "--train",
                 str(data / "train.tsv"), "--sequence-length", "16", "--out", str(tmp_path / "unused")]
    assert cli([*arguments, "--strategy", wanted]) == 2
    assert expected in capsys.readouterr().err
    if backend == "torch":  # every strategy, tf.distribute ones included
        assert cli([*arguments, "--strategy", "mirrored"]) == 2
        assert "torch backend keras_bert trains on one device" in capsys.readouterr().err
    # Refused before any training or writing.
    assert not (tmp_path / "unused").exists()


@pytest.mark.only_backend("jax", reason="the mesh is checked against the devices by keras.distribution, which runs on JAX")
def test_cli_mesh_that_does_not_fit_the_devices_is_refused(data, tmp_path, capsys):
    arguments = ["finetune", "--task", "classify", "--init", str(data / "backbone.keras"), "--train",
                 str(data / "train.tsv"), "--out", str(tmp_path / "unused")]
    # One device in this process: a 2x2 mesh cannot be built from it.
    assert cli([*arguments, "--strategy", "model-parallel", "--mesh", "2x2"]) == 2
    assert "data * model = 1 devices. Received: (2, 2)" in capsys.readouterr().err
    assert not (tmp_path / "unused").exists()
