"""EncoderBackbone: the one base of every backbone of the family (BERT, ALBERT, DistilBERT, ELECTRA, RoBERTa, ModernBERT).

A family member is a subclass that states only what is its own: its
constructor's arguments and defaults (the signature is the config), its
`model_type`, its inputs, whether it has a pooler, shares one block across
layers or always projects its embeddings, and the hooks where its layers
differ (`embedding_layer`, `position_ids`, `transformer_block`,
`final_norm_layer`). This class
builds the layers and the functional graph from them, and gives every member
the input checks, saving, `from_pretrained`, `from_preset` and `from_size`.

The graph is the same for the whole family:

    token_ids, segment_ids, padding_mask
      -> embeddings (token + segment + position, LayerNorm, dropout; ModernBERT: token only)
      -> [embedding_projection]       (ALBERT; ELECTRA when embedding_dim != hidden_dim)
      -> transformer blocks           (post-LN, or pre-LN with a final LayerNorm)
      -> sequence_output, pooled_output (the pooler on [CLS], or [CLS] as it is)
"""

import functools
import inspect

import keras

from keras_bert.converters.checkpoint import read_checkpoint
from keras_bert.layers.bert_embeddings import BertEmbeddings
from keras_bert.layers.pooler import Pooler
from keras_bert.layers.self_attention import packed_attention_mask
from keras_bert.layers.transformer_encoder import TransformerEncoder
from keras_bert.models.bert_sizes import BERT_SIZES
from keras_bert.models.input_checks import BACKBONE_INPUTS, PACKED_INPUTS, check_fit_data, check_inputs
from keras_bert.torch_training.compiled_inference_steps import CompiledInferenceSteps
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


def constructor_arguments(local_variables):
    """A family constructor's arguments, from its `locals()`: every named argument, and the `**kwargs` merged in.

    Called first thing in the constructor (`super().__init__(**constructor_arguments(locals()))`),
    before any other local exists, so the signature alone says what the config is.
    """
    arguments = {k: v for k, v in local_variables.items() if k not in ("self", "__class__", "kwargs")}
    return {**arguments, **local_variables.get("kwargs", {})}


class EncoderBackbone(CompiledInferenceSteps, keras.Model):
    """The base class of the backbones: a functional model built from, and rebuilt from, its constructor arguments.

    A subclass's constructor signature is its config: every argument but
    `dtype`, `**kwargs` and `build_arguments` is stored as an attribute of the
    same name and returned by `get_config`. The constructor calls
    `super().__init__(**constructor_arguments(locals()))`. What differs between
    families is said by the class attributes and hooks below.

    Every backbone gets:

    - `input_names`, `token_embedding` (for tied MLM decoders), `input_limits`,
      `encoder_blocks` (the blocks in the order they run);
    - the input checks on every call, `fit`, `predict` and `evaluate` (a wrong
      input name, rank, dtype or out-of-range id fails with a clear message);
    - `get_config`/`from_config`, with the dtype policy and the layers
      `model.quantize` changed;
    - `from_pretrained` (checkpoints of the family's `model_type`),
      `from_preset` and `from_size`.

    Its layers are attributes named as the converters address them:
    `embeddings` (a `BertEmbeddings`), `embedding_projection` (or None),
    `transformer_layers` (or `transformer_layer` when shared),
    `final_layer_norm` (pre-LN only) and `pooler` (families with one).
    """

    # Hugging Face's `model_type` of the family's checkpoints ("bert", "albert", ...).
    model_type = None
    # The names of the inputs, in order (without the packed-sequence inputs).
    backbone_inputs = BACKBONE_INPUTS
    # A tanh pooler on [CLS] (BERT, ALBERT, RoBERTa); without one, `pooled_output` is [CLS] as it is.
    has_pooler = True
    # One block applied `num_layers` times (ALBERT) instead of `num_layers` blocks.
    shares_blocks = False
    # A dense layer from `embedding_dim` to `hidden_dim` even when they are equal (ALBERT).
    always_projects_embeddings = False
    # Constructor arguments that build the model but are not its config (ELECTRA's `shared_embeddings`).
    build_arguments = ()
    # Config entries left out of `get_config` while they hold their default, so configs (and `.keras` files)
    # written before the argument existed stay as they were.
    omitted_when_default = ()

    def __init__(self, dtype=None, **arguments):
        config = {name: arguments.pop(name) for name in self.config_names()}
        build = {name: arguments.pop(name) for name in self.build_arguments if name in arguments}
        # What is left goes to keras.Model, which would accept any keyword without a word: a misspelt option, or
        # one another family has (BertBackbone's `normalize_first` given to RobertaBackbone), would build a
        # model other than the one asked for.
        unexpected = sorted(set(arguments) - {"name", "trainable"})
        if unexpected:
            raise TypeError(
                f"{type(self).__name__} got unexpected argument(s) {', '.join(map(repr, unexpected))}; it takes "
                f"{', '.join(self.config_names() + self.build_arguments)}, dtype, name and trainable."
            )
        check_encoder_sizes(config["num_layers"], config["num_heads"], config["hidden_dim"])

        # === Layers === (locals until the model is initialised: the torch backend
        # refuses sublayer attributes before `Module.__init__`)
        layers = self._new_layers(config, dtype, build)

        # === Functional graph ===
        inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in self._inputs_of(config)}
        outputs = self._graph(inputs, layers, config)
        super().__init__(inputs=inputs, outputs=outputs, **arguments)
        # Functional models drop `dtype`; set the policy so config, saving and
        # loss scaling (mixed_float16) see the one the layers use.
        if dtype is not None:
            self.dtype_policy = dtype
            warn_if_bfloat16_is_slow(self.dtype_policy)
        for name, layer in layers.items():
            if name != "blocks":
                setattr(self, name, layer)
        # A learned position table bounds the input length (no longer input gets through the embeddings):
        # attention is told, so a TensorFlow graph with a free length never traces its query-chunk loop.
        longest = layers["embeddings"].max_sequence_length
        for block in dict.fromkeys(layers["blocks"]):  # ALBERT's one shared block once
            block.attention.max_length = longest

        # === Config ===
        for name, value in config.items():
            setattr(self, name, value)

    # --- what a family may change: hooks called before the model exists (they must not set attributes).
    def embedding_layer(self, config, dtype, **build):
        """The family's embeddings: token, segment and learned position tables (`BertEmbeddings`)."""
        return BertEmbeddings(
            vocabulary_size=config["vocabulary_size"],
            hidden_dim=config.get("embedding_dim") or config["hidden_dim"],
            max_sequence_length=self.position_table_size(config),
            num_segments=config.get("num_segments", 0),
            dropout=config["dropout"],
            layer_norm_epsilon=config["layer_norm_epsilon"],
            layer_norm_bias=config.get("layer_norm_bias", True),
            dtype=dtype,
            name="embeddings",
        )

    def position_table_size(self, config):
        """Rows of the learned position table (RoBERTa's has room for its offset)."""
        return config["max_sequence_length"]

    def position_ids(self, inputs, config):
        """The tokens' positions, `(batch_size, sequence_length)`, or None for `0..length-1`.

        Packed sequences take theirs from the `position_ids` input.
        """
        return inputs.get("position_ids")

    def block_arguments(self, inputs, config):
        """Call arguments every block takes beyond the masks (none here; ModernBERT's packed positions)."""
        return {}

    def final_norm_layer(self, config, dtype):
        """The LayerNorm after the last block, or None: pre-LN blocks only (post-LN ones end normalised)."""
        if not config.get("normalize_first"):
            return None
        return keras.layers.LayerNormalization(
            epsilon=config["layer_norm_epsilon"], center=config.get("layer_norm_bias", True), dtype=dtype,
            name="final_layer_norm",
        )

    def transformer_block(self, config, dtype, index, name):
        """Block `index` (None for ALBERT's shared block): BERT's `TransformerEncoder`."""
        return TransformerEncoder(
            num_heads=config["num_heads"],
            intermediate_dim=config["intermediate_dim"],
            dropout=config["dropout"],
            layer_norm_epsilon=config["layer_norm_epsilon"],
            normalize_first=config.get("normalize_first", False),
            activation=config["activation"],
            # The small-compute options (BertBackbone's and ElectraBackbone's); the other families' blocks are BERT's.
            gated_feed_forward=config.get("gated_feed_forward", False),
            attention_bias=config.get("attention_bias", True),
            feed_forward_bias=config.get("feed_forward_bias", True),
            layer_norm_bias=config.get("layer_norm_bias", True),
            dtype=dtype,
            name=name,
        )

    # --- building
    def _new_layers(self, config, dtype, build):
        """The layers by attribute name; "blocks" holds the blocks in the order the graph runs them."""
        layers = {"embeddings": self.embedding_layer(config, dtype, **build)}
        embedding_dim = config.get("embedding_dim") or config["hidden_dim"]
        layers["embedding_projection"] = None
        if self.always_projects_embeddings or embedding_dim != config["hidden_dim"]:
            layers["embedding_projection"] = keras.layers.Dense(
                config["hidden_dim"],
                use_bias=config.get("feed_forward_bias", True),  # a bias-free encoder has no bias here either
                kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
                dtype=dtype,
                name="embedding_projection",
            )
        if self.shares_blocks:  # its weights are ALBERT's single layer group
            layers["transformer_layer"] = self.transformer_block(config, dtype, None, "transformer_layer")
            layers["blocks"] = [layers["transformer_layer"]] * config["num_layers"]
        else:
            layers["transformer_layers"] = [
                self.transformer_block(config, dtype, i, f"transformer_layer_{i}") for i in range(config["num_layers"])
            ]
            layers["blocks"] = layers["transformer_layers"]
        layers["final_layer_norm"] = self.final_norm_layer(config, dtype)
        if self.has_pooler:
            layers["pooler"] = Pooler(dtype=dtype, name="pooler")
        return layers

    def _inputs_of(self, config):
        return self.backbone_inputs + (PACKED_INPUTS if config.get("packed_inputs") else ())

    def _graph(self, inputs, layers, config, token_embeddings=None):
        """The outputs dict, from the `keras.Input`s (or arrays) and the layers; see `call_with_token_embeddings`."""
        embedding_inputs = [inputs["token_ids"]]
        if "segment_ids" in inputs:
            embedding_inputs.append(inputs["segment_ids"])
        options = {} if token_embeddings is None else {"token_embeddings": token_embeddings}
        position_ids = self.position_ids(inputs, config)
        if position_ids is not None:
            options["position_ids"] = position_ids
        x = layers["embeddings"](*embedding_inputs, **options)  # (batch, seq, embedding_dim)
        if layers["embedding_projection"] is not None:
            x = layers["embedding_projection"](x)  # (batch, seq, hidden_dim)
        if config.get("packed_inputs"):
            # (batch, seq, seq): one mask for every layer, block-diagonal over packed examples.
            masks = {"attention_mask": packed_attention_mask(inputs["sequence_ids"], inputs["padding_mask"])}
        else:
            masks = {"padding_mask": inputs["padding_mask"]}
        masks.update(self.block_arguments(inputs, config))
        x, extra = run_encoder(
            x, layers["blocks"], masks, config["output_hidden_states"], config["output_attentions"]
        )
        if layers["final_layer_norm"] is not None:
            x = layers["final_layer_norm"](x)
        pooled = layers["pooler"](x) if self.has_pooler else x[:, 0, :]  # (batch, hidden): [CLS]
        return {"sequence_output": x, "pooled_output": pooled, **extra}

    # --- what the model offers
    def call_with_token_embeddings(self, inputs, token_embeddings):
        """The backbone's outputs with `token_embeddings` in place of the token table's rows (inference).

        The same layers and the same graph as a call, except that the
        embedding layer adds the given vectors where it would look up
        `token_ids` (positions, segments, LayerNorm and every block as usual;
        RoBERTa's positions still come from `token_ids`). Gradient-based
        explanations (`keras_bert.explain`) differentiate with respect to
        them; with `token_embeddings = token_embedding(token_ids)` the outputs
        are the model's own.

        Args:
            inputs: dict of int arrays `(batch_size, sequence_length)`, the
                backbone's inputs (`input_names`).
            token_embeddings: float tensor `(batch_size, sequence_length,
                embedding_dim)`.

        Returns:
            The outputs dict of a call (`sequence_output`, `pooled_output`, ...).
        """
        config = {name: getattr(self, name) for name in self.config_names()}
        layers = {
            "embeddings": self.embeddings, "embedding_projection": self.embedding_projection,
            "blocks": self.encoder_blocks, "final_layer_norm": self.final_layer_norm,
            "pooler": getattr(self, "pooler", None),
        }
        inputs = {name: inputs[name] for name in self.input_names}
        return self._graph(inputs, layers, config, token_embeddings=token_embeddings)

    @classmethod
    @functools.cache
    def config_names(cls):
        """The constructor arguments that make up the config, in signature order."""
        skipped = {"self", "dtype", *cls.build_arguments}
        return tuple(
            name
            for name, parameter in inspect.signature(cls.__init__).parameters.items()
            if name not in skipped and parameter.kind == inspect.Parameter.POSITIONAL_OR_KEYWORD
        )

    @property
    def input_names(self):
        """The names of the inputs this backbone takes."""
        return self._inputs_of({"packed_inputs": getattr(self, "packed_inputs", False)})

    @property
    def masked_lm_head_options(self):
        """The masked-LM head's options that follow the blocks: a bias-free backbone (BertBackbone's and
        ElectraBackbone's bias options) gets a bias-free head transform; BERT's head otherwise."""
        return {"transform_bias": getattr(self, "feed_forward_bias", True),
                "layer_norm_bias": getattr(self, "layer_norm_bias", True)}

    @property
    def token_embedding(self):
        """The token embedding layer (an MLM decoder is tied to it)."""
        return self.embeddings.token_embedding

    @property
    def encoder_blocks(self):
        """The transformer blocks in the order they run (ALBERT's shared block `num_layers` times)."""
        if self.shares_blocks:
            return [self.transformer_layer] * self.num_layers
        return list(self.transformer_layers)

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
        return super().__call__(self._checked_inputs(inputs), *args, **kwargs)

    def _checked_inputs(self, inputs):
        """`inputs`, checked (names, ranks, integer dtype, id ranges, length): bad ids fail here, not in a kernel."""
        check_inputs(inputs, self.input_limits, names=self.input_names, where=self.name)
        return inputs

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
        defaults = inspect.signature(type(self).__init__).parameters
        for name in self.config_names():
            value = getattr(self, name)
            if name not in self.omitted_when_default or value != defaults[name].default:
                config[name] = value
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
    def from_size(cls, size, vocabulary_size=30522, **kwargs):
        """A randomly initialised backbone of a named size.

        Args:
            size: one of "tiny" (L2/H128), "mini" (L4/H256), "small" (L4/H512),
                "medium" (L8/H512), "base" (L12/H768, 110M), "large" (L24/H1024, 340M).
            vocabulary_size: int. Defaults to Google's English vocabulary size.
            **kwargs: any other constructor argument, overriding the size's.
        """
        if size not in BERT_SIZES:
            raise ValueError(f"Unknown BERT size {size!r}. Choose one of {sorted(BERT_SIZES)}")
        return cls(**{**BERT_SIZES[size], "vocabulary_size": vocabulary_size, **kwargs})

    @classmethod
    def from_pretrained(cls, path, cache_dir=None, **kwargs):
        """A backbone with pretrained weights; the format is detected.

        Args:
            path: a Hugging Face folder of this family's `model_type`
                (config.json + model.safetensors, sharded or not, or
                pytorch_model.bin; the bare model or its pretraining/task
                model, whose heads are left aside), a `.keras` file (a
                backbone of this class, or a task model whose backbone is
                one), a hub name `hf://owner/name[@revision]` (downloaded when
                online), or a preset name: a keras-hub name
                ("bert_base_en_uncased") or a Hugging Face id
                ("google-bert/bert-base-uncased"); see `keras_bert.list_presets()`.
                BERT also reads Google TF1 checkpoints (bert_config.json +
                bert_model.ckpt.*). Offline, presets and hub names are read
                from the Hugging Face cache.
            cache_dir: the Hugging Face cache folder for presets and hub names
                (default: `HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`).
            **kwargs: constructor arguments that do not change the weights'
                shapes (`dropout`, `dtype`, `output_attentions`, ...).

        Raises:
            ValueError: a checkpoint of another family (the message names the
                class to use), an unsupported `model_type` (the message names
                the supported ones), or weights that do not fit.
        """
        return build_from_checkpoint(read_checkpoint(path, cache_dir), cls, **kwargs)

    @classmethod
    def from_preset(cls, preset, cache_dir=None, **kwargs):
        """`from_pretrained` under keras-hub's name, e.g. `BertBackbone.from_preset("bert_tiny_en_uncased")`."""
        return cls.from_pretrained(preset, cache_dir=cache_dir, **kwargs)


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
