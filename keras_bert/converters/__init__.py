"""Checkpoint formats <-> canonical tensors: Google TF1, Hugging Face, keras-hub and `.keras`.

This package reads and writes file formats as named numpy tensors and BERT
configs; `keras_bert.models` builds models from them (`BertBackbone.from_pretrained`,
`BertBackbone.from_keras_hub`), and `keras_bert.jobs.convert` converts
between formats. Nothing here imports `keras_bert.models`.

The weight mapping is numpy and keras only (`weight_map`); TensorFlow is
imported only to read TF1 checkpoint files, keras-hub only by
`keras_hub_interop`, and huggingface_hub only for `hf://` and preset names (`presets`).
"""

from keras_bert.converters.checkpoint import load_weights, read_checkpoint
from keras_bert.converters.hf_writer import save_hf_checkpoint
from keras_bert.converters.keras_hub_interop import to_keras_hub
from keras_bert.converters.presets import list_presets
from keras_bert.converters.tokenizer_files import find_vocabulary, read_do_lower_case
from keras_bert.converters.weight_map import assign_canonical_weights, canonical_weights

__all__ = [
    "assign_canonical_weights",
    "canonical_weights",
    "find_vocabulary",
    "list_presets",
    "load_weights",
    "read_checkpoint",
    "read_do_lower_case",
    "save_hf_checkpoint",
    "to_keras_hub",
]
