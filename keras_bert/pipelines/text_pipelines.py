"""Predictions on raw text for every task model: labels, entity spans, answers, choices.

    pipeline = keras_bert.TextClassifierPipeline(classifier, tokenizer)
    pipeline(["a gorgeous, witty film", "tedious and overlong"])
    # [{"label": "positive", "score": 0.97, "probabilities": {"negative": 0.03, "positive": 0.97}}, ...]

    keras_bert.predict_text(tagger, tokenizer, "Ada Lovelace was born in London.")
    # [{"type": "PER", "text": "Ada Lovelace", "start": 0, "end": 12, "score": 0.98},
    #  {"type": "LOC", "text": "London", "start": 25, "end": 31, "score": 0.99}]

    keras_bert.load_pipeline("runs/sst")(["..."])  # a `keras-bert finetune` output folder

One pipeline class per task model; `pipeline_for` picks it, `predict_text`
runs it once. A single string in gives a single result out; a list gives a
list. Texts longer than the sequence length are not cut off: classifiers and
taggers slide overlapping windows over them (`window_stride`) and average
the logits of a document's windows (classifier) or of a token's windows
(tagger); the question answerer windows the context as in training.
Character offsets index the original string (`text[start:end]`).
"""

import json
import os

import numpy as np

from keras_bert.metrics.entities import get_entities
from keras_bert.tasks import get_task


# Dynamic padding rounds each batch's length up to a multiple of this.
_LENGTH_MULTIPLE = 8


def _batch(value, what="texts"):
    """(list, was_single) for a string or a list of strings."""
    if isinstance(value, str):
        return [value], True
    if isinstance(value, (bytes, bytearray)) or not hasattr(value, "__iter__"):
        raise ValueError(f"`{what}` must be a string or a list of strings. Received {type(value).__name__}")
    value = list(value)
    for i, v in enumerate(value):
        if not isinstance(v, str):
            raise ValueError(f"`{what}` must be a string or a list of strings. Item {i} is a {type(v).__name__}")
    return value, False


def _check_texts(texts, what="text"):
    for i, text in enumerate(texts):
        if not text.strip():
            raise ValueError(f"{what} {i} is empty.")


def _softmax(logits, axis=-1):
    logits = np.asarray(logits, "float64")
    exp = np.exp(logits - logits.max(axis=axis, keepdims=True))
    return exp / exp.sum(axis=axis, keepdims=True)


def _sequence_length(model, sequence_length):
    limit = model.backbone.max_sequence_length
    if sequence_length is None:
        return min(128, limit)
    if sequence_length > limit:
        raise ValueError(f"`sequence_length`={sequence_length} is longer than the model's max_sequence_length={limit}.")
    return sequence_length


class _Pipeline:
    def __init__(self, model, tokenizer, sequence_length=None, batch_size=32):
        self.model = model
        self.tokenizer = tokenizer
        self.sequence_length = _sequence_length(model, sequence_length)
        self.batch_size = batch_size

    def _predict(self, x):
        return self.model.predict(x, batch_size=self.batch_size, verbose=0)

    def _predict_trimmed(self, x, per_token=False):
        """Like `_predict`, with dynamic padding: batches of similar length, cut to their longest row.

        Rows are sorted by length and each batch is cut to its longest row,
        rounded up to a multiple of `_LENGTH_MULTIPLE` (few shapes, so the
        compiled predict step is traced a few times, not once per batch). Real
        tokens see the same keys as at full length (padding is masked), so the
        outputs match up to float rounding. Short texts (most sentences are
        20-30 tokens) then cost a fraction of a full-length forward pass.

        Args:
            x: dict of int32 arrays `(num_rows, sequence_length)`, right-padded.
            per_token: the outputs have a sequence axis (axis 1); it is padded
                back to `sequence_length` with zeros.
        """
        lengths = np.asarray(x["padding_mask"]).sum(axis=1)
        order = np.argsort(lengths, kind="stable")
        full = x["padding_mask"].shape[1]
        parts = []
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = int(min(full, -(-max(int(lengths[rows].max()), 1) // _LENGTH_MULTIPLE) * _LENGTH_MULTIPLE))
            out = np.asarray(self.model.predict_on_batch({k: np.asarray(v)[rows, :width] for k, v in x.items()}))
            if per_token and width < full:
                out = np.pad(out, [(0, 0), (0, full - width)] + [(0, 0)] * (out.ndim - 2))
            parts.append(out)
        if not parts:
            return self._predict(x)
        outputs = np.concatenate(parts)
        restored = np.empty_like(outputs)
        restored[order] = outputs
        return restored


class TextClassifierPipeline(_Pipeline):
    """Labels and probabilities (or regression values) for texts and text pairs.

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
        from keras_bert.preprocessing.tasks.classification_data import (
            ClassificationExample,
            average_windows,
            classification_features,
        )

        texts, single = _batch(texts)
        _check_texts(texts)
        if pairs is not None:
            pairs, _ = _batch(pairs, "pairs")
            _check_texts(pairs, "pair")
            if len(pairs) != len(texts):
                raise ValueError(f"{len(texts)} texts but {len(pairs)} pairs.")
        if not texts:
            return []
        examples = [ClassificationExample(t, pairs[i] if pairs else None) for i, t in enumerate(texts)]
        features = classification_features(
            examples, self.tokenizer, sequence_length=self.sequence_length, window_stride=self.window_stride or None
        )
        logits = average_windows(self._predict_trimmed(features.x), features.info["document_index"], len(texts))
        if self.model.num_classes == 1:
            results = [{"value": float(v[0])} for v in logits]
        else:
            names = self.model.label_names or list(range(self.model.num_classes))
            results = []
            for p in _softmax(logits):
                best = int(np.argmax(p))
                probabilities = {n: float(q) for n, q in zip(names, p)}
                results.append({"label": names[best], "score": float(p[best]), "probabilities": probabilities})
        return results[0] if single else results


class TokenClassifierPipeline(_Pipeline):
    """Entity spans (BIO tags decoded) with character offsets into the original text.

    Words are BERT's basic-tokenizer words (runs of letters and digits;
    punctuation marks on their own); each word takes the tag predicted on its
    first wordpiece, and entities are decoded from the word tags as seqeval does.

    Args:
        model: a `BertTokenClassifier` with `label_names` (BIO tags).
        tokenizer: the `BertTokenizer` it was trained with.
        sequence_length: packed length (default 128, at most the model's).
        window_stride: tokens between window starts for texts longer than one
            window (default half a window); a token's logits are averaged over
            the windows that hold it.
        batch_size: sequences per forward pass.

    Call arguments:
        texts: a string or a list of strings.
        return_words: also return every word with its span and tag.

    Returns:
        For each text, a list of `{"type", "text", "start", "end", "score"}`
        (`score` = mean probability of the entity's word tags); with
        `return_words`, a dict `{"entities": [...], "words": [{"text", "start", "end", "tag", "score"}]}`.
    """

    def __init__(self, model, tokenizer, sequence_length=None, window_stride=None, batch_size=32):
        super().__init__(model, tokenizer, sequence_length, batch_size)
        if not model.label_names:
            raise ValueError("The token classifier has no `label_names`; a pipeline needs its BIO tag names.")
        self.window_stride = (self.sequence_length - 2) // 2 if window_stride is None else window_stride

    def __call__(self, texts, return_words=False):
        import tensorflow as tf

        from keras_bert.preprocessing.tasks.task_features import pack_ids, window_spans

        texts, single = _batch(texts)
        _check_texts(texts)
        if not texts:
            return []
        ids, starts, ends = self.tokenizer.tokenize_with_offsets(tf.constant(texts), unit="char")
        word_pieces = self.tokenizer.tokenize_words(tf.constant(texts))
        ids, starts, ends = ids.to_list(), starts.to_list(), ends.to_list()
        word_lengths = word_pieces.row_lengths(axis=2).to_list()
        for t, lengths in enumerate(word_lengths):
            if sum(lengths) != len(ids[t]):  # both come from one tokenization; a mismatch is a tokenizer bug
                raise ValueError(f"text {t}: {len(ids[t])} tokens but its words hold {sum(lengths)} wordpieces")
        window = self.sequence_length - 2
        stride = min(self.window_stride or window, window)
        rows, owners = [], []
        for t, tokens in enumerate(ids):
            for s, e in window_spans(len(tokens), window, stride):
                rows.append(pack_ids(tokens[s:e], None, self.sequence_length, self.tokenizer.cls_token_id,
                                     self.tokenizer.sep_token_id, self.tokenizer.pad_token_id))
                owners.append((t, s, e))
        inputs = ("token_ids", "segment_ids", "padding_mask")
        x = {name: np.stack([r[i] for r in rows]) for i, name in enumerate(inputs)}
        logits = self._predict_trimmed(x, per_token=True)
        names = self.model.label_names
        sums = [np.zeros((len(tokens), len(names))) for tokens in ids]
        counts = [np.zeros((len(tokens), 1)) for tokens in ids]
        for row, (t, s, e) in zip(logits, owners):
            sums[t][s:e] += row[1 : 1 + e - s]
            counts[t][s:e] += 1
        results = []
        for t, text in enumerate(texts):
            probabilities = _softmax(sums[t] / np.maximum(counts[t], 1)) if len(ids[t]) else np.zeros((0, len(names)))
            words, token = [], 0
            for length in word_lengths[t]:
                if length == 0:
                    continue
                p = probabilities[token]
                tag = names[int(np.argmax(p))]
                words.append(
                    {"text": text[starts[t][token] : ends[t][token + length - 1]], "start": starts[t][token],
                     "end": ends[t][token + length - 1], "tag": tag, "score": float(np.max(p))}
                )
                token += length
            entities = []
            for entity_type, first, last in get_entities([w["tag"] for w in words]):
                start, end = words[first]["start"], words[last]["end"]
                score = float(np.mean([w["score"] for w in words[first : last + 1]]))
                entities.append(
                    {"type": entity_type, "text": text[start:end], "start": start, "end": end, "score": score}
                )
            results.append({"entities": entities, "words": words} if return_words else entities)
        return results[0] if single else results


class QuestionAnswererPipeline(_Pipeline):
    """Answer spans of questions about contexts, as exact substrings of the context.

    Args:
        model: a `BertQuestionAnswerer`.
        tokenizer: the `BertTokenizer` it was trained with.
        sequence_length: packed length (default 384, at most the model's).
        doc_stride: tokens between context window starts (default 128, cut to fit).
        max_query_length: question tokens kept (default 64).
        max_answer_length: longest answer in tokens (default 30).
        allow_no_answer: answer "" when [CLS] scores best (SQuAD 2.0 models).
        null_score_diff_threshold: margin the "no answer" score needs to win.
        batch_size: sequences per forward pass.

    Call arguments:
        questions: a string or a list of strings.
        contexts: a string or a list of strings, one per question.

    Returns:
        For each question, `{"answer", "start", "end", "score"}`: the answer
        text (`context[start:end]`; "" with start = end = -1 for no answer)
        and its probability among the n-best candidates.
    """

    def __init__(
        self,
        model,
        tokenizer,
        sequence_length=None,
        doc_stride=128,
        max_query_length=64,
        max_answer_length=30,
        allow_no_answer=False,
        null_score_diff_threshold=0.0,
        batch_size=32,
    ):
        if sequence_length is None:
            sequence_length = min(384, model.backbone.max_sequence_length)
        super().__init__(model, tokenizer, sequence_length, batch_size)
        self.max_query_length = min(max_query_length, self.sequence_length // 2)
        self.doc_stride = min(doc_stride, self.sequence_length - 3 - self.max_query_length)
        self.max_answer_length = max_answer_length
        self.allow_no_answer = allow_no_answer
        self.null_score_diff_threshold = null_score_diff_threshold

    def __call__(self, questions, contexts):
        from keras_bert.preprocessing.tasks.squad_data import SquadExample, decode_answers, squad_features

        questions, single = _batch(questions, "questions")
        contexts, _ = _batch(contexts, "contexts")
        if len(contexts) == 1 and len(questions) > 1:
            contexts = contexts * len(questions)
        if len(contexts) != len(questions):
            raise ValueError(f"{len(questions)} questions but {len(contexts)} contexts.")
        _check_texts(questions, "question")
        _check_texts(contexts, "context")
        if not questions:
            return []
        examples = [SquadExample(str(i), q, c) for i, (q, c) in enumerate(zip(questions, contexts))]
        features = squad_features(
            examples, self.tokenizer, self.sequence_length, self.doc_stride, self.max_query_length
        )
        logits = self._predict(features.x)
        decoded = decode_answers(
            logits, features, examples, max_answer_length=self.max_answer_length,
            allow_no_answer=self.allow_no_answer, null_score_diff_threshold=self.null_score_diff_threshold,
        )
        results = [
            {"answer": d["text"], "start": d["start"], "end": d["end"], "score": d["score"]}
            for d in (decoded[e.id] for e in examples)
        ]
        return results[0] if single else results


class MultipleChoicePipeline(_Pipeline):
    """Which choice fits a context best.

    Args:
        model: a `BertMultipleChoice`.
        tokenizer: the `BertTokenizer` it was trained with.
        sequence_length: packed length of each (context, choice) sequence (default 128).
        batch_size: examples per forward pass.

    Call arguments:
        contexts: a string or a list of strings.
        choices: a list of choices (strings) per context (a single list for a single context).
        questions: optional text put before every choice, one per context.

    Returns:
        For each context, `{"choice", "text", "score", "probabilities"}`: the
        index and text of the best choice, its probability, and all of them.
    """

    def __call__(self, contexts, choices, questions=None):
        from keras_bert.preprocessing.tasks.multiple_choice_data import MultipleChoiceExample, multiple_choice_features

        contexts, single = _batch(contexts, "contexts")
        if single:
            choices = [choices]
            questions = None if questions is None else [questions]
        _check_texts(contexts, "context")
        questions = questions or [""] * len(contexts)
        if not len(contexts) == len(choices) == len(questions):
            raise ValueError(f"{len(contexts)} contexts, {len(choices)} choice lists, {len(questions)} questions.")
        examples = [MultipleChoiceExample(c, q, list(ch)) for c, q, ch in zip(contexts, questions, choices)]
        for example in examples:
            _check_texts(example.choices, "choice")
        if not examples:
            return []
        features = multiple_choice_features(examples, self.tokenizer, self.sequence_length)
        probabilities = _softmax(self._predict(features.x))
        results = []
        for example, p in zip(examples, probabilities):
            best = int(np.argmax(p))
            results.append({
                "choice": best, "text": example.choices[best], "score": float(p[best]),
                "probabilities": [float(q) for q in p],
            })
        return results[0] if single else results


def pipeline_for(model, tokenizer, **kwargs):
    """The pipeline class that fits `model` (classifier, tagger, question answerer, multiple choice)."""
    from keras_bert.models.bert_classifier import BertClassifier
    from keras_bert.models.bert_multiple_choice import BertMultipleChoice
    from keras_bert.models.bert_question_answerer import BertQuestionAnswerer
    from keras_bert.models.bert_token_classifier import BertTokenClassifier

    for model_class, pipeline_class in (
        (BertClassifier, TextClassifierPipeline),
        (BertTokenClassifier, TokenClassifierPipeline),
        (BertQuestionAnswerer, QuestionAnswererPipeline),
        (BertMultipleChoice, MultipleChoicePipeline),
    ):
        if isinstance(model, model_class):
            return pipeline_class(model, tokenizer, **kwargs)
    raise ValueError(f"No text pipeline for a {type(model).__name__}; expected one of the keras_bert task models.")


def predict_text(model, tokenizer, *inputs, **kwargs):
    """Runs `pipeline_for(model, tokenizer, **kwargs)` on `inputs` once.

    Examples:
    ```python
    predict_text(classifier, tokenizer, ["great film", "dull"])
    predict_text(qa_model, tokenizer, "Who wrote it?", "It was written by Ada.")
    predict_text(choice_model, tokenizer, "She opened the umbrella", ["because it rained.", "to eat it."])
    ```
    """
    return pipeline_for(model, tokenizer, **kwargs)(*inputs)


def load_pipeline(folder, **kwargs):
    """The pipeline of a `keras-bert finetune` output folder (model.keras, vocab.txt, finetune.json).

    Args:
        folder: the `--out` folder of a fine-tuning run.
        **kwargs: pipeline arguments overriding the run's (e.g. `batch_size`).
    """
    import keras

    import keras_bert.models  # noqa: F401  (registers the classes)
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    folder = os.fspath(folder)
    with open(os.path.join(folder, "finetune.json"), encoding="utf-8") as f:
        job = json.load(f)["job"]
    model = keras.saving.load_model(os.path.join(folder, "model.keras"))
    tokenizer = BertTokenizer(os.path.join(folder, "vocab.txt"), lowercase=job["lowercase"])
    options = {"sequence_length": job["sequence_length"]}
    if get_task(job["task"]).name == "question_answerer":  # older records name the task by its CLI word
        options.update(doc_stride=job["doc_stride"], allow_no_answer=job["allow_no_answer"])
    options.update(kwargs)
    return pipeline_for(model, tokenizer, **options)
