"""SQuAD exact match and F1, as the official v1.1 and v2.0 evaluation scripts compute them.

Normalisation (both scripts): lowercase, drop ASCII punctuation
(`string.punctuation`; Unicode punctuation such as "—" or "«" stays), drop the
words a/an/the, collapse whitespace. F1 is over the bag of normalised words.

The two scripts differ in three places, and `version` picks one:

- v2.0 drops gold answers that normalise to nothing, and a question left with
  none (an unanswerable one) has the single gold answer "", which only an
  answer that normalises to "" matches (EM and F1 1). v1.1 keeps every gold
  answer as given and has no unanswerable questions.
- F1 when a side normalises to no words: v2.0 gives 1 if both do and 0
  otherwise; v1.1 gives 0 even if both do (while their EM is 1).
- v2.0 reports the answerable (HasAns) and unanswerable (NoAns) questions
  apart; a question counts as answerable when its list of gold answers is
  not empty (before normalisation).

Units: `squad_exact_match` and `squad_f1` score one question in [0, 1] (the
scripts' per-question values); `squad_metrics` gives percentages (0-100), as
the scripts print them.
"""

import collections
import re
import string

VERSIONS = ("1.1", "2.0")
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text):
    """Lowercase, remove punctuation, articles and extra whitespace (the official SQuAD rule)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _check_version(version):
    if version not in VERSIONS:
        raise ValueError(f"`version` must be one of {VERSIONS}. Received: version={version!r}")


def _gold(answers, version):
    answers = [answers] if isinstance(answers, str) else list(answers)
    if version == "1.1":
        if not answers:
            raise ValueError("SQuAD v1.1 has no unanswerable questions: a question needs at least one gold answer.")
        return answers
    # As in the v2.0 script: answers that normalise to nothing are dropped, and
    # a question with none left is unanswerable ("" is its only answer).
    return [a for a in answers if normalize_answer(a)] or [""]


def _f1(prediction, gold, version):
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if version == "2.0" and (not pred_tokens or not gold_tokens):
        return float(pred_tokens == gold_tokens)
    common = collections.Counter(pred_tokens) & collections.Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def squad_exact_match(prediction, answers, version="2.0"):
    """1.0 if `prediction` equals one of `answers` after normalisation, else 0.0.

    Args:
        prediction: the predicted answer text ("" = no answer).
        answers: a gold answer text or a list of them ([] = unanswerable, v2.0 only).
        version: "2.0" (default; handles unanswerable questions) or "1.1";
            see the module docstring for where they differ.
    """
    _check_version(version)
    return max(float(normalize_answer(prediction) == normalize_answer(g)) for g in _gold(answers, version))


def squad_f1(prediction, answers, version="2.0"):
    """The best word-overlap F1 of `prediction` against any of `answers`, in [0, 1].

    Args: as `squad_exact_match`.
    """
    _check_version(version)
    return max(_f1(prediction, g, version) for g in _gold(answers, version))


def squad_metrics(predictions, references, version=None):
    """Official SQuAD scores (evaluate-v1.1.py / evaluate-v2.0.py without a no-answer probability file).

    Args:
        predictions: dict question id -> predicted answer text ("" = no answer).
            Ids that are not in `references` are ignored, as the scripts do.
        references: dict question id -> list of gold answer texts ([] for an
            unanswerable question).
        version: "1.1", "2.0", or None (default): "2.0" when some question is
            unanswerable, else "1.1" (the two differ only for gold answers
            that normalise to nothing, such as "The"; pass it to be sure).

    Returns:
        dict with `exact_match` and `f1` (percent), `total`, `version`; for
        v2.0 also `has_answer_exact_match`, `has_answer_f1`, `has_answer_total`
        when some question is answerable and the `no_answer_*` three when
        some is not (the scripts' HasAns_* / NoAns_*). A reference id without
        a prediction scores 0 and counts in the totals, as in the v1.1 script
        (the v2.0 script leaves it out of `total` and then fails on the
        HasAns/NoAns split, so it has no number to follow).
    """
    if not references:
        raise ValueError("`references` is empty.")
    references = {qid: [a] if isinstance(a, str) else list(a) for qid, a in references.items()}
    if version is None:
        version = "2.0" if any(not answers for answers in references.values()) else "1.1"
    _check_version(version)
    exact, f1 = {}, {}
    for qid, answers in references.items():
        prediction = predictions.get(qid)
        exact[qid] = 0.0 if prediction is None else squad_exact_match(prediction, answers, version)
        f1[qid] = 0.0 if prediction is None else squad_f1(prediction, answers, version)

    def mean(values, ids):
        return 100.0 * sum(values[i] for i in ids) / len(ids)

    all_ids = list(references)
    results = {"exact_match": mean(exact, all_ids), "f1": mean(f1, all_ids), "total": len(all_ids), "version": version}
    if version == "2.0":
        for name, ids in (("has_answer", [i for i in all_ids if references[i]]),
                          ("no_answer", [i for i in all_ids if not references[i]])):
            if ids:
                results.update({f"{name}_exact_match": mean(exact, ids), f"{name}_f1": mean(f1, ids),
                                f"{name}_total": len(ids)})
    return results
