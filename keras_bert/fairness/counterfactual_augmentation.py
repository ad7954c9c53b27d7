"""CounterfactualAugmentation: the training set plus a swapped copy of each example that holds a term.

    augmentation = CounterfactualAugmentation("builtin")      # or a pairs file, or both: ["builtin", "my.tsv"]
    train, record = augmentation.apply(train_examples)
    # record: {"pairs": "builtin", "num_pairs": 42, "examples": 8588, "copies_added": 1203,
    #          "training_examples": 9791}

Counterfactual data augmentation (Lu et al., 2018, "Gender Bias in Neural Natural Language Processing";
Zhao et al., 2018): each training sentence that mentions a listed term is added once more with the terms
swapped ("he" <-> "she", ...; `CounterfactualSwapper`) and the same label, so that the model sees both
versions with one answer. It is for the training set only: a validation or test set that grew this way
would score the model on sentences it was not asked about. `finetune(counterfactual_augmentation=...)` (and
`keras-bert finetune --counterfactual-augmentation`) apply it to the training file alone and record the
counts in finetune.json and metrics.json.

Pure Python: the examples are `ClassificationExample`s (or any dataclass with `text`, `pair` and `source`).
"""

import dataclasses

from keras_bert.fairness.counterfactual_swapper import CounterfactualSwapper
from keras_bert.fairness.term_pairs import TermPairs


class CounterfactualAugmentation:
    """Adds the term-swapped copy of every training example that holds a term, with its label unchanged.

    Args:
        pairs: "builtin", a pairs file (term<TAB>term per line), a list of those, or a `TermPairs`
            (see `TermPairs.resolve`); read now, so that a bad file fails before any training.

    Raises:
        FileNotFoundError, ValueError: as `TermPairs.resolve` (the message names the file and line).
    """

    def __init__(self, pairs):
        self.swapper = CounterfactualSwapper(TermPairs.resolve(pairs))
        self.pairs = self.swapper.pairs

    def copies(self, examples):
        """The swapped copies of `examples` that hold a term (in both texts of a pair), in order.

        A copy's `source` is its original's with " (counterfactual)" after it, so an error names both.
        """
        copies = []
        for example in examples:
            text = self.swapper.swap(example.text)
            pair = self.swapper.swap(example.pair) if getattr(example, "pair", None) is not None else None
            if text is None and pair is None:
                continue
            copies.append(dataclasses.replace(
                example, text=text.text if text else example.text, pair=pair.text if pair else example.pair,
                source=f"{example.source} (counterfactual)",
            ))
        return copies

    def apply(self, examples):
        """`(examples followed by their swapped copies, a record of the counts)` of a training set."""
        examples = list(examples)
        copies = self.copies(examples)
        record = {"pairs": self.pairs.source, "num_pairs": len(self.pairs), "examples": len(examples),
                  "copies_added": len(copies),
                  "training_examples": len(examples) + len(copies)}
        return examples + copies, record
