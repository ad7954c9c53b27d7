"""Choosing the backend (docs/get-started/backends.md)."""

# --8<-- [start:choose]
import os

# "tensorflow", "jax" or "torch": set it before keras is first imported
os.environ["KERAS_BACKEND"] = "jax"

import keras

import keras_bert

print(keras.backend.backend())  # → jax
# --8<-- [end:choose]

# --8<-- [start:portable]
backbone = keras_bert.BertBackbone.from_size("tiny")
classifier = keras_bert.BertClassifier(backbone, num_classes=2)
classifier.save("classifier.keras")  # written on one backend ...
restored = keras.saving.load_model("classifier.keras")  # ... loads on all three
print(type(restored).__name__)  # → BertClassifier
# --8<-- [end:portable]
