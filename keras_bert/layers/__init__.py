"""BERT building blocks as Keras 3 layers (keras and keras.ops only)."""

from keras_bert.layers.bert_embeddings import BertEmbeddings
from keras_bert.layers.masked_lm_head import MaskedLMHead
from keras_bert.layers.next_sentence_head import NextSentenceHead
from keras_bert.layers.pooler import Pooler
from keras_bert.layers.self_attention import SelfAttention
from keras_bert.layers.transformer_encoder import TransformerEncoder

__all__ = ["BertEmbeddings", "MaskedLMHead", "NextSentenceHead", "Pooler", "SelfAttention", "TransformerEncoder"]

from keras_bert.layers.span_head import SpanHead  # noqa: E402

__all__ += ["SpanHead"]
