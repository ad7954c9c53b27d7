"""ModernBertBackbone: ModernBERT's encoder (rotary positions, gated GELU, alternating local and global attention)."""

import keras

from keras_bert.layers.bert_embeddings import BertEmbeddings
from keras_bert.layers.transformer_encoder import TransformerEncoder
from keras_bert.models.encoder_backbone import EncoderBackbone, constructor_arguments

MODERN_BERT_INPUTS = ("token_ids", "padding_mask")

# ModernBERT's own "base" and "large" (Warner et al., 2024), and BERT's smaller shapes with its
# 1.5 x hidden_dim gated feed-forward width (the gated projection is twice that).
MODERN_BERT_SIZES = {
    "tiny": dict(num_layers=2, hidden_dim=128, num_heads=2, intermediate_dim=192),
    "mini": dict(num_layers=4, hidden_dim=256, num_heads=4, intermediate_dim=384),
    "small": dict(num_layers=4, hidden_dim=512, num_heads=8, intermediate_dim=768),
    "medium": dict(num_layers=8, hidden_dim=512, num_heads=8, intermediate_dim=768),
    "base": dict(num_layers=22, hidden_dim=768, num_heads=12, intermediate_dim=1152),
    "large": dict(num_layers=28, hidden_dim=1024, num_heads=16, intermediate_dim=2624),
}


def _check_positive_int(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"`{name}` must be a positive int. Received: {name}={value!r}")


@keras.saving.register_keras_serializable(package="keras_bert")
class ModernBertBackbone(EncoderBackbone):
    """ModernBERT (Warner et al., 2024): a pre-LN encoder with rotary positions and mostly local attention.

    What differs from BERT, all from the shared layers' options:

    - embeddings: the token embedding, a LayerNorm and dropout; no position
      table and no segments (`BertEmbeddings(max_sequence_length=None,
      num_segments=0)`);
    - positions: rotary embeddings on every block's queries and keys, with
      base `global_rope_wavelength` in global blocks and
      `local_rope_wavelength` in local ones;
    - blocks: pre-LN, the gated GELU feed-forward network (GeGLU), no
      attention LayerNorm in block 0 (its input is the embeddings'
      LayerNorm output), a final LayerNorm after the last block;
    - attention: block `i` is global when `i % global_attention_every_n_layers
      == 0`, else local: a query sees the keys at most
      `local_attention_window // 2` positions away (transformers'
      definition: 128 is 64 on each side). Local blocks compute attention in
      blocks of that radius (`keras_bert.layers.local_attention`), never the
      full `(seq, seq)` scores;
    - biases: none in the dense layers and LayerNorms by default
      (`attention_bias`, `feed_forward_bias`, `layer_norm_bias`).

    There is no pooler: `pooled_output` is the first token's (`[CLS]`) final
    hidden state.

    Dropout: ModernBERT's checkpoints have three rates (`embedding_dropout`,
    `attention_dropout`, `mlp_dropout`, all 0.0 in the released models); here
    one `dropout` rate applies after the embeddings, to the attention
    probabilities and to both residual branches (transformers drops the
    feed-forward network's gated activations instead of its output). Outputs
    without training are the same.

    Args:
        vocabulary_size: int. Number of tokens (50,368 for ModernBERT's tokenizer).
        num_layers: int. Number of transformer blocks (22 in ModernBERT-base).
        num_heads: int. Attention heads; must divide `hidden_dim` into an even head size.
        hidden_dim: int. Width of every hidden state.
        intermediate_dim: int. Width of the gated feed-forward networks' input
            and gate halves each (1152 in ModernBERT-base).
        dropout: float. Dropout rate everywhere (0.0 for ModernBERT).
        max_sequence_length: int. The longest input, in tokens (8192). Rotary
            positions have no table: this is only the limit the input checks enforce.
        padding_id: int or None. The padding token's id (50283 in ModernBERT's
            tokenizer), for preprocessing and export; the encoder itself reads
            `padding_mask`.
        layer_norm_epsilon: float. ModernBERT uses 1e-5 (`norm_eps`).
        activation: the feed-forward activation ("gelu", exact, for ModernBERT).
        local_attention_window: int. The local blocks' window (`local_attention`: 128).
        global_attention_every_n_layers: int. Every n-th block, from block 0,
            attends globally (`global_attn_every_n_layers`: 3).
        global_rope_wavelength: float. Rotary base of the global blocks (`global_rope_theta`: 160,000).
        local_rope_wavelength: float. Rotary base of the local blocks (`local_rope_theta`: 10,000).
        attention_bias: bool. Biases in the attention projections (`attention_bias`).
        feed_forward_bias: bool. Biases in the feed-forward layers (`mlp_bias`).
        layer_norm_bias: bool. Biases in the LayerNorms (`norm_bias`).
        output_hidden_states: bool. Also output every layer's hidden states.
        packed_inputs: bool. Take packed sequences (several documents per
            row, for pretraining): adds the `sequence_ids` and `position_ids`
            inputs; attention, global and local, stays inside each document,
            and the rotary embeddings rotate by each document's own positions.
            Same weights: a backbone pretrained packed is rebuilt with
            `packed_inputs=False` (`from_pretrained(path, packed_inputs=False)`)
            to fine-tune.
        output_attentions: bool. Also output every layer's attention
            probabilities: global and local blocks alike give the full
            `(batch_size, num_heads, seq, seq)` matrix, which local blocks build
            from their bands (zeros outside the window). Slower: attention then
            runs without the fused kernel.
        dtype: dtype or `keras.DTypePolicy` for the whole model.

    Inputs (a dict):
        token_ids: int32 tensor of shape `(batch_size, sequence_length)`.
        padding_mask: int32 tensor of shape `(batch_size, sequence_length)`, 1 for real tokens.
        sequence_ids: (with `packed_inputs`) int32 `(batch_size, sequence_length)`,
            1..k for the k-th document of a row, 0 for padding.
        position_ids: (with `packed_inputs`) int32 `(batch_size, sequence_length)`,
            each token's position within its document.

    Outputs (a dict):
        sequence_output: float tensor `(batch_size, sequence_length, hidden_dim)`,
            after the final LayerNorm.
        pooled_output: float tensor `(batch_size, hidden_dim)`: the first token's row of it.
        hidden_states: (with `output_hidden_states`) `num_layers + 1` tensors,
            the embeddings first, each block's output after it (before the final LayerNorm).
        attentions: (with `output_attentions`) `num_layers` tensors `(batch_size, num_heads, seq, seq)`.

    Examples:
    ```python
    backbone = keras_bert.ModernBertBackbone.from_pretrained("path/to/hf_modernbert_dir")
    backbone = keras_bert.ModernBertBackbone.from_size("mini", vocabulary_size=8000, padding_id=0)
    outputs = backbone({"token_ids": np.array([[2, 17, 3, 0]]), "padding_mask": np.array([[1, 1, 1, 0]])})
    ```
    """

    model_type = "modernbert"
    backbone_inputs = MODERN_BERT_INPUTS
    has_pooler = False
    # Pre-LN always (not an argument): what the converters check a backbone's blocks against.
    normalize_first = True
    # Configs (and `.keras` files) written before packed inputs existed stay as they were.
    omitted_when_default = ("packed_inputs",)

    def __init__(
        self, vocabulary_size, num_layers, num_heads, hidden_dim, intermediate_dim, dropout=0.0,
        max_sequence_length=8192, padding_id=50283, layer_norm_epsilon=1e-5, activation="gelu",
        local_attention_window=128, global_attention_every_n_layers=3, global_rope_wavelength=160000.0,
        local_rope_wavelength=10000.0, attention_bias=False, feed_forward_bias=False, layer_norm_bias=False,
        output_hidden_states=False, output_attentions=False, packed_inputs=False, dtype=None, **kwargs,
    ):
        if padding_id is not None and (
            not isinstance(padding_id, int) or isinstance(padding_id, bool) or not 0 <= padding_id < vocabulary_size
        ):
            raise ValueError(
                f"`padding_id` must be None or an int in [0, vocabulary_size={vocabulary_size}). "
                f"Received: padding_id={padding_id!r}"
            )
        _check_positive_int("local_attention_window", local_attention_window)
        _check_positive_int("global_attention_every_n_layers", global_attention_every_n_layers)
        if isinstance(hidden_dim, int) and isinstance(num_heads, int) and num_heads and (hidden_dim // num_heads) % 2:
            raise ValueError(
                f"Rotary embeddings need an even head size: hidden_dim / num_heads = {hidden_dim}/{num_heads}."
            )
        super().__init__(**constructor_arguments(locals()))

    def position_ids(self, inputs, config):
        """None: the embeddings have no position table; packed positions go to the blocks' rotary embeddings."""
        return None

    def block_arguments(self, inputs, config):
        """Packed sequences: every block rotates by each packed example's own positions (from 0)."""
        return {"position_ids": inputs["position_ids"]} if config.get("packed_inputs") else {}

    def embedding_layer(self, config, dtype, **build):
        return BertEmbeddings(
            vocabulary_size=config["vocabulary_size"],
            hidden_dim=config["hidden_dim"],
            max_sequence_length=None,  # positions are rotations inside attention
            num_segments=0,
            dropout=config["dropout"],
            layer_norm_epsilon=config["layer_norm_epsilon"],
            layer_norm_bias=config["layer_norm_bias"],
            dtype=dtype,
            name="embeddings",
        )

    def transformer_block(self, config, dtype, index, name):
        is_global = index % config["global_attention_every_n_layers"] == 0
        return TransformerEncoder(
            num_heads=config["num_heads"],
            intermediate_dim=config["intermediate_dim"],
            dropout=config["dropout"],
            layer_norm_epsilon=config["layer_norm_epsilon"],
            normalize_first=True,
            activation=config["activation"],
            gated_feed_forward=True,
            attention_bias=config["attention_bias"],
            feed_forward_bias=config["feed_forward_bias"],
            layer_norm_bias=config["layer_norm_bias"],
            # Block 0's input is the embeddings' LayerNorm output already.
            normalize_attention_input=index != 0,
            rotary_max_wavelength=config["global_rope_wavelength" if is_global else "local_rope_wavelength"],
            local_attention_window=None if is_global else config["local_attention_window"],
            dtype=dtype,
            name=name,
        )

    def final_norm_layer(self, config, dtype):
        return keras.layers.LayerNormalization(
            epsilon=config["layer_norm_epsilon"], center=config["layer_norm_bias"], dtype=dtype, name="final_layer_norm"
        )

    @property
    def masked_lm_head_options(self):
        """transformers' `ModernBertForMaskedLM` head by default: no dense bias, the backbone's kind of LayerNorm."""
        return {"transform_bias": False, "layer_norm_bias": self.layer_norm_bias}

    @property
    def global_layers(self):
        """The indices of the blocks that attend globally (the others are local)."""
        return [i for i in range(self.num_layers) if i % self.global_attention_every_n_layers == 0]

    @classmethod
    def from_size(cls, size, vocabulary_size=50368, **kwargs):
        """A randomly initialised ModernBERT of a named size.

        Args:
            size: one of "tiny" (L2/H128), "mini" (L4/H256), "small" (L4/H512),
                "medium" (L8/H512), with a gated feed-forward width of
                1.5 x hidden_dim, or ModernBERT's own "base" (L22/H768) and
                "large" (L28/H1024); see `MODERN_BERT_SIZES`.
            vocabulary_size: int. Defaults to ModernBERT's tokenizer's 50,368
                (whose padding id, 50,283, is `padding_id`'s default: pass
                your own with another vocabulary).
            **kwargs: any other constructor argument, overriding the size's.
        """
        if size not in MODERN_BERT_SIZES:
            raise ValueError(f"Unknown ModernBERT size {size!r}. Choose one of {sorted(MODERN_BERT_SIZES)}")
        return cls(**{**MODERN_BERT_SIZES[size], "vocabulary_size": vocabulary_size, **kwargs})
