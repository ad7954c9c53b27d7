"""Token attributions from Python (docs/guides/explanations.md).

The model is the preset bert_tiny_en_uncased with a new classification head: what is shown here (the rows,
the files, the curve) does not depend on the weights. A fine-tuned model is explained the same way.
"""

# --8<-- [start:attribute]
import keras_bert

checkpoint = "bert_tiny_en_uncased"
tokenizer = keras_bert.BertTokenizer.from_pretrained(checkpoint)
classifier = keras_bert.BertClassifier.from_pretrained(
    checkpoint, num_classes=2, label_names=["negative", "positive"]
)

attributor = keras_bert.TokenAttributor(classifier, tokenizer)  # integrated gradients, 64 steps
row = attributor("a charming, clever movie.")[0]
print(row.target)  # → {'name': ...
print(row.tokens)  # → ['[CLS]', 'a', 'charming', ',', 'clever', 'movie', '.', '[SEP]']
print(row.words)  # → ['a', 'charming,', 'clever', 'movie.']
for word, value in zip(row.words, row.word_attributions):
    print(f"{word:>10} {value:+.4f}")
# The attributions add up to the score's change from the baseline (completeness):
change = row.score_input - row.score_baseline
print(abs(sum(row.attributions) - change) <= 0.01 * abs(change))  # → True
# --8<-- [end:attribute]

# --8<-- [start:options]
# Another class, the [MASK] baseline, the trapezoid rule, or the one-gradient estimate:
negative = attributor("a charming, clever movie.", target="negative")[0]
masked = keras_bert.TokenAttributor(
    classifier, tokenizer, baseline="mask", integration="riemann_trapezoid", steps=32
)
quick = keras_bert.TokenAttributor(classifier, tokenizer, method="grad_x_input")
print(negative.target)  # → {'name': 'negative', 'index': 0}
print(masked("a charming, clever movie.")[0].baseline)  # → mask
print(quick("a charming, clever movie.")[0].score_baseline)  # → None
# --8<-- [end:options]

# --8<-- [start:tasks]
reader = keras_bert.BertQuestionAnswerer.from_pretrained(checkpoint)
explain_answer = keras_bert.TokenAttributor(reader, tokenizer)
rows = explain_answer([("what color is the kite ?", "gus has a black kite .")])
print([r.target["name"] for r in rows])  # → ['start', 'end']
# --8<-- [end:tasks]

# --8<-- [start:files]
texts = ["a charming, clever movie.", "the plot was dull and the script was weak."]
rows = attributor(texts)
paths = keras_bert.write_attribution_report(rows, "explained_py", "classifier")
print([p.split("/")[-1] for p in paths])
# → ['attributions.jsonl', 'report.html', 'explanation_001.png', 'explanation_002.png']
# --8<-- [end:files]

# --8<-- [start:faithfulness]
curve = keras_bert.deletion_curve(attributor, texts, max_words=3, draws=5, seed=0)
print(curve.ks)  # → [0, 1, 2, 3]
print(f"{curve.area_top:.3f} {curve.area_random:.3f}")  # smaller area: the probability fell faster
# --8<-- [end:faithfulness]
