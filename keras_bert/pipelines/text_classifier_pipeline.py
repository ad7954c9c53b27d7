"""`TextClassifierPipeline`: labels and probabilities (or regression values) for raw texts.

    pipeline = keras_bert.TextClassifierPipeline(classifier, tokenizer)
    pipeline(["a gorgeous, witty film", "tedious and overlong"])
    # [{"label": "positive", "score": 0.97, "probabilities": {"negative": 0.03, "positive": 0.97}}, ...]
"""

from keras_bert.pipelines.task_pipeline import TaskPipeline, check_texts, reading_report, text_batch
from keras_bert.postprocessing import text_windows
from keras_bert.postprocessing.label_scores import label_scores
from keras_bert.preprocessing.task_data.classification_data import ClassificationExample, classification_features


class TextClassifierPipeline(TaskPipeline):
    """Labels and probabilities (or regression values) for texts and text pairs.

    Texts longer than the sequence length are not cut off: they are split
    into overlapping windows whose logits are averaged. A text pair too long
    for one sequence is windowed over its longer segment, the shorter one
    (up to half the sequence) repeated in every window, and averaged the same
    way (see `pair_window_spans` for why the longer one). The exported
    SavedModel's `serve_text` builds the same windows in its graph.

    Args:
        model: a `BertClassifier`.
        tokenizer: the `BertTokenizer` it was trained with.
        sequence_length: packed length (default 128, at most the model's).
        window_stride: texts longer than one window are split into windows
            starting every `window_stride` tokens (cut to the window size)
            and their logits averaged; default half a single text's window
            (`(sequence_length - 2) // 2`); 0 truncates instead.
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
        features, count, single = self._features(texts, pairs)
        if features is None:
            return []
        window_logits = self._predict_trimmed(features.x)
        logits = text_windows.mean_over_windows(window_logits, features.info["document_index"], count)
        results = self._results(logits)
        return results[0] if single else results

    def input_stats(self, texts, pairs=None):
        """How each text (pair) is read, without running the model.

        Returns:
            For each text, `{"tokens", "windows", "truncated_tokens"}`: its
            wordpieces (both segments of a pair), the windows it is read in,
            and the tokens no window holds (a pair's shorter segment past
            half the sequence, or anything past one window with
            `window_stride=0`). A dict for a single text.
        """
        features, count, single = self._features(texts, pairs)
        if features is None:
            return []
        info = features.info
        return reading_report(info["num_tokens"], info["num_windows"], info["num_truncated_tokens"], single)

    def _features(self, texts, pairs):
        """`(TaskFeatures or None for no texts, number of texts, single)` after the input checks."""
        texts, single = text_batch(texts)
        check_texts(texts)
        if pairs is not None:
            pairs, _ = text_batch(pairs, "pairs")
            check_texts(pairs, "pair")
            if len(pairs) != len(texts):
                raise ValueError(f"{len(texts)} texts but {len(pairs)} pairs.")
        if not texts:
            return None, 0, single
        examples = [ClassificationExample(t, pairs[i] if pairs else None) for i, t in enumerate(texts)]
        features = classification_features(
            examples, self.tokenizer, sequence_length=self.sequence_length, window_stride=self.window_stride or None
        )
        return features, len(texts), single

    def _results(self, logits):
        """Python results of the texts' mean logits (float64 `(num_texts, num_classes)`)."""
        if self.model.num_classes == 1:
            return [{"value": float(v[0])} for v in logits.numpy()]
        names = self.model.label_names or list(range(self.model.num_classes))
        probabilities, best, score = (t.numpy() for t in label_scores(logits))
        return [
            {"label": names[b], "score": float(s), "probabilities": {n: float(q) for n, q in zip(names, p)}}
            for p, b, s in zip(probabilities, best, score)
        ]
