"""Distributed-training scenarios, each run as its own process by test_distribution.py.

Device counts must be fixed before TensorFlow or JAX starts, so every
scenario gets a fresh process. Each trains a tiny BertPretrainer for a few
steps on fixed batches (dropout 0, so every layout computes the same
function), first on one device, then distributed from the same initial
weights, and prints one JSON line: per-step losses of each run and, for
model parallel, the shardings actually applied.

    python distribution_worker.py jax-local                 # 4 host devices: single, data-parallel, model-parallel
    python distribution_worker.py tf-local                  # 2 logical CPUs: single, mirrored
    python distribution_worker.py multi-worker INDEX        # with TF_CONFIG set, one of two workers
    python distribution_worker.py jax-distributed INDEX     # with COORDINATOR set, one of two processes
"""

import json
import os
import sys

SCENARIO = sys.argv[1]
PROCESS_ID = int(sys.argv[2]) if len(sys.argv) > 2 else 0

if SCENARIO == "jax-local":
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"

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
from keras_bert.distribution import create_strategy, is_chief, strategy_scope  # noqa: E402

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


def build(weights=None):
    backbone = keras_bert.BertBackbone(
        vocabulary_size=VOCAB, num_layers=2, num_heads=4, hidden_dim=16, intermediate_dim=32,
        max_sequence_length=LENGTH, dropout=0.0,
    )
    model = keras_bert.BertPretrainer(backbone)
    # SGD: Keras' TensorFlow Adam updates embedding rows lazily (sparse
    # gradients), so only SGD gives the same numbers on every backend.
    model.compile(optimizer=keras.optimizers.SGD(0.5))
    if weights is not None:
        model.set_weights(weights)
    return model


def train(model, use_fit):
    import tensorflow as tf

    losses = []
    for x, y, w in batches():
        if use_fit:  # tf.distribute: fit distributes the global batch across replicas
            history = model.fit(tf.data.Dataset.from_tensors((x, y, w)), epochs=1, verbose=0)
            losses.append(float(history.history["loss"][0]))
        else:
            losses.append(float(model.train_on_batch(x, y, sample_weight=w, return_dict=True)["loss"]))
    return losses


def shardings(model):
    result = {}
    for variable in model.trainable_variables:
        spec = getattr(variable.value.sharding, "spec", None)
        result[variable.path] = None if spec is None else [None if a is None else str(a) for a in spec]
    return result


def main():
    keras.utils.set_random_seed(0)
    if SCENARIO == "multi-worker":
        strategy = create_strategy("multi-worker")  # must exist before other TensorFlow work
    single = build()
    initial = single.get_weights()
    result = {"scenario": SCENARIO, "process_id": PROCESS_ID, "single": train(single, use_fit=False)}
    if SCENARIO == "jax-local":
        result["devices"] = len(keras.distribution.list_devices())
        with strategy_scope("data-parallel"):
            model = build(initial)
            result["data-parallel"] = train(model, use_fit=False)
        with strategy_scope("model-parallel", mesh_shape=(2, 2)):
            model = build(initial)
            result["model-parallel-shardings"] = shardings(model)
            result["model-parallel"] = train(model, use_fit=False)
    elif SCENARIO == "tf-local":
        with strategy_scope("mirrored") as mirrored:
            model = build(initial)
        result["replicas"] = mirrored.num_replicas_in_sync
        result["mirrored"] = train(model, use_fit=True)
    elif SCENARIO == "multi-worker":
        with strategy.scope():
            model = build(initial)
        result["replicas"] = strategy.num_replicas_in_sync
        result["multi-worker"] = train(model, use_fit=True)
        result["chief"] = is_chief()
    elif SCENARIO == "jax-distributed":
        result["devices"] = len(keras.distribution.list_devices())
        with strategy_scope("data-parallel"):
            model = build(initial)
            result["jax-distributed"] = train(model, use_fit=False)
        result["chief"] = is_chief()
    print("RESULT " + json.dumps(result), flush=True)


main()
