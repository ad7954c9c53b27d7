"""`TextClassifierPipeline`: labels and probabilities (or regression values) for raw texts.

    pipeline = keras_bert.TextClassifierPipeline(classifier, tokenizer)
    pipeline(["a gorgeous, witty film", "tedious and overlong"])
    # [{"label": "positive", "score": 0.97, "probabilities": {"negative": 0.03, "positive": 0.97}}, ...]
"""

import numpy as np

from keras_bert.pipelines.task_pipeline import TaskPipeline, check_texts, softmax, text_batch
from keras_bert.preprocessing.tasks.classification_data import (
    ClassificationExample,
    average_windows,
    classification_features,
)


class TextClassifierPipeline(TaskPipeline):
    """Labels and probabilities (or regression values) for texts and text pairs.

    Texts longer than the sequence length are not cut off: they are split
    into overlapping windows whose logits are averaged.

    Args:
        model: a `BertClassifier`.
        tokenizer: the `BertTokenizer` it was trained with.
        sequence_length: packed length (default 128, at most the model's).
        window_stride: single texts longer than one window are split into
            windows starting every `window_stride` tokens and their logits
            averaged; default half a window; 0 truncates instead.
        batch_size: sequences per forward pass.

    Call arguments:
        texts: a string or a list of strings.
        pairs: optional second texts, matching `texts`.

    Returns:
        For each text, `{"label", "score", "probabilities"}` (label names from
        `model.label_names`, else ids; `probabilities` maps every label to its
        probability), or `{"value"}` for a regressor.
    """

    def __init__(self, model, tokenizer, sequence_length=None, window_stride=None, batch_size=32):
        super().__init__(model, tokenizer, sequence_length, batch_size)
        self.window_stride = (self.sequence_length - 2) // 2 if window_stride is None else window_stride

    def __call__(self, texts, pairs=None):
        texts, single = text_batch(texts)
        check_texts(texts)
        if pairs is not None:
            pairs, _ = text_batch(pairs, "pairs")
            check_texts(pairs, "pair")
            if len(pairs) != len(texts):
                raise ValueError(f"{len(texts)} texts but {len(pairs)} pairs.")
        if not texts:
            return []
        examples = [ClassificationExample(t, pairs[i] if pairs else None) for i, t in enumerate(texts)]
        features = classification_features(
            examples, self.tokenizer, sequence_length=self.sequence_length, window_stride=self.window_stride or None
        )
        logits = average_windows(self._predict_trimmed(features.x), features.info["document_index"], len(texts))
        results = self._results(logits)
        return results[0] if single else results

    def _results(self, logits):
        if self.model.num_classes == 1:
            return [{"value": float(v[0])} for v in logits]
        names = self.model.label_names or list(range(self.model.num_classes))
        results = []
        for p in softmax(logits):
            best = int(np.argmax(p))
            probabilities = {n: float(q) for n, q in zip(names, p)}
            results.append({"label": names[best], "score": float(p[best]), "probabilities": probabilities})
        return results
