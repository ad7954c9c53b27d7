"""Checkpoint converters: Google TF1, Hugging Face, keras-hub and `.keras`, both ways where it makes sense.

The weight mapping is numpy only (`weight_map`); TensorFlow is imported only
to read TF1 checkpoint files, keras-hub only by `keras_hub_interop`, and
huggingface_hub only for `hf://` names.
"""

from keras_bert.converters.checkpoint import load_backbone, load_task, load_weights, read_checkpoint
from keras_bert.converters.convert import add_convert_arguments, convert, run_convert
from keras_bert.converters.hf_writer import save_hf_checkpoint
from keras_bert.converters.keras_hub_interop import from_keras_hub, to_keras_hub
from keras_bert.converters.tokenizer_files import find_vocabulary, read_do_lower_case
from keras_bert.converters.weight_map import assign_canonical_weights, canonical_weights

__all__ = [
    "add_convert_arguments",
    "assign_canonical_weights",
    "canonical_weights",
    "convert",
    "find_vocabulary",
    "from_keras_hub",
    "load_backbone",
    "load_task",
    "load_weights",
    "read_checkpoint",
    "read_do_lower_case",
    "run_convert",
    "save_hf_checkpoint",
    "to_keras_hub",
]
