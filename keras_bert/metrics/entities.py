"""Entity-level precision / recall / F1 over tag sequences, equal to seqeval's.

Two ways to read entities out of tags, the two that seqeval offers:

- `scheme=None` (the default; seqeval's default mode, which follows CoNLL's
  conlleval script): lenient. Every tag other than "O" belongs to some entity.
  An entity ends after an `E-` or `S-` tag, and before a `B-`, `S-` or "O" tag
  or a tag of another type; an `I-` or `E-` tag that continues nothing starts
  a new entity. This reads IOB1 (CoNLL-2003's files, where `I-` after "O"
  starts an entity), IOB2 and IOBES files alike, and gives ill-formed
  predictions (`O I-PER`, `B-PER I-LOC`) the same partial credit as conlleval.
- `scheme="IOB2"` or `scheme="IOBES"` (seqeval's `mode="strict"` with that
  scheme): only well-formed entities count, `B-X I-X*` in IOB2, `B-X I-X* E-X`
  or `S-X` in IOBES; a stray `I-` or an unclosed `B-` gives no entity, and a
  prefix the scheme does not have is refused.

Tags are "O", or a prefix B, I, E or S alone or followed by "-TYPE" (a bare
prefix has the type "_", as in seqeval). Anything else ("PER", "U-PER",
"L-PER", "", "B--X") is refused with a `ValueError` naming the tag: seqeval
only warns about such tags and then scores them in ways that differ between
its modes. Strict IOB1, IOE1/IOE2 and BILOU are not offered (IOB1 data reads
correctly in the default mode).

Scores are fractions in [0, 1], as seqeval returns them; a score whose
denominator is zero (no predicted or no true entities) is 0.0, seqeval's
value under its default `zero_division="warn"`.
"""

import numpy as np

SCHEMES = ("IOB2", "IOBES")
_PREFIXES = ("B", "I", "E", "S")
# Per scheme: the prefixes it allows, and those that continue an entity begun by B-.
_STRICT = {"IOB2": ("BIO", "I"), "IOBES": ("BIESO", "IE")}


def _split(tag):
    """`(prefix, type)` of one tag: "O" -> ("O", "_"), "B-PER" -> ("B", "PER"), "B" -> ("B", "_")."""
    if tag == "O":
        return "O", "_"
    prefix, dash, entity_type = tag.partition("-") if isinstance(tag, str) else (None, "", "")
    well_formed = not dash or (entity_type and entity_type[0] != "-" and entity_type[-1] != "-")
    if prefix not in _PREFIXES or not well_formed:
        raise ValueError(
            f"Tag {tag!r} is not an entity tag: expected 'O', or B, I, E or S alone or followed by '-TYPE' "
            "(IOB1, IOB2 or IOBES)."
        )
    return prefix, entity_type or "_"


def _check_scheme(scheme):
    if scheme is not None and scheme not in SCHEMES:
        raise ValueError(
            f"`scheme` must be None (lenient, seqeval's default mode; reads IOB1, IOB2 and IOBES) or one of "
            f"{SCHEMES} (seqeval's strict mode). Received: scheme={scheme!r}"
        )


def _lenient_entities(parsed):
    """seqeval's default mode over one sequence of `(prefix, type)`; a sentinel "O" closes the last entity."""
    entities, open_since, previous, previous_type = [], None, "O", "_"
    for i, (prefix, entity_type) in enumerate(list(parsed) + [("O", "_")]):
        if open_since is not None and (
            previous in ("E", "S") or prefix in ("B", "S", "O") or entity_type != previous_type
        ):
            entities.append((previous_type, open_since, i - 1))
            open_since = None
        if prefix != "O" and open_since is None:
            open_since = i
        previous, previous_type = prefix, entity_type
    return entities


def _strict_entities(parsed, scheme, offset):
    """seqeval's strict mode over one sentence: only well-formed entities, indices shifted by `offset`."""
    allowed, inside = _STRICT[scheme]
    for prefix, entity_type in parsed:
        if prefix not in allowed:
            raise ValueError(f"Tag prefix {prefix!r} (type {entity_type!r}) is not part of the {scheme} scheme.")
    entities, i = [], 0
    while i < len(parsed):
        prefix, entity_type = parsed[i]
        if prefix not in ("B", "S"):
            i += 1
            continue
        end = i + 1
        # An entity begun by B- runs on through I- (and, in IOBES, one closing E-) of its own type.
        while end < len(parsed) and parsed[end - 1][0] in ("B", "I") and parsed[end][0] in inside \
                and parsed[end][1] == entity_type:
            end += 1
        # IOB2 has no closing tag, so every run counts; in IOBES it must close with E- (or be one S-).
        if scheme == "IOB2" or parsed[end - 1][0] in ("E", "S"):
            entities.append((entity_type, offset + i, offset + end - 1))
        i = end
    return entities


def get_entities(tags, scheme=None):
    """Entities of one tag sequence (or of several, end to end).

    Args:
        tags: list of tag strings ("O", "B-PER", "I-PER", ...), or a list of
            such lists (sentences; an entity never crosses a sentence boundary).
        scheme: None (lenient; seqeval's default mode) or "IOB2" / "IOBES"
            (only well-formed entities; seqeval's strict mode). See the module
            docstring.

    Returns:
        list of `(type, first, last)` tuples, word indices inclusive, in order
        of their ends; for a list of sentences the indices count over all
        sentences end to end, each followed by one "O" (seqeval's convention).

    Raises:
        ValueError: for a tag that is not "O" / B / I / E / S(-TYPE), a prefix
            the strict scheme does not have, or an unknown `scheme`.
    """
    _check_scheme(scheme)
    nested = any(isinstance(t, (list, tuple)) for t in tags)
    sentences = [list(s) for s in tags] if nested else [list(tags)]
    entities, offset = [], 0
    for sentence in sentences:
        parsed = [_split(tag) for tag in sentence]
        if scheme is None:
            entities += [(kind, offset + first, offset + last) for kind, first, last in _lenient_entities(parsed)]
        else:
            entities += _strict_entities(parsed, scheme, offset)
        offset += len(sentence) + 1
    return entities


def are_entity_tags(label_names):
    """Whether every label is an entity tag ("O", B/I/E/S[-TYPE]) that `get_entities` reads.

    A token classifier is not always an entity tagger: part-of-speech labels
    ("NOUN", "VERB") are not entity tags. Callers check this first and report
    per-word results only, rather than let `get_entities` refuse the labels.
    """
    try:
        for name in label_names:
            _split(name)
    except ValueError:
        return False
    return True


def _check_lengths(true_tags, pred_tags):
    if len(true_tags) != len(pred_tags):
        raise ValueError(f"{len(true_tags)} true sentences but {len(pred_tags)} predicted ones.")
    for i, (t, p) in enumerate(zip(true_tags, pred_tags)):
        if len(t) != len(p):
            raise ValueError(f"Sentence {i} has {len(t)} true tags but {len(p)} predicted ones.")


def _scores(true, predicted):
    correct = len(true & predicted)
    precision = correct / len(predicted) if predicted else 0.0
    recall = correct / len(true) if true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1, correct


def entity_metrics(true_tags, pred_tags, scheme=None):
    """Micro-averaged entity precision, recall and F1 (seqeval's `classification_report` "micro avg").

    Equal to `seqeval.metrics.precision_score / recall_score / f1_score` and
    to the rows of `classification_report(..., output_dict=True)`; with
    `scheme` set, to the same calls with `mode="strict", scheme=IOB2/IOBES`.

    Args:
        true_tags: list of sentences, each a list of tag strings.
        pred_tags: list of sentences of the same lengths.
        scheme: None (lenient, the default), "IOB2" or "IOBES" (strict); see
            the module docstring.

    Returns:
        dict with `precision`, `recall`, `f1` (floats in [0, 1]), and the
        counts `num_true`, `num_predicted`, `num_correct`, plus `per_type`:
        `{type: {"precision", "recall", "f1", "support"}}` for every type
        that is true or predicted somewhere (support = true entities).
    """
    _check_lengths(true_tags, pred_tags)
    true = set(get_entities([list(s) for s in true_tags], scheme))
    pred = set(get_entities([list(s) for s in pred_tags], scheme))
    precision, recall, f1, correct = _scores(true, pred)
    per_type = {}
    for entity_type in sorted({e[0] for e in true | pred}):
        t = {e for e in true if e[0] == entity_type}
        p = {e for e in pred if e[0] == entity_type}
        tp, tr, tf, _ = _scores(t, p)
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
    """Word-level tag accuracy over all sentences (seqeval's `accuracy_score`); 0.0 for no words."""
    _check_lengths(true_tags, pred_tags)
    flat_true = [t for s in true_tags for t in s]
    flat_pred = [t for s in pred_tags for t in s]
    return float(np.mean([a == b for a, b in zip(flat_true, flat_pred)])) if flat_true else 0.0
