"""TrainableTFSMLayer: `keras.layers.TFSMLayer` whose weights Adam-style optimizers can train."""

import keras


@keras.saving.register_keras_serializable(package="keras_bert")
class TrainableTFSMLayer(keras.layers.TFSMLayer):
    """`keras.layers.TFSMLayer`, with weight names that optimizers can build slot variables from.

    Keras 3.15's `TFSMLayer` names each reloaded weight after its TensorFlow
    variable, `":0"` suffix included (`embeddings_token_embedding_embeddings:0`).
    An optimizer with slot variables (Adam, AdamW, SGD with momentum) names
    its slots after the weight and fails on the colon: "'...embeddings:0_momentum'
    is not a valid scope name". Plain SGD has no slots and trains a stock
    `TFSMLayer`. This subclass only drops the suffix; loading, the endpoints
    and training behave as in `TFSMLayer`. TensorFlow backend only, as `TFSMLayer`.

    Args:
        As `keras.layers.TFSMLayer`: `filepath`, `call_endpoint`,
        `call_training_endpoint`, `trainable`, `name`, `dtype`.

    Examples:
    ```python
    encoder = keras_bert.export.TrainableTFSMLayer(
        "saved_models/minilm_hub/encoder", call_endpoint="serve",
        call_training_endpoint="serve_training", trainable=True)
    pooled = encoder(encoder_inputs)["pooled_output"]
    ```
    """

    def _add_existing_weight(self, weight):
        # TFSMLayer's own method, with the name's ":0" (the tensor index) dropped.
        variable = keras.Variable(
            initializer=weight,  # the SavedModel's variable itself (not a copy): the endpoints use it
            trainable=weight.trainable,
            dtype=weight.dtype,
            shape=weight.shape,
            name=weight.name.split(":")[0].replace("/", "_"),  # Keras variable names cannot hold "/"
        )
        self._track_variable(variable)
