"""Mixed precision, bfloat16 weights and int8 (docs/guides/speed.md)."""

# --8<-- [start:mixed]
import keras

import keras_bert

# Training: float32 weights, bfloat16 math. Set the policy before the model is built.
keras.config.set_dtype_policy("mixed_bfloat16")
classifier = keras_bert.BertClassifier(keras_bert.BertBackbone.from_size("tiny"), num_classes=2)
print(classifier.backbone.dtype_policy.name)  # → mixed_bfloat16
keras.config.set_dtype_policy("float32")  # back to the default for what follows
# --8<-- [end:mixed]

# --8<-- [start:bf16]
# Inference: bfloat16 weights and math (half the memory), from any checkpoint.
checkpoint = "google/bert_uncased_L-2_H-128_A-2"  # BERT-Tiny; any BERT folder, preset name or hf://owner/name
backbone = keras_bert.BertBackbone.from_pretrained(checkpoint, dtype="bfloat16")
print(backbone.dtype_policy.name)  # → bfloat16
# --8<-- [end:bf16]

# --8<-- [start:int8]
# int8 weights through Keras' own API; `save` and `keras.saving.load_model` keep them int8.
classifier = keras_bert.BertClassifier.from_pretrained(checkpoint, num_classes=2)
classifier.quantize("int8")
print(classifier.backbone.get_layer("transformer_layer_0").intermediate_dense.dtype_policy.name)  # → int8_from_float32
# --8<-- [end:int8]
