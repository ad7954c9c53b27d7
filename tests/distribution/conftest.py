"""The scenario processes of the distribution tests, started once per backend pass and shared by its test files.

A device layout (4 JAX host devices, 2 logical TensorFlow CPUs, a two-worker
TensorFlow cluster) is fixed when a process starts, so each layout is one
process (or one cluster) that runs every job that needs it: pretraining
(test_distribution.py), fine-tuning (test_finetune_distribution.py) and the
per-worker shards with resume (test_worker_shards.py). See distribution_worker.py.
"""

import json
import re

import pytest

from scenario_processes import SHARD_BOOKS, free_port, result_of, run_worker
from task_helpers import classify_rows, save_tiny_init, write_rows


@pytest.fixture(scope="session")
def finetune_data(tmp_path_factory):
    """A tiny backbone .keras with its vocabulary, 16 training texts (one batch) and 10 held-out ones."""
    folder = tmp_path_factory.mktemp("finetune_data")
    save_tiny_init(folder, num_layers=1)
    header, rows = classify_rows()
    write_rows(folder / "train.tsv", header, rows[:16])
    write_rows(folder / "dev.tsv", header, rows[100:110])
    return folder


@pytest.fixture(scope="session")
def two_books(tmp_path_factory, shared_data):
    """150 lines of Emma and of Persuasion in texts/ (one file each), and a whole-word vocabulary of both."""
    folder = tmp_path_factory.mktemp("two_books")
    (folder / "texts").mkdir()
    texts = []
    for book in SHARD_BOOKS:
        text = "\n".join((shared_data / "austen" / f"{book}.txt").read_text(encoding="utf-8").splitlines()[200:350])
        (folder / "texts" / f"{book}.txt").write_text(text, encoding="utf-8")
        texts.append(text)
    words = sorted(set(re.findall(r"\w+|[^\w\s]", "\n".join(texts).lower())))
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (folder / "vocab.txt").write_text("\n".join(vocabulary) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def jax_local(corpus, finetune_data, tmp_path_factory):
    """The jax-local process: 4 host devices, one device / data-parallel / model-parallel pretraining and
    fine-tuning runs (the latter under "finetune")."""
    out = tmp_path_factory.mktemp("jax-local")
    return result_of(run_worker("jax-local", env={"CORPUS": str(corpus), "DATA": str(finetune_data), "OUT": str(out)}))


@pytest.fixture(scope="session")
def tf_runs(corpus, finetune_data, two_books, tmp_path_factory):
    """The tf-local process (one device and mirrored over 2 logical CPUs, and the shard runs' one-device
    reference) and the two MultiWorker processes, started together (much of each run is single-threaded
    start-up and tracing)."""
    local_out, workers_out = tmp_path_factory.mktemp("tf-local"), tmp_path_factory.mktemp("multi-worker")
    data = {"CORPUS": str(corpus), "DATA": str(finetune_data), "SHARD_CORPUS": str(two_books)}
    addresses = [f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"]
    workers = []
    for index in range(2):
        config = {"cluster": {"worker": addresses}, "task": {"type": "worker", "index": index}}
        workers.append(run_worker("multi-worker", index, env={**data, "TF_CONFIG": json.dumps(config),
                                                                "OUT": str(workers_out)}))
    local = run_worker("tf-local", env={**data, "OUT": str(local_out)})
    return {"local": result_of(local), "workers": [result_of(p) for p in workers], "workers_out": workers_out}
