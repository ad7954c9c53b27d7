"""keras.distribution on the JAX backend: data and model parallelism (docs/guides/scaling-out.md). JAX pass."""

# --8<-- [start:devices]
import os

# To try it on a CPU, have XLA split it into 8 devices, before JAX starts; on GPUs or a TPU VM leave this out.
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")
os.environ.setdefault("KERAS_BACKEND", "jax")

import keras
import numpy as np

import keras_bert

devices = keras.distribution.list_devices()
print(len(devices), "devices, the first:", devices[0])  # → devices, the first: cpu:0
# --8<-- [end:devices]

# --8<-- [start:data_parallel]
# Data parallel: every device holds the whole model and takes its share of each batch.
rng = np.random.default_rng(0)
x = {"token_ids": rng.integers(1, 100, (32, 32), dtype="int32"),
     "segment_ids": np.zeros((32, 32), "int32"),
     "padding_mask": np.ones((32, 32), "int32")}
y = rng.integers(0, 2, (32,))

with keras_bert.distribution.strategy_scope("data-parallel"):
    classifier = keras_bert.BertClassifier(keras_bert.BertBackbone.from_size("tiny", vocabulary_size=100), num_classes=2)
    classifier.compile()
    classifier.fit(x, y, batch_size=16, epochs=1, verbose=0)  # the global batch: 16 rows split over the devices
# --8<-- [end:data_parallel]

# --8<-- [start:model_parallel]
# Model parallel: BERT's large kernels sharded over the mesh's "model" axis (bert_layout_map), batches over "batch".
mesh_shape = (2, len(devices) // 2) if len(devices) % 2 == 0 else (1, len(devices))  # (2, 4) on 8 devices
with keras_bert.distribution.strategy_scope("model-parallel", mesh_shape=mesh_shape) as distribution:
    classifier = keras_bert.BertClassifier(keras_bert.BertBackbone.from_size("tiny", vocabulary_size=100), num_classes=2)
    classifier.compile()  # then fit as above, inside the scope

# The layout: which axis of each variable is split over the "model" axis of the mesh (None: not split).
layout_map = keras_bert.distribution.bert_layout_map(distribution.device_mesh)
print(layout_map["transformer_layer_0/self_attention/qkv/kernel"].axes)  # → (None, None, 'model', None)
# --8<-- [end:model_parallel]
