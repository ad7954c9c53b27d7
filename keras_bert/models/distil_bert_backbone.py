"""DistilBertBackbone: DistilBERT's encoder (no token types, no pooler)."""

import keras

from keras_bert.models.encoder_backbone import EncoderBackbone, constructor_arguments

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
    has_pooler = False

    def __init__(
        self, vocabulary_size, num_layers, num_heads, hidden_dim, intermediate_dim, dropout=0.1,
        max_sequence_length=512, layer_norm_epsilon=1e-12, activation="gelu", output_hidden_states=False,
        output_attentions=False, dtype=None, **kwargs,
    ):
        super().__init__(**constructor_arguments(locals()))
