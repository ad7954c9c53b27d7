"""Counterfactual bias checks and counterfactual data augmentation: swap term pairs (he/she, names, a user's list).

    report = check_counterfactual_bias("runs/sst", texts, pairs="builtin")   # flip rate, changes, worst texts
    swapper = CounterfactualSwapper(TermPairs.read("my_pairs.tsv"))          # "He ..." -> "She ..."
    finetune(..., counterfactual_augmentation="builtin")                     # training set + swapped copies

`TermPairs` reads and checks the pair lists (built in, or `term<TAB>term` files); `CounterfactualSwapper`
swaps them in a text (whole words, both directions, case kept); `check_counterfactual_bias` predicts each
text that holds a term as it is and swapped and returns a `BiasReport`; `CounterfactualAugmentation` adds
the swapped copies to a training set (`keras_bert.jobs.finetune`).

Importing this package loads nothing heavy (keras and TensorFlow load when a model is checked): the command
line reads pairs files before TensorFlow starts.
"""

from keras_bert.fairness.bias_check import check_counterfactual_bias
from keras_bert.fairness.bias_report import BiasReport
from keras_bert.fairness.counterfactual_augmentation import CounterfactualAugmentation
from keras_bert.fairness.counterfactual_swapper import CounterfactualSwapper
from keras_bert.fairness.term_pairs import TermPairs

__all__ = [
    "BiasReport",
    "CounterfactualAugmentation",
    "CounterfactualSwapper",
    "TermPairs",
    "check_counterfactual_bias",
]
