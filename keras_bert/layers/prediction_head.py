"""ModernBERT's prediction head: dense, activation, LayerNorm, before every task's output layer."""

import keras

from keras_bert.layers._fused import layer_norm, linear
from keras_bert.layers.arguments import get_initializer
from keras_bert.layers.transformer_encoder import ACTIVATIONS


@keras.saving.register_keras_serializable(package="keras_bert")
class PredictionHead(keras.layers.Layer):
    """`LayerNorm(activation(Dense(x)))` at the width of `x`: transformers' `ModernBertPredictionHead`.

    ModernBERT's task models put this transform between the encoder and
    their output layer: the classifier on the pooled vector, the token
    classifier and the span head on every token, the MLM decoder on the
    masked tokens. Its LayerNorm takes the backbone's epsilon and bias
    setting (transformers' `norm_eps`, `norm_bias`); the dense layer's bias
    is its own (`classifier_bias`).

    Args:
        activation: one of `TransformerEncoder`'s activations: "gelu" (exact,
            ModernBERT's `classifier_activation`), "gelu_approximate", "relu".
        use_bias: bool. A bias in the dense layer (`classifier_bias`: False).
        layer_norm_epsilon: float. The LayerNorm's epsilon (ModernBERT: 1e-5).
        layer_norm_bias: bool. A bias (beta) in the LayerNorm (`norm_bias`: False).
        kernel_initializer: initializer of the dense kernel.

    Call arguments:
        x: float tensor of shape `(..., hidden_dim)`: a pooled vector
            `(batch_size, hidden_dim)` or every token `(batch_size, length, hidden_dim)`.

    Returns:
        A float tensor of the shape of `x`.
    """

    def __init__(
        self, activation="gelu", use_bias=False, layer_norm_epsilon=1e-5, layer_norm_bias=False,
        kernel_initializer="truncated_normal", **kwargs,
    ):
        super().__init__(**kwargs)
        if activation not in ACTIVATIONS:
            raise ValueError(f"`activation` must be one of {sorted(ACTIVATIONS)}. Received: activation={activation!r}")
        self.activation = activation
        self.use_bias = bool(use_bias)
        self.layer_norm_epsilon = layer_norm_epsilon
        self.layer_norm_bias = bool(layer_norm_bias)
        self.kernel_initializer = get_initializer(kernel_initializer)
        # Set by `graph_export_form(model)`: the GELU then takes the form graph converters translate.
        self.graph_export_form = False

    def build(self, input_shape):
        width = input_shape[-1]
        self.dense = keras.layers.Dense(
            width, use_bias=self.use_bias, kernel_initializer=self.kernel_initializer, dtype=self.dtype_policy,
            name="dense",
        )
        self.dense.build(input_shape)
        self.layer_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, center=self.layer_norm_bias, dtype=self.dtype_policy, name="layer_norm"
        )
        self.layer_norm.build(input_shape)
        self.built = True

    def call(self, x):
        h = ACTIVATIONS[self.activation](linear(self.dense, x), export_form=self.graph_export_form)
        return layer_norm(self.layer_norm, h)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {
            **super().get_config(),
            "activation": self.activation,
            "use_bias": self.use_bias,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "layer_norm_bias": self.layer_norm_bias,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
        }
