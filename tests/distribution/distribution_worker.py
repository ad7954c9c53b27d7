"""Distributed-training scenarios, each run as its own process by the tests of this folder.

Device counts must be fixed before TensorFlow or JAX starts, so every
scenario gets a fresh process; each process runs every check that needs its
device layout, one after another, so the layout costs one start-up (test
scenarios are mostly start-up and tracing). The local and multi-worker
scenarios run the real jobs on small files: the pretraining job here
(`pretrain()`, or `keras-bert pretrain` through the CLI) on $CORPUS, the
fine-tuning job in finetune_runs.py on $DATA and, on TensorFlow, the
per-worker shard and resume runs in shard_runs.py on $SHARD_CORPUS. Each run
is first on one device, then distributed with the same global batch, seed and
initial weights (dropout 0, so every layout computes the same function). Each
process prints one JSON line with the per-step losses of every run and what
the runs left behind (shardings, replica counts, files written): the
pretraining runs' at the top level, the others under "finetune" and "shards".

    python distribution_worker.py jax-local                 # 4 host devices: single, data-parallel (CLI),
                                                            # model-parallel (CLI --mesh 2x2); pretrain, finetune
    python distribution_worker.py tf-local                  # 2 logical CPUs: single, mirrored (CLI); pretrain,
                                                            # finetune; the shard runs' one-device reference
    python distribution_worker.py multi-worker INDEX        # with TF_CONFIG set, one of two workers (tf-local has
                                                            # the references): pretrain, finetune, shard runs
    python distribution_worker.py jax-distributed INDEX     # with COORDINATOR set, one of two processes

$CORPUS holds train.txt and vocab.txt; $DATA and $SHARD_CORPUS are described in finetune_runs.py and
shard_runs.py; runs write under $OUT.
"""

import json
import os
import sys

SCENARIO = sys.argv[1]
PROCESS_ID = int(sys.argv[2]) if len(sys.argv) > 2 else 0

if SCENARIO == "jax-local":
    # Added to what the test process passed down (its faster compile settings, see conftest.py).
    os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"

import numpy as np  # noqa: E402

if SCENARIO == "tf-local":
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # noqa: E402

if SCENARIO == "jax-distributed":
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    keras.distribution.initialize(job_addresses=os.environ["COORDINATOR"], num_processes=2, process_id=PROCESS_ID)

import keras_bert  # noqa: E402
import keras_bert.jobs.pretrain as pretrain_job  # noqa: E402  (run_cli hands the job a callback)
from keras_bert.cli import main as cli  # noqa: E402
from keras_bert.distribution import create_strategy, is_chief, strategy_scope  # noqa: E402
from keras_bert.jobs.pretrain import pretrain  # noqa: E402

# MultiWorkerMirroredStrategy must exist before any other TensorFlow work.
STRATEGY = create_strategy("multi-worker") if SCENARIO == "multi-worker" else None

import finetune_runs  # noqa: E402  (beside this script: on sys.path when it runs)

if SCENARIO in ("tf-local", "multi-worker"):
    import shard_runs  # noqa: E402  (TensorFlow's tf.py_function records the steps)

CORPUS, OUT = os.environ.get("CORPUS", ""), os.environ.get("OUT", "")
# A learning rate large enough that a wrong gradient or update shows in the
# next step's loss by far more than the 1e-4 tolerance.
JOB = dict(size="tiny", sequence_length=32, batch_size=8, steps=3, checkpoint_every=1, learning_rate=1e-2, dropout=0.0, seed=0)


class Recorder(keras.callbacks.Callback):
    """Per-step losses (epochs are one step long) and the variables' shardings at the start."""

    def on_train_begin(self, logs=None):
        self.losses, self.shardings = [], shardings(self.model)

    def on_epoch_end(self, epoch, logs=None):
        self.losses.append(float(logs["loss"]))


def run_pretrain(out, **options):
    recorder = Recorder()
    pretrain(
        corpus=[os.path.join(CORPUS, "train.txt")], vocabulary=os.path.join(CORPUS, "vocab.txt"),
        output_dir=os.path.join(OUT, out), tensorboard=False, verbose=0, callbacks=[recorder], **{**JOB, **options},
    )
    return recorder


def run_cli(out, *flags, recorder=None):
    """`keras-bert pretrain` with the JOB settings: (per-step losses, the job record).

    A `recorder` is handed to the `pretrain()` the CLI calls (it takes no callbacks
    from the command line), so one CLI run also gives the shardings it trained with.
    """
    # `keras-bert pretrain` imports the job when it runs: replaced in its module, the CLI calls the replacement.
    job_function = pretrain_job.pretrain
    if recorder is not None:
        pretrain_job.pretrain = lambda **options: job_function(callbacks=[recorder], **options)
    try:
        return _run_cli(out, *flags)
    finally:
        pretrain_job.pretrain = job_function


def _run_cli(out, *flags):
    arguments = [f"--{k.replace('_', '-')}={v}" for k, v in JOB.items()]
    status = cli([
        "pretrain", "--corpus", os.path.join(CORPUS, "train.txt"), "--vocab", os.path.join(CORPUS, "vocab.txt"),
        *arguments, "--no-tensorboard", "--out", os.path.join(OUT, out), *flags,
    ])
    assert status == 0, status
    with open(os.path.join(OUT, out, "history.csv")) as f:
        rows = [line.split(",") for line in f.read().splitlines()]
    column = rows[0].index("loss")
    with open(os.path.join(OUT, out, "config.json")) as f:
        job = json.load(f)["job"]
    return [float(row[column]) for row in rows[1:]], job


def one_device():
    """The TensorFlow reference: one device, under a strategy all the same.

    Under any tf.distribute strategy Keras 3.15's `fit` takes one batch from
    a first iterator to build the model, then starts a new one; the dynamic
    pretraining pipeline counts iterators as epochs, so training starts on its
    second pass of pairs and masks. A `OneDeviceStrategy` run goes through the
    same code, so both runs train on the same batches.
    """
    import tensorflow as tf

    return tf.distribute.OneDeviceStrategy("/cpu:0")


def files_in(out):
    folder = os.path.join(OUT, out)
    return sorted(os.path.relpath(os.path.join(root, name), folder) for root, _, names in os.walk(folder) for name in names)


def shardings(model):
    result = {}
    for variable in model.trainable_variables:
        spec = getattr(getattr(variable.value, "sharding", None), "spec", None)
        result[variable.path] = None if spec is None else [None if a is None else str(a) for a in spec]
    return result


# jax-distributed: fixed batches through train_on_batch (the pretraining
# pipeline is not sharded per process; see the README).
GLOBAL_BATCH, STEPS, VOCAB, LENGTH = 8, 4, 64, 16


def batches():
    rng = np.random.default_rng(0)
    for _ in range(STEPS):
        x = {
            "token_ids": rng.integers(5, VOCAB, (GLOBAL_BATCH, LENGTH)).astype("int32"),
            "segment_ids": np.repeat([[0] * 8 + [1] * 8], GLOBAL_BATCH, 0).astype("int32"),
            "padding_mask": np.ones((GLOBAL_BATCH, LENGTH), "int32"),
            "mask_positions": np.tile(np.array([1, 4, 9], "int32"), (GLOBAL_BATCH, 1)),
        }
        x["padding_mask"][::2, -3:] = 0
        y = {"mlm": rng.integers(5, VOCAB, (GLOBAL_BATCH, 3)).astype("int32"), "nsp": (np.arange(GLOBAL_BATCH) % 2).astype("int32")}
        w = {"mlm": np.ones((GLOBAL_BATCH, 3), "float32"), "nsp": np.ones(GLOBAL_BATCH, "float32")}
        yield x, y, w


def tiny_backbone():
    # Its own, not tests/harness.py's: this script runs as a child process that cannot import the harness.
    return keras_bert.BertBackbone(
        vocabulary_size=VOCAB, num_layers=2, num_heads=4, hidden_dim=16, intermediate_dim=32,
        max_sequence_length=LENGTH, dropout=0.0,
    )


def build(weights=None):
    model = keras_bert.BertPretrainer(tiny_backbone())
    # SGD: Keras' TensorFlow Adam updates embedding rows lazily (sparse
    # gradients), so only SGD gives the same numbers on every backend.
    model.compile(optimizer=keras.optimizers.SGD(0.5))
    if weights is not None:
        model.set_weights(weights)
    return model


def train_on_batches(model):
    return [float(model.train_on_batch(x, y, sample_weight=w, return_dict=True)["loss"]) for x, y, w in batches()]


def main():
    result = {"scenario": SCENARIO, "process_id": PROCESS_ID}
    if SCENARIO == "jax-local":
        result["devices"] = len(keras.distribution.list_devices())
        result["single"] = run_pretrain("single").losses
        result["data-parallel"], job = run_cli("data-parallel", "--strategy=data-parallel")
        result["data-parallel-size"] = job["data_parallel_size"]
        # One model-parallel run, through the CLI (which calls pretrain(strategy=, mesh_shape=)): its losses,
        # its job record and the shardings its variables had when training began.
        recorder = Recorder()
        result["model-parallel"], result["model-parallel-job"] = run_cli(
            "model-parallel", "--strategy=model-parallel", "--mesh=2x2", recorder=recorder
        )
        result["recorded-losses"], result["model-parallel-shardings"] = recorder.losses, recorder.shardings
        # The corpus vocabulary is odd-sized (BertModelParallel moves its
        # shard); an even one is sharded over the vocabulary as the map says.
        # (One layer: under JAX every new variable shape compiles its initializer.)
        with strategy_scope("model-parallel", mesh_shape=(2, 2)):
            embedding = keras.layers.Embedding(VOCAB, 16, name="token_embedding")
            embedding.build((None,))
            result["even-vocabulary-embedding"] = [None if a is None else str(a) for a in embedding.embeddings.value.sharding.spec]
        result["finetune"] = finetune_runs.jax_local()
    elif SCENARIO == "tf-local":
        result["single"] = run_pretrain("single", strategy=one_device()).losses
        result["mirrored"], job = run_cli("mirrored", "--strategy=mirrored")
        result["replicas"] = job["data_parallel_size"]
        result["finetune"] = finetune_runs.tf_local()
        result["shards"] = shard_runs.reference(one_device())
    elif SCENARIO == "multi-worker":
        out = f"worker{PROCESS_ID}"
        result["multi-worker"] = run_pretrain(out, strategy=STRATEGY).losses
        result["replicas"] = STRATEGY.num_replicas_in_sync
        result["chief"] = is_chief()
        result["files"] = files_in(out)
        # The same workers, the same strategy: the fine-tuning job, then the shard and resume runs.
        result["finetune"] = finetune_runs.multi_worker(STRATEGY, PROCESS_ID)
        result["shards"] = shard_runs.workers(STRATEGY)
    elif SCENARIO == "jax-distributed":
        keras.utils.set_random_seed(0)
        single = build()
        initial = single.get_weights()
        result["single"] = train_on_batches(single)
        result["devices"] = len(keras.distribution.list_devices())
        with strategy_scope("data-parallel"):
            model = build(initial)
            result["jax-distributed"] = train_on_batches(model)
        result["chief"] = is_chief()
    print("RESULT " + json.dumps(result), flush=True)


main()
