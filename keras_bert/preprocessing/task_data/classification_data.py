"""Sentence (pair) classification and regression data: TSV/CSV/JSONL → `TaskFeatures`.

    examples = read_classification_data("train.tsv", text_column="sentence", label_column="label")
    features = classification_features(examples, tokenizer, sequence_length=128)
    model.fit(features.dataset(batch_size=32, shuffle=True), epochs=3)

Labels are strings mapped to ids through `label_names` (sorted: numerically
when every label is an integer, else alphabetically; or given by you), or
floats for regression. A label outside the label set, a non-number for
regression, an empty text or a missing column raises a ValueError naming
`file:line`. Texts and text pairs longer than the model's length can be cut
into overlapping windows (`window_stride`); a document's prediction is then
the mean of its windows' logits (`average_windows`). A pair is windowed over
its longer segment, the shorter one repeated in every window (see
`pair_window_spans`).
"""

import dataclasses
import math
import os

import keras
import numpy as np
import tensorflow as tf

from keras_bert.postprocessing import text_windows
from keras_bert.preprocessing.input_packer import BertInputPacker
from keras_bert.preprocessing.task_data.packing_preprocessor import PackingPreprocessor
from keras_bert.preprocessing.task_data.task_features import TaskFeatures, get_column, read_table


@dataclasses.dataclass
class ClassificationExample:
    """One labelled text or text pair.

    Attributes:
        text: the (first) text.
        pair: the second text of a pair, or None.
        label: the label as read (a string, or a number from JSON), or None.
        source: where it came from, `"file:line"`.
    """

    text: str
    pair: str = None
    label: object = None
    source: str = ""


def _text(row, column, path, number):
    value = get_column(row, column, path, number)
    if not isinstance(value, str):
        raise ValueError(f"{path}:{number}: column {column!r} must hold text, found {type(value).__name__} {value!r}")
    if not value.strip():
        raise ValueError(f"{path}:{number}: empty text in column {column!r}")
    return value


def read_classification_data(path, text_column, label_column=None, pair_column=None, format=None, header=True):
    """Reads labelled texts (or text pairs) from a TSV, CSV or JSON Lines file.

    Args:
        path: the file (see `read_table` for the formats).
        text_column: column of the (first) text: a name, or a 0-based index
            with `header=False`.
        label_column: column of the label, or None for unlabelled data.
        pair_column: column of the second text for sentence pairs, or None.
        format: "tsv", "csv" or "jsonl" (default: from the extension).
        header: TSV/CSV: the first row names the columns.

    Returns:
        list of `ClassificationExample`.

    Raises:
        ValueError: a missing column, an empty text or label, naming `file:line`;
            or a file without any row.
    """
    path = os.fspath(path)
    examples = []
    for number, row in read_table(path, format=format, header=header):
        text = _text(row, text_column, path, number)
        pair = _text(row, pair_column, path, number) if pair_column is not None else None
        label = None
        if label_column is not None:
            label = get_column(row, label_column, path, number)
            if label is None or (isinstance(label, str) and not label.strip()):
                raise ValueError(f"{path}:{number}: empty label in column {label_column!r}")
            if isinstance(label, bool) or not isinstance(label, (str, int, float)):
                raise ValueError(
                    f"{path}:{number}: label {label!r} has type {type(label).__name__}; "
                    "labels must be strings or numbers"
                )
            if isinstance(label, str):
                label = label.strip()
        examples.append(ClassificationExample(text, pair, label, f"{path}:{number}"))
    if not examples:
        raise ValueError(f"{path}: no examples (is it empty, or only a header?)")
    return examples


def _label_key(label):
    """A string form of a label: JSON 1 and TSV "1" are the same label."""
    if isinstance(label, bool) or not isinstance(label, (str, int, float)):
        raise TypeError(type(label).__name__)
    if isinstance(label, float) and label.is_integer():
        label = int(label)
    return str(label)


def label_names_from(examples):
    """The distinct labels of `examples`, sorted (numerically if all are integers)."""
    keys = {_label_key(e.label) for e in examples if e.label is not None}
    try:
        return sorted(keys, key=int)
    except ValueError:
        return sorted(keys)


def encode_labels(examples, label_names=None, regression=False):
    """Label ids (or float targets) of `examples`.

    Args:
        examples: list of `ClassificationExample`, all labelled.
        label_names: the label set, in id order; default `label_names_from(examples)`.
        regression: read labels as real numbers instead.

    Returns:
        `(labels, label_names)`: int32 ids (float32 values for regression, and
        `label_names` None) of shape `(num_examples,)`.

    Raises:
        ValueError: naming `file:line`, for a missing label, a label outside
            `label_names`, or a non-numeric / non-finite regression target.
    """
    for example in examples:
        if example.label is None:
            raise ValueError(f"{example.source}: the example has no label")
    if regression:
        values = []
        for example in examples:
            try:
                if isinstance(example.label, bool):
                    raise ValueError
                value = float(example.label)
            except (TypeError, ValueError):
                raise ValueError(
                    f"{example.source}: label {example.label!r} is not a number (regression needs real-valued labels)"
                ) from None
            if not math.isfinite(value):
                raise ValueError(f"{example.source}: label {example.label!r} is not a finite number")
            values.append(value)
        return np.asarray(values, "float32"), None
    if label_names is None:
        label_names = label_names_from(examples)
    index = {name: i for i, name in enumerate(label_names)}
    ids = []
    for example in examples:
        try:
            key = _label_key(example.label)
        except TypeError:
            raise ValueError(
                f"{example.source}: label {example.label!r} has type {type(example.label).__name__}; "
                "labels must be strings or integers"
            ) from None
        if key not in index:
            raise ValueError(
                f"{example.source}: label {example.label!r} is not one of the {len(label_names)} labels "
                f"{label_names} (the training data's)"
            )
        ids.append(index[key])
    return np.asarray(ids, "int32"), list(label_names)


@keras.saving.register_keras_serializable(package="keras_bert")
class BertClassifierPreprocessor(PackingPreprocessor):
    """Raw text (pairs) → `BertClassifier` inputs, in `tf.data` or eagerly.

    Args:
        tokenizer: a `BertTokenizer`.
        sequence_length: length of the packed sequences.
        truncate: "longest_first" (Hugging Face's rule) or "round_robin".

    Call arguments:
        x: a string tensor of shape `()` or `(batch_size,)` (single texts), or
            a tuple `(texts_a, texts_b)` of two such tensors (pairs). A Python
            list is a batch of single texts; use a tuple for a pair.
        y: optional labels, passed through.
        sample_weight: optional weights, passed through.

    Returns:
        `x` as a dict of int32 `token_ids`, `segment_ids`, `padding_mask` of
        shape `(batch_size, sequence_length)`, or `(x, y[, sample_weight])`.

    Examples:
    ```python
    preprocessor = BertClassifierPreprocessor(tokenizer, sequence_length=128)
    dataset = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(32).map(preprocessor)
    ```
    """

    def __call__(self, x, y=None, sample_weight=None):
        if isinstance(x, tuple):
            if len(x) != 2:
                raise ValueError(f"A tuple `x` holds a pair of text batches (a, b). Received {len(x)} elements")
            packed = self.packer(x[0], x[1])
        else:
            packed = self.packer(x)
        return keras.utils.pack_x_y_sample_weight(packed, y, sample_weight)


def _token_ids(tokenizer, texts):
    ids = []
    for start in range(0, len(texts), 2048):
        ids += tokenizer.tokenize(tf.constant(texts[start : start + 2048])).to_list()
    return ids


def classification_windows(tokenizer, texts, sequence_length, stride, pairs=None):
    """Texts (or text pairs) → packed windows of `sequence_length` tokens: `(x, document_index)`.

    See `windows_and_losses` for the arguments.
    """
    x, document_index, _ = windows_and_losses(tokenizer, texts, sequence_length, stride, pairs)
    return x, document_index


def windows_and_losses(tokenizer, texts, sequence_length, stride, pairs=None, batch_size=2048):
    """Texts (or text pairs) → packed windows of `sequence_length` tokens, and the tokens none holds.

    The windows are `keras_bert.postprocessing.text_windows.windows_of`'s,
    the ones the pipelines and the exported SavedModel read.

    Args:
        tokenizer: a `BertTokenizer`.
        texts: list of strings.
        sequence_length: packed length; a single text's window holds
            `sequence_length - 2` tokens.
        stride: tokens between window starts (cut to the window size).
        pairs: optional second texts; a pair is windowed over its longer
            segment (`pair_window_spans`).
        batch_size: texts windowed per call (memory only).

    Returns:
        `(x, document_index, num_truncated_tokens)`: a dict of int32 arrays of
        shape `(num_windows, sequence_length)`, the text each window belongs
        to, and per text the tokens no window holds (only a pair's shorter
        segment past half the sequence loses tokens).
    """
    packer = BertInputPacker.from_tokenizer(tokenizer, sequence_length)
    parts, document_index, dropped = [], [], []
    for start in range(0, len(texts), batch_size):
        ids = tokenizer.tokenize(tf.constant(texts[start : start + batch_size]))
        pair_ids = None if pairs is None else tokenizer.tokenize(tf.constant(pairs[start : start + batch_size]))
        windows = text_windows.windows_of(ids, sequence_length, stride, pair_ids, packer.separators_between)
        packed = packer(windows["first"]) if pairs is None else packer(windows["first"], windows["second"])
        parts.append({k: v.numpy() for k, v in packed.items()})
        document_index.append(windows["owner"].numpy() + start)
        dropped.append(windows["dropped"].numpy())
    if not parts:
        empty = np.zeros((0, sequence_length), "int32")
        return {k: empty for k in ("token_ids", "segment_ids", "padding_mask")}, np.zeros(0, "int32"), empty[:, 0]
    x = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return x, np.concatenate(document_index).astype("int32"), np.concatenate(dropped).astype("int32")


def average_windows(logits, document_index, num_documents):
    """Mean of the window logits of each document: `(num_windows, ...)` → float32 `(num_documents, ...)`.

    The windows' aggregation of the pipelines and the exported SavedModel
    (`keras_bert.postprocessing.text_windows.mean_over_windows`).
    """
    document_index = np.asarray(document_index, "int32")
    if np.any(np.bincount(document_index, minlength=num_documents) == 0):
        raise ValueError("Some documents have no window.")
    return text_windows.mean_over_windows(np.asarray(logits), document_index, num_documents).numpy().astype("float32")


def classification_features(
    examples,
    tokenizer,
    label_names=None,
    regression=False,
    sequence_length=128,
    truncate="longest_first",
    window_stride=None,
):
    """Model-ready features of classification examples.

    Args:
        examples: list of `ClassificationExample` (labelled or not).
        tokenizer: a `BertTokenizer`.
        label_names: the label set in id order (default: from the examples).
        regression: float targets instead of class ids.
        sequence_length: packed length.
        truncate: pair truncation rule (see `BertInputPacker`).
        window_stride: None to truncate long texts; an int to cut texts
            longer than one sequence into windows starting every
            `window_stride` tokens, each with the text's label (a pair is
            windowed over its longer segment, see `pair_window_spans`).

    Returns:
        `TaskFeatures` with `y` (or None for unlabelled examples) and `info`:
        `label_names`, `document_index` (feature → example), `num_examples`,
        `num_truncated` (examples longer than one window that were cut, or
        split when windowing), per example `num_tokens` (both segments),
        `num_windows` and `num_truncated_tokens` (tokens no window holds).
    """
    if not examples:
        raise ValueError("No examples to build features from.")
    is_pair = examples[0].pair is not None
    if any((e.pair is not None) != is_pair for e in examples):
        raise ValueError("Mix of single texts and pairs: every example needs the same columns.")
    labelled = all(e.label is not None for e in examples)
    labels = None
    if labelled:
        labels, label_names = encode_labels(examples, label_names, regression)
    texts = [e.text for e in examples]
    budget = sequence_length - (3 if is_pair else 2)
    pairs = [e.pair for e in examples] if is_pair else None
    lengths = [len(r) for r in _token_ids(tokenizer, texts)]
    if is_pair:
        lengths = [a + len(b) for a, b in zip(lengths, _token_ids(tokenizer, pairs))]
    num_truncated = int(sum(n > budget for n in lengths))

    if window_stride:
        x, document_index, dropped = windows_and_losses(tokenizer, texts, sequence_length, window_stride, pairs)
    else:
        preprocessor = BertClassifierPreprocessor(tokenizer, sequence_length, truncate)
        parts = []
        for start in range(0, len(texts), 2048):
            chunk = tf.constant(texts[start : start + 2048])
            if is_pair:
                chunk = (chunk, tf.constant([e.pair for e in examples[start : start + 2048]]))
            parts.append({k: v.numpy() for k, v in preprocessor(chunk).items()})
        x = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        document_index = np.arange(len(texts), dtype="int32")
        dropped = np.maximum(np.asarray(lengths, "int32") - budget, 0)
    y = labels[document_index] if labels is not None else None
    info = {
        "label_names": label_names,
        "regression": regression,
        "document_index": document_index,
        "num_examples": len(examples),
        "num_truncated": num_truncated,
        "num_tokens": np.asarray(lengths, "int32"),
        "num_windows": np.bincount(document_index, minlength=len(examples)),
        "num_truncated_tokens": dropped,
    }
    return TaskFeatures(x, y, info=info)
