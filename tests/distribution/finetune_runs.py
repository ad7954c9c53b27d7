"""The fine-tuning runs of the distribution scenarios, called by distribution_worker.py in its processes.

As the pretraining runs there do: each runs the fine-tuning job (`finetune()`, and `keras-bert finetune
--strategy` through the CLI) on the files in $DATA, first on one device, then distributed with the same global
batch, seed and initial weights (dropout 0). An epoch is one step, so the per-epoch losses of history.csv are
per-step losses. Each function returns the losses, held-out losses and metrics of every run, and what the runs
left behind.

$DATA holds backbone.keras, vocab.txt, train.tsv and dev.tsv; runs write under $OUT/finetune. Importing this
module does no TensorFlow or JAX work: the worker has fixed the devices before.
"""

import json
import os

import keras

from keras_bert.cli import main as cli
from keras_bert.distribution import is_chief
from keras_bert.jobs.finetune import finetune

DATA = os.environ.get("DATA", "")
OUT = os.path.join(os.environ.get("OUT", ""), "finetune")
# 16 training texts in batches of 16: one step per epoch. A learning rate large enough that a wrong
# gradient or update shows in the next step's loss by far more than the tests' 1e-4 tolerance.
JOB = dict(sequence_length=16, batch_size=16, epochs=3, learning_rate=1e-2, dropout=0.0, seed=0)


def files(out):
    return dict(init=os.path.join(DATA, "backbone.keras"), train=os.path.join(DATA, "train.tsv"),
                eval=os.path.join(DATA, "dev.tsv"), output_dir=os.path.join(OUT, out))


def report(out):
    """Per-epoch losses and validation losses (history.csv), metrics.json's sections and the job record of a run."""
    folder = os.path.join(OUT, out)
    with open(os.path.join(folder, "history.csv")) as f:
        rows = [line.split(",") for line in f.read().splitlines()]
    columns = {name: [float(row[i]) for row in rows[1:]] for i, name in enumerate(rows[0]) if name in ("loss", "val_loss")}
    with open(os.path.join(folder, "finetune.json")) as f:
        record = json.load(f)
    return {**columns, "metrics": record["metrics"], "job": record["job"]}


def run_finetune(out, **options):
    finetune("classify", **files(out), tensorboard=False, verbose=0, **{**JOB, **options})
    return report(out)


def run_cli(out, *flags):
    paths = files(out)
    status = cli([
        "finetune", "--task", "classify", "--init", paths["init"], "--train", paths["train"], "--eval", paths["eval"],
        *[f"--{k.replace('_', '-')}={v}" for k, v in JOB.items()], "--no-tensorboard", "--quiet",
        "--out", paths["output_dir"], *flags,
    ])
    assert status == 0, status
    return report(out)


def files_in(out):
    folder = os.path.join(OUT, out)
    return sorted(os.path.relpath(os.path.join(root, name), folder) for root, _, names in os.walk(folder) for name in names)


def tf_local():
    """2 logical CPUs: one device, mirrored (CLI), and a batch that does not split over the replicas."""
    result = {"single": run_finetune("single"), "mirrored": run_cli("mirrored", "--strategy=mirrored")}
    try:
        run_finetune("uneven", strategy="mirrored", batch_size=15)
    except ValueError as error:
        result["uneven"] = str(error)
    return result


def jax_local():
    """4 host devices: one device, data-parallel (CLI) and model-parallel (CLI --mesh 2x2)."""
    return {
        "devices": len(keras.distribution.list_devices()),
        "single": run_finetune("single"),
        "data-parallel": run_cli("data-parallel", "--strategy=data-parallel"),
        "model-parallel": run_cli("model-parallel", "--strategy=model-parallel", "--mesh=2x2"),
    }


def multi_worker(strategy, process_id):
    """One of two MultiWorkerMirroredStrategy workers (the reference is tf_local's one-device run)."""
    out = f"worker{process_id}"
    finetune("classify", **files(out), tensorboard=False, verbose=0, strategy=strategy, **JOB)
    result = {"chief": is_chief(), "files": files_in(out), "replicas": strategy.num_replicas_in_sync}
    if result["chief"]:
        result["multi-worker"] = report(out)
    return result
