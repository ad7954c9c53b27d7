"""BERT pretraining data, one module per stage, one config object (`PretrainingDataConfig`).

corpus (`read_documents`, `tokenize_documents`) → sentence_pairs
(`create_sentence_rows`: `create_nsp_pairs`, `create_sop_pairs`, or
full_sentences' `create_full_sentence_rows`) → packing (`pack_pairs`,
optional) → masking (`mask_tokens`, with span_masking for span and n-gram
masking) → examples (`create_pretraining_examples`) → tfrecords
(`write_tfrecords`, `read_tfrecords`, static mode) → dataset
(`pretraining_dataset`, which wires them into a `tf.data.Dataset`); streaming
(`StreamedPairBatches`) runs the same stages a bounded buffer at a time.

This follows google-research/bert `create_pretraining_data.py`; each stage's
module says where it differs on purpose.
"""

from keras_bert.preprocessing.pretraining.config import (
    OBJECTIVES,
    PretrainingDataConfig,
    default_max_predictions,
    pretrain_objective_options,
)
from keras_bert.preprocessing.pretraining.corpus import (
    expand_text_files,
    iter_file_documents,
    read_documents,
    split_sentences,
    tokenize_documents,
)
from keras_bert.preprocessing.pretraining.dataset import pretraining_dataset
from keras_bert.preprocessing.pretraining.examples import create_pretraining_examples
from keras_bert.preprocessing.pretraining.full_sentences import create_full_sentence_rows
from keras_bert.preprocessing.pretraining.masking import mask_tokens, random_token_pool
from keras_bert.preprocessing.pretraining.packing import pack_pairs, padding_fraction
from keras_bert.preprocessing.pretraining.sentence_pairs import create_nsp_pairs, create_sentence_rows, create_sop_pairs
from keras_bert.preprocessing.pretraining.span_masking import span_length_probabilities
from keras_bert.preprocessing.pretraining.streaming import StreamedPairBatches, worker_share
from keras_bert.preprocessing.pretraining.tfrecords import read_tfrecords, write_tfrecords

__all__ = [
    "OBJECTIVES",
    "PretrainingDataConfig",
    "create_full_sentence_rows",
    "StreamedPairBatches",
    "create_nsp_pairs",
    "create_sentence_rows",
    "create_pretraining_examples",
    "create_sop_pairs",
    "default_max_predictions",
    "expand_text_files",
    "iter_file_documents",
    "mask_tokens",
    "pack_pairs",
    "padding_fraction",
    "pretrain_objective_options",
    "pretraining_dataset",
    "random_token_pool",
    "read_documents",
    "read_tfrecords",
    "span_length_probabilities",
    "split_sentences",
    "tokenize_documents",
    "worker_share",
    "write_tfrecords",
]
