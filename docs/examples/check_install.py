"""Checks an installation (docs/get-started/install.md)."""

# --8<-- [start:check]
import keras

import keras_bert

print(keras_bert.__version__)  # → 0.1.0
print(keras.backend.backend())  # KERAS_BACKEND, or "tensorflow" when it is not set
# --8<-- [end:check]
