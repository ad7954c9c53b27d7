"""Text pipeline: tokenizers (on one base, `Tokenizer`), vocabulary learner, input packer, pretraining data.

TensorFlow and tensorflow-text are imported here (and in `export/`) only; the
outputs are plain int32 tensors that any Keras backend consumes via tf.data.
"""

from keras_bert.preprocessing.bert_tokenizer import BertTokenizer
from keras_bert.preprocessing.byte_pair_tokenizer import BytePairTokenizer
from keras_bert.preprocessing.input_packer import BertInputPacker
from keras_bert.preprocessing.modern_bert_tokenizer import ModernBertTokenizer
from keras_bert.preprocessing.pretraining import (
    PretrainingDataConfig,
    create_nsp_pairs,
    create_pretraining_examples,
    mask_tokens,
    pack_pairs,
    pretraining_dataset,
    read_documents,
    read_tfrecords,
    split_sentences,
    tokenize_documents,
    write_tfrecords,
)
from keras_bert.preprocessing.sentence_piece_tokenizer import SentencePieceTokenizer
from keras_bert.preprocessing.tokenizer import Tokenizer
from keras_bert.preprocessing.vocabulary import learn_vocabulary, write_vocabulary

__all__ = [
    "BertTokenizer",
    "BytePairTokenizer",
    "ModernBertTokenizer",
    "SentencePieceTokenizer",
    "Tokenizer",
    "BertInputPacker",
    "PretrainingDataConfig",
    "create_nsp_pairs",
    "create_pretraining_examples",
    "learn_vocabulary",
    "mask_tokens",
    "pack_pairs",
    "pretraining_dataset",
    "read_documents",
    "read_tfrecords",
    "split_sentences",
    "tokenize_documents",
    "write_tfrecords",
    "write_vocabulary",
]
