"""EncoderBackbone: what every backbone of the BERT family shares (BERT, ALBERT, DistilBERT, ELECTRA, RoBERTa)."""

import keras

from keras_bert.converters.checkpoint import read_checkpoint
from keras_bert.layers.transformer_encoder import TransformerEncoder
from keras_bert.models.input_checks import BACKBONE_INPUTS, check_fit_data, check_inputs
from keras_bert.models.pretrained import build_from_checkpoint
from keras_bert.models.quantization import quantized_layers, restore_quantization, warn_if_bfloat16_is_slow, warn_if_int8_is_slow
from keras_bert.optimizers import build_before_first_trace


def check_encoder_sizes(num_layers, num_heads, hidden_dim):
    """Raises ValueError for a layer count or a head count that cannot build an encoder."""
    if not isinstance(num_layers, int) or num_layers < 1:
        raise ValueError(f"`num_layers` must be a positive int. Received: num_layers={num_layers!r}")
    if not isinstance(hidden_dim, int) or not isinstance(num_heads, int) or num_heads < 1 or hidden_dim % num_heads:
        raise ValueError(
            f"`num_heads` must divide `hidden_dim`. Received: num_heads={num_heads!r}, hidden_dim={hidden_dim!r}"
        )


class EncoderBackbone(keras.Model):
    """The base class of the backbones: a functional model rebuilt from its constructor arguments.

    Subclasses build their layers and functional graph in `__init__` (as
    `BertBackbone` does), call `super().__init__(inputs=..., outputs=...,
    dtype=dtype, **kwargs)`, keep their embeddings layer as `self.embeddings`
    (a `BertEmbeddings`) and set every constructor argument as an attribute
    of the same name. This class gives them:

    - `input_names`, `token_embedding` (for tied MLM decoders), `input_limits`;
    - the input checks on every call, `fit`, `predict` and `evaluate` (a wrong
      input name, rank, dtype or out-of-range id fails with a clear message);
    - `get_config`/`from_config` from `config_arguments`, with the dtype
      policy and the layers `model.quantize` changed;
    - `from_pretrained`, for checkpoints of the family's `model_type`.
    """

    # Hugging Face's `model_type` of the family's checkpoints ("bert", "albert", ...).
    model_type = None
    # The names of the inputs, in order.
    backbone_inputs = BACKBONE_INPUTS
    # Constructor arguments (other than name, trainable, dtype), stored as attributes of the same name.
    config_arguments = ()

    def __init__(self, inputs, outputs, dtype=None, **kwargs):
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        # Functional models drop `dtype`; set the policy so config, saving and
        # loss scaling (mixed_float16) see the one the layers use.
        if dtype is not None:
            self.dtype_policy = dtype
            warn_if_bfloat16_is_slow(self.dtype_policy)

    @property
    def input_names(self):
        """The names of the inputs this backbone takes."""
        return self.backbone_inputs

    @property
    def token_embedding(self):
        """The token embedding layer (an MLM decoder is tied to it)."""
        return self.embeddings.token_embedding

    # --- input checks: bad input fails here with a clear message, not deep in a kernel.
    @property
    def input_limits(self):
        """What the input checks compare with: vocabulary_size, num_segments, max_sequence_length.

        Not `get_config()`: serialising the dtype policy imports TensorFlow on
        the JAX and torch backends (4 s on the first call of a JAX model).
        """
        return {
            "vocabulary_size": self.vocabulary_size,
            "num_segments": getattr(self, "num_segments", 0),
            "max_sequence_length": self.max_sequence_length,
        }

    def __call__(self, inputs, *args, **kwargs):
        check_inputs(inputs, self.input_limits, names=self.input_names, where=self.name)
        return super().__call__(inputs, *args, **kwargs)

    def fit(self, x=None, *args, **kwargs):
        check_fit_data(x, self.input_limits, self.input_names, self.name)
        build_before_first_trace(self)
        return super().fit(x, *args, **kwargs)

    def predict(self, x, *args, **kwargs):
        check_fit_data(x, self.input_limits, self.input_names, self.name)
        return super().predict(x, *args, **kwargs)

    def evaluate(self, x=None, *args, **kwargs):
        check_fit_data(x, self.input_limits, self.input_names, self.name)
        return super().evaluate(x, *args, **kwargs)

    def quantize(self, mode=None, config=None, filters=None, **kwargs):
        """Keras' `Model.quantize`, then a warning (once) where int8 was measured slower than float32 on CPU."""
        super().quantize(mode, config=config, filters=filters, **kwargs)
        warn_if_int8_is_slow(mode, config)

    # --- saving
    def get_config(self):
        # Functional models serialise their graph by default; ours is rebuilt
        # from these arguments instead, which also keeps layer names stable.
        config = {
            "name": self.name,
            "trainable": self.trainable,
            "dtype": keras.dtype_policies.serialize(self.dtype_policy),
        }
        for name in self.config_arguments:
            config[name] = getattr(self, name)
        # No walrus here: AutoGraph (which converts this when a model is called
        # inside a tf.function, e.g. at SavedModel export) cannot parse one.
        quantized = quantized_layers(self)
        if quantized:
            config["quantized_layers"] = quantized
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config.get("dtype"), dict):
            config["dtype"] = keras.dtype_policies.deserialize(config["dtype"])
        quantized = config.pop("quantized_layers", None)
        model = cls(**config)
        return restore_quantization(model, quantized) if quantized else model

    @classmethod
    def from_pretrained(cls, path, cache_dir=None, **kwargs):
        """A backbone with pretrained weights; the format is detected.

        Args:
            path: a Hugging Face folder of this family's `model_type`
                (config.json + model.safetensors, sharded or not, or
                pytorch_model.bin; the bare model or its pretraining/task
                model, whose heads are left aside), a `.keras` file (a
                backbone of this class, or a task model whose backbone is
                one), or a hub name `hf://owner/name[@revision]`. BERT also
                reads Google TF1 checkpoints.
            cache_dir: the Hugging Face cache folder for hub names.
            **kwargs: constructor arguments that do not change the weights'
                shapes (`dropout`, `dtype`, `output_attentions`, ...).

        Raises:
            ValueError: a checkpoint of another family (the message names the
                class to use), an unsupported `model_type` (the message names
                the supported ones), or weights that do not fit.
        """
        return build_from_checkpoint(read_checkpoint(path, cache_dir), cls, **kwargs)


def transformer_stack(num_layers, num_heads, intermediate_dim, dropout, layer_norm_epsilon, activation, dtype):
    """`num_layers` post-LN `TransformerEncoder` blocks named `transformer_layer_{i}` (the names converters use)."""
    return [
        TransformerEncoder(
            num_heads=num_heads,
            intermediate_dim=intermediate_dim,
            dropout=dropout,
            layer_norm_epsilon=layer_norm_epsilon,
            activation=activation,
            dtype=dtype,
            name=f"transformer_layer_{i}",
        )
        for i in range(num_layers)
    ]


def run_encoder(x, layers, masks, output_hidden_states=False, output_attentions=False):
    """Runs `x` through the blocks `layers` (a block may appear more than once: ALBERT shares one).

    Args:
        x: the embeddings, `(batch_size, sequence_length, hidden_dim)`.
        layers: the `TransformerEncoder` blocks, in order.
        masks: dict of mask arguments for every block (`padding_mask=...`).
        output_hidden_states, output_attentions: bool, what else to return.

    Returns:
        `(sequence_output, extra)`: the last block's output and a dict with
        `hidden_states` (`len(layers) + 1` tensors, the embeddings first) and
        `attentions` (`len(layers)` tensors `(batch_size, num_heads, seq, seq)`)
        as asked.
    """
    hidden_states, attentions = [x], []
    for layer in layers:
        x = layer(x, **masks, return_attention_scores=output_attentions)
        if output_attentions:
            x, probs = x
            attentions.append(probs)
        hidden_states.append(x)
    extra = {}
    if output_hidden_states:
        extra["hidden_states"] = hidden_states
    if output_attentions:
        extra["attentions"] = attentions
    return x, extra
