"""Saving and reloading a model as one .keras file (docs/guides/export.md)."""

# --8<-- [start:save]
import keras

import keras_bert

checkpoint = "google/bert_uncased_L-2_H-128_A-2"  # BERT-Tiny; any BERT folder, preset name or hf://owner/name
classifier = keras_bert.BertClassifier.from_pretrained(checkpoint, num_classes=2, label_names=["negative", "positive"])
# ... fine-tune it (see the fine-tuning guide), then:
classifier.save("sentiment.keras")  # architecture, weights, label names and compile settings in one file

reloaded = keras.saving.load_model("sentiment.keras")  # on any backend, whichever one saved it
print(type(reloaded).__name__, reloaded.label_names)  # → BertClassifier ['negative', 'positive']
# --8<-- [end:save]

# --8<-- [start:reuse]
# The backbone is a model of its own: save it alone, or put a new head on a trained one.
reloaded.backbone.save("encoder.keras")
backbone = keras_bert.BertBackbone.from_pretrained("encoder.keras")
regressor = keras_bert.BertClassifier(backbone, num_classes=1)  # one value per text, trained with MSE
print(regressor.output_shape)  # → (None, 1)
# --8<-- [end:reuse]
