"""Metrics for the task heads.

Host-side numpy functions compute the evaluation figures people report
(accuracy, F1, Pearson/Spearman, entity F1 equal to seqeval's, SQuAD EM/F1
equal to the official v1.1 / v2.0 scripts'; tests/metrics checks both
against those references); `MaskedAccuracy` is the one Keras metric, for
training progress bars of the token classifier. Nothing here imports TensorFlow.
"""

from keras_bert.metrics.classification import (
    accuracy,
    classification_metrics,
    f1_score,
    pearson_correlation,
    regression_metrics,
    spearman_correlation,
)
from keras_bert.metrics.entities import are_entity_tags, entity_metrics, get_entities, token_accuracy
from keras_bert.metrics.masked_accuracy import MaskedAccuracy
from keras_bert.metrics.squad import normalize_answer, squad_exact_match, squad_f1, squad_metrics

__all__ = [
    "MaskedAccuracy",
    "accuracy",
    "are_entity_tags",
    "classification_metrics",
    "entity_metrics",
    "f1_score",
    "get_entities",
    "normalize_answer",
    "pearson_correlation",
    "regression_metrics",
    "spearman_correlation",
    "squad_exact_match",
    "squad_f1",
    "squad_metrics",
    "token_accuracy",
]
