"""Checkpoint converters (numpy-only weight mapping)."""

from keras_bert.converters.checkpoint import load_backbone, load_task
from keras_bert.converters.weight_map import assign_canonical_weights, canonical_weights

__all__ = ["assign_canonical_weights", "canonical_weights", "load_backbone", "load_task"]
