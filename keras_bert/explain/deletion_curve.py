"""`DeletionCurve`: do the most-attributed words matter more to the prediction than random ones?

Delete the k words with the largest attributions from each text and read the
predicted class's probability again; do the same with k words drawn at
random. Attributions that are faithful to the model make the first curve
fall faster: its area is smaller than the random curve's.
"""

import dataclasses

import keras
import numpy as np


@dataclasses.dataclass
class DeletionCurve:
    """The predicted class's probability as words are deleted, most-attributed first vs at random.

    Attributes:
        ks: the numbers of words deleted (0 first); a text keeps at least one word
            (k is capped at its word count minus one).
        top: mean probability over the texts after deleting the k most-attributed words.
        random: mean over the texts and the random draws after deleting k random words.
        random_spread: standard deviation, over the draws, of the random curve's mean over the texts.
        area_top, area_random: each curve's area over k, divided by the largest k
            (the mean height, 0 to 1; smaller falls faster).
        texts: how many texts; draws: random draws per text and k; seed: the draws' seed.
        method: the attribution method the ranking came from.
    """

    ks: list
    top: list
    random: list
    random_spread: list
    area_top: float
    area_random: float
    texts: int
    draws: int
    seed: int
    method: str

    def to_dict(self):
        return dataclasses.asdict(self)


def deletion_curve(attributor, inputs, max_words=5, draws=5, seed=0, batch_size=64, rows=None):
    """The deletion curve of a classifier's attributions over `inputs`.

    Each input's predicted class is explained once (`attributor`, its
    method and steps); words are ranked by their attribution to that class,
    largest first, and deleted from the text (with the space before them).
    The probability of that same class is read after each deletion.

    Args:
        attributor: a `TokenAttributor` of a `BertClassifier` with at least two classes.
        inputs: a list of texts (or tuples for text pairs).
        max_words: the largest k.
        draws: random draws per text and k.
        seed: the random draws' seed (the same seed, the same curve).
        batch_size: texts per forward pass when reading the probabilities.
        rows: the inputs' `TokenAttributions` when they are already computed
            (one per input, from `attributor`); None computes them.

    Returns:
        A `DeletionCurve`.
    """
    if attributor.task != "classifier":
        raise ValueError(
            f"the deletion curve reads a class probability: it needs a classifier (this is a {attributor.task})"
        )
    if not isinstance(max_words, int) or max_words < 1 or not isinstance(draws, int) or draws < 1:
        raise ValueError(f"`max_words` and `draws` must be positive ints. Received: {max_words!r}, {draws!r}")
    rows = attributor(list(inputs)) if rows is None else list(rows)
    if any(span[1] is None for row in rows for span in row.word_spans):
        raise ValueError("deleting words needs their offsets in the text: a tokenizer with `tokenize_with_offsets`")
    rng = np.random.default_rng(seed)
    ks = list(range(max_words + 1))
    variants, owners = [], []  # every edited input, and (text, curve, k, draw) for each
    for t, row in enumerate(rows):
        n = len(row.words)
        ranked = np.argsort(-np.asarray(row.word_attributions), kind="stable")
        for k in ks:
            kept = min(k, n - 1)
            variants.append(_without(row, ranked[:kept]))
            owners.append((t, "top", k, 0))
            for d in range(draws):
                variants.append(_without(row, rng.choice(n, size=kept, replace=False)))
                owners.append((t, "random", k, d))
    classes = [row.target["index"] for row in rows]
    probabilities = _class_probabilities(attributor, variants, classes, owners, batch_size)
    top = np.zeros((len(rows), len(ks)))
    random = np.zeros((len(rows), len(ks), draws))
    for (t, curve, k, d), p in zip(owners, probabilities):
        if curve == "top":
            top[t, k] = p
        else:
            random[t, k, d] = p
    top_curve, random_curve = top.mean(axis=0), random.mean(axis=(0, 2))
    return DeletionCurve(
        ks=ks, top=top_curve.tolist(), random=random_curve.tolist(),
        random_spread=random.mean(axis=0).std(axis=1).tolist(),
        area_top=float(np.trapezoid(top_curve, ks) / ks[-1]),
        area_random=float(np.trapezoid(random_curve, ks) / ks[-1]),
        texts=len(rows), draws=draws, seed=seed, method=attributor.method,
    )


def _without(row, deleted):
    """The row's input fields with the words at indices `deleted` cut out (each with the whitespace before it)."""
    fields = list(row.fields)
    for index in sorted((int(i) for i in deleted), key=lambda i: -row.word_spans[i][1]):  # right to left
        field, start, end = row.word_spans[index]
        text = fields[field]
        while start > 0 and text[start - 1].isspace():
            start -= 1
        fields[field] = text[:start] + text[end:]
    return fields


def _class_probabilities(attributor, variants, classes, owners, batch_size):
    """The probability of each variant's text's class, `(len(variants),)`."""
    probabilities = []
    for start in range(0, len(variants), batch_size):
        batch = attributor.packer.pack_many(variants[start : start + batch_size])
        logits = keras.ops.convert_to_numpy(attributor.model.predict_on_batch(batch)).astype("float64")
        probabilities.append(np.exp(logits - logits.max(axis=1, keepdims=True)))
    p = np.concatenate(probabilities)
    p /= p.sum(axis=1, keepdims=True)
    return [p[i, classes[owners[i][0]]] for i in range(len(variants))]
