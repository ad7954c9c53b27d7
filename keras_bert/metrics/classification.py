"""Sentence-level metrics: accuracy, F1 (binary / macro), Pearson and Spearman correlation."""

import numpy as np


def _labels(y_true, y_pred):
    y_true, y_pred = np.asarray(y_true).ravel(), np.asarray(y_pred).ravel()
    if y_true.shape != y_pred.shape:
        raise ValueError(f"`y_true` and `y_pred` must have the same length. Received {y_true.shape} and {y_pred.shape}")
    if y_true.size == 0:
        raise ValueError("Cannot score an empty set of predictions.")
    return y_true, y_pred


def accuracy(y_true, y_pred):
    """Fraction of predictions equal to the true label.

    Args:
        y_true: int labels of shape `(num_examples,)`.
        y_pred: int predicted labels of the same shape.

    Returns:
        float in [0, 1].
    """
    y_true, y_pred = _labels(y_true, y_pred)
    return float(np.mean(y_true == y_pred))


def _f1(y_true, y_pred, label):
    tp = np.sum((y_pred == label) & (y_true == label))
    fp = np.sum((y_pred == label) & (y_true != label))
    fn = np.sum((y_pred != label) & (y_true == label))
    return 0.0 if tp == 0 else float(2 * tp / (2 * tp + fp + fn))


def f1_score(y_true, y_pred, average="binary", pos_label=1, num_classes=None):
    """F1 of one class ("binary") or the unweighted mean over classes ("macro").

    A class with no true and no predicted examples has F1 0 in the macro mean
    only if `num_classes` names it; by default the classes are those seen in
    either array (scikit-learn's convention).

    Args:
        y_true: int labels of shape `(num_examples,)`.
        y_pred: int predicted labels of the same shape.
        average: "binary" (F1 of `pos_label`) or "macro".
        pos_label: the positive class for "binary".
        num_classes: optional int; with "macro", average over `range(num_classes)`.

    Returns:
        float in [0, 1].
    """
    y_true, y_pred = _labels(y_true, y_pred)
    if average == "binary":
        return _f1(y_true, y_pred, pos_label)
    if average == "macro":
        classes = range(num_classes) if num_classes else np.union1d(y_true, y_pred)
        return float(np.mean([_f1(y_true, y_pred, c) for c in classes]))
    raise ValueError(f'`average` must be "binary" or "macro". Received: average={average!r}')


def _ranks(values):
    """Ranks starting at 1, ties sharing their average rank."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), "float64")
    sorted_values = values[order]
    start = 0
    for end in range(1, len(values) + 1):
        if end == len(values) or sorted_values[end] != sorted_values[start]:
            ranks[order[start:end]] = (start + end + 1) / 2.0
            start = end
    return ranks


def pearson_correlation(y_true, y_pred):
    """Pearson's r; 0.0 when either side is constant (no linear relation to measure)."""
    y_true, y_pred = (np.asarray(v, "float64") for v in _labels(y_true, y_pred))
    x, y = y_true - y_true.mean(), y_pred - y_pred.mean()
    denominator = np.sqrt(np.sum(x * x) * np.sum(y * y))
    return 0.0 if denominator == 0 else float(np.sum(x * y) / denominator)


def spearman_correlation(y_true, y_pred):
    """Spearman's rho: Pearson's r of the ranks (ties get their average rank)."""
    y_true, y_pred = (np.asarray(v, "float64") for v in _labels(y_true, y_pred))
    return pearson_correlation(_ranks(y_true), _ranks(y_pred))


def classification_metrics(y_true, y_pred, num_classes):
    """The figures the fine-tuning job reports for a classifier.

    Returns:
        dict: `accuracy`, `macro_f1`, and with two classes `f1` (of class 1).
    """
    results = {
        "accuracy": accuracy(y_true, y_pred),
        "macro_f1": f1_score(y_true, y_pred, average="macro", num_classes=num_classes),
    }
    if num_classes == 2:
        results["f1"] = f1_score(y_true, y_pred, average="binary", pos_label=1)
    return results


def regression_metrics(y_true, y_pred):
    """`pearson`, `spearman` and `mse` of real-valued predictions."""
    y_true, y_pred = (np.asarray(v, "float64") for v in _labels(y_true, y_pred))
    return {
        "pearson": pearson_correlation(y_true, y_pred),
        "spearman": spearman_correlation(y_true, y_pred),
        "mse": float(np.mean((y_true - y_pred) ** 2)),
    }
