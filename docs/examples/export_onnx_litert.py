"""The token-id graph as ONNX (fp32 and int8) and LiteRT (docs/guides/export.md). Runs in the TensorFlow pass."""

# --8<-- [start:onnx]
import numpy as np

import keras_bert

checkpoint = "google/bert_uncased_L-2_H-128_A-2"  # BERT-Tiny; in practice, your fine-tuned model
tokenizer = keras_bert.BertTokenizer.from_pretrained(checkpoint)
classifier = keras_bert.BertClassifier.from_pretrained(checkpoint, num_classes=2, label_names=["negative", "positive"])

# model.onnx (fp32) and, with quantize="int8", model.int8.onnx beside it; the tokenizer and labels go with them
keras_bert.export_onnx(classifier, "saved_models/sentiment_onnx", tokenizer, quantize="int8", sequence_length=64)

served = keras_bert.ExportedModel("saved_models/sentiment_onnx")  # int8 by default; precision="fp32" for the other
for result in served.predict(["a gorgeous, witty, seductive movie."]):
    print(sorted(result))  # → ['label', 'probabilities', 'score']
# --8<-- [end:onnx]

# --8<-- [start:runtime]
# The bare graph, called like the Keras model: int32 ids in, the model's outputs (here `logits`) out.
graph = keras_bert.export.RuntimeModel("saved_models/sentiment_onnx", precision="fp32")
batch = keras_bert.BertInputPacker.from_tokenizer(tokenizer, sequence_length=16)(["a fine film", "dull"])
outputs = graph.outputs({name: np.asarray(value) for name, value in batch.items()})
print(outputs["logits"].shape)  # → (2, 2)
# and behind the task's own pipeline, which tokenizes, windows long texts and names the labels:
pipeline = keras_bert.TextClassifierPipeline(graph, tokenizer, sequence_length=64)
print(sorted(pipeline(["a fine film"])[0]))  # → ['label', 'probabilities', 'score']
# --8<-- [end:runtime]

# --8<-- [start:from_model]
# A Keras model's ONNX Runtime route in one call, from any backend: export (int8, a temporary folder) and open.
fast = keras_bert.export.RuntimeModel.from_model(classifier, tokenizer, sequence_length=64)
print(fast.precision, fast.label_names)  # → int8 ['negative', 'positive']
print(sorted(keras_bert.TextClassifierPipeline(fast, tokenizer)(["a fine film"])[0]))  # → ['label', 'probabilities', 'score']
# --8<-- [end:from_model]

# --8<-- [start:litert]
# LiteRT (.tflite): any batch, exactly the exported sequence length (shorter inputs are padded)
keras_bert.export_litert(classifier, "saved_models/sentiment_litert", tokenizer, sequence_length=64)
for result in keras_bert.ExportedModel("saved_models/sentiment_litert").predict(["the plot is a tedious mess."]):
    print(sorted(result))  # → ['label', 'probabilities', 'score']
# --8<-- [end:litert]
