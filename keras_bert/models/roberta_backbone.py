"""RobertaBackbone: RoBERTa's encoder (BERT's, with positions counted past the padding id)."""

import keras
from keras import ops

from keras_bert.models.encoder_backbone import EncoderBackbone, constructor_arguments


def roberta_position_ids(token_ids, padding_id):
    """RoBERTa's positions, as transformers computes them from the token ids.

    Real tokens (id != `padding_id`) count from `padding_id + 1`; padding
    tokens get `padding_id` itself. `[[0, 31, 2, 1, 1]]` with padding id 1
    gives `[[2, 3, 4, 1, 1]]`.

    Args:
        token_ids: int tensor of shape `(batch_size, sequence_length)`.
        padding_id: int.

    Returns:
        int32 tensor of shape `(batch_size, sequence_length)`.
    """
    real = ops.cast(ops.not_equal(token_ids, padding_id), "int32")  # (batch, seq)
    return ops.cumsum(real, axis=1) * real + padding_id


@keras.saving.register_keras_serializable(package="keras_bert")
class RobertaBackbone(EncoderBackbone):
    """RoBERTa (Liu et al., 2019): BERT's architecture, pretrained longer without NSP.

    The layers are BERT's (post-LN blocks, exact GELU, a pooler). What
    differs is the embeddings' positions: as in fairseq and transformers,
    a token's position is computed from `token_ids`, counting real tokens
    from `padding_id + 1` (padding tokens get `padding_id`), so the position
    table has `max_sequence_length + padding_id + 1` rows (514 for
    roberta-base). RoBERTa has one token type: `segment_ids` must be all 0
    (with `num_segments=1`).

    Args:
        vocabulary_size: int. Number of BPE tokens (50,265 for roberta-base).
        num_layers: int. Number of transformer blocks.
        num_heads: int. Attention heads; must divide `hidden_dim`.
        hidden_dim: int. Width of every hidden state.
        intermediate_dim: int. Width of the feed-forward networks.
        dropout: float. Dropout rate everywhere.
        max_sequence_length: int. The longest input, in tokens (512 for roberta-base).
        num_segments: int. Number of segment (token type) ids (1 for RoBERTa).
        padding_id: int. The padding token's id (1 for RoBERTa); positions start after it.
        layer_norm_epsilon: float. RoBERTa uses 1e-5.
        activation: the feed-forward activation ("gelu", exact, for RoBERTa).
        output_hidden_states: bool. Also output every layer's hidden states.
        output_attentions: bool. Also output every layer's attention probabilities.
        dtype: dtype or `keras.DTypePolicy` for the whole model.

    Inputs (a dict): `token_ids`, `segment_ids`, `padding_mask`, int32 tensors
    of shape `(batch_size, sequence_length)`; padding positions must hold
    `padding_id` in `token_ids` (as RoBERTa's tokenizer pads).

    Outputs (a dict): `sequence_output` `(batch_size, sequence_length,
    hidden_dim)`, `pooled_output` `(batch_size, hidden_dim)` (the pooler on
    [CLS], `<s>`), and on request `hidden_states`, `attentions`, as `BertBackbone`'s.

    Examples:
    ```python
    backbone = keras_bert.RobertaBackbone.from_pretrained("path/to/hf_roberta_dir")
    ```
    """

    model_type = "roberta"

    def __init__(
        self, vocabulary_size, num_layers, num_heads, hidden_dim, intermediate_dim, dropout=0.1,
        max_sequence_length=512, num_segments=1, padding_id=1, layer_norm_epsilon=1e-5, activation="gelu",
        output_hidden_states=False, output_attentions=False, dtype=None, **kwargs,
    ):
        if not isinstance(padding_id, int) or isinstance(padding_id, bool) or not 0 <= padding_id < vocabulary_size:
            raise ValueError(
                f"`padding_id` must be an int in [0, vocabulary_size={vocabulary_size}). Received: padding_id={padding_id!r}"
            )
        super().__init__(**constructor_arguments(locals()))

    def position_table_size(self, config):
        # Positions 0..padding_id are never a real token's: the table holds them all the same.
        return config["max_sequence_length"] + config["padding_id"] + 1

    def position_ids(self, inputs, config):
        return roberta_position_ids(inputs["token_ids"], config["padding_id"])  # (batch, seq)
