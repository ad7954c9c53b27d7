"""BertBackbone: the BERT encoder as a functional Keras model."""

import keras

from keras_bert.converters.keras_hub_interop import keras_hub_backbone, keras_hub_backbone_config, keras_hub_tensors
from keras_bert.converters.weight_map import assign_entries, model_entries
from keras_bert.models.encoder_backbone import EncoderBackbone, constructor_arguments


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
        gated_feed_forward: bool. A gated feed-forward (GeGLU with "gelu":
            `activation(x W_gate) * (x W_in)`, then `W_out`) instead of BERT's
            two dense layers; its input projection is twice `intermediate_dim` wide.
        attention_bias: bool. Biases in the attention projections (BERT: yes).
        feed_forward_bias: bool. Biases in the feed-forward layers, and in the
            masked-LM head's transform (BERT: yes).
        layer_norm_bias: bool. A bias (beta) in every LayerNorm, the masked-LM
            head's included (BERT: yes). The three bias options off and
            `normalize_first`, `gated_feed_forward` on give the small-compute
            pretraining recipe's encoder (Geiping & Goldstein, 2022, "Cramming");
            such a backbone has no transformers BERT counterpart.
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
    # Configs (and `.keras` files) from before these options existed stay as they were.
    omitted_when_default = (
        "packed_inputs", "activation", "gated_feed_forward", "attention_bias", "feed_forward_bias", "layer_norm_bias",
    )

    def __init__(
        self, vocabulary_size, num_layers, num_heads, hidden_dim, intermediate_dim, dropout=0.1,
        max_sequence_length=512, num_segments=2, layer_norm_epsilon=1e-12, normalize_first=False,
        output_hidden_states=False, output_attentions=False, packed_inputs=False, activation="gelu",
        gated_feed_forward=False, attention_bias=True, feed_forward_bias=True, layer_norm_bias=True, dtype=None,
        **kwargs,
    ):
        super().__init__(**constructor_arguments(locals()))

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
