"""An independent SQuAD scorer written from the official scripts' documented behaviour.

The official `evaluate-v1.1.py` and `evaluate-v2.0.py` (rajpurkar.github.io/SQuAD-explorer)
are not installable here (transformers 5 dropped its copy; `evaluate` downloads
them), so this module restates what they do, without importing keras_bert.
It takes the dataset in the SQuAD JSON layout (`[{"paragraphs": [{"qas":
[{"id", "answers": [{"text"}]}]}]}]`) and returns the scripts' own keys.

Both scripts normalise an answer by: lowercase; remove every character of
`string.punctuation`; replace the words a / an / the (regex word boundaries)
by a space; join the whitespace-split words with single spaces.

v1.1, per question: EM = max over all gold answers of "normalised strings
equal"; F1 = max over all gold answers of the bag-of-words F1, which is 0
whenever the two share no word (so also when both are empty). A question
without a prediction scores 0 and still counts in the total. Output:
`exact_match`, `f1` in percent.

v2.0, per question: gold answers that normalise to "" are dropped, and if
none is left the gold answers are [""]; a question without a prediction is
skipped (not scored, not counted). EM as in v1.1; F1 is 1 if the prediction
and the gold answer both have no words, 0 if only one of them has none, else
the bag-of-words F1; both are maxed over the gold answers. Without a no-answer
probability file every no-answer probability is 0, under the default
threshold of 1.0, so the threshold changes nothing. A question has an answer
(HasAns) when its raw answer list is not empty. Output: `exact`, `f1`,
`total` over the scored questions, and `HasAns_exact/_f1/_total`,
`NoAns_exact/_f1/_total` over those questions when there are any (a skipped
question in those lists makes the script fail; so does this module).
"""

import collections
import re
import string


def normalize(text):
    lowered = text.lower()
    without_punctuation = "".join(c for c in lowered if c not in set(string.punctuation))
    without_articles = re.sub(r"\b(a|an|the)\b", " ", without_punctuation)
    return " ".join(without_articles.split())


def _bag_f1(prediction_words, gold_words):
    overlap = sum((collections.Counter(prediction_words) & collections.Counter(gold_words)).values())
    if overlap == 0:
        return 0
    precision = 1.0 * overlap / len(prediction_words)
    recall = 1.0 * overlap / len(gold_words)
    return (2 * precision * recall) / (precision + recall)


def v1_exact(prediction, gold):
    return normalize(prediction) == normalize(gold)


def v1_f1(prediction, gold):
    return _bag_f1(normalize(prediction).split(), normalize(gold).split())


def v2_exact(prediction, gold):
    return int(normalize(gold) == normalize(prediction))


def v2_f1(prediction, gold):
    gold_words = normalize(gold).split() if gold else []
    prediction_words = normalize(prediction).split() if prediction else []
    if not gold_words or not prediction_words:
        return int(gold_words == prediction_words)
    return _bag_f1(prediction_words, gold_words)


def v2_gold(answer_texts):
    return [a for a in answer_texts if normalize(a)] or [""]


def questions(dataset):
    for article in dataset:
        for paragraph in article["paragraphs"]:
            yield from paragraph["qas"]


def evaluate_v1(dataset, predictions):
    exact_match = f1 = total = 0
    for qa in questions(dataset):
        total += 1
        if qa["id"] not in predictions:
            continue
        golds = [a["text"] for a in qa["answers"]]
        prediction = predictions[qa["id"]]
        exact_match += max(v1_exact(prediction, g) for g in golds)
        f1 += max(v1_f1(prediction, g) for g in golds)
    return {"exact_match": 100.0 * exact_match / total, "f1": 100.0 * f1 / total}


def evaluate_v2(dataset, predictions):
    exact, f1, has_answer = {}, {}, {}
    for qa in questions(dataset):
        has_answer[qa["id"]] = bool(qa["answers"])
        golds = v2_gold([a["text"] for a in qa["answers"]])
        if qa["id"] not in predictions:
            continue
        prediction = predictions[qa["id"]]
        exact[qa["id"]] = max(v2_exact(prediction, g) for g in golds)
        f1[qa["id"]] = max(v2_f1(prediction, g) for g in golds)
    total = len(exact)
    results = {"exact": 100.0 * sum(exact.values()) / total, "f1": 100.0 * sum(f1.values()) / total, "total": total}
    for prefix, wanted in (("HasAns", True), ("NoAns", False)):
        ids = [qid for qid, has in has_answer.items() if has == wanted]
        if ids:
            results[f"{prefix}_exact"] = 100.0 * sum(exact[q] for q in ids) / len(ids)
            results[f"{prefix}_f1"] = 100.0 * sum(f1[q] for q in ids) / len(ids)
            results[f"{prefix}_total"] = len(ids)
    return results
