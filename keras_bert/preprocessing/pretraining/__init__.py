"""BERT pretraining data, one module per stage, one config object (`PretrainingDataConfig`).

corpus (`read_documents`, `tokenize_documents`) → sentence_pairs
(`create_nsp_pairs`) → packing (`pack_pairs`, optional) → masking
(`mask_tokens`) → examples (`create_pretraining_examples`) → tfrecords
(`write_tfrecords`, `read_tfrecords`, static mode) → dataset
(`pretraining_dataset`, which wires them into a `tf.data.Dataset`); streaming
(`StreamedPairBatches`) runs the same stages a bounded buffer at a time.

This follows google-research/bert `create_pretraining_data.py`; each stage's
module says where it differs on purpose.
"""

from keras_bert.preprocessing.pretraining.config import PretrainingDataConfig, default_max_predictions
from keras_bert.preprocessing.pretraining.corpus import (
    expand_text_files,
    iter_file_documents,
    read_documents,
    split_sentences,
    tokenize_documents,
)
from keras_bert.preprocessing.pretraining.dataset import pretraining_dataset
from keras_bert.preprocessing.pretraining.examples import create_pretraining_examples
from keras_bert.preprocessing.pretraining.masking import mask_tokens, random_token_pool
from keras_bert.preprocessing.pretraining.packing import pack_pairs, padding_fraction
from keras_bert.preprocessing.pretraining.sentence_pairs import create_nsp_pairs
from keras_bert.preprocessing.pretraining.streaming import StreamedPairBatches, worker_share
from keras_bert.preprocessing.pretraining.tfrecords import read_tfrecords, write_tfrecords

__all__ = [
    "PretrainingDataConfig",
    "StreamedPairBatches",
    "create_nsp_pairs",
    "create_pretraining_examples",
    "default_max_predictions",
    "expand_text_files",
    "iter_file_documents",
    "mask_tokens",
    "pack_pairs",
    "padding_fraction",
    "pretraining_dataset",
    "random_token_pool",
    "read_documents",
    "read_tfrecords",
    "split_sentences",
    "tokenize_documents",
    "worker_share",
    "write_tfrecords",
]
