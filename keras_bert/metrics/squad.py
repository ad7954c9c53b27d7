"""SQuAD exact match and F1, with the official answer normalisation (v1.1 and v2.0 scripts).

Normalisation: lowercase, drop ASCII punctuation, drop the articles a/an/the,
collapse whitespace. F1 is over the bag of normalised words. An unanswerable
question (SQuAD 2.0) has the single gold answer "", matched only by "".
Scores are percentages (0-100), as the official scripts print them.
"""

import collections
import re
import string

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text):
    """Lowercase, remove punctuation, articles and extra whitespace (the official SQuAD rule)."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def _gold(answers):
    answers = [answers] if isinstance(answers, str) else list(answers)
    # As in the v2.0 script: answers that normalise to nothing are dropped, and
    # a question with none left is unanswerable ("" is its only answer).
    kept = [a for a in answers if normalize_answer(a)]
    return kept or [""]


def _exact(prediction, gold):
    return float(normalize_answer(prediction) == normalize_answer(gold))


def _f1(prediction, gold):
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    common = collections.Counter(pred_tokens) & collections.Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def squad_exact_match(prediction, answers):
    """1.0 if `prediction` equals one of `answers` after normalisation, else 0.0."""
    return max(_exact(prediction, g) for g in _gold(answers))


def squad_f1(prediction, answers):
    """The best word-overlap F1 of `prediction` against any of `answers`, in [0, 1]."""
    return max(_f1(prediction, g) for g in _gold(answers))


def squad_metrics(predictions, references):
    """Official-style SQuAD scores.

    Args:
        predictions: dict question id -> predicted answer text ("" = no answer).
        references: dict question id -> list of gold answer texts ([] for an
            unanswerable question).

    Returns:
        dict with `exact_match` and `f1` (percent), `total`, and when the
        references hold both kinds, `has_answer_exact_match`, `has_answer_f1`,
        `no_answer_exact_match`, `no_answer_f1` (percent) and their counts.
        A reference id without a prediction scores 0 (the official scripts
        do the same and print a warning).
    """
    if not references:
        raise ValueError("`references` is empty.")
    exact, f1, has_answer = {}, {}, {}
    for qid, answers in references.items():
        prediction = predictions.get(qid)
        has_answer[qid] = _gold(answers) != [""]
        if prediction is None:
            exact[qid] = f1[qid] = 0.0
            continue
        exact[qid] = squad_exact_match(prediction, answers)
        f1[qid] = squad_f1(prediction, answers)

    def mean(values, ids):
        return 100.0 * sum(values[i] for i in ids) / len(ids)

    all_ids = list(references)
    results = {"exact_match": mean(exact, all_ids), "f1": mean(f1, all_ids), "total": len(all_ids)}
    answerable = [i for i in all_ids if has_answer[i]]
    unanswerable = [i for i in all_ids if not has_answer[i]]
    if answerable and unanswerable:
        results.update(
            has_answer_exact_match=mean(exact, answerable),
            has_answer_f1=mean(f1, answerable),
            has_answer_total=len(answerable),
            no_answer_exact_match=mean(exact, unanswerable),
            no_answer_f1=mean(f1, unanswerable),
            no_answer_total=len(unanswerable),
        )
    return results
