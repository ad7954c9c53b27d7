"""Checkpoints in every format, both ways (docs/guides/checkpoints.md).

Presets and hf:// names read the Hugging Face cache (downloaded once when online); the
Hugging Face folders, `.keras` files and the Google TF1 checkpoint are written here first.
"""

# --8<-- [start:presets]
import keras
import numpy as np

import keras_bert

print(len(keras_bert.list_presets()))  # → 95
# A keras-hub preset name, a Hugging Face id of the preset table, or any repository as hf://owner/name:
backbone = keras_bert.BertBackbone.from_preset("bert_tiny_en_uncased")  # = google/bert_uncased_L-2_H-128_A-2
tokenizer = keras_bert.BertTokenizer.from_preset("bert_tiny_en_uncased")  # its vocab.txt and casing
same = keras_bert.BertBackbone.from_pretrained("hf://google/bert_uncased_L-2_H-128_A-2")

inputs = {
    "token_ids": np.array([[2, 40, 41, 3, 0]], "int32"),
    "segment_ids": np.zeros((1, 5), "int32"),
    "padding_mask": np.array([[1, 1, 1, 1, 0]], "int32"),
}
expected = backbone.predict(inputs, verbose=0)["sequence_output"]  # numpy
print(np.allclose(same.predict(inputs, verbose=0)["sequence_output"], expected))  # → True
# --8<-- [end:presets]

# --8<-- [start:hf]
from keras_bert.converters import save_hf_checkpoint

# Keras -> a Hugging Face folder: config.json, model.safetensors, vocab.txt, tokenizer_config.json.
save_hf_checkpoint(backbone, "tiny_bert_hf", vocabulary=tokenizer)

# ... which transformers reads (and writes: here its pytorch_model.bin variant) ...
import transformers

hf_model = transformers.BertModel.from_pretrained("tiny_bert_hf")
hf_model.save_pretrained("tiny_bert_bin", safe_serialization=False)  # pytorch_model.bin instead of safetensors

# ... and Hugging Face folders -> Keras, with either weights file.
for folder in ["tiny_bert_hf", "tiny_bert_bin"]:
    loaded = keras_bert.BertBackbone.from_pretrained(folder)
    print(folder, np.allclose(loaded.predict(inputs, verbose=0)["sequence_output"], expected, atol=1e-6))
# → tiny_bert_hf True
# → tiny_bert_bin True
# --8<-- [end:hf]

# --8<-- [start:keras]
# The .keras format: Keras' own, for any model of the package, on any backend.
backbone.save("tiny_bert.keras")
reloaded = keras.saving.load_model("tiny_bert.keras")
print(np.allclose(reloaded.predict(inputs, verbose=0)["sequence_output"], expected))  # → True
print(type(keras_bert.BertBackbone.from_pretrained("tiny_bert.keras")).__name__)  # → BertBackbone
# --8<-- [end:keras]

# The Google TF1 checkpoint read below, written as google-research/bert wrote them (not shown on the page).
import json
import os

import tensorflow as tf

from keras_bert.converters import canonical_weights
from keras_bert.converters.tf1_checkpoint import canonical_to_tf1_name, tf1_to_canonical_name

os.makedirs("uncased_L-2_H-16_A-2", exist_ok=True)
with tf.Graph().as_default():
    variables = []
    for name, value in canonical_weights(backbone).items():
        tf1_name = canonical_to_tf1_name(name)
        value = value.T if tf1_to_canonical_name(tf1_name)[1] else value
        variables.append(tf.compat.v1.Variable(np.ascontiguousarray(value), name=tf1_name))
    saver = tf.compat.v1.train.Saver(var_list={v.op.name: v for v in variables})
    with tf.compat.v1.Session() as session:
        session.run(tf.compat.v1.global_variables_initializer())
        saver.save(session, "uncased_L-2_H-16_A-2/bert_model.ckpt", write_meta_graph=False)
config = backbone.get_config()
with open("uncased_L-2_H-16_A-2/bert_config.json", "w") as f:
    json.dump({"vocab_size": config["vocabulary_size"], "hidden_size": config["hidden_dim"],
               "num_hidden_layers": config["num_layers"], "num_attention_heads": config["num_heads"],
               "intermediate_size": config["intermediate_dim"], "hidden_act": "gelu",
               "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
               "max_position_embeddings": config["max_sequence_length"], "type_vocab_size": 2,
               "initializer_range": 0.02}, f)
with open("uncased_L-2_H-16_A-2/vocab.txt", "w", encoding="utf-8") as f:
    f.write("".join(token + "\n" for token in tokenizer.get_vocabulary()))

# --8<-- [start:tf1]
# Google's original TF1 checkpoints: the folder (bert_config.json, vocab.txt, bert_model.ckpt.*) or the prefix.
from_google = keras_bert.BertBackbone.from_pretrained("uncased_L-2_H-16_A-2")
google_tokenizer = keras_bert.BertTokenizer.from_pretrained("uncased_L-2_H-16_A-2")  # uncased_: lowercases
print(np.allclose(from_google.predict(inputs, verbose=0)["sequence_output"], expected, atol=1e-6),
      google_tokenizer.lowercase)
# → True True
# --8<-- [end:tf1]

# --8<-- [start:tasks]
# Task models: transformers' BertFor... classes load with their heads and labels, and ours export to them.
classifier = keras_bert.BertClassifier(backbone, num_classes=2, label_names=["negative", "positive"])
save_hf_checkpoint(classifier, "tiny_classifier_hf", vocabulary=tokenizer)  # BertForSequenceClassification

hf_classifier = transformers.AutoModelForSequenceClassification.from_pretrained("tiny_classifier_hf")
print(type(hf_classifier).__name__, hf_classifier.config.id2label)  # → BertForSequenceClassification {0: 'negative', 1: 'positive'}

back = keras_bert.BertClassifier.from_pretrained("tiny_classifier_hf")  # num_classes, label_names from it
print(back.label_names)  # → ['negative', 'positive']
# --8<-- [end:tasks]
