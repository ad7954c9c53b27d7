"""Fine-tuning a sentence classifier from Python (docs/guides/fine-tuning.md).

Reads train.tsv / dev.tsv (a `sentence` and a `label` column), fine-tunes a
pretrained BERT (the preset bert_tiny_en_uncased: Google's 2-layer BERT-Tiny)
and labels new sentences.
"""

# --8<-- [start:data]
import keras_bert
from keras_bert.preprocessing.task_data.classification_data import (
    classification_features,
    read_classification_data,
)

# A preset, a Hugging Face folder, hf://owner/name or a .keras file
checkpoint = "bert_tiny_en_uncased"
tokenizer = keras_bert.BertTokenizer.from_pretrained(checkpoint)

columns = dict(text_column="sentence", label_column="label")
train = read_classification_data("train.tsv", **columns)
dev = read_classification_data("dev.tsv", **columns)
train_features = classification_features(train, tokenizer, sequence_length=64)
label_names = train_features.info["label_names"]  # the distinct labels, sorted
dev_features = classification_features(
    dev, tokenizer, label_names=label_names, sequence_length=64
)
print(label_names)  # → ['negative', 'positive']
# --8<-- [end:data]

# --8<-- [start:fit]
classifier = keras_bert.BertClassifier.from_pretrained(
    checkpoint, num_classes=2, label_names=label_names
)
epochs, batch_size = 1, 32
steps = epochs * (len(train_features) // batch_size)
optimizer = keras_bert.create_optimizer(
    learning_rate=1e-4, warmup_steps=steps // 10, total_steps=steps
)
classifier.compile(optimizer=optimizer)
classifier.fit(
    train_features.dataset(batch_size, shuffle=True, drop_remainder=True),
    validation_data=dev_features.dataset(batch_size),
    epochs=epochs,
    verbose=2,
)
# --8<-- [end:fit]

# --8<-- [start:predict]
pipeline = keras_bert.TextClassifierPipeline(classifier, tokenizer, sequence_length=64)
for result in pipeline(["a lovely, charming film .", "the ending was dull ."]):
    print(result["label"] in label_names, sorted(result))  # → True ['label', ...
classifier.save("sentiment.keras")  # keras.saving.load_model reads it on any backend
# --8<-- [end:predict]
