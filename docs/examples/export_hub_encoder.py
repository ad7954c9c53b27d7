"""TF Hub-style encoder and preprocessor SavedModels that train further (docs/guides/export.md). TensorFlow pass."""

# --8<-- [start:export]
import keras_bert

checkpoint = "google/bert_uncased_L-2_H-128_A-2"  # BERT-Tiny; any BERT folder, preset name or hf://owner/name
tokenizer = keras_bert.BertTokenizer.from_pretrained(checkpoint)
backbone = keras_bert.BertBackbone.from_pretrained(checkpoint)

keras_bert.export_hub_encoder(backbone, "saved_models/tiny_hub", tokenizer, seq_length=64)
# saved_models/tiny_hub/encoder       {input_word_ids, input_mask, input_type_ids} -> pooled_output,
#                                     sequence_output, encoder_outputs (one per block), default
# saved_models/tiny_hub/preprocessor  strings -> encoder inputs; .tokenize, .bert_pack_inputs(seq_length=)
# --8<-- [end:export]

# --8<-- [start:train]
# Keras 3 on the TensorFlow backend: the reloaded encoder as a layer whose weights train with the model.
import keras
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the preprocessor's ops)

preprocessor = tf.saved_model.load("saved_models/tiny_hub/preprocessor")
encoder = keras_bert.export.TrainableTFSMLayer(
    "saved_models/tiny_hub/encoder", call_endpoint="serve", call_training_endpoint="serve_training", trainable=True
)
inputs = {name: keras.Input((64,), dtype="int32", name=name)
          for name in ("input_word_ids", "input_mask", "input_type_ids")}
model = keras.Model(inputs, keras.layers.Dense(2)(encoder(inputs)["pooled_output"]))  # a classifier on top
model.compile(optimizer=keras.optimizers.AdamW(1e-4),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
# model.fit(preprocessor(texts), labels, ...) trains the encoder's weights with the new head
print(model(preprocessor(tf.constant(["a charming and moving film."]))).shape)  # → (1, 2)
print(len(encoder.trainable_weights) == len(backbone.trainable_weights))  # → True
# --8<-- [end:train]

# --8<-- [start:back]
# The weights back as a keras_bert backbone, on any backend (read from the SavedModel's checkpoint files)
restored = keras_bert.BertBackbone.from_pretrained("saved_models/tiny_hub")
print(restored.count_params() == backbone.count_params())  # → True
# --8<-- [end:back]
