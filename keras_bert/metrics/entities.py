"""Entity-level precision / recall / F1 over BIO tags, as seqeval computes them (default mode).

An entity is a maximal run `B-X I-X I-X ...`; as in seqeval's default
(conlleval-compatible) mode, an `I-X` that does not continue an entity of
type X starts a new one, so IOB1 files score the same way. A predicted
entity counts only if its type, first and last word all match a true one.
"""

import numpy as np


def _split(tag):
    if tag in ("O", ""):
        return "O", ""
    prefix, _, entity_type = tag.partition("-")
    return prefix, entity_type or "_"


def get_entities(tags):
    """Entities of one tag sequence (or of several, end to end).

    Args:
        tags: list of tag strings ("O", "B-PER", "I-PER", ...), or a list of
            such lists (sentences; an entity never crosses a sentence boundary).

    Returns:
        list of `(type, first, last)` tuples, word indices inclusive; for a
        list of sentences the indices count over all sentences end to end,
        each followed by one "O" (seqeval's convention).
    """
    if any(isinstance(t, (list, tuple)) for t in tags):
        tags = [tag for sentence in tags for tag in list(sentence) + ["O"]]
    entities, previous, previous_type, begin = [], "O", "", 0
    for i, tag in enumerate(list(tags) + ["O"]):
        prefix, entity_type = _split(tag)
        if previous in ("B", "I") and (prefix in ("B", "O") or entity_type != previous_type):
            entities.append((previous_type, begin, i - 1))
        if prefix == "B" or (prefix == "I" and (previous == "O" or entity_type != previous_type)):
            begin = i
        previous, previous_type = prefix, entity_type
    return entities


def entity_metrics(true_tags, pred_tags):
    """Micro-averaged entity precision, recall and F1 (seqeval's `classification_report` "micro avg").

    Args:
        true_tags: list of sentences, each a list of tag strings.
        pred_tags: list of sentences of the same lengths.

    Returns:
        dict with `precision`, `recall`, `f1` (floats in [0, 1]), and the
        counts `num_true`, `num_predicted`, `num_correct`, plus `per_type`:
        `{type: {"precision", "recall", "f1", "support"}}`.
    """
    if len(true_tags) != len(pred_tags):
        raise ValueError(f"{len(true_tags)} true sentences but {len(pred_tags)} predicted ones.")
    for i, (t, p) in enumerate(zip(true_tags, pred_tags)):
        if len(t) != len(p):
            raise ValueError(f"Sentence {i} has {len(t)} true tags but {len(p)} predicted ones.")
    true = set(get_entities([list(s) for s in true_tags]))
    pred = set(get_entities([list(s) for s in pred_tags]))

    def scores(t, p):
        correct = len(t & p)
        precision = correct / len(p) if p else 0.0
        recall = correct / len(t) if t else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f1, correct

    precision, recall, f1, correct = scores(true, pred)
    per_type = {}
    for entity_type in sorted({e[0] for e in true | pred}):
        t = {e for e in true if e[0] == entity_type}
        p = {e for e in pred if e[0] == entity_type}
        tp, tr, tf, _ = scores(t, p)
        per_type[entity_type] = {"precision": tp, "recall": tr, "f1": tf, "support": len(t)}
    return {
        "precision": float(precision),
        "recall": float(recall),
        "f1": float(f1),
        "num_true": len(true),
        "num_predicted": len(pred),
        "num_correct": int(correct),
        "per_type": per_type,
    }


def token_accuracy(true_tags, pred_tags):
    """Word-level tag accuracy over all sentences."""
    flat_true = [t for s in true_tags for t in s]
    flat_pred = [t for s in pred_tags for t in s]
    return float(np.mean([a == b for a, b in zip(flat_true, flat_pred)])) if flat_true else 0.0
