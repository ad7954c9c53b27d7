"""Multiple-choice data (SWAG-style CSV: context, question start, endings, label) → `TaskFeatures`.

    examples = read_multiple_choice("train.csv")  # SWAG columns by default
    features = multiple_choice_features(examples, tokenizer, sequence_length=64)
    model.fit(features.dataset(batch_size=16, shuffle=True), epochs=3)

Each choice becomes `[CLS] context [SEP] question + " " + choice [SEP]` (how
BERT and Hugging Face's run_swag pair them), so an example is a
`(num_choices, sequence_length)` block of model inputs.
"""

import dataclasses
import os
import re

import keras
import numpy as np
import tensorflow as tf

from keras_bert.preprocessing.task_data.packing_preprocessor import PackingPreprocessor
from keras_bert.preprocessing.task_data.task_features import TaskFeatures, get_column, read_table

SWAG_COLUMNS = dict(context_column="sent1", question_column="sent2", label_column="label")
_ENDING = re.compile(r"^ending(\d+)$")


@dataclasses.dataclass
class MultipleChoiceExample:
    """A context, an optional question (or sentence start), the choices, and the right choice's index.

    Attributes:
        context: first segment.
        question: text put before every choice in the second segment ("" for none).
        choices: list of candidate strings.
        label: index of the right choice, or None.
        source: `"file:line"`.
    """

    context: str
    question: str
    choices: list
    label: int = None
    source: str = ""


def _text(row, column, path, number, allow_empty=False):
    value = get_column(row, column, path, number)
    if not isinstance(value, str):
        raise ValueError(f"{path}:{number}: column {column!r} must hold text, found {type(value).__name__} {value!r}")
    if not allow_empty and not value.strip():
        raise ValueError(f"{path}:{number}: empty text in column {column!r}")
    return value


def read_multiple_choice(
    path,
    context_column="sent1",
    question_column="sent2",
    choice_columns=None,
    label_column="label",
    format=None,
    header=True,
):
    """Reads multiple-choice examples from a CSV, TSV or JSON Lines file.

    The defaults read SWAG's CSV files (`sent1`, `sent2`, `ending0`..`ending3`, `label`).

    Args:
        path: the file.
        context_column: column of the context (first segment).
        question_column: column of the text put before each choice (None for none;
            an empty cell is allowed).
        choice_columns: list of the choice columns; default: every column named
            `ending<N>` in the header, by N.
        label_column: column of the right choice's 0-based index, or None for unlabelled data.
        format: "tsv", "csv" or "jsonl" (default: from the extension).
        header: TSV/CSV: the first row names the columns.

    Returns:
        list of `MultipleChoiceExample`.

    Raises:
        ValueError: naming `file:line`, for a missing column, an empty context
            or choice, or a label that is not an index of a choice.
    """
    path = os.fspath(path)
    examples = []
    for number, row in read_table(path, format=format, header=header):
        columns = choice_columns
        if columns is None:
            if not isinstance(row, dict):
                raise ValueError(f"{path}: `choice_columns` is needed for a file without a header")
            columns = sorted((c for c in row if _ENDING.match(str(c))), key=lambda c: int(_ENDING.match(c).group(1)))
            if len(columns) < 2:
                raise ValueError(
                    f"{path}:{number}: found {len(columns)} columns named ending<N> in {list(row)}; "
                    "name the choice columns with `choice_columns`"
                )
        context = _text(row, context_column, path, number)
        question = _text(row, question_column, path, number, allow_empty=True) if question_column is not None else ""
        choices = [_text(row, c, path, number) for c in columns]
        label = None
        if label_column is not None:
            raw = get_column(row, label_column, path, number)
            try:
                if isinstance(raw, bool) or isinstance(raw, float):
                    raise ValueError
                label = int(raw.strip()) if isinstance(raw, str) else int(raw)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{path}:{number}: label {raw!r} is not the index of a choice (an integer in [0, {len(choices)}))"
                ) from None
            if not 0 <= label < len(choices):
                raise ValueError(f"{path}:{number}: label {label} is out of range for {len(choices)} choices")
        examples.append(MultipleChoiceExample(context, question, choices, label, f"{path}:{number}"))
    if not examples:
        raise ValueError(f"{path}: no examples")
    return examples


@keras.saving.register_keras_serializable(package="keras_bert")
class BertMultipleChoicePreprocessor(PackingPreprocessor):
    """Contexts and choices → `BertMultipleChoice` inputs, in `tf.data` or eagerly.

    Args:
        tokenizer: a `BertTokenizer`.
        sequence_length: length of every packed (context, choice) sequence.
        truncate: "longest_first" or "round_robin" (see `BertInputPacker`).

    Call arguments:
        x: a dict with `"context"`, strings of shape `(batch_size,)`,
            `"choices"`, strings of shape `(batch_size, num_choices)`, and
            optionally `"question"`, strings of shape `(batch_size,)` put
            before every choice.
        y: optional labels (index of the right choice), passed through.
        sample_weight: optional weights, passed through.

    Returns:
        `x` as a dict of int32 arrays of shape `(batch_size, num_choices,
        sequence_length)`, or `(x, y[, sample_weight])`.
    """

    def __call__(self, x, y=None, sample_weight=None):
        if not isinstance(x, dict) or "context" not in x or "choices" not in x:
            raise ValueError("`x` must be a dict with 'context' and 'choices' (and optionally 'question').")
        context = tf.convert_to_tensor(x["context"], tf.string)
        choices = tf.convert_to_tensor(x["choices"], tf.string)
        if choices.shape.rank != 2:
            raise ValueError(f"'choices' must have shape (batch_size, num_choices). Received {choices.shape}")
        num_choices = tf.shape(choices)[1]
        second = choices
        if x.get("question") is not None:
            question = tf.convert_to_tensor(x["question"], tf.string)
            second = tf.strings.join([tf.repeat(question[:, tf.newaxis], num_choices, axis=1), choices], " ")
        packed = self.packer(tf.repeat(context, num_choices), tf.reshape(second, [-1]))
        packed = {k: tf.reshape(v, [-1, num_choices, self.sequence_length]) for k, v in packed.items()}
        return keras.utils.pack_x_y_sample_weight(packed, y, sample_weight)


def multiple_choice_features(examples, tokenizer, sequence_length=128, truncate="longest_first", batch_size=1024):
    """Model-ready features of multiple-choice examples.

    Args:
        examples: list of `MultipleChoiceExample`, all with the same number of choices.
        tokenizer: a `BertTokenizer`.
        sequence_length: packed length of each (context, choice) sequence.
        truncate: pair truncation rule.
        batch_size: examples preprocessed per call (memory only).

    Returns:
        `TaskFeatures` with x of shape `(num_examples, num_choices, sequence_length)`,
        `y` (int32 `(num_examples,)`, or None when unlabelled) and `info`:
        `num_choices`, `num_truncated` (sequences cut to fit).
    """
    if not examples:
        raise ValueError("No examples to build features from.")
    num_choices = len(examples[0].choices)
    for example in examples:
        if len(example.choices) != num_choices:
            raise ValueError(
                f"{example.source}: {len(example.choices)} choices, but the first example has {num_choices}; "
                "every example needs the same number"
            )
    preprocessor = BertMultipleChoicePreprocessor(tokenizer, sequence_length, truncate)
    parts, num_truncated = [], 0
    for start in range(0, len(examples), batch_size):
        chunk = examples[start : start + batch_size]
        x = {
            "context": tf.constant([e.context for e in chunk]),
            "question": tf.constant([e.question for e in chunk]),
            "choices": tf.constant([e.choices for e in chunk]),
        }
        parts.append({k: v.numpy() for k, v in preprocessor(x).items()})
        context_lengths = tokenizer.tokenize(x["context"]).row_lengths().numpy()
        second = tf.strings.join([tf.repeat(x["question"][:, None], num_choices, axis=1), x["choices"]], " ")
        second_lengths = tokenizer.tokenize(tf.reshape(second, [-1])).row_lengths().numpy().reshape(-1, num_choices)
        num_truncated += int(np.sum(context_lengths[:, None] + second_lengths > sequence_length - 3))
    x = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    labelled = all(e.label is not None for e in examples)
    y = np.asarray([e.label for e in examples], "int32") if labelled else None
    info = {"num_choices": num_choices, "num_truncated": num_truncated, "num_examples": len(examples)}
    return TaskFeatures(x, y, info=info)
