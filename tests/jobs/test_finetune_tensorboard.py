"""The fine-tuning job's TensorBoard logs hold the training and validation metrics of every epoch.

Keras' TensorBoard callback writes through `tf.summary` on every backend, so
the event files are read here with TensorFlow's own reader.
"""

import json

import numpy as np
import pytest

from keras_bert.jobs.finetune import finetune
from task_helpers import classify_rows, save_tiny_init, write_rows

tf = pytest.importorskip("tensorflow")

pytestmark = pytest.mark.not_backend(
    "jax", reason="Keras' TensorBoard callback writes its scalars from Python after each epoch, the same on JAX as on "
    "torch (TensorFlow alone adds the traced graph, so it runs there too); JAX would only add compiling the steps")


def scalars(folder):
    """`{tag: [(step, value), ...]}` of every event file in `folder`."""
    found = {}
    for path in sorted(folder.glob("events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(str(path)):
            for value in event.summary.value:
                number = float(tf.make_ndarray(value.tensor)) if value.HasField("tensor") else value.simple_value
                found.setdefault(value.tag, []).append((event.step, number))
    return found


def test_event_files_hold_every_epochs_training_and_validation_metrics(tmp_path):
    folder = tmp_path / "init"
    folder.mkdir()
    save_tiny_init(folder, num_layers=1)
    header, rows = classify_rows()
    write_rows(tmp_path / "train.tsv", header, rows[:32])
    write_rows(tmp_path / "dev.tsv", header, rows[99:116])

    summary = finetune(
        "classify", folder / "backbone.keras", tmp_path / "train.tsv", tmp_path / "run", eval=tmp_path / "dev.tsv",
        sequence_length=16, batch_size=16, epochs=2, learning_rate=3e-3, seed=5, verbose=0,
    )
    history = summary["history"]
    assert json.loads((tmp_path / "run" / "finetune.json").read_text())["history"] == history
    for part, prefix in (("train", ""), ("validation", "val_")):
        logged = scalars(tmp_path / "run" / "logs" / part)
        for metric in ("loss", "accuracy"):
            steps, values = zip(*logged[f"epoch_{metric}"])
            assert steps == (0, 1), (part, metric)
            np.testing.assert_allclose(values, history[prefix + metric], rtol=1e-6, err_msg=f"{part} {metric}")
