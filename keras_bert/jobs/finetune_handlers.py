"""The fine-tuning handlers: what the fine-tuning job does differently per task (read files, build features and the model, evaluate).

One class per task of the registry (`keras_bert.task_registry`, whose `finetune` part
names them), each with the options of its files (their defaults: `FinetuneOptions`):

| task              | class               | options                                                 |
|-------------------|---------------------|---------------------------------------------------------|
| classifier        | ClassifierJob       | text_column, pair_column, label_column, format, header, |
|                   |                     | window_stride, pooling                                  |
| regressor         | RegressorJob        | the classifier's                                        |
| token_classifier  | TokenClassifierJob  | word_column, tag_column                                 |
| question_answerer | QuestionAnswererJob | doc_stride, max_query_length, max_answer_length,        |
|                   |                     | n_best_size, allow_no_answer,                           |
|                   |                     | null_score_diff_threshold, on_mismatch                  |
| multiple_choice   | MultipleChoiceJob   | context_column, question_column, choice_columns,        |
|                   |                     | label_column, format, header                            |

The fine-tuning job imports this module only through the registry, when it runs.
"""

import abc
import os

import keras
import numpy as np

from keras_bert.jobs.finetune_options import FinetuneOptions
from keras_bert.metrics.classification import accuracy, classification_metrics, regression_metrics
from keras_bert.metrics.entities import are_entity_tags, entity_metrics, token_accuracy
from keras_bert.metrics.squad import squad_metrics
from keras_bert.models.bert_classifier import BertClassifier
from keras_bert.models.bert_multiple_choice import BertMultipleChoice
from keras_bert.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert.models.bert_token_classifier import BertTokenClassifier
from keras_bert.models.family_task_models import task_model_class
from keras_bert.preprocessing.task_data.classification_data import (
    average_windows,
    classification_features,
    encode_labels,
    read_classification_data,
)
from keras_bert.preprocessing.task_data.multiple_choice_data import multiple_choice_features, read_multiple_choice
from keras_bert.preprocessing.task_data.ner_data import ner_features, ner_label_names, read_conll, word_predictions
from keras_bert.preprocessing.task_data.squad_data import (
    decode_answers,
    qa_window_lengths,
    read_squad,
    squad_features,
)


class FinetuneTaskJob(abc.ABC):
    """Data, model and evaluation of one task kind.

    Args:
        options: dict with `sequence_length`, `dropout` and the task's `OPTIONS`
            (every task's may be there; each class reads its own).

    Attributes:
        label_names: the label (or tag) names in id order, set by the
            training data's features; None for tasks without names.
        majority_class: the classifier's most frequent training label id
            (ties: the first), set by the training data's features.
    """

    OPTIONS = {}

    def __init__(self, options):
        self.options = options
        self.label_names = None
        self.majority_class = None

    @abc.abstractmethod
    def read(self, path):
        """The examples of the file `path`."""

    @abc.abstractmethod
    def features(self, examples, tokenizer, training):
        """`TaskFeatures` of `examples`; the training data's also fix the label names."""

    @abc.abstractmethod
    def model(self, backbone):
        """A new task model on `backbone`."""

    @abc.abstractmethod
    def counts(self, features):
        """What `features` hold, for the report: examples, windows, truncations, ..."""

    @abc.abstractmethod
    def evaluate(self, model, features, examples, batch_size):
        """`(metrics dict, one prediction dict per example)` of `model` on held-out data."""

    def _logits(self, model, features, batch_size):
        return model.predict(features.dataset(batch_size, labels=False), verbose=0)


class ClassifierJob(FinetuneTaskJob):
    """Labels for texts or text pairs (TSV/CSV/JSONL; see `read_classification_data`).

    Options:
        text_column, pair_column, label_column, format, header: the columns and the file format.
        window_stride: single texts longer than the sequence are split into
            windows starting every `window_stride` tokens (held-out logits are
            averaged per text); None truncates.
        pooling: the head's input, "cls" (BERT's pooler) or "mean" (see `BertClassifier`).
    """

    OPTIONS = FinetuneOptions.defaults(
        "text_column", "pair_column", "label_column", "format", "header", "window_stride", "pooling"
    )
    regression = False

    def read(self, path):
        o = self.options
        return read_classification_data(
            path, o["text_column"], o["label_column"], o.get("pair_column"), o.get("format"), o.get("header", True)
        )

    def features(self, examples, tokenizer, training):
        o = self.options
        features = classification_features(
            examples, tokenizer, label_names=self.label_names, regression=self.regression,
            sequence_length=o["sequence_length"], window_stride=o.get("window_stride"),
        )
        if training:
            self.label_names = features.info["label_names"]
            if not self.regression:
                # Counted per text, not per window: the baseline answers once per held-out text too.
                ids, _ = encode_labels(examples, self.label_names)
                self.majority_class = int(np.argmax(np.bincount(ids, minlength=len(self.label_names))))
        return features

    def model(self, backbone):
        classifier = task_model_class(BertClassifier, backbone)  # ModernBERT: ModernBertClassifier
        if self.regression:
            return classifier(backbone, num_classes=1, dropout=self.options["dropout"], pooling=self.options["pooling"])
        return classifier(
            backbone, num_classes=len(self.label_names), dropout=self.options["dropout"], label_names=self.label_names,
            pooling=self.options["pooling"],
        )

    def counts(self, features):
        return {"examples": features.info["num_examples"], "features": len(features),
                "truncated_or_windowed": features.info["num_truncated"]}

    def evaluate(self, model, features, examples, batch_size):
        logits = average_windows(
            self._logits(model, features, batch_size), features.info["document_index"], features.info["num_examples"]
        )
        if self.regression:
            targets, _ = encode_labels(examples, regression=True)
            values = logits[:, 0]
            predictions = [
                {"text": e.text, "label": float(t), "prediction": float(v)} for e, t, v in zip(examples, targets, values)
            ]
            return regression_metrics(targets, values), predictions
        targets, _ = encode_labels(examples, self.label_names)
        predicted = np.argmax(logits, axis=-1)
        metrics = classification_metrics(targets, predicted, num_classes=len(self.label_names))
        # The figure to beat: always answer the training labels' most frequent class.
        metrics["majority_class"] = self.label_names[self.majority_class]
        metrics["majority_class_accuracy"] = accuracy(targets, np.full_like(targets, self.majority_class))
        if "f1" in metrics:  # two classes: the F1 of class 1, the second label name in sorted order
            metrics["f1_class"] = self.label_names[1]
        probabilities = keras.ops.convert_to_numpy(keras.ops.softmax(logits))
        predictions = [
            {"text": e.text, **({"pair": e.pair} if e.pair is not None else {}), "label": self.label_names[t],
             "prediction": self.label_names[p], "score": float(q[p])}
            for e, t, p, q in zip(examples, targets, predicted, probabilities)
        ]
        return metrics, predictions


class RegressorJob(ClassifierJob):
    """One real value per text or text pair: the classifier's files, a one-unit head."""

    regression = True


class TokenClassifierJob(FinetuneTaskJob):
    """A tag per word, e.g. named entities (CoNLL / BIO files; see `read_conll`).

    Options:
        word_column, tag_column: the columns of the words and their tags.
    """

    OPTIONS = FinetuneOptions.defaults("word_column", "tag_column")

    def read(self, path):
        return read_conll(path, word_column=self.options["word_column"], tag_column=self.options["tag_column"])

    def features(self, examples, tokenizer, training):
        if training:
            self.label_names = ner_label_names(examples)
        return ner_features(examples, tokenizer, self.label_names, self.options["sequence_length"])

    def model(self, backbone):
        return task_model_class(BertTokenClassifier, backbone)(  # ModernBERT: ModernBertTokenClassifier
            backbone, num_classes=len(self.label_names), dropout=self.options["dropout"], label_names=self.label_names
        )

    def counts(self, features):
        info = features.info
        return {
            "sentences": len(features),
            "truncated_sentences": info["num_truncated_sentences"],
            "truncated_words": info["num_truncated_words"],
            "words_without_tokens": info["num_words_without_tokens"],
        }

    def evaluate(self, model, features, examples, batch_size):
        predicted = word_predictions(self._logits(model, features, batch_size), features, self.label_names)
        true = [s.tags for s in examples]
        # A tagger whose labels are not entity tags (part-of-speech) is scored per word only.
        metrics = entity_metrics(true, predicted) if are_entity_tags(self.label_names) else {}
        metrics["word_accuracy"] = token_accuracy(true, predicted)
        predictions = [{"words": s.words, "tags": s.tags, "predicted": p} for s, p in zip(examples, predicted)]
        return metrics, predictions


class QuestionAnswererJob(FinetuneTaskJob):
    """Answer spans in a context (SQuAD 1.1 / 2.0 JSON).

    Options:
        doc_stride, max_query_length: how contexts and questions become windows (see `squad_features`);
            None: from the sequence length (`qa_window_lengths`), the values then kept in `options`.
        max_answer_length, n_best_size, null_score_diff_threshold: decoding (see `decode_answers`).
        allow_no_answer: predict "no answer" too; default: whether the
            training data has unanswerable questions.
        on_mismatch: "raise" or "skip" questions whose answer offsets do not
            match the context (see `read_squad`); what each file skipped is
            kept in `options["read_stats"]`.
    """

    OPTIONS = FinetuneOptions.defaults(
        "doc_stride", "max_query_length", "max_answer_length", "n_best_size", "allow_no_answer",
        "null_score_diff_threshold", "on_mismatch",
    )

    def __init__(self, options):
        super().__init__(options)
        # Checked (or derived) now, before any data are read; the job records what its windows used.
        options["max_query_length"], options["doc_stride"] = qa_window_lengths(
            options["sequence_length"], options.get("doc_stride"), options.get("max_query_length")
        )

    def read(self, path):
        stats = {}
        examples = read_squad(path, on_mismatch=self.options.get("on_mismatch", "raise"), stats=stats)
        self.options.setdefault("read_stats", {})[os.fspath(path)] = stats
        return examples

    def features(self, examples, tokenizer, training):
        o = self.options
        if training and o.get("allow_no_answer") is None:
            o["allow_no_answer"] = any(e.is_impossible for e in examples)
        return squad_features(examples, tokenizer, o["sequence_length"], o["doc_stride"], o["max_query_length"])

    def model(self, backbone):
        return task_model_class(BertQuestionAnswerer, backbone)(backbone)  # ModernBERT: ModernBertQuestionAnswerer

    def counts(self, features):
        return {"questions": features.info["num_examples"], "windows": len(features),
                "answers_not_on_token_boundaries": features.info["answers_not_on_token_boundaries"]}

    def evaluate(self, model, features, examples, batch_size):
        o = self.options
        decoded = decode_answers(
            self._logits(model, features, batch_size), features, examples, n_best_size=o["n_best_size"],
            max_answer_length=o["max_answer_length"], allow_no_answer=o["allow_no_answer"],
            null_score_diff_threshold=o["null_score_diff_threshold"],
        )
        metrics = squad_metrics({k: v["text"] for k, v in decoded.items()}, {e.id: e.answer_texts for e in examples})
        predictions = [
            {"id": e.id, "question": e.question, "answers": e.answer_texts, "prediction": decoded[e.id]["text"],
             "start": decoded[e.id]["start"], "score": decoded[e.id]["score"]}
            for e in examples
        ]
        return metrics, predictions


class MultipleChoiceJob(FinetuneTaskJob):
    """The best of several endings (SWAG-style CSV; see `read_multiple_choice`).

    Options:
        context_column, question_column, choice_columns, label_column, format,
            header: the columns (SWAG's by default) and the file format.
    """

    OPTIONS = FinetuneOptions.defaults(
        "context_column", "question_column", "choice_columns", "label_column", "format", "header"
    )

    def read(self, path):
        o = self.options
        return read_multiple_choice(
            path, context_column=o["context_column"], question_column=o["question_column"],
            choice_columns=o.get("choice_columns"), label_column=o["label_column"], format=o.get("format"),
            header=o.get("header", True),
        )

    def features(self, examples, tokenizer, training):
        return multiple_choice_features(examples, tokenizer, self.options["sequence_length"])

    def model(self, backbone):
        return BertMultipleChoice(backbone, dropout=self.options["dropout"])

    def counts(self, features):
        return {"examples": len(features), "choices": features.info["num_choices"],
                "truncated_sequences": features.info["num_truncated"]}

    def evaluate(self, model, features, examples, batch_size):
        predicted = np.argmax(self._logits(model, features, batch_size), axis=-1)
        metrics = {"accuracy": accuracy(features.y, predicted)}
        predictions = [
            {"context": e.context, "label": e.label, "prediction": int(p)} for e, p in zip(examples, predicted)
        ]
        return metrics, predictions
