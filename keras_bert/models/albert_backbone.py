"""AlbertBackbone: ALBERT's encoder (factorised embeddings, one block shared by every layer)."""

import keras

from keras_bert.models.encoder_backbone import EncoderBackbone, constructor_arguments


@keras.saving.register_keras_serializable(package="keras_bert")
class AlbertBackbone(EncoderBackbone):
    """ALBERT (Lan et al., 2019): BERT with fewer parameters.

    Two changes from BERT, both from the paper: the embeddings are
    `embedding_dim` wide (E, e.g. 128) and a dense layer projects them to
    `hidden_dim` (H), and one transformer block is shared by all
    `num_layers` layers (it is called `num_layers` times). The block is
    BERT's post-LN block with ALBERT's activation (Hugging Face's default
    "gelu_new", the tanh approximation). The pooler (dense + tanh on [CLS])
    is BERT's.

    Args:
        vocabulary_size: int. Number of SentencePiece tokens (30,000 for Google's ALBERTs).
        num_layers: int. How many times the shared block is applied.
        num_heads: int. Attention heads; must divide `hidden_dim`.
        hidden_dim: int. Width of the hidden states (H).
        intermediate_dim: int. Width of the feed-forward network.
        embedding_dim: int. Width of the embeddings (E).
        dropout: float. Dropout rate everywhere (ALBERT v2: 0).
        max_sequence_length: int. Number of learned positions.
        num_segments: int. Number of segment (token type) ids.
        layer_norm_epsilon: float.
        activation: the feed-forward activation: "gelu_approximate" (ALBERT's
            "gelu_new"), "gelu" (exact), or "relu".
        output_hidden_states: bool. Also output every layer's hidden states.
        output_attentions: bool. Also output every layer's attention probabilities.
        dtype: dtype or `keras.DTypePolicy` for the whole model.

    Inputs (a dict): `token_ids`, `segment_ids`, `padding_mask`, int32 tensors
    of shape `(batch_size, sequence_length)` (as `BertBackbone`'s).

    Outputs (a dict):
        sequence_output: float tensor `(batch_size, sequence_length, hidden_dim)`.
        pooled_output: float tensor `(batch_size, hidden_dim)`, the pooler on [CLS].
        hidden_states, attentions: on request, as `BertBackbone`'s
            (`hidden_states[0]` is the projected embeddings, `(.., hidden_dim)`).

    Examples:
    ```python
    backbone = keras_bert.AlbertBackbone.from_pretrained("path/to/hf_albert_dir")
    # 12 layers' worth of compute, one block's weights:
    small = keras_bert.AlbertBackbone(vocabulary_size=30000, num_layers=12, num_heads=12, hidden_dim=768,
                                      intermediate_dim=3072)
    ```
    """

    model_type = "albert"
    shares_blocks = True
    always_projects_embeddings = True

    def __init__(
        self, vocabulary_size, num_layers, num_heads, hidden_dim, intermediate_dim, embedding_dim=128, dropout=0.0,
        max_sequence_length=512, num_segments=2, layer_norm_epsilon=1e-12, activation="gelu_approximate",
        output_hidden_states=False, output_attentions=False, dtype=None, **kwargs,
    ):
        super().__init__(**constructor_arguments(locals()))
