"""TracedTorchModel: a model on the torch backend as one torch.export graph (docs/guides/export.md). Torch pass."""

# --8<-- [start:trace]
import os

os.environ.setdefault("KERAS_BACKEND", "torch")  # TracedTorchModel needs the torch backend

import numpy as np

import keras_bert
from keras_bert.export import TracedTorchModel

checkpoint = "google/bert_uncased_L-2_H-128_A-2"  # BERT-Tiny; in practice, your fine-tuned model
tokenizer = keras_bert.BertTokenizer.from_pretrained(checkpoint)
classifier = keras_bert.BertClassifier.from_pretrained(checkpoint, num_classes=2, label_names=["negative", "positive"])

fast = TracedTorchModel(classifier)  # on a GPU: TracedTorchModel(classifier, compile_mode="reduce-overhead")
batch = keras_bert.BertInputPacker.from_tokenizer(tokenizer, sequence_length=32)(["a fine film", "dull"])
x = {name: np.asarray(value) for name, value in batch.items()}
logits = fast.predict_on_batch(x)  # numpy, as Keras' predict_on_batch returns it
print(np.allclose(logits, classifier.predict_on_batch(x), atol=1e-5))  # → True
# --8<-- [end:trace]

# --8<-- [start:pipeline]
# The text pipelines take it in place of the model.
pipeline = keras_bert.TextClassifierPipeline(fast, tokenizer, sequence_length=64)
for result in pipeline(["a gorgeous, witty, seductive movie."]):
    print(sorted(result))  # → ['label', 'probabilities', 'score']
# --8<-- [end:pipeline]
