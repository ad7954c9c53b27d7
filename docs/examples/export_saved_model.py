"""A TensorFlow SavedModel that takes raw strings (docs/guides/export.md). Runs in the TensorFlow pass."""

# --8<-- [start:export]
import keras_bert

checkpoint = "google/bert_uncased_L-2_H-128_A-2"  # BERT-Tiny; in practice, your fine-tuned model
tokenizer = keras_bert.BertTokenizer.from_pretrained(checkpoint)
classifier = keras_bert.BertClassifier.from_pretrained(checkpoint, num_classes=2, label_names=["negative", "positive"])

keras_bert.export_saved_model(classifier, "saved_models/sentiment", tokenizer, sequence_length=64)

served = keras_bert.ExportedModel("saved_models/sentiment")
for result in served.predict(["a gorgeous, witty, seductive movie."]):
    print(sorted(result))  # → ['label', 'probabilities', 'score']
# --8<-- [end:export]

# --8<-- [start:serve]
# Serving needs TensorFlow and tensorflow-text's ops, not keras or keras_bert.
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)

loaded = tf.saved_model.load("saved_models/sentiment")
print(sorted(loaded.signatures))  # → ['serve_text', 'serve_token_ids']
outputs = loaded.signatures["serve_text"](text=tf.constant(["the plot is a tedious mess."]))
print(outputs["label"].numpy()[0].decode() in ("negative", "positive"))  # → True
# --8<-- [end:serve]
