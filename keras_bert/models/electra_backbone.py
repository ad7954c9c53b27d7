"""ElectraBackbone: ELECTRA's encoder (BERT's blocks, embeddings projected when narrower)."""

import keras

from keras_bert.layers.bert_embeddings import BertEmbeddings
from keras_bert.models.encoder_backbone import EncoderBackbone, constructor_arguments


@keras.saving.register_keras_serializable(package="keras_bert")
class ElectraBackbone(EncoderBackbone):
    """ELECTRA (Clark et al., 2020): BERT's encoder, pretrained as a replaced-token discriminator.

    The blocks are BERT's. The embeddings are `embedding_dim` wide; when that
    differs from `hidden_dim` (small generators, ELECTRA-small) a dense layer
    projects them to `hidden_dim`. There is no pooler.

    The blocks take `BertBackbone`'s small-compute options (pre-LN, a gated
    feed-forward, no biases) for pretraining from scratch; an
    `ElectraPretrainer` gives its generator the same blocks. Published ELECTRA
    checkpoints are post-LN with biases: a backbone with any of these options
    has no transformers counterpart (converting one is refused).

    Args:
        vocabulary_size: int. Number of WordPiece tokens.
        num_layers: int. Number of transformer blocks.
        num_heads: int. Attention heads; must divide `hidden_dim`.
        hidden_dim: int. Width of the hidden states.
        intermediate_dim: int. Width of the feed-forward networks.
        embedding_dim: int or None. Width of the embeddings; None for `hidden_dim`.
        dropout: float. Dropout rate everywhere.
        max_sequence_length: int. Number of learned positions.
        num_segments: int. Number of segment (token type) ids.
        layer_norm_epsilon: float.
        activation: the feed-forward activation ("gelu", exact, for ELECTRA).
        normalize_first: bool. Pre-LN blocks (and a final LayerNorm) instead of ELECTRA's post-LN.
        gated_feed_forward: bool. A gated feed-forward (GeGLU with "gelu") instead of two dense layers.
        attention_bias: bool. Biases in the attention projections (ELECTRA: yes).
        feed_forward_bias: bool. Biases in the feed-forward layers, the embedding projection and the
            generator head's transform (ELECTRA: yes).
        layer_norm_bias: bool. A bias (beta) in every LayerNorm, the generator head's included (ELECTRA: yes).
        output_hidden_states: bool. Also output every layer's hidden states.
        output_attentions: bool. Also output every layer's attention probabilities.
        dtype: dtype or `keras.DTypePolicy` for the whole model.
        shared_embeddings: optional `BertEmbeddings` layer of another backbone
            to use instead of new embeddings (ELECTRA's generator shares the
            discriminator's token, position and segment embeddings). Its sizes
            must be this backbone's. Not part of the config: the model that
            shares (`ElectraPretrainer`) passes it again when rebuilt.

    Inputs (a dict): `token_ids`, `segment_ids`, `padding_mask`, int32 tensors
    of shape `(batch_size, sequence_length)` (as `BertBackbone`'s).

    Outputs (a dict):
        sequence_output: float tensor `(batch_size, sequence_length, hidden_dim)`.
        pooled_output: float tensor `(batch_size, hidden_dim)`: ELECTRA has no
            pooler, so this is the final hidden state of the first token
            ([CLS]) as it is, and task heads that read `pooled_output` still work.
        hidden_states, attentions: on request, as `BertBackbone`'s
            (`hidden_states[0]` is the projected embeddings).

    Examples:
    ```python
    discriminator = keras_bert.ElectraBackbone.from_pretrained("path/to/hf_electra_dir")
    pretrainer = keras_bert.ElectraPretrainer(discriminator)  # its generator shares these embeddings
    ```
    """

    model_type = "electra"
    has_pooler = False
    build_arguments = ("shared_embeddings",)
    # Configs (and `.keras` files) from before the block options existed stay as they were.
    omitted_when_default = (
        "normalize_first", "gated_feed_forward", "attention_bias", "feed_forward_bias", "layer_norm_bias",
    )

    def __init__(
        self, vocabulary_size, num_layers, num_heads, hidden_dim, intermediate_dim, embedding_dim=None, dropout=0.1,
        max_sequence_length=512, num_segments=2, layer_norm_epsilon=1e-12, activation="gelu",
        output_hidden_states=False, output_attentions=False, normalize_first=False, gated_feed_forward=False,
        attention_bias=True, feed_forward_bias=True, layer_norm_bias=True, dtype=None, shared_embeddings=None,
        **kwargs,
    ):
        embedding_dim = hidden_dim if embedding_dim is None else embedding_dim
        super().__init__(**constructor_arguments(locals()))

    def embedding_layer(self, config, dtype, shared_embeddings=None):
        if shared_embeddings is None:
            return super().embedding_layer(config, dtype)
        wanted = {"vocabulary_size": config["vocabulary_size"], "hidden_dim": config["embedding_dim"],
                  "max_sequence_length": config["max_sequence_length"], "num_segments": config["num_segments"]}
        different = {k: (getattr(shared_embeddings, k, None), v) for k, v in wanted.items()
                     if getattr(shared_embeddings, k, None) != v}
        if not isinstance(shared_embeddings, BertEmbeddings) or different:
            shown = ", ".join(f"{k}: shared {a!r}, backbone {b!r}" for k, (a, b) in different.items())
            raise ValueError(
                f"`shared_embeddings` must be a BertEmbeddings of the backbone's sizes. Received: "
                f"{type(shared_embeddings).__name__}{' (' + shown + ')' if shown else ''}"
            )
        return shared_embeddings
