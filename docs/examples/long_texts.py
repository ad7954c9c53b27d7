"""Texts longer than the model's sequence (docs/guides/long-texts.md): windows for a
classifier, a tagger, a question answerer. The models are the preset
bert_tiny_en_uncased with new heads: the windows do not depend on the weights.
"""

# --8<-- [start:classify]
import keras_bert

checkpoint = "bert_tiny_en_uncased"
tokenizer = keras_bert.BertTokenizer.from_pretrained(checkpoint)
classifier = keras_bert.BertClassifier.from_pretrained(
    checkpoint, num_classes=2, label_names=["negative", "positive"]
)
review = "the movie was fine and the ending was really bad . " * 20  # 220 tokens

# Windows of 64 - 2 = 62 tokens, one every 31 tokens; their logits are averaged.
pipeline = keras_bert.TextClassifierPipeline(
    classifier, tokenizer, sequence_length=64, window_stride=31
)
print(pipeline.input_stats(review))  # → {'tokens': 220, 'windows': 7, ...
print(sorted(pipeline(review)))  # → ['label', 'probabilities', 'score']

# window_stride=0 reads the first window only, and drops the rest.
truncating = keras_bert.TextClassifierPipeline(
    classifier, tokenizer, sequence_length=64, window_stride=0
)
print(truncating.input_stats(review))  # → {'tokens': 220, 'windows': 1, ...
# --8<-- [end:classify]

# --8<-- [start:tag]
tagger = keras_bert.BertTokenClassifier.from_pretrained(
    checkpoint, num_classes=3, label_names=["O", "B-LOC", "I-LOC"]
)
tagging = keras_bert.TokenClassifierPipeline(
    tagger, tokenizer, sequence_length=64, window_stride=31
)
# Each token's logits are averaged over the windows that hold it.
result = tagging(review, return_words=True)
print(len(result["words"]), sorted(result["words"][-1]))  # → 220 ['end', ...
# --8<-- [end:tag]

# --8<-- [start:qa]
reader = keras_bert.BertQuestionAnswerer.from_pretrained(checkpoint)
context = "it was a quiet week . " * 30 + "gus has a black kite . "
question = "what color is the kite ?"
answering = keras_bert.QuestionAnswererPipeline(
    reader, tokenizer, sequence_length=64, doc_stride=32
)
print(answering.input_stats(question, context))  # → {'tokens': 186, 'windows': 6, ...
print(sorted(answering(question, context)))  # → ['answer', 'end', 'score', 'start']
# --8<-- [end:qa]
