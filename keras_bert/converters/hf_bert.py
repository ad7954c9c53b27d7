"""BERT's names: Hugging Face `BertModel` / `BertForPreTraining` / `BertForMaskedLM` / task checkpoints <-> ours.

Also what the other families take from BERT: the embeddings (every family
names them as BERT does), the encoder block (`encoder.layer.N.*`, RoBERTa's
and ELECTRA's too) and the config fields (ALBERT's, ELECTRA's, RoBERTa's).
"""

from keras_bert.converters.hf_family import Family
from keras_bert.converters.weight_tables import attention, dense, each_layer, layer_norm, tensor

# The sizes every transformers encoder config names alike (BERT's family and ModernBERT).
SIZE_FIELDS = {
    "vocabulary_size": ("vocab_size", int),
    "num_layers": ("num_hidden_layers", int),
    "num_heads": ("num_attention_heads", int),
    "hidden_dim": ("hidden_size", int),
    "intermediate_dim": ("intermediate_size", int),
}
CONFIG_FIELDS = {
    **SIZE_FIELDS,
    "dropout": ("hidden_dropout_prob", float, 0.1),
    "max_sequence_length": ("max_position_embeddings", int, 512),
    "num_segments": ("type_vocab_size", int, 2),
    "layer_norm_epsilon": ("layer_norm_eps", float, 1e-12),
}


def _exact_gelu_unwritten(arguments, hf, config_path):
    # BertBackbone's config leaves out its default exact GELU (configs from before the argument): so does ours.
    if arguments["activation"] == "gelu":
        del arguments["activation"]


EMBEDDINGS = {
    "embeddings.token_embedding.embeddings": tensor("embeddings.word_embeddings.weight"),
    "embeddings.position_embeddings": tensor("embeddings.position_embeddings.weight"),
    "embeddings.segment_embedding.embeddings": tensor("embeddings.token_type_embeddings.weight"),
    "embeddings.layer_norm": layer_norm("embeddings.LayerNorm"),
}

# A post-LN `TransformerEncoder` against one `encoder.layer.N`.
BLOCK = {
    "attention": attention(
        "attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"
    ),
    "attention_layer_norm": layer_norm("attention.output.LayerNorm"),
    "intermediate_dense": dense("intermediate.dense"),
    "output_dense": dense("output.dense"),
    "output_layer_norm": layer_norm("output.LayerNorm"),
}
LAYERS = "encoder.layer.{index}"

BACKBONE = {**EMBEDDINGS, "transformer_layers": each_layer(LAYERS, BLOCK), "pooler.dense": dense("pooler.dense")}

# The MLM decoder is tied to the token embedding: only its bias is the head's own.
HEADS = {
    "masked_lm_head": {
        "transform_dense": dense("cls.predictions.transform.dense"),
        "transform_layer_norm": layer_norm("cls.predictions.transform.LayerNorm"),
        "output_bias": tensor("cls.predictions.bias"),
    },
    "next_sentence_head": {"dense": dense("cls.seq_relationship")},
}

# Our task models whose head Hugging Face's task classes hold (see `hf_tasks`); the span head's
# dense layer gives (start, end) as `qa_outputs` rows 0 and 1.
TASK_HEADS = {
    "BertClassifier": {"output_dense": dense("classifier")},
    "BertTokenClassifier": {"output_dense": dense("classifier")},
    "BertMultipleChoice": {"output_dense": dense("classifier")},
    "BertQuestionAnswerer": {"span_head.dense": dense("qa_outputs")},
}

# Checkpoints of `BertForMaskedLM` have no pooler (transformers builds it
# without one). Such a pooler keeps its initial weights, with a warning where
# the model's outputs depend on it.
OPTIONAL_NAMES = ("pooler.dense.weight", "pooler.dense.bias")

# Parts of BERT checkpoints that a model may legitimately not use: the
# pretraining heads (a backbone loaded from `BertForPreTraining`), the heads
# of Hugging Face's fine-tuned task models, and buffers that are not weights.
# Any other unused tensor means the checkpoint does not match its config.
HEAD_NAMES = (
    "cls.predictions.transform.dense.weight",
    "cls.predictions.transform.dense.bias",
    "cls.predictions.transform.LayerNorm.weight",
    "cls.predictions.transform.LayerNorm.bias",
    "cls.predictions.bias",
    "cls.predictions.decoder.weight",
    "cls.predictions.decoder.bias",
    "cls.seq_relationship.weight",
    "cls.seq_relationship.bias",
    "classifier.weight",
    "classifier.bias",
    "qa_outputs.weight",
    "qa_outputs.bias",
)

# The MLM decoder is tied: checkpoints that store it must hold a copy of
# the tensor it is tied to, or our tied head cannot represent them.
TIED_NAMES = {
    "cls.predictions.decoder.weight": "embeddings.word_embeddings.weight",
    "cls.predictions.decoder.bias": "cls.predictions.bias",
}

FAMILY = Family(
    model_type="bert", title="BERT", backbone_class="BertBackbone", prefix="bert.",
    config_fields=CONFIG_FIELDS, position_embedding_type="absolute", adjust_config=_exact_gelu_unwritten,
    backbone=BACKBONE, heads=HEADS, task_heads=TASK_HEADS,
    optional_names=OPTIONAL_NAMES, head_names=HEAD_NAMES, tied_names=TIED_NAMES, mlm_name="cls.predictions.bias",
)
