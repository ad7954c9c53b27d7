"""Distributed pretraining on CPU devices gives the same losses as one device.

Each device layout runs in its own process (device counts are fixed at
start-up), shared with the fine-tuning and shard tests of this folder: see
conftest.py and distribution_worker.py. The local and multi-worker scenarios run the
pretraining job itself (`pretrain()` and `keras-bert pretrain`) on a small
corpus. Numbers are compared within one backend: Keras' optimizers differ
slightly across backends (TensorFlow updates embedding rows lazily), which is
not what these tests are about.
"""

import argparse
import json

import keras
import numpy as np
import pytest

from keras_bert.cli import main as cli
from keras_bert.cli.pretrain import mesh_shape as _mesh_shape  # the `--mesh` argument type
from scenario_processes import ONE_PROCESS, free_port, result_of, run_worker


def assert_same_losses(actual, expected, label):
    delta = np.max(np.abs(np.array(actual) - np.array(expected)))
    print(f"{label}: per-step losses {actual} vs one device {expected}: max |Δloss| = {delta:.2g}")
    assert len(actual) == len(expected) == 3
    np.testing.assert_allclose(actual, expected, atol=1e-4, rtol=0)


def vocabulary_size(corpus):
    return len((corpus / "vocab.txt").read_text().splitlines())


@pytest.mark.only_backend("jax", reason=f"keras.distribution runs on JAX; {ONE_PROCESS}")
def test_jax_data_and_model_parallel_pretraining_match_one_device(jax_local, corpus):
    result = jax_local
    assert result["devices"] == 4 and result["data-parallel-size"] == 4
    assert_same_losses(result["data-parallel"], result["single"], "data-parallel, 4 devices (CLI)")
    assert_same_losses(result["model-parallel"], result["single"], "model-parallel, --mesh 2x2 (CLI)")
    # The shardings below were recorded in that same CLI run (its history.csv losses are the callback's).
    np.testing.assert_allclose(result["recorded-losses"], result["model-parallel"], rtol=1e-6)

    shardings = result["model-parallel-shardings"]
    layer = "transformer_layer_0"
    # 945 rows do not split in 2: BertModelParallel moves the shard to the hidden axis.
    assert vocabulary_size(corpus) % 2 == 1
    assert shardings["embeddings/token_embedding/embeddings"] == [None, "model"]
    assert result["even-vocabulary-embedding"] == ["model", None]
    assert shardings[f"{layer}/self_attention/qkv/kernel"] == [None, None, "model", None]
    assert shardings[f"{layer}/self_attention/qkv/bias"] == [None, "model", None]
    assert shardings[f"{layer}/self_attention/output/kernel"] == ["model", None, None]
    assert shardings[f"{layer}/intermediate_dense/kernel"] == [None, "model"]
    assert shardings[f"{layer}/intermediate_dense/bias"] == ["model"]
    assert shardings[f"{layer}/output_dense/kernel"] == ["model", None]
    for path in (f"{layer}/attention_layer_norm/gamma", "embeddings/position_embeddings", "pooler/dense/kernel"):
        assert all(axis is None for axis in shardings[path]), path
    # The MLM head's own variables are replicated.
    heads = [path for path in shardings if not path.startswith(("embeddings/", "transformer_layer_", "pooler/"))]
    assert heads and all(all(axis is None for axis in shardings[path]) for path in heads), heads


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
def test_mirrored_pretraining_matches_one_device(tf_runs):
    result = tf_runs["local"]
    assert result["replicas"] == 2
    assert_same_losses(result["mirrored"], result["single"], "mirrored, 2 replicas (CLI)")


@pytest.mark.only_backend("tensorflow", reason="MultiWorkerMirroredStrategy is tf.distribute's; two processes")
def test_two_worker_pretraining_matches_one_device_and_only_the_chief_writes(tf_runs):
    chief, other = tf_runs["workers"]
    assert chief["replicas"] == other["replicas"] == 2
    assert (chief["chief"], other["chief"]) == (True, False)
    # The reference: the same job on one device (OneDeviceStrategy, see the worker).
    assert_same_losses(chief["multi-worker"], tf_runs["local"]["single"], "multi-worker, 2 processes")
    assert other["multi-worker"] == chief["multi-worker"]
    for name in ("model.keras", "vocab.txt", "config.json", "history.csv", "checkpoints/checkpoint.json"):
        assert name in chief["files"], name
    assert other["files"] == [] and not (tf_runs["workers_out"] / "worker1").exists()


def test_cli_strategy_on_the_wrong_backend_says_what_runs(corpus, capsys):
    backend = keras.backend.backend()
    wanted = {"torch": "data-parallel", "tensorflow": "data-parallel", "jax": "mirrored"}[backend]
    expected = {
        "torch": "on the torch backend keras_bert trains on one device",
        "tensorflow": "keras_bert supports on the JAX backend (current backend: tensorflow)",
        "jax": "needs KERAS_BACKEND=tensorflow (current backend: jax)",
    }[backend]
    arguments = ["pretrain", "--corpus", str(corpus / "train.txt"), "--vocab", str(corpus / "vocab.txt")]
    assert cli([*arguments, "--out", str(corpus / "unused"), "--strategy", wanted]) == 2
    assert expected in capsys.readouterr().err
    if backend == "torch":  # every strategy, tf.distribute ones included
        assert cli([*arguments, "--out", str(corpus / "unused"), "--strategy", "mirrored"]) == 2
        assert "torch backend keras_bert trains on one device" in capsys.readouterr().err
    # Refused before any training or writing.
    assert not (corpus / "unused").exists()


@pytest.mark.only_backend("jax", reason=f"a device mesh is keras.distribution's, which runs on JAX; {ONE_PROCESS}")
def test_cli_mesh_reaches_the_device_mesh(jax_local):
    """`keras-bert pretrain --strategy model-parallel --mesh 2x2` on 4 devices trains on a 2x2 keras.distribution mesh.

    The job's `data_parallel_size` is read off the DeviceMesh the job trained
    under (its batch axis): 2 of 4 devices, where the default mesh (1, 4) or a
    dropped `--mesh` gives 1; and it trains as one device does.
    """
    job = jax_local["model-parallel-job"]
    assert (job["strategy"], job["mesh_shape"], job["data_parallel_size"]) == ("model-parallel", [2, 2], 2)
    assert_same_losses(jax_local["model-parallel"], jax_local["single"], "model-parallel, --mesh 2x2 (CLI)")


@pytest.mark.only_backend("jax", reason="the mesh is checked against the devices by keras.distribution, which runs on JAX")
def test_cli_mesh_that_does_not_fit_the_devices_is_refused(corpus, capsys):
    arguments = ["pretrain", "--corpus", str(corpus / "train.txt"), "--vocab", str(corpus / "vocab.txt")]
    # One device in this process: a 2x2 mesh cannot be built from it.
    assert cli([*arguments, "--out", str(corpus / "unused"), "--strategy", "model-parallel", "--mesh", "2x2"]) == 2
    assert "data * model = 1 devices. Received: (2, 2)" in capsys.readouterr().err
    assert not (corpus / "unused").exists()


def test_cli_mesh_argument_is_parsed_as_data_by_model(corpus, capsys):
    """Argument parsing only (the same on every backend): DATAxMODEL -> (data, model), anything else refused."""
    assert _mesh_shape("2x4") == (2, 4) and _mesh_shape("1X8") == (1, 8)
    for text in ("2by2", "2x", "0x4", "2x2x2", "-1x4"):
        with pytest.raises(argparse.ArgumentTypeError, match="expected DATAxMODEL such as 2x2"):
            _mesh_shape(text)
    arguments = ["pretrain", "--corpus", str(corpus / "train.txt"), "--vocab", str(corpus / "vocab.txt")]
    with pytest.raises(SystemExit) as raised:
        cli([*arguments, "--out", str(corpus / "unused"), "--strategy", "model-parallel", "--mesh", "2by2"])
    assert raised.value.code == 2
    assert "expected DATAxMODEL such as 2x2, got '2by2'" in capsys.readouterr().err


@pytest.mark.only_backend("torch", reason="states what the torch backend does")
def test_torch_backend_refuses_every_distribution():
    from keras_bert.distribution import STRATEGIES, create_strategy

    for name in STRATEGIES[1:]:
        with pytest.raises(ValueError, match="on the torch backend keras_bert trains on one device"):
            create_strategy(name)
    assert create_strategy("none") is None


def test_unknown_strategy_and_bad_mesh_are_refused():
    from keras_bert.distribution import create_strategy

    with pytest.raises(ValueError, match="Unknown strategy 'horovod'"):
        create_strategy("horovod")
    if keras.backend.backend() == "jax":
        with pytest.raises(ValueError, match=r"data \* model = 1 devices"):
            create_strategy("model-parallel", mesh_shape=(2, 2))


def test_tpu_static_shapes_hold_for_the_pretraining_data(corpus):
    """TPUStrategy (which cannot run here) needs every batch to have one static shape."""
    from keras_bert.distribution import check_static_shapes
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
    from keras_bert.preprocessing.pretraining import pretraining_dataset

    options = dict(tokenizer=BertTokenizer(str(corpus / "vocab.txt")), sequence_length=32, batch_size=8, verbose=0)
    static = pretraining_dataset([str(corpus / "train.txt")], **options)  # drop_remainder=True by default
    check_static_shapes(static.repeat().skip(3).prefetch(4))  # what pretrain() feeds fit
    x, y, w = static.element_spec
    assert x["token_ids"].shape == (8, 32) and y["nsp"].shape == (8,) and w["mlm"].shape[0] == 8
    ragged = pretraining_dataset([str(corpus / "train.txt")], drop_remainder=False, **options)
    with pytest.raises(ValueError, match=r"Not static: 0/mask_positions: \(None, 5\)"):
        check_static_shapes(ragged)


@pytest.mark.only_backend("tensorflow", reason="tf.distribute strategies are TensorFlow's")
def test_every_job_of_a_process_shares_one_mirrored_strategy(monkeypatch):
    """Two MirroredStrategy objects number their collective ops alike: a second mirrored job in one process
    failed in its first all-reduce ("Shape mismatch in the collective instance 100"). The tf-local scenario
    runs a mirrored pretraining job and then a mirrored fine-tuning job in one process, for real."""
    import tensorflow as tf

    import keras_bert.distribution as distribution

    made = []
    monkeypatch.setattr(tf.distribute, "MirroredStrategy", lambda: made.append(object()) or made[-1])
    monkeypatch.setattr(distribution, "_STRATEGIES_MADE", {})
    first = distribution.create_strategy("mirrored")
    assert distribution.create_strategy("mirrored") is first and len(made) == 1


def test_multi_worker_needs_tf_config(monkeypatch):
    from keras_bert.distribution import create_strategy

    monkeypatch.delenv("TF_CONFIG", raising=False)
    expected = {"tensorflow": "TF_CONFIG", "jax": "needs KERAS_BACKEND=tensorflow", "torch": "trains on one device"}
    with pytest.raises(ValueError, match=expected[keras.backend.backend()]):
        create_strategy("multi-worker")


def test_is_chief_reads_tf_config(monkeypatch):
    from keras_bert.distribution import is_chief

    cluster = {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 0}}))
    assert is_chief()
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 1}}))
    assert not is_chief()
