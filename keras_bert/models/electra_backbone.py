"""ElectraBackbone: ELECTRA's encoder (BERT's blocks, embeddings projected when narrower)."""

import keras

from keras_bert.layers.bert_embeddings import BertEmbeddings
from keras_bert.models.encoder_backbone import EncoderBackbone, check_encoder_sizes, run_encoder, transformer_stack
from keras_bert.models.input_checks import BACKBONE_INPUTS


@keras.saving.register_keras_serializable(package="keras_bert")
class ElectraBackbone(EncoderBackbone):
    """ELECTRA (Clark et al., 2020): BERT's encoder, pretrained as a replaced-token discriminator.

    The blocks are BERT's. The embeddings are `embedding_dim` wide; when that
    differs from `hidden_dim` (small generators, ELECTRA-small) a dense layer
    projects them to `hidden_dim`. There is no pooler.

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
    ```
    """

    model_type = "electra"
    config_arguments = (
        "vocabulary_size",
        "num_layers",
        "num_heads",
        "hidden_dim",
        "intermediate_dim",
        "embedding_dim",
        "dropout",
        "max_sequence_length",
        "num_segments",
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
        embedding_dim=None,
        dropout=0.1,
        max_sequence_length=512,
        num_segments=2,
        layer_norm_epsilon=1e-12,
        activation="gelu",
        output_hidden_states=False,
        output_attentions=False,
        dtype=None,
        shared_embeddings=None,
        **kwargs,
    ):
        check_encoder_sizes(num_layers, num_heads, hidden_dim)
        embedding_dim = hidden_dim if embedding_dim is None else embedding_dim

        # === Layers === (locals until the model is initialised, for the torch backend)
        if shared_embeddings is not None:
            _check_shared_embeddings(
                shared_embeddings, vocabulary_size, embedding_dim, max_sequence_length, num_segments
            )
            embeddings = shared_embeddings
        else:
            embeddings = BertEmbeddings(
                vocabulary_size=vocabulary_size,
                hidden_dim=embedding_dim,
                max_sequence_length=max_sequence_length,
                num_segments=num_segments,
                dropout=dropout,
                layer_norm_epsilon=layer_norm_epsilon,
                dtype=dtype,
                name="embeddings",
            )
        embedding_projection = None
        if embedding_dim != hidden_dim:
            embedding_projection = keras.layers.Dense(
                hidden_dim,
                kernel_initializer=keras.initializers.TruncatedNormal(stddev=0.02),
                dtype=dtype,
                name="embedding_projection",
            )
        transformer_layers = transformer_stack(
            num_layers, num_heads, intermediate_dim, dropout, layer_norm_epsilon, activation, dtype
        )

        # === Functional graph ===
        inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in BACKBONE_INPUTS}
        x = embeddings(inputs["token_ids"], inputs["segment_ids"])  # (batch, seq, embedding_dim)
        if embedding_projection is not None:
            x = embedding_projection(x)  # (batch, seq, hidden_dim)
        x, extra = run_encoder(
            x, transformer_layers, {"padding_mask": inputs["padding_mask"]}, output_hidden_states, output_attentions
        )
        outputs = {"sequence_output": x, "pooled_output": x[:, 0, :], **extra}  # pooled: [CLS], (batch, hidden)
        super().__init__(inputs=inputs, outputs=outputs, dtype=dtype, **kwargs)

        self.embeddings = embeddings
        self.embedding_projection = embedding_projection
        self.transformer_layers = transformer_layers

        # === Config ===
        self.vocabulary_size = vocabulary_size
        self.num_layers = num_layers
        self.num_heads = num_heads
        self.hidden_dim = hidden_dim
        self.intermediate_dim = intermediate_dim
        self.embedding_dim = embedding_dim
        self.dropout = dropout
        self.max_sequence_length = max_sequence_length
        self.num_segments = num_segments
        self.layer_norm_epsilon = layer_norm_epsilon
        self.activation = activation
        self.output_hidden_states = output_hidden_states
        self.output_attentions = output_attentions


def _check_shared_embeddings(embeddings, vocabulary_size, embedding_dim, max_sequence_length, num_segments):
    """Raises ValueError unless the shared `BertEmbeddings` has the sizes the backbone asks for."""
    wanted = {
        "vocabulary_size": vocabulary_size,
        "hidden_dim": embedding_dim,
        "max_sequence_length": max_sequence_length,
        "num_segments": num_segments,
    }
    different = {k: (getattr(embeddings, k, None), v) for k, v in wanted.items() if getattr(embeddings, k, None) != v}
    if not isinstance(embeddings, BertEmbeddings) or different:
        shown = ", ".join(f"{k}: shared {a!r}, backbone {b!r}" for k, (a, b) in different.items())
        raise ValueError(
            f"`shared_embeddings` must be a BertEmbeddings of the backbone's sizes. Received: "
            f"{type(embeddings).__name__}{' (' + shown + ')' if shown else ''}"
        )
