"""Contrastive fine-tuning of a sentence embedder (docs/guides/embeddings.md): pairs in, no labels."""

# --8<-- [start:finetune]
import keras_bert

# Any BERT checkpoint; BERT-Tiny here so that it runs in seconds (all-MiniLM-L6-v2 takes the same code).
embedder = keras_bert.BertTextEmbedder.from_preset("bert_tiny_en_uncased", pooling="mean", normalize=True)
pipeline = keras_bert.TextEmbedderPipeline(embedder, keras_bert.BertTokenizer.from_preset("bert_tiny_en_uncased"),
                                           sequence_length=32)

anchors = ["how do i reset my password", "what time does the shop open", "is the film good", "where is the station"]
positives = ["steps to change a forgotten password", "opening hours of the store", "a review of the movie",
             "directions to the train station"]
inputs = pipeline.training_inputs(anchors, positives)  # (batch, 2, length): each anchor with its positive
print(tuple(inputs["token_ids"].shape))  # → (4, 2, ...

embedder.compile()  # AdamW 3e-5 and MultipleNegativesRankingLoss: the other pairs of the batch are negatives
embedder.fit(inputs, batch_size=4, epochs=1, verbose=0)  # no labels
print(pipeline(["opening hours"]).shape)  # → (1, ...
# --8<-- [end:finetune]
