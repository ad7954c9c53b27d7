"""LoRA fine-tuning from Python (docs/guides/lora.md): adapters on, train, save the adapter, merge for export."""

# --8<-- [start:enable]
import numpy as np

import keras_bert
from keras_bert.models.lora import enable_lora, parameter_counts

texts = ["a gorgeous, witty, seductive movie.", "the plot is a tedious mess.",
         "a charming and moving film.", "dull, clumsy and far too long."]
labels = np.array([1, 0, 1, 0])

# Any BERT checkpoint: a preset (here BERT-Tiny), a Hugging Face folder or hf://owner/name.
classifier = keras_bert.BertClassifier.from_preset("bert_tiny_en_uncased", num_classes=2,
                                                   label_names=["negative", "positive"])
tokenizer = keras_bert.BertTokenizer.from_preset("bert_tiny_en_uncased")

info = enable_lora(classifier, rank=4)  # before compile; alpha defaults to the rank
print(info["targets"])  # → ['qkv', 'attention_output', 'intermediate', 'feedforward_output']
counts = parameter_counts(classifier)
print(f"{counts['trainable']:,} of {counts['total']:,} parameters train ({counts['share']:.2%})")  # → parameters train
# --8<-- [end:enable]

# --8<-- [start:fit]
packer = keras_bert.BertInputPacker.from_tokenizer(tokenizer, sequence_length=16)
x = {name: np.asarray(value) for name, value in packer(texts).items()}
classifier.compile(optimizer=keras_bert.create_optimizer(learning_rate=2e-3))  # LoRA takes a larger rate
classifier.fit(x, labels, batch_size=2, epochs=1, verbose=0)
# --8<-- [end:fit]

# --8<-- [start:save]
from keras_bert.models.lora import load_adapter, merge_lora, save_adapter

save_adapter(classifier, "lora_adapter.npz", base="bert_tiny_en_uncased")  # the A/B matrices and the head

# Later: the same base model, the adapter on top: exactly the fine-tuned outputs.
fresh = keras_bert.BertClassifier.from_preset("bert_tiny_en_uncased", num_classes=2,
                                              label_names=["negative", "positive"])
load_adapter(fresh, "lora_adapter.npz")
expected = classifier.predict(x, verbose=0)
print(np.allclose(fresh.predict(x, verbose=0), expected, atol=1e-6))  # → True

# For export and serving: plain kernels W + (alpha / rank) * A @ B, no adapters left.
merged = merge_lora(classifier)
print(np.allclose(merged.predict(x, verbose=0), expected, atol=1e-5))  # → True
merged.save("lora_merged.keras")  # a plain BertClassifier: export, predict and pipelines take it
# --8<-- [end:save]
