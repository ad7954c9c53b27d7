"""ModernBERT (docs/guides/bert-family.md): its backbone and classifier from transformers folders, and back."""

# Not shown on the page: a small ModernBERT-style tokenizer.json (byte-level BPE trained on Austen novels) that the
# folder below carries, as a real checkpoint folder (answerdotai/ModernBERT-base) carries its own.
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "family_tokenizers"
shutil.copytree(FIXTURES / "modernbert", "tiny_modernbert", dirs_exist_ok=True)  # tokenizer.json

# --8<-- [start:classifier]
import transformers

import keras_bert

# A random tiny ModernBertForSequenceClassification written by transformers: mean pooling, 2 local blocks
# (window 8) for each global one. A fine-tuned ModernBERT classifier folder loads the same way.
tokenizer = keras_bert.ModernBertTokenizer.from_pretrained("tiny_modernbert")  # tokenizer.json
config = transformers.ModernBertConfig(
    vocab_size=tokenizer.vocabulary_size(), hidden_size=32, num_hidden_layers=3, num_attention_heads=4,
    intermediate_size=48, local_attention=8, pad_token_id=tokenizer.pad_token_id, classifier_pooling="mean",
    num_labels=2, id2label={0: "negative", 1: "positive"},
)
transformers.ModernBertForSequenceClassification(config).save_pretrained("tiny_modernbert")

classifier = keras_bert.ModernBertClassifier.from_pretrained("tiny_modernbert")
print(classifier.pooling, classifier.label_names)  # → mean ['negative', 'positive']
packer = keras_bert.BertInputPacker.from_tokenizer(tokenizer, sequence_length=32)  # [CLS] A [SEP]
print(tuple(classifier.predict(packer(["Emma was not so foolish."]), verbose=0).shape))  # → (1, 2)

# Back to a folder transformers' ModernBertForSequenceClassification loads, head and pooling included.
keras_bert.converters.save_hf_checkpoint(classifier, "tiny_modernbert_back", overwrite=True)
print(transformers.AutoConfig.from_pretrained("tiny_modernbert_back").architectures)
# → ['ModernBertForSequenceClassification']
# --8<-- [end:classifier]

# --8<-- [start:new_head]
# A new head on a pretrained encoder: the backbone alone (ModernBertModel, or the encoder of any ModernBERT folder).
backbone = keras_bert.ModernBertBackbone.from_pretrained("tiny_modernbert")
classifier = keras_bert.ModernBertClassifier(backbone, num_classes=3, pooling="cls")
print(backbone.global_layers, classifier.prediction_head.activation)  # → [0] gelu
# --8<-- [end:new_head]
