"""BertBackbone: the BERT encoder as a functional Keras model."""

import keras

from keras_bert.converters.checkpoint import read_checkpoint
from keras_bert.converters.keras_hub_interop import keras_hub_backbone, keras_hub_backbone_config, keras_hub_tensors
from keras_bert.converters.weight_map import assign_entries, model_entries
from keras_bert.layers.bert_embeddings import BertEmbeddings
from keras_bert.layers.pooler import Pooler
from keras_bert.layers.self_attention import packed_attention_mask
from keras_bert.layers.transformer_encoder import TransformerEncoder
from keras_bert.models.bert_sizes import BERT_SIZES
from keras_bert.models.encoder_backbone import EncoderBackbone
from keras_bert.models.input_checks import BACKBONE_INPUTS, PACKED_INPUTS
from keras_bert.models.pretrained import build_from_checkpoint


@keras.saving.register_keras_serializable(package="keras_bert")
class BertBackbone(EncoderBackbone):
    """The BERT encoder: embeddings, a stack of transformer blocks, and the pooler.

    A functional model, so it can be summarised, plotted, saved as `.keras`,
    and reused as the body of task models (`BertPretrainer`, `BertClassifier`,
    ...), which take its inputs and read its outputs by name.

    Args:
        vocabulary_size: int. Number of WordPiece tokens (30,522 for Google's uncased English).
        num_layers: int. Number of transformer blocks.
        num_heads: int. Attention heads per block; must divide `hidden_dim`.
        hidden_dim: int. Width of every hidden state.
        intermediate_dim: int. Width of the feed-forward networks (BERT: 4 x hidden_dim).
        dropout: float. Dropout rate everywhere (BERT: 0.1).
        max_sequence_length: int. Number of learned positions (BERT: 512).
        num_segments: int. Number of segment (token type) ids (BERT: 2).
        layer_norm_epsilon: float. BERT uses 1e-12.
        normalize_first: bool. Pre-LN blocks (and a final LayerNorm) instead of BERT's post-LN.
        output_hidden_states: bool. Also output every layer's hidden states.
        output_attentions: bool. Also output every layer's attention probabilities
            (slower: attention then runs without the fused kernel).
        activation: the feed-forward activation: "gelu" (BERT's exact erf
            GELU, the default: what Hugging Face BERT checkpoints compute),
            "gelu_approximate" (the tanh form; differs from exact by ~1e-3,
            keras-hub's BERT and Hugging Face's "gelu_new") or "relu".
        packed_inputs: bool. Take packed sequences (several examples per row,
            for pretraining): adds the `sequence_ids` and `position_ids`
            inputs; attention stays inside each packed example and positions
            restart at 0 for each. The weights are the same as without it, so
            a backbone pretrained packed is rebuilt with `packed_inputs=False`
            (`BertBackbone.from_pretrained(path, packed_inputs=False)`) for
            fine-tuning.
        dtype: dtype or `keras.DTypePolicy` for the whole model, e.g. "mixed_bfloat16".

    Inputs (a dict):
        token_ids: int32 tensor of shape `(batch_size, sequence_length)`.
        segment_ids: int32 tensor of shape `(batch_size, sequence_length)`, 0 for
            segment A and 1 for segment B.
        padding_mask: int32 tensor of shape `(batch_size, sequence_length)`,
            1 for real tokens and 0 for padding.
        sequence_ids: (with `packed_inputs`) int32 tensor of shape
            `(batch_size, sequence_length)`, 1..k for the k-th example packed
            into the row, 0 for padding. A token attends only to tokens with
            its own id.
        position_ids: (with `packed_inputs`) int32 tensor of shape
            `(batch_size, sequence_length)`, each token's position inside its
            own example (0 at each example's [CLS]).

    Outputs (a dict):
        sequence_output: float tensor of shape `(batch_size, sequence_length, hidden_dim)`.
        pooled_output: float tensor of shape `(batch_size, hidden_dim)`; with
            `packed_inputs`, the first packed example's (`BertPretrainer` pools
            every example's [CLS] itself).
        hidden_states: (with `output_hidden_states`) a list of `num_layers + 1`
            tensors of shape `(batch_size, sequence_length, hidden_dim)`, the
            embeddings first.
        attentions: (with `output_attentions`) a list of `num_layers` tensors of
            shape `(batch_size, num_heads, sequence_length, sequence_length)`.

    Examples:
    ```python
    backbone = keras_bert.BertBackbone.from_size("mini", vocabulary_size=8000)
    outputs = backbone({
        "token_ids": np.array([[2, 17, 3, 0]]),
        "segment_ids": np.zeros((1, 4), "int32"),
        "padding_mask": np.array([[1, 1, 1, 0]]),
    })
    outputs["sequence_output"].shape  # (1, 4, 256)

    backbone = keras_bert.BertBackbone.from_pretrained("path/to/hf_bert_dir")
    ```
    """

    model_type = "bert"
    config_arguments = (
        "vocabulary_size",
        "num_layers",
        "num_heads",
        "hidden_dim",
        "intermediate_dim",
        "dropout",
        "max_sequence_length",
        "num_segments",
        "layer_norm_epsilon",
        "normalize_first",
        "output_hidden_states",
        "output_attentions",
    )

    def __init__(
        self,
        vocabulary_size,
        num_layers,
        num_heads,
        hidden_dim,
        intermediate_dim,
        dropout=0.1,
        max_sequence_length=512,
        num_segments=2,
        layer_norm_epsilon=1e-12,
        normalize_first=False,
        output_hidden_states=False,
        output_attentions=False,
        packed_inputs=False,
        activation="gelu",
        dtype=None,
        **kwargs,
    ):
        if not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"`num_layers` must be a positive int. Received: num_layers={num_layers!r}")
        if not isinstance(hidden_dim, int) or not isinstance(num_heads, int) or num_heads < 1 or hidden_dim % num_heads:
            raise ValueError(
                f"`num_heads` must divide `hidden_dim`. Received: num_heads={num_heads!r}, hidden_dim={hidden_dim!r}"
            )

        # === Layers ===
        # (Locals until the model is initialised: the torch backend refuses
        # sublayer attributes before `Module.__init__`.)
        embeddings = BertEmbeddings(
            vocabulary_size=vocabulary_size,
            hidden_dim=hidden_dim,
            max_sequence_length=max_sequence_length,
            num_segments=num_segments,
            dropout=dropout,
            layer_norm_epsilon=layer_norm_epsilon,
            dtype=dtype,
            name="embeddings",
        )
        transformer_layers = [
            TransformerEncoder(
                num_heads=num_heads,
                intermediate_dim=intermediate_dim,
                dropout=dropout,
                layer_norm_epsilon=layer_norm_epsilon,
                normalize_first=normalize_first,
                activation=activation,
                dtype=dtype,
                name=f"transformer_layer_{i}",
            )
            for i in range(num_layers)
        ]
        final_layer_norm = (
            keras.layers.LayerNormalization(epsilon=layer_norm_epsilon, dtype=dtype, name="final_layer_norm")
            if normalize_first
            else None
        )
        pooler = Pooler(dtype=dtype, name="pooler")

        # === Functional graph ===
        inputs = {
            "token_ids": keras.Input(shape=(None,), dtype="int32", name="token_ids"),
            "segment_ids": keras.Input(shape=(None,), dtype="int32", name="segment_ids"),
            "padding_mask": keras.Input(shape=(None,), dtype="int32", name="padding_mask"),
        }
        if packed_inputs:
            for name in PACKED_INPUTS:
                inputs[name] = keras.Input(shape=(None,), dtype="int32", name=name)
            x = embeddings(inputs["token_ids"], inputs["segment_ids"], position_ids=inputs["position_ids"])
            # (batch, seq, seq): one mask for every layer, block-diagonal over packed examples.
            masks = {"attention_mask": packed_attention_mask(inputs["sequence_ids"], inputs["padding_mask"])}
        else:
            x = embeddings(inputs["token_ids"], inputs["segment_ids"])
            masks = {"padding_mask": inputs["padding_mask"]}
        hidden_states, attentions = [x], []
        for layer in transformer_layers:
            x = layer(x, **masks, return_attention_scores=output_attentions)
            if output_attentions:
                x, probs = x
                attentions.append(probs)
            hidden_states.append(x)
        if final_layer_norm is not None:
            x = final_layer_norm(x)
        outputs = {"sequence_output": x, "pooled_output": pooler(x)}
        if output_hidden_states:
            outputs["hidden_states"] = hidden_states
        if output_attentions:
            outputs["attentions"] = attentions
        super().__init__(inputs=inputs, outputs=outputs, dtype=dtype, **kwargs)

        self.embeddings = embeddings
        self.transformer_layers = transformer_layers
        self.final_layer_norm = final_layer_norm
        self.pooler = pooler

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.layer_norm_epsilon = layer_norm_epsilon
        self.normalize_first = normalize_first
        self.output_hidden_states = output_hidden_states
        self.output_attentions = output_attentions
        self.packed_inputs = packed_inputs
        self.activation = activation

    @property
    def input_names(self):
        """The names of the inputs this backbone takes."""
        return BACKBONE_INPUTS + PACKED_INPUTS if self.packed_inputs else BACKBONE_INPUTS

    def get_config(self):
        config = super().get_config()
        # Only when set: configs (and .keras files) of unpacked backbones stay as they were.
        if self.packed_inputs:
            config["packed_inputs"] = True
        # Likewise: exact-GELU backbones keep the config they had before the option existed.
        if self.activation != "gelu":
            config["activation"] = self.activation
        return config

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
            path: a Hugging Face folder (config.json + model.safetensors or
                pytorch_model.bin; `BertModel`, `BertForPreTraining` or
                `BertForMaskedLM`), a Google TF1 checkpoint folder or prefix
                (bert_config.json + bert_model.ckpt.*), a `.keras` file (a
                backbone, or a task model whose backbone is taken), or a hub
                name `hf://owner/name[@revision]` (downloaded when online), or
                a preset name: a keras-hub name ("bert_base_en_uncased") or a
                Hugging Face id ("google-bert/bert-base-uncased"); see
                `keras_bert.list_presets()`. Offline, presets and hub names
                are read from the Hugging Face cache.
            cache_dir: the Hugging Face cache folder for presets and hub names
                (default: `HF_HUB_CACHE`, else `HF_HOME/hub`, else `~/.cache/huggingface/hub`).
            **kwargs: constructor arguments that do not change the weights'
                shapes (`dropout`, `dtype`, `output_attentions`, ...).
        """
        return build_from_checkpoint(read_checkpoint(path, cache_dir), cls, **kwargs)

    @classmethod
    def from_preset(cls, preset, cache_dir=None, **kwargs):
        """`from_pretrained` under keras-hub's name, e.g. `BertBackbone.from_preset("bert_tiny_en_uncased")`."""
        return cls.from_pretrained(preset, cache_dir=cache_dir, **kwargs)

    @classmethod
    def from_keras_hub(cls, hub_model, **kwargs):
        """A backbone with the weights of a keras-hub BERT.

        keras-hub computes GELU with the tanh approximation, keras_bert with
        the exact erf form, so outputs differ slightly (see
        `keras_bert.converters.keras_hub_interop`); the weights are the same.

        Args:
            hub_model: a `keras_hub.models.BertBackbone`, or a keras-hub BERT
                task model (its `backbone` is used).
            **kwargs: constructor arguments that keep the weights' shapes
                (`dropout`, `dtype`, `output_attentions`, ...).

        Examples:
        ```python
        hub = keras_hub.models.BertBackbone.from_preset("bert_base_en_uncased")
        backbone = keras_bert.BertBackbone.from_keras_hub(hub)
        ```
        """
        hub = keras_hub_backbone(hub_model)
        backbone = cls(**{**keras_hub_backbone_config(hub), **kwargs})
        assign_entries(model_entries(backbone), keras_hub_tensors(hub), f"keras-hub {hub.name}")
        return backbone
