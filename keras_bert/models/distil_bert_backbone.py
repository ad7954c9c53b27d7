"""DistilBertBackbone: DistilBERT's encoder (no token types, no pooler)."""

import keras

from keras_bert.layers.bert_embeddings import BertEmbeddings
from keras_bert.models.encoder_backbone import EncoderBackbone, check_encoder_sizes, run_encoder, transformer_stack

DISTIL_BERT_INPUTS = ("token_ids", "padding_mask")


@keras.saving.register_keras_serializable(package="keras_bert")
class DistilBertBackbone(EncoderBackbone):
    """DistilBERT (Sanh et al., 2019): a shallower BERT distilled from a deeper one.

    BERT's post-LN blocks with token and position embeddings only: there
    are no segment (token type) embeddings, so the inputs are `token_ids` and
    `padding_mask` (as keras-hub's `DistilBertBackbone`), and no pooler.

    Args:
        vocabulary_size: int. Number of WordPiece tokens.
        num_layers: int. Number of transformer blocks (6 in distilbert-base).
        num_heads: int. Attention heads; must divide `hidden_dim`.
        hidden_dim: int. Width of every hidden state (Hugging Face's `dim`).
        intermediate_dim: int. Width of the feed-forward networks (Hugging Face's `hidden_dim`).
        dropout: float. Dropout rate everywhere.
        max_sequence_length: int. Number of learned positions.
        layer_norm_epsilon: float. DistilBERT uses 1e-12.
        activation: the feed-forward activation ("gelu", exact, for DistilBERT).
        output_hidden_states: bool. Also output every layer's hidden states.
        output_attentions: bool. Also output every layer's attention probabilities.
        dtype: dtype or `keras.DTypePolicy` for the whole model.

    Inputs (a dict):
        token_ids: int32 tensor of shape `(batch_size, sequence_length)`.
        padding_mask: int32 tensor of shape `(batch_size, sequence_length)`, 1 for real tokens.

    Outputs (a dict):
        sequence_output: float tensor `(batch_size, sequence_length, hidden_dim)`.
        pooled_output: float tensor `(batch_size, hidden_dim)`: DistilBERT has
            no pooler, so this is the final hidden state of the first token
            ([CLS]) as it is, and task heads that read `pooled_output` still work.
        hidden_states, attentions: on request, as `BertBackbone`'s.

    Examples:
    ```python
    backbone = keras_bert.DistilBertBackbone.from_pretrained("path/to/hf_distilbert_dir")
    outputs = backbone({"token_ids": np.array([[101, 7592, 102, 0]]), "padding_mask": np.array([[1, 1, 1, 0]])})
    ```
    """

    model_type = "distilbert"
    backbone_inputs = DISTIL_BERT_INPUTS
    config_arguments = (
        "vocabulary_size",
        "num_layers",
        "num_heads",
        "hidden_dim",
        "intermediate_dim",
        "dropout",
        "max_sequence_length",
        "layer_norm_epsilon",
        "activation",
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
        layer_norm_epsilon=1e-12,
        activation="gelu",
        output_hidden_states=False,
        output_attentions=False,
        dtype=None,
        **kwargs,
    ):
        check_encoder_sizes(num_layers, num_heads, hidden_dim)

        # === Layers === (locals until the model is initialised, for the torch backend)
        embeddings = BertEmbeddings(
            vocabulary_size=vocabulary_size,
            hidden_dim=hidden_dim,
            max_sequence_length=max_sequence_length,
            num_segments=0,
            dropout=dropout,
            layer_norm_epsilon=layer_norm_epsilon,
            dtype=dtype,
            name="embeddings",
        )
        transformer_layers = transformer_stack(
            num_layers, num_heads, intermediate_dim, dropout, layer_norm_epsilon, activation, dtype
        )

        # === Functional graph ===
        inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in DISTIL_BERT_INPUTS}
        x = embeddings(inputs["token_ids"])  # (batch, seq, hidden)
        x, extra = run_encoder(
            x, transformer_layers, {"padding_mask": inputs["padding_mask"]}, output_hidden_states, output_attentions
        )
        outputs = {"sequence_output": x, "pooled_output": x[:, 0, :], **extra}  # pooled: [CLS], (batch, hidden)
        super().__init__(inputs=inputs, outputs=outputs, dtype=dtype, **kwargs)

        self.embeddings = embeddings
        self.transformer_layers = transformer_layers

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.dropout = dropout
        self.max_sequence_length = max_sequence_length
        self.layer_norm_epsilon = layer_norm_epsilon
        self.activation = activation
        self.output_hidden_states = output_hidden_states
        self.output_attentions = output_attentions
