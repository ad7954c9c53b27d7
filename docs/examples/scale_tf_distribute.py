"""tf.distribute strategies on the TensorFlow backend (docs/guides/scaling-out.md). TensorFlow pass."""

# --8<-- [start:mirrored]
import os

os.environ.setdefault("KERAS_BACKEND", "tensorflow")  # tf.distribute needs the TensorFlow backend

import numpy as np

import keras_bert

rng = np.random.default_rng(0)
x = {"token_ids": rng.integers(1, 100, (32, 32), dtype="int32"),
     "segment_ids": np.zeros((32, 32), "int32"),
     "padding_mask": np.ones((32, 32), "int32")}
y = rng.integers(0, 2, (32,))

# "mirrored": every local GPU (or the CPU when there is none); build and compile inside the scope.
with keras_bert.distribution.strategy_scope("mirrored") as strategy:
    classifier = keras_bert.BertClassifier(keras_bert.BertBackbone.from_size("tiny", vocabulary_size=100), num_classes=2)
    classifier.compile()
print(type(strategy).__name__, strategy.num_replicas_in_sync >= 1)  # → MirroredStrategy True
classifier.fit(x, y, batch_size=16, epochs=1, verbose=0)  # the global batch, split over the replicas
# --8<-- [end:mirrored]
