"""Scaling BERT out on the engines people already have.

- TensorFlow backend: `tf.distribute` strategies ("mirrored", "multi-worker",
  "tpu"). The model and optimizer are created under `strategy.scope()`;
  Keras' `fit` then distributes the tf.data input with the global batch size
  and reduces metrics across replicas.
- JAX backend: `keras.distribution` ("data-parallel", or "model-parallel"
  with `bert_layout_map`, which shards attention over heads, the feed-forward
  network over its intermediate dimension and the token embedding over the
  vocabulary, replicating everything else).
- torch backend: one device (the default CPU or GPU). Asking for a
  distribution there raises a `ValueError` that says so.

The pretraining job (`keras_bert.jobs.pretrain.pretrain`, `keras-bert pretrain
--strategy ...`) uses these: `batch_size` is the global batch, split across
the data-parallel replicas; only the chief writes files.

Examples:
```python
with keras_bert.distribution.strategy_scope("data-parallel"):     # JAX
    model = keras_bert.BertPretrainer(keras_bert.BertBackbone.from_size("base"))
    model.compile()
    model.fit(dataset)  # inside: keras.distribution shards the batches of fit

with keras_bert.distribution.strategy_scope("model-parallel", mesh_shape=(2, 4)):
    ...

with keras_bert.distribution.strategy_scope("mirrored"):          # TensorFlow
    ...
```
"""

import contextlib
import json
import os
import re

import keras

from keras_bert.layers.feed_forward_layout import building_gated_feed_forward
from keras_bert.option_values import JAX_STRATEGIES, STRATEGIES, TF_STRATEGIES


def bert_layout_map(device_mesh, model_axis="model", gated_feed_forward=False):
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
    heads, the biases that are summed across shards) is replicated. Use it
    with `BertModelParallel` (what `create_strategy("model-parallel")`
    makes), which moves a shard whose dimension the mesh axis does not divide
    (e.g. a vocabulary of 30522 over 4 devices) to another dimension.

    A gated feed-forward network (`gated_feed_forward=True`, ModernBERT's
    GeGLU) has an intermediate kernel of `(hidden, 2 * intermediate)` that
    `TransformerEncoder` splits into the input half and the gate half, which
    are multiplied element by element. Sharded over its columns in `n`
    contiguous blocks, device `d` would hold columns of one half only (with
    2 devices: all of the input half on one, all of the gate half on the
    other), so each product would pair values held on different devices:
    still computed right by JAX, but only after moving the whole intermediate
    activation between devices in every block. Each half sharded evenly
    over the axis needs interleaved blocks, which a layout of the 2-D kernel
    cannot state; so the gated kernel (and bias) is replicated, every device
    forms `act(input) * gate` in full, and the output kernel stays sharded over
    `intermediate` (each device reads its rows of that product and the
    partial outputs are summed, as for BERT). Both layouts compute the same
    numbers; which is faster on real devices (replication's extra matmul work
    against the column layout's traffic) has not been measured. Under
    `create_strategy("model-parallel")` (the command line's) no flag is
    needed: a gated block builds its kernel in
    `keras_bert.layers.feed_forward_layout.gated_feed_forward_scope`, and
    `BertModelParallel` replicates what is built there.

    Args:
        device_mesh: a `keras.distribution.DeviceMesh` with an axis named `model_axis`.
        model_axis: the mesh axis to shard over.
        gated_feed_forward: the blocks' feed-forward network is gated
            (`ModernBertBackbone`): replicate its intermediate kernel and bias.

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
    intermediate = None if gated_feed_forward else m
    layout_map[r".*intermediate_dense/kernel"] = (None, intermediate)
    layout_map[r".*intermediate_dense/bias"] = (intermediate,)
    layout_map[r".*output_dense/kernel"] = (m, None)
    return layout_map


class _UnevenBatchesReplicated:
    """Replicates a batch that the mesh's batch axis does not divide, instead of refusing it.

    JAX cannot split an axis unevenly, and held-out data ends with a smaller
    batch: 10 held-out texts in batches of 16 make one batch of 10, which 4
    devices cannot share ("implies that array axis 0 is partitioned 4 times,
    but the dimension size is 10"). Such a batch is replicated instead, and
    every device computes all of it (the results are the same; only that batch
    runs without data parallelism). Training batches are full, so they are
    still split. Single-process runs only: with several processes each holds
    its own part of the global batch, which cannot be replicated.
    """

    def get_data_layout(self, data_shape):
        layout = super().get_data_layout(data_shape)
        batch = dict(zip(self.device_mesh.axis_names, self.device_mesh.shape))[self.batch_dim_name]
        if self._is_multi_process or not data_shape or data_shape[0] is None or data_shape[0] % batch == 0:
            return layout
        return keras.distribution.TensorLayout([None] * len(data_shape), self.device_mesh)


class _BertDataParallel(_UnevenBatchesReplicated, keras.distribution.DataParallel):
    """`keras.distribution.DataParallel` that replicates an uneven last batch (see `_UnevenBatchesReplicated`)."""


class BertModelParallel(_UnevenBatchesReplicated, keras.distribution.ModelParallel):
    """`keras.distribution.ModelParallel` that never asks for an uneven split.

    Of a batch (see `_UnevenBatchesReplicated`), nor of a variable: JAX refuses
    to shard a dimension that the mesh axis does not divide
    (`IndivisibleError`), and real BERT sizes hit that: Google's English
    vocabulary has 30522 tokens, which does not split 4 or 8 ways. Where the
    layout map shards such a dimension, the mesh axis moves to the first
    other dimension of the variable that it divides (for the token embedding:
    the hidden axis), or the variable is replicated.
    """

    def get_variable_layout(self, variable):
        # A gated feed-forward network's intermediate kernel (see `bert_layout_map`): replicated.
        if building_gated_feed_forward() and re.fullmatch(r".*intermediate_dense/(kernel|bias)", variable.path):
            return keras.distribution.TensorLayout([None] * len(variable.shape), self.device_mesh)
        layout = super().get_variable_layout(variable)
        sizes = dict(zip(self.device_mesh.axis_names, self.device_mesh.shape))
        axes = list(layout.axes)
        for i, name in enumerate(layout.axes):
            if name is None or variable.shape[i] % sizes[name] == 0:
                continue
            axes[i] = None
            even = [j for j, dim in enumerate(variable.shape) if axes[j] is None and j != i and dim % sizes[name] == 0]
            if even:
                axes[even[0]] = name
        if axes == list(layout.axes):
            return layout
        return keras.distribution.TensorLayout(axes, self.device_mesh)


def _check_backend(name):
    backend = keras.backend.backend()
    if backend == "torch":
        raise ValueError(
            f"strategy {name!r} was requested, but on the torch backend keras_bert trains on one device "
            "(the default CPU or GPU) and offers no distribution. Use KERAS_BACKEND=tensorflow for "
            "'mirrored', 'multi-worker' or 'tpu', or KERAS_BACKEND=jax for 'data-parallel' or 'model-parallel'."
        )
    if name in TF_STRATEGIES and backend != "tensorflow":
        raise ValueError(
            f"strategy {name!r} is a tf.distribute strategy and needs KERAS_BACKEND=tensorflow "
            f"(current backend: {backend}). On JAX use 'data-parallel' or 'model-parallel'."
        )
    if name in JAX_STRATEGIES and backend != "jax":
        raise ValueError(
            f"strategy {name!r} uses keras.distribution, which keras_bert supports on the JAX backend "
            f"(current backend: {backend}); use 'mirrored' or 'multi-worker'."
        )


def _multi_worker_strategy():
    """A `tf.distribute.MultiWorkerMirroredStrategy` whose `reduce` takes what Keras 3.15 passes it.

    Keras 3.15's TensorFlow trainer makes two `strategy.reduce` calls that
    `MultiWorkerMirroredStrategy` refuses once there is more than one worker
    (tensorflow/tensorflow#72388):

    - `_maybe_symbolic_build` reduces the whole first batch, a dict of
      `PerReplica` inputs, with `axis=None`. `MirroredStrategy`'s
      `_reduce_to` maps over nested structures; the collective one passes the
      dict to `CrossDeviceOps.reduce` as one value, which fails in
      `convert_to_tensor` ("Attempt to convert a value ({'token_ids': ...})
      with an unsupported type (<class 'dict'>) to a Tensor").
    - `reduce_per_replica` reduces every scalar log (loss, metric results)
      with `strategy.reduce("MEAN", v, axis=0)` when in multi-worker mode;
      `axis=0` first reduces within each replica's tensor, and a scalar has
      no axis 0 ("Invalid reduction dimension 0 for input with 0 dimensions").

    This subclass maps `reduce` over nested structures and reduces rank-0
    values across replicas only (`axis=None`, which the `Strategy.reduce`
    docs prescribe for tensors without a batch dimension). Every other call
    is passed through unchanged, and the training step itself is untouched.
    """
    import tensorflow as tf  # deferred: the JAX and torch backends run without TensorFlow

    class KerasMultiWorkerMirroredStrategy(tf.distribute.MultiWorkerMirroredStrategy):
        def reduce(self, reduce_op, value, axis):
            def reduce_one(v):
                rank = self.experimental_local_results(v)[0].shape.rank
                return super(KerasMultiWorkerMirroredStrategy, self).reduce(
                    reduce_op, v, axis=None if rank == 0 else axis
                )

            # PerReplica values are composite tensors: nest treats them as leaves.
            return tf.nest.map_structure(reduce_one, value)

    return KerasMultiWorkerMirroredStrategy()


# The collective strategies made in this process, by name. A second MirroredStrategy over the same devices
# numbers its collective ops (group and instance keys) from the same start as the first, so a second job in
# one process (pretrain, then fine-tune, in a notebook) failed in its first all-reduce with "Shape mismatch in
# the collective instance 100"; TensorFlow also allows one MultiWorkerMirroredStrategy per process. A strategy
# holds no model state, so every job of the process shares one.
_STRATEGIES_MADE = {}


def _one_per_process(name, make):
    if name not in _STRATEGIES_MADE:
        _STRATEGIES_MADE[name] = make()
    return _STRATEGIES_MADE[name]


def create_strategy(name, mesh_shape=None, tpu=None):
    """The distribution object for `name`.

    Args:
        name: one of "none", "mirrored", "multi-worker", "tpu", "data-parallel", "model-parallel".
        mesh_shape: (data, model) device-mesh shape for "model-parallel";
            default (1, number of devices).
        tpu: for "tpu": None or "local" for a TPU attached to this VM (Colab's
            TPU runtimes and Cloud TPU VMs); a TPU name or grpc:// address for
            a TPU reached over the network ("" asks the Cloud TPU metadata).

    Returns:
        None for "none", a `tf.distribute.Strategy` for the TensorFlow ones,
        a `keras.distribution.Distribution` for the JAX ones. "mirrored" and
        "multi-worker" give the same strategy object on every call in a
        process (two would number their collective ops alike).
    """
    if name not in STRATEGIES:
        raise ValueError(f"Unknown strategy {name!r}. Choose one of {STRATEGIES}")
    if name == "none":
        return None
    _check_backend(name)
    if name in TF_STRATEGIES:
        import tensorflow as tf  # deferred: the JAX and torch backends run without TensorFlow

        if name == "mirrored":
            return _one_per_process(name, tf.distribute.MirroredStrategy)
        if name == "multi-worker":
            if "TF_CONFIG" not in os.environ:
                raise ValueError("strategy 'multi-worker' needs the TF_CONFIG environment variable (cluster and task).")
            return _one_per_process(name, _multi_worker_strategy)
        tpu = "local" if tpu is None else tpu
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=tpu)
        if tpu != "local":  # a remote TPU: its TensorFlow server runs the steps
            tf.config.experimental_connect_to_cluster(resolver)
        tf.tpu.experimental.initialize_tpu_system(resolver)
        return tf.distribute.TPUStrategy(resolver)
    devices = keras.distribution.list_devices()
    if name == "data-parallel":
        return _BertDataParallel(devices=devices)
    mesh_shape = tuple(mesh_shape or (1, len(devices)))
    if len(mesh_shape) != 2 or mesh_shape[0] * mesh_shape[1] != len(devices):
        raise ValueError(
            f"`mesh_shape` must be (data, model) with data * model = {len(devices)} devices. Received: {mesh_shape}"
        )
    mesh = keras.distribution.DeviceMesh(shape=mesh_shape, axis_names=("batch", "model"), devices=devices)
    return BertModelParallel(layout_map=bert_layout_map(mesh), batch_dim_name="batch")


@contextlib.contextmanager
def strategy_scope(strategy="none", mesh_shape=None, tpu=None):
    """A context in which models, optimizers and `fit` run distributed.

    Build and compile the model inside it. tf.distribute models remember their
    strategy, so `fit` may run outside; keras.distribution (JAX) needs `fit`
    inside too, to shard the batches.

    Args:
        strategy: a name (see `create_strategy`), or a strategy / distribution
            made earlier (e.g. "multi-worker", which must exist before any
            other TensorFlow work), or None.
        mesh_shape, tpu: see `create_strategy` (names only).

    Yields:
        The strategy or distribution object (None for "none").
    """
    strategy = resolve_strategy(strategy, mesh_shape=mesh_shape, tpu=tpu)
    if strategy is None:
        yield None
        return
    # tf.distribute strategies and keras.distribution objects both offer scope().
    with strategy.scope():
        yield strategy


def resolve_strategy(strategy, mesh_shape=None, tpu=None):
    """`create_strategy(strategy, ...)` for a name; None and strategy objects pass through."""
    if strategy is None or not isinstance(strategy, str):
        return strategy
    return create_strategy(strategy, mesh_shape=mesh_shape, tpu=tpu)


def prepare_dataset(dataset, strategy, per_worker=False):
    """`dataset` made ready for `strategy`'s `fit`: static shapes for TPUs, data sharding across workers.

    Keras distributes a `tf.data` input itself (tf.distribute) or shards each
    batch (keras.distribution); two things are left to the caller:

    - TPU: every shape must be static (see `check_static_shapes`).
    - More than one worker: every worker runs the same seeded pipeline and
      keeps its replicas' share of each global batch (`AutoShardPolicy.DATA`).
      The default (AUTO) would first try to shard by input file, which the
      pretraining pipeline does not read through `tf.data`, and, for
      TFRecords, would give each worker other examples than a one-process
      run sees at the same step.
      With `per_worker=True` the dataset already holds only this worker's
      share (a streamed corpus, see `streaming.worker_share` in
      preprocessing/pretraining): nothing is sharded again (`AutoShardPolicy.OFF`).
    """
    if strategy is None or keras.backend.backend() != "tensorflow":
        return dataset
    import tensorflow as tf  # deferred: the JAX and torch backends run without TensorFlow

    if is_tpu_strategy(strategy):
        check_static_shapes(dataset)
    if strategy.extended._in_multi_worker_mode():  # private; Keras and tf.distribute test it the same way
        options = tf.data.Options()
        policy = tf.data.experimental.AutoShardPolicy
        options.experimental_distribute.auto_shard_policy = policy.OFF if per_worker else policy.DATA
        dataset = dataset.with_options(options)
    return dataset


def skip_steps(dataset, steps, batch_size, strategy, per_worker=False):
    """`dataset` (batches of `batch_size`, the global batch) past what this process trained on in `steps` steps.

    A resumed run calls it with the checkpoint's step, before `prepare_dataset`.
    One step takes one batch of `dataset`, except with `per_worker` data (see
    `prepare_dataset`) in a TensorFlow multi-worker run: tf.distribute splits
    each of this worker's batches into one piece per replica of the whole
    cluster, and this worker's replicas take them over `num_workers` steps, so
    a step takes `batch_size / num_workers` of its rows. Skipping whole
    batches there would skip `num_workers` times too much.
    """
    _, num_workers = worker_index_and_count(strategy)
    if not steps or not per_worker or num_workers == 1:
        return dataset.skip(steps)
    if batch_size % num_workers:
        raise ValueError(
            f"`batch_size` must split evenly over the {num_workers} workers. Received: batch_size={batch_size}"
        )
    # Rows of the uninterrupted run's pieces: the same pieces from here on, whatever `steps` is.
    rows_per_step = batch_size // num_workers
    return dataset.rebatch(rows_per_step, drop_remainder=True).skip(steps).rebatch(batch_size, drop_remainder=True)


def worker_index_and_count(strategy):
    """`(worker_index, num_workers)` of this process in a TensorFlow multi-worker run, else `(0, 1)`.

    The chief (if the cluster has one) is worker 0, then the workers in order.
    """
    if strategy is None or keras.backend.backend() != "tensorflow" or not hasattr(strategy, "cluster_resolver"):
        return 0, 1
    if not strategy.extended._in_multi_worker_mode():  # private; as in `prepare_dataset`
        return 0, 1
    resolver = strategy.cluster_resolver
    cluster = resolver.cluster_spec().as_dict()
    tasks = [("chief", i) for i in range(len(cluster.get("chief", [])))]
    tasks += [("worker", i) for i in range(len(cluster.get("worker", [])))]
    return tasks.index((resolver.task_type, resolver.task_id)), len(tasks)


def data_parallel_size(strategy):
    """How many ways the global batch is split: replicas in sync, or the mesh's batch axis."""
    if strategy is None:
        return 1
    if hasattr(strategy, "device_mesh"):  # keras.distribution (which exports no base class)
        mesh = strategy.device_mesh
        return mesh.shape[list(mesh.axis_names).index(strategy.batch_dim_name)]
    return strategy.num_replicas_in_sync


def is_tpu_strategy(strategy):
    if strategy is None or keras.backend.backend() != "tensorflow":
        return False
    import tensorflow as tf  # deferred: the JAX and torch backends run without TensorFlow

    return isinstance(strategy, tf.distribute.TPUStrategy)


def check_static_shapes(dataset):
    """Raises unless every component of `dataset`'s elements has a fully known shape.

    TPUStrategy compiles the training step with XLA for fixed shapes, and
    TensorFlow's TPU guide asks for `drop_remainder=True` so that every batch
    has one static shape. A batch dimension of None (a `tf.data` batch
    without `drop_remainder`) or an unpadded sequence length breaks that; the
    pretraining job checks it before it starts, naming the offending input.
    """
    paths = keras.tree.flatten_with_path(dataset.element_spec)
    dynamic = [
        f"{'/'.join(map(str, path))}: {spec.shape}" for path, spec in paths if not spec.shape.is_fully_defined()
    ]
    if dynamic:
        raise ValueError(
            "TPUs need fully static shapes (batch with drop_remainder=True, pad to a fixed sequence length). "
            f"Not static: {', '.join(dynamic)}"
        )


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
        import jax  # deferred: JAX is only installed where it is the backend

        return jax.process_index() == 0
    return True
