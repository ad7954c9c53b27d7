"""BiasReport: how often and how much a model's predictions change when only the swapped terms change.

    report = keras_bert.check_counterfactual_bias("runs/sst", texts)
    report.overall      # {"texts": 142, "flips": 3, "flip_rate": 0.0211, "mean_abs_change": 0.012, ...}
    report.per_pair     # {"he/she": {...}, "john/mary": {...}}
    report.worst        # the texts whose prediction changed most, original and swapped side by side
    print(report.summary())
    report.write("bias_report/")   # bias_report/report.json

What "change" is: for a classifier, the absolute change of the probability of the label predicted for the
original text (and a flip: the swapped text gets another label); for a regressor, the absolute change of
the predicted value (a regressor has no flips). Only texts that hold a term are compared; the others are
counted (`texts_without_terms`) and said.

Pure Python: the numbers come in already computed (`check_counterfactual_bias`).
"""

import dataclasses
import os

from keras_bert.atomic_files import write_json_atomically

REPORT_FILE = "report.json"
# What the change measures, by task.
MEASURES = {
    "classifier": "absolute change of the probability of the label predicted for the original text",
    "regressor": "absolute change of the predicted value",
}


@dataclasses.dataclass(frozen=True)
class BiasReport:
    """The result of a counterfactual bias check.

    Attributes:
        model: the model checked, in words (its path, or the pipeline's model class).
        task: "classifier" or "regressor".
        pairs: where the term pairs came from ("builtin", a file, or both).
        num_pairs: how many pairs were swapped.
        texts: how many texts were given.
        texts_without_terms: how many held no term (not compared).
        overall: `{"texts", "flips", "flip_rate", "mean_abs_change", "max_abs_change"}` over the compared
            texts; `flips` and `flip_rate` are None for a regressor.
        per_pair: the same per pair name ("he/she"), for the pairs that occurred; a text with two pairs
            counts under both.
        worst: the compared texts that changed most (flips first for a classifier), as in `examples`.
        examples: every compared text: `{"index", "original", "swapped", "pairs", "prediction",
            "swapped_prediction", "change", "flipped"}` (predictions as the pipeline gives them).
    """

    model: str
    task: str
    pairs: str
    num_pairs: int
    texts: int
    texts_without_terms: int
    overall: dict
    per_pair: dict
    worst: list
    examples: list

    @classmethod
    def from_examples(cls, examples, *, model, task, pairs, num_pairs, texts, worst=10):
        """The report of compared `examples` (each with "pairs", "change" and "flipped"), aggregated here."""
        by_pair = {}
        for example in examples:
            for name in example["pairs"]:
                by_pair.setdefault(name, []).append(example)
        ranked = sorted(examples, key=lambda e: (bool(e["flipped"]), e["change"]), reverse=True)
        return cls(
            model=model, task=task, pairs=pairs, num_pairs=num_pairs, texts=texts,
            texts_without_terms=texts - len(examples), overall=_statistics(examples, task),
            per_pair={name: _statistics(group, task) for name, group in by_pair.items()},
            worst=ranked[:worst], examples=list(examples),
        )

    @property
    def measure(self):
        """What `change` measures, in words."""
        return MEASURES[self.task]

    def as_dict(self):
        """The report as JSON-ready data (what report.json holds)."""
        return {"measure": self.measure, **dataclasses.asdict(self)}

    def write(self, folder):
        """Writes `folder/report.json` (atomically; `folder` is created if needed); returns its path."""
        folder = os.fspath(folder)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, REPORT_FILE)
        write_json_atomically(self.as_dict(), path)
        return path

    def summary(self, shown=3):
        """A few readable lines: what was compared, the flip rate and changes overall and per pair, the worst."""
        o = self.overall
        compared = (f"bias check of {self.model} ({self.task}): {o['texts']:,} of {self.texts:,} texts hold a term "
                    f"of {self.pairs} ({self.num_pairs} pairs); {self.texts_without_terms:,} hold none and were not "
                    "compared")
        changes = f"{_flips(o)}{self.measure}: mean {o['mean_abs_change']:.4f}, max {o['max_abs_change']:.4f}"
        lines = [compared, changes, "per pair (texts, flips, mean / max change):"]
        width = max(len(name) for name in self.per_pair)
        for name, s in sorted(self.per_pair.items(), key=lambda item: -item[1]["texts"]):
            flips = "" if s["flips"] is None else f"{s['flips']:>5} ({s['flip_rate']:.1%})"
            lines.append(f"  {name:<{width}} {s['texts']:>6} {flips} {s['mean_abs_change']:.4f} / "
                         f"{s['max_abs_change']:.4f}")
        if self.worst[:shown]:
            lines.append(f"worst {min(shown, len(self.worst))}:")
        for example in self.worst[:shown]:
            lines.append(f"  {example['change']:.4f} {_outcome(example, self.task)}: {example['original']!r} -> "
                         f"{example['swapped']!r}")
        return "\n".join(lines)


def _statistics(examples, task):
    changes = [e["change"] for e in examples]
    flips = None if task == "regressor" else sum(bool(e["flipped"]) for e in examples)
    return {
        "texts": len(examples), "flips": flips,
        "flip_rate": None if flips is None else round(flips / len(examples), 6),
        "mean_abs_change": round(sum(changes) / len(changes), 6), "max_abs_change": round(max(changes), 6),
    }


def _flips(overall):
    if overall["flips"] is None:
        return ""
    return f"flip rate {overall['flip_rate']:.2%} ({overall['flips']:,} of {overall['texts']:,}); "


def _outcome(example, task):
    """"positive -> negative" (flipped), "positive" (kept) or "0.71 -> 0.42" (a regressor's values)."""
    before, after = example["prediction"], example["swapped_prediction"]
    if task == "regressor":
        return f"{before['value']:.4f} -> {after['value']:.4f}"
    return f"{before['label']} -> {after['label']}" if example["flipped"] else f"{before['label']} kept"
