"""Distributed training on CPU devices gives the same losses as one device.

Each scenario runs in its own process (device counts are fixed at start-up);
see distribution_worker.py. Numbers are compared within one backend: Keras'
optimizers differ slightly across backends (TensorFlow updates embedding rows
lazily), which is not what these tests are about.
"""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

WORKER = Path(__file__).with_name("distribution_worker.py")
ONE_PROCESS = "starts its own process with forced CPU devices; runs once, in this backend's pass"


def run_worker(*args, env=None, timeout=300):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", **(env or {})}
    return subprocess.Popen(
        [sys.executable, str(WORKER), *map(str, args)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def result_of(process, timeout=300):
    out, err = process.communicate(timeout=timeout)
    lines = [line for line in out.splitlines() if line.startswith("RESULT ")]
    assert process.returncode == 0 and lines, err[-3000:]
    return json.loads(lines[-1][len("RESULT ") :])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.only_backend("jax", reason=f"keras.distribution runs on JAX; {ONE_PROCESS}")
def test_jax_data_and_model_parallel_match_one_device():
    result = result_of(run_worker("jax-local"))
    assert result["devices"] == 4
    np.testing.assert_allclose(result["data-parallel"], result["single"], atol=1e-4)
    np.testing.assert_allclose(result["model-parallel"], result["single"], atol=1e-4)
    shardings = result["model-parallel-shardings"]
    layer = "transformer_layer_0"
    assert shardings["embeddings/token_embedding/embeddings"] == ["model", None]
    assert shardings[f"{layer}/self_attention/qkv/kernel"] == [None, None, "model", None]
    assert shardings[f"{layer}/self_attention/qkv/bias"] == [None, "model", None]
    assert shardings[f"{layer}/self_attention/output/kernel"] == ["model", None, None]
    assert shardings[f"{layer}/intermediate_dense/kernel"] == [None, "model"]
    assert shardings[f"{layer}/intermediate_dense/bias"] == ["model"]
    assert shardings[f"{layer}/output_dense/kernel"] == ["model", None]
    for path in (f"{layer}/attention_layer_norm/gamma", "embeddings/position_embeddings", "pooler/dense/kernel"):
        assert all(axis is None for axis in shardings[path]), path


@pytest.mark.only_backend("jax", reason=f"jax.distributed is JAX's; {ONE_PROCESS}")
def test_two_process_jax_distributed_matches_one_process():
    env = {"COORDINATOR": f"127.0.0.1:{free_port()}"}
    processes = [run_worker("jax-distributed", i, env=env) for i in range(2)]
    results = [result_of(p) for p in processes]
    assert [r["chief"] for r in results] == [True, False]
    for result in results:
        assert result["devices"] == 2
        np.testing.assert_allclose(result["jax-distributed"], result["single"], atol=1e-4)


@pytest.mark.only_backend("tensorflow", reason=f"tf.distribute needs TensorFlow; {ONE_PROCESS}")
def test_mirrored_strategy_matches_one_device():
    result = result_of(run_worker("tf-local"))
    assert result["replicas"] == 2
    np.testing.assert_allclose(result["mirrored"], result["single"], atol=1e-4)


@pytest.mark.only_backend("torch", reason="states what the torch backend does")
def test_torch_backend_refuses_distribution():
    from keras_bert.distribution import create_strategy

    for name in ("data-parallel", "model-parallel", "mirrored"):
        with pytest.raises(ValueError, match="current backend: torch"):
            create_strategy(name)
    assert create_strategy("none") is None


def test_unknown_strategy_and_bad_mesh_are_refused():
    from keras_bert.distribution import create_strategy

    with pytest.raises(ValueError, match="Unknown strategy 'horovod'"):
        create_strategy("horovod")
    if keras.backend.backend() == "jax":
        with pytest.raises(ValueError, match=r"data \* model = 1 devices"):
            create_strategy("model-parallel", mesh_shape=(2, 2))


def test_multi_worker_needs_tf_config(monkeypatch):
    from keras_bert.distribution import create_strategy

    monkeypatch.delenv("TF_CONFIG", raising=False)
    expected = "TF_CONFIG" if keras.backend.backend() == "tensorflow" else "needs KERAS_BACKEND=tensorflow"
    with pytest.raises(ValueError, match=expected):
        create_strategy("multi-worker")


def test_is_chief_reads_tf_config(monkeypatch):
    from keras_bert.distribution import is_chief

    cluster = {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 0}}))
    assert is_chief()
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 1}}))
    assert not is_chief()
