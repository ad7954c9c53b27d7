"""Scaling BERT out on the engines people already have.

- TensorFlow backend: `tf.distribute` strategies ("mirrored", "multi-worker",
  "tpu"). The model and optimizer are created under `strategy.scope()`;
  Keras' `fit` then distributes the tf.data input with the global batch size
  and reduces metrics across replicas.
- JAX backend: `keras.distribution` ("data-parallel", or "model-parallel"
  with `bert_layout_map`, which shards attention over heads, the feed-forward
  network over its intermediate dimension and the token embedding over the
  vocabulary, replicating everything else).
- torch backend: one device. Asking for a distribution there raises.

Examples:
```python
with keras_bert.distribution.strategy_scope("data-parallel"):     # JAX
    model = keras_bert.BertPretrainer(keras_bert.BertBackbone.from_size("base"))
    model.compile()
model.fit(dataset)

with keras_bert.distribution.strategy_scope("model-parallel", mesh_shape=(2, 4)):
    ...

with keras_bert.distribution.strategy_scope("mirrored"):          # TensorFlow
    ...
```
"""

import contextlib
import json
import os

import keras

STRATEGIES = ("none", "mirrored", "multi-worker", "tpu", "data-parallel", "model-parallel")
TF_STRATEGIES = ("mirrored", "multi-worker", "tpu")
JAX_STRATEGIES = ("data-parallel", "model-parallel")


def bert_layout_map(device_mesh, model_axis="model"):
    """A `keras.distribution.LayoutMap` that shards a BERT over `model_axis`.

    Variables are addressed by the stable sublayer names of keras_bert's
    layers (`.../self_attention/qkv/kernel`, ...):

    | variable | shape | sharded axis |
    |---|---|---|
    | token embedding | (vocabulary, hidden) | vocabulary |
    | fused query/key/value kernel, bias | (hidden, 3, heads, head_dim), (3, heads, head_dim) | heads |
    | attention output kernel | (heads, head_dim, hidden) | heads |
    | feed-forward intermediate kernel, bias | (hidden, intermediate), (intermediate,) | intermediate |
    | feed-forward output kernel | (intermediate, hidden) | intermediate |

    Everything else (LayerNorms, position and segment embeddings, pooler,
    heads, the biases that are summed across shards) is replicated.

    Args:
        device_mesh: a `keras.distribution.DeviceMesh` with an axis named `model_axis`.
        model_axis: the mesh axis to shard over.

    Returns:
        A `keras.distribution.LayoutMap`.
    """
    if model_axis not in device_mesh.axis_names:
        raise ValueError(
            f"`model_axis` {model_axis!r} is not an axis of the device mesh {tuple(device_mesh.axis_names)}"
        )
    layout_map = keras.distribution.LayoutMap(device_mesh)
    m = model_axis
    # Keys are full-match regexes over variable paths.
    layout_map[r".*token_embedding/embeddings"] = (m, None)
    layout_map[r".*self_attention/qkv/kernel"] = (None, None, m, None)
    layout_map[r".*self_attention/qkv/bias"] = (None, m, None)
    layout_map[r".*self_attention/output/kernel"] = (m, None, None)
    layout_map[r".*intermediate_dense/kernel"] = (None, m)
    layout_map[r".*intermediate_dense/bias"] = (m,)
    layout_map[r".*output_dense/kernel"] = (m, None)
    return layout_map


def _check_backend(name):
    backend = keras.backend.backend()
    if name in TF_STRATEGIES and backend != "tensorflow":
        raise ValueError(
            f"strategy {name!r} is a tf.distribute strategy and needs KERAS_BACKEND=tensorflow "
            f"(current backend: {backend}). On JAX use 'data-parallel' or 'model-parallel'."
        )
    if name in JAX_STRATEGIES and backend != "jax":
        hint = "use 'mirrored' or 'multi-worker'" if backend == "tensorflow" else "the torch backend runs on one device"
        raise ValueError(
            f"strategy {name!r} uses keras.distribution, which keras_bert supports on the JAX backend "
            f"(current backend: {backend}); {hint}."
        )


def create_strategy(name, mesh_shape=None, tpu=None):
    """The distribution object for `name`.

    Args:
        name: one of "none", "mirrored", "multi-worker", "tpu", "data-parallel", "model-parallel".
        mesh_shape: (data, model) device-mesh shape for "model-parallel";
            default (1, number of devices).
        tpu: TPU address for "tpu" ("" or None finds the Colab/Cloud TPU).

    Returns:
        None for "none", a `tf.distribute.Strategy` for the TensorFlow ones,
        a `keras.distribution.Distribution` for the JAX ones.
    """
    if name not in STRATEGIES:
        raise ValueError(f"Unknown strategy {name!r}. Choose one of {STRATEGIES}")
    if name == "none":
        return None
    _check_backend(name)
    if name in TF_STRATEGIES:
        import tensorflow as tf

        if name == "mirrored":
            return tf.distribute.MirroredStrategy()
        if name == "multi-worker":
            if "TF_CONFIG" not in os.environ:
                raise ValueError("strategy 'multi-worker' needs the TF_CONFIG environment variable (cluster and task).")
            return tf.distribute.MultiWorkerMirroredStrategy()
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu or "")
        tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    devices = keras.distribution.list_devices()
    if name == "data-parallel":
        return keras.distribution.DataParallel(devices=devices)
    mesh_shape = tuple(mesh_shape or (1, len(devices)))
    if len(mesh_shape) != 2 or mesh_shape[0] * mesh_shape[1] != len(devices):
        raise ValueError(
            f"`mesh_shape` must be (data, model) with data * model = {len(devices)} devices. Received: {mesh_shape}"
        )
    mesh = keras.distribution.DeviceMesh(shape=mesh_shape, axis_names=("batch", "model"), devices=devices)
    return keras.distribution.ModelParallel(layout_map=bert_layout_map(mesh), batch_dim_name="batch")


@contextlib.contextmanager
def strategy_scope(name="none", mesh_shape=None, tpu=None):
    """A context in which models, optimizers and `fit` run distributed.

    Build and compile the model inside it; for tf.distribute strategies also
    call `fit` inside (Keras does that for you when the model was built there).

    Yields:
        The strategy or distribution object (None for "none").
    """
    strategy = create_strategy(name, mesh_shape=mesh_shape, tpu=tpu)
    if strategy is None:
        yield None
        return
    # tf.distribute strategies and keras.distribution objects both offer scope().
    with strategy.scope():
        yield strategy


def is_chief():
    """Whether this process should write checkpoints and final files.

    True for single-process runs; in a TF_CONFIG cluster, the chief (or
    worker 0 when there is no chief); under `jax.distributed`, process 0.
    """
    config = json.loads(os.environ.get("TF_CONFIG", "{}"))
    task = config.get("task")
    if task:
        has_chief = "chief" in config.get("cluster", {})
        return task["type"] == "chief" or (not has_chief and task["type"] == "worker" and task["index"] == 0)
    if keras.backend.backend() == "jax":
        import jax

        return jax.process_index() == 0
    return True
