"""Pretraining from scratch in Python (docs/guides/pretraining.md): a vocabulary,
MLM + NSP batches, a model.

Reads the plain-text files of my_texts/. The sizes are small so that it runs in
seconds; the guide says what a real run uses.
"""

# --8<-- [start:vocab]
import keras_bert

# WordPiece, learned on the text itself (lowercased by default)
vocabulary = keras_bert.learn_vocabulary("my_texts/", vocabulary_size=8000)
keras_bert.write_vocabulary(vocabulary, "vocab.txt")
tokenizer = keras_bert.BertTokenizer("vocab.txt", lowercase=True)
# --8<-- [end:vocab]

# --8<-- [start:data]
dataset = keras_bert.pretraining_dataset(
    "my_texts/", tokenizer, sequence_length=128, batch_size=32, masking="whole-word"
)  # (x, y, sample_weight) batches, masked anew every epoch
x, y, sample_weight = next(iter(dataset))
print(sorted(x))  # → ['mask_positions', 'padding_mask', 'segment_ids', 'token_ids']
print(tuple(x["token_ids"].shape))  # → (32, 128)
print(tuple(y["mlm"].shape), tuple(y["nsp"].shape))  # → (32, 19) (32,)
# --8<-- [end:data]

# --8<-- [start:fit]
backbone = keras_bert.BertBackbone.from_size(
    "tiny", vocabulary_size=tokenizer.vocabulary_size()
)
pretrainer = keras_bert.BertPretrainer(backbone)  # masked-LM head + NSP head
steps_per_epoch, epochs = 2, 1  # a real run: thousands of steps
total = steps_per_epoch * epochs
optimizer = keras_bert.create_optimizer(
    learning_rate=1e-3, warmup_steps=total // 10, total_steps=total
)
pretrainer.compile(optimizer=optimizer)
pretrainer.fit(dataset.repeat(), steps_per_epoch=steps_per_epoch, epochs=epochs)

# The pretrained encoder under a task head (see the fine-tuning guide):
classifier = keras_bert.BertClassifier(pretrainer.backbone, num_classes=2)
# --8<-- [end:fit]

# --8<-- [start:objectives]
# Also "mlm_nsp", "ngram", "sop" and "roberta"
options = keras_bert.pretrain_objective_options("span")
print(options)  # → {'masking': 'span', 'sentence_task': 'nsp', 'span_p': 0.2, ...
span_batches = keras_bert.pretraining_dataset("my_texts/", tokenizer, **options)

# RoBERTa-style: MLM only, rows of full sentences, a model without sentence head
roberta = keras_bert.pretrain_objective_options("roberta")
roberta_batches = keras_bert.pretraining_dataset("my_texts/", tokenizer, **roberta)
print(sorted(next(iter(roberta_batches))[1]))  # → ['mlm']
mlm_only = keras_bert.BertPretrainer(backbone, sentence_head=False)
# --8<-- [end:objectives]

# --8<-- [start:streaming]
# Read a bounded buffer at a time; one pass over the files is one epoch.
stream = keras_bert.pretraining_dataset("my_texts/", tokenizer, streaming=True)
pretrainer.fit(stream.repeat(), steps_per_epoch=steps_per_epoch, epochs=epochs)
# --8<-- [end:streaming]
