"""Counterfactual bias checks from Python (docs/guides/bias-checks.md).

Swaps term pairs in texts, fine-tunes a classifier with counterfactual data augmentation, and measures how its
predictions change when only the swapped terms change. reviews.txt holds one text per line, my_pairs.tsv one
term<TAB>term pair per line.
"""

# --8<-- [start:swap]
import keras_bert

pairs = keras_bert.TermPairs.resolve(["builtin", "my_pairs.tsv"])  # the built-in lists and your own
swapper = keras_bert.CounterfactualSwapper(pairs)
print(swapper.swap("He gave her his word, and Anna agreed.").text)
# → She gave him her word, and Ben agreed.
# --8<-- [end:swap]

# --8<-- [start:augment]
from keras_bert.jobs.finetune import finetune

summary = finetune("classify", "bert_tiny_en_uncased", "train.tsv", "runs/sentiment_py", eval="dev.tsv",
                   epochs=1, learning_rate=5e-5, verbose=0, tensorboard=False,
                   counterfactual_augmentation=["builtin", "my_pairs.tsv"])
print(summary["metrics"]["counterfactual_augmentation"])
# → {'pairs': 'builtin + my_pairs.tsv', 'num_pairs': 44, ...
# --8<-- [end:augment]

# --8<-- [start:check]
with open("reviews.txt", encoding="utf-8") as f:
    texts = f.read().splitlines()
report = keras_bert.check_counterfactual_bias("runs/sentiment_py", texts, pairs)
print(report.summary())  # → bias check of runs/sentiment_py (classifier): ...
print(report.texts_without_terms, sorted(report.per_pair))
# → 3 ['anna/ben', 'carla/ivan', 'he/she', 'his/her(s)']
report.write("bias_report_py")  # bias_report_py/report.json: every compared text, per pair, the worst
# --8<-- [end:check]
