"""Distributed fine-tuning scenarios, each run as its own process by test_finetune_distribution.py.

As distribution_worker.py does for pretraining: device counts are fixed
before TensorFlow or JAX starts, so every scenario gets a fresh process. Each
runs the fine-tuning job (`finetune()`, and `keras-bert finetune --strategy`
through the CLI) on the files in $DATA: first on one device, then
distributed with the same global batch, seed and initial weights (dropout 0).
An epoch is one step, so the per-epoch losses of history.csv are per-step
losses. Each prints one JSON line: the losses, held-out losses and metrics of
every run, and what the runs left behind.

    python finetune_worker.py tf-local                 # 2 logical CPUs: single, mirrored (CLI)
    python finetune_worker.py jax-local                # 4 host devices: single, data-parallel (CLI),
                                                       # model-parallel (CLI --mesh 2x2)
    python finetune_worker.py multi-worker INDEX       # with TF_CONFIG set, one of two workers

$DATA holds backbone.keras, vocab.txt, train.tsv and dev.tsv; runs write under $OUT.
"""

import json
import os
import sys

SCENARIO = sys.argv[1]
PROCESS_ID = int(sys.argv[2]) if len(sys.argv) > 2 else 0

if SCENARIO == "jax-local":
    # Added to what the test process passed down (its faster compile settings, see conftest.py).
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"

if SCENARIO == "tf-local":
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # noqa: E402

from keras_bert.cli import main as cli  # noqa: E402
from keras_bert.distribution import create_strategy, is_chief  # noqa: E402
from keras_bert.jobs.finetune import finetune  # noqa: E402

DATA, OUT = os.environ.get("DATA", ""), os.environ.get("OUT", "")
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


def main():
    result = {"scenario": SCENARIO, "process_id": PROCESS_ID}
    if SCENARIO == "tf-local":
        result["single"] = run_finetune("single")
        result["mirrored"] = run_cli("mirrored", "--strategy=mirrored")
        try:
            run_finetune("uneven", strategy="mirrored", batch_size=15)
        except ValueError as error:
            result["uneven"] = str(error)
    elif SCENARIO == "jax-local":
        result["devices"] = len(keras.distribution.list_devices())
        result["single"] = run_finetune("single")
        result["data-parallel"] = run_cli("data-parallel", "--strategy=data-parallel")
        result["model-parallel"] = run_cli("model-parallel", "--strategy=model-parallel", "--mesh=2x2")
    elif SCENARIO == "multi-worker":
        strategy = create_strategy("multi-worker")  # must exist before other TensorFlow work
        out = f"worker{PROCESS_ID}"
        finetune("classify", **files(out), tensorboard=False, verbose=0, strategy=strategy, **JOB)
        result["chief"] = is_chief()
        result["files"] = files_in(out)
        result["replicas"] = strategy.num_replicas_in_sync
        if result["chief"]:
            result["multi-worker"] = report(out)
    print("RESULT " + json.dumps(result), flush=True)


main()
