"""BERT building blocks as Keras 3 layers (keras and keras.ops only)."""

from keras_bert.layers.bert_embeddings import BertEmbeddings
from keras_bert.layers.choice_reshape import FlattenChoices, UnflattenChoices
from keras_bert.layers.electra_discriminator_head import ElectraDiscriminatorHead
from keras_bert.layers.graph_export_form import graph_export_form
from keras_bert.layers.masked_lm_head import MaskedLMHead
from keras_bert.layers.next_sentence_head import NextSentenceHead
from keras_bert.layers.pooler import Pooler
from keras_bert.layers.prediction_head import PredictionHead
from keras_bert.layers.rotary_embedding import RotaryEmbedding
from keras_bert.layers.self_attention import SelfAttention
from keras_bert.layers.sentence_pooling import SentencePooling
from keras_bert.layers.span_head import SpanHead
from keras_bert.layers.transformer_encoder import TransformerEncoder

__all__ = [
    "BertEmbeddings",
    "ElectraDiscriminatorHead",
    "FlattenChoices",
    "MaskedLMHead",
    "NextSentenceHead",
    "Pooler",
    "PredictionHead",
    "RotaryEmbedding",
    "SelfAttention",
    "SentencePooling",
    "SpanHead",
    "TransformerEncoder",
    "UnflattenChoices",
    "graph_export_form",
]
