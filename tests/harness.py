"""One test harness for every layer and model: each class's test is a few calls.

What every check asserts is listed in ../shared/STYLE.md: config round trip,
weight counts, symbolic and eager shapes and dtypes, one training step that
runs and changes the weights, `.keras` save/load equality, mixed precision dtypes.

Also the one place for what tests share (conftest.py keeps only pytest hooks and
fixtures): the repository and shared-data paths, the tiny backbone every test
builds, random model inputs, and running code in a Python without TensorFlow.
"""

import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
# The shared data folder lies beside the repository (CI has it there too): ../shared/data.
SHARED_DATA = (REPO_ROOT / ".." / "shared" / "data").resolve()


# The size of tests/fixtures/tasks/vocab.txt (the task, export and robustness tests' tokenizer).
FIXTURE_VOCABULARY_SIZE = 147


def tiny_backbone(**overrides):
    """The tiny BertBackbone of the test suite: 2 layers, 2 heads, hidden 16, dropout 0.

    Its vocabulary is the fixtures' vocab.txt; `intermediate_dim` defaults to
    twice `hidden_dim`. A test that depends on a size (its inputs' vocabulary,
    an output shape, a length limit, a learning speed) passes it explicitly.
    """
    from keras_bert import BertBackbone

    config = dict(
        vocabulary_size=FIXTURE_VOCABULARY_SIZE, num_layers=2, num_heads=2, hidden_dim=16, max_sequence_length=32,
        dropout=0.0,
    )
    config.update(overrides)
    config.setdefault("intermediate_dim", 2 * config["hidden_dim"])
    return BertBackbone(**config)


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
    """Runs `script` with keras_bert and this harness importable but TensorFlow not installed at all (see above)."""
    return run_with_packages_hidden(
        script, TENSORFLOW_PACKAGES, tmp_path, env={"KERAS_BACKEND": backend},
        python_path=[REPO_ROOT, REPO_ROOT / "tests"], timeout=timeout,
    )


def _symbolic(inputs):
    return {name: keras.Input(shape=value.shape[1:], dtype=str(value.dtype), name=name) for name, value in inputs.items()}


def _wrap(layer, inputs, call_kwargs=None):
    """A functional model around `layer`, called with `inputs` as keyword arguments."""
    symbolic = _symbolic(inputs)
    outputs = layer(**symbolic, **(call_kwargs or {}))
    return keras.Model(symbolic, outputs)


def _shapes(tree):
    return keras.tree.map_structure(lambda x: tuple(x.shape), tree)


def _dtypes(tree):
    return keras.tree.map_structure(lambda x: keras.backend.standardize_dtype(x.dtype), tree)


def run_layer_test(
    layer_cls,
    init_kwargs,
    inputs,
    expected_output_shape,
    expected_num_trainable_weights,
    expected_num_params=None,
    expected_output_dtype="float32",
    call_kwargs=None,
    tmp_path=None,
):
    """Checks a layer end to end.

    Args:
        layer_cls: the layer class.
        init_kwargs: constructor arguments.
        inputs: dict of call-argument name -> numpy array (batch first).
        expected_output_shape: shape tuple (or a structure of them).
        expected_num_trainable_weights: int.
        expected_num_params: int, total parameter count, if known.
        expected_output_dtype: dtype (or structure) of the output in float32.
        call_kwargs: extra non-tensor call arguments.
        tmp_path: a folder for the `.keras` round trip.
    """
    # Config round trip.
    layer = layer_cls(**init_kwargs)
    config = layer.get_config()
    assert layer_cls.from_config(config).get_config() == config

    # Eager call: shapes, dtypes, weight counts.
    output = layer(**inputs, **(call_kwargs or {}))
    assert _shapes(output) == expected_output_shape
    assert _dtypes(output) == expected_output_dtype
    assert len(layer.trainable_weights) == expected_num_trainable_weights
    if expected_num_params is not None:
        assert layer.count_params() == expected_num_params

    # Symbolic call agrees with the eager one (the batch dimension is None symbolically).
    model = _wrap(layer_cls(**init_kwargs), inputs, call_kwargs)
    expected = [expected_output_shape] if isinstance(expected_output_shape[0], int) else list(expected_output_shape)
    assert [tuple(t.shape)[1:] for t in model.outputs] == [tuple(e)[1:] for e in expected]

    # One training step changes the weights and gives a finite loss (a layer without weights has none to train).
    if expected_num_trainable_weights:
        run_training_step(model, inputs)

    # .keras round trip gives the same outputs.
    if tmp_path is not None:
        run_saving_test(model, inputs, tmp_path)

    # Mixed precision: float32 variables, 16-bit computation where the output is not forced to float32.
    mixed = layer_cls(**{**init_kwargs, "dtype": "mixed_bfloat16"})
    mixed_output = mixed(**inputs, **(call_kwargs or {}))
    for variable in mixed.weights:
        assert keras.backend.standardize_dtype(variable.dtype) == "float32"
    for value in keras.tree.flatten(mixed_output):
        assert np.all(np.isfinite(keras.ops.convert_to_numpy(keras.ops.cast(value, "float32"))))
    return layer


def run_training_step(model, inputs):
    outputs = model(inputs)
    targets = keras.tree.map_structure(lambda x: np.zeros(tuple(x.shape), "float32"), outputs)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    before = [keras.ops.convert_to_numpy(w).copy() for w in model.trainable_weights]
    history = model.fit(inputs, targets, batch_size=len(next(iter(inputs.values()))), epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    after = [keras.ops.convert_to_numpy(w) for w in model.trainable_weights]
    assert any(not np.array_equal(b, a) for b, a in zip(before, after)), "no weight changed in a training step"


def run_saving_test(model, inputs, tmp_path, atol=1e-6):
    """`.keras` save -> load gives the same class and the same outputs."""
    path = os.path.join(tmp_path, "model.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    assert type(restored) is type(model)
    expected = numpy_tree(model(inputs, training=False))
    actual = numpy_tree(restored(inputs, training=False))
    expected, actual = keras.tree.flatten(expected), keras.tree.flatten(actual)
    assert len(expected) == len(actual)
    for a, b in zip(expected, actual):
        np.testing.assert_allclose(a, b, atol=atol)
    return restored


def run_model_test(model_fn, inputs, expected_output_shapes, tmp_path, targets=None, sample_weight=None):
    """Checks a model built by `model_fn()`: config round trip, shapes, fit, `.keras`, mixed precision.

    Args:
        model_fn: function(**overrides) -> model.
        inputs: dict of input name -> numpy array.
        expected_output_shapes: structure of shape tuples of `model(inputs)`.
        tmp_path: folder for the `.keras` file.
        targets, sample_weight: `fit` data; mse towards zeros when None.
    """
    model = model_fn()
    config = model.get_config()
    rebuilt = model.__class__.from_config(config)
    assert rebuilt.get_config() == config
    assert rebuilt.count_params() == model.count_params()

    outputs = model(inputs)
    assert _shapes(outputs) == expected_output_shapes

    if targets is None:
        run_training_step(model, inputs)
    else:
        model.compile()
        before = [keras.ops.convert_to_numpy(w).copy() for w in model.trainable_weights]
        history = model.fit(inputs, targets, sample_weight=sample_weight, epochs=1, verbose=0)
        assert np.isfinite(history.history["loss"][0])
        after = [keras.ops.convert_to_numpy(w) for w in model.trainable_weights]
        assert any(not np.array_equal(b, a) for b, a in zip(before, after))

    run_saving_test(model, inputs, tmp_path)
    return model


class StopWhenLearned(keras.callbacks.Callback):
    """Ends `fit` at the first epoch whose training metrics all pass `floors`.

    Learning tests give `fit` an epoch budget large enough for the slowest
    backend and seed; most runs cross their bar well before it. Stopping
    early never loosens a test: its assertions still run after `fit`, on
    held-out or re-evaluated figures.

    Args:
        floors: dict metric name (as in `fit`'s logs) -> value it must exceed.
    """

    def __init__(self, floors):
        super().__init__()
        self.floors = dict(floors)

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        missing = [name for name in self.floors if name not in logs]
        if missing:
            raise KeyError(f"StopWhenLearned: {missing} not in fit's logs {sorted(logs)}")
        if all(logs[name] > floor for name, floor in self.floors.items()):
            self.model.stop_training = True
