"""Shared plumbing of the fine-tuning data modules: tables in, model-ready arrays out.

- `read_table`: rows of a TSV, CSV or JSON Lines file, each with the line it
  starts on, so every reader can name `file:line` in its errors.
- `TaskFeatures`: the numpy arrays a task model trains on, plus what is needed
  to map predictions back (window → document, token → word or character);
  `.dataset()` turns them into a `tf.data.Dataset` of `(x, y[, sample_weight])`.
- `window_spans`: the windows over a token sequence longer than the model's
  length (SQuAD's "doc stride", used for long classification inputs too);
  `pair_window_spans` the same for text pairs; `max_context_mask` BERT's rule
  for which window a token is scored in: one sequence's view of
  `keras_bert.postprocessing.text_windows`, which the pipelines and the
  exported SavedModel run on whole batches.
"""

import csv
import io
import json
import os

import numpy as np
import tensorflow as tf

from keras_bert._utf8 import read_utf8
from keras_bert.postprocessing import text_windows

FORMATS = ("tsv", "csv", "jsonl")
_EXTENSIONS = {".tsv": "tsv", ".txt": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl", ".ndjson": "jsonl"}
# The csv module refuses fields over 128 KiB by default; a long document is
# legitimate input (texts longer than the model are windowed or truncated).
_LARGEST_FIELD = 2**31 - 1


def table_format(path, format=None):
    """"tsv", "csv" or "jsonl": `format` if given, else from the file's extension."""
    if format is not None:
        if format not in FORMATS:
            raise ValueError(f"`format` must be one of {FORMATS}. Received: format={format!r}")
        return format
    extension = os.path.splitext(os.fspath(path))[1].lower()
    if extension not in _EXTENSIONS:
        raise ValueError(
            f"{path}: cannot tell the format from the extension {extension!r}; name it .tsv, .csv or .jsonl, "
            f"or pass format= one of {FORMATS}."
        )
    return _EXTENSIONS[extension]


def read_table(path, format=None, header=True):
    """Rows of a TSV, CSV or JSON Lines file.

    TSV is read as GLUE writes it: tab-separated, no quoting (a `"` is part of
    the text). CSV follows RFC 4180 (quoted fields may hold commas and line
    breaks). JSON Lines holds one object per line. Blank lines are skipped;
    LF, CRLF and CR line ends (mixed, too) and a UTF-8 byte-order mark are
    accepted; fields may be of any length.

    Args:
        path: the file.
        format: "tsv", "csv" or "jsonl"; default from the extension
            (.tsv/.txt, .csv, .jsonl/.json).
        header: TSV/CSV only: the first row names the columns (rows are then
            dicts); with False rows are lists indexed by column number.

    Yields:
        `(line_number, row)`: the 1-based line the row starts on, and a dict
        (column name → string, or the JSON object) or, without a header, a list.

    Raises:
        ValueError: a row with more or fewer fields than the header, a line
        that is not a JSON object, or bytes that are not UTF-8, naming `path:line`.
    """
    path = os.fspath(path)
    format = table_format(path, format)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No such file: {path}")
    # newline="": the csv module sees every line end as written (CRLF inside a quoted field stays).
    with io.StringIO(read_utf8(path), newline="") as f:
        if format == "jsonl":
            for number, line in enumerate(f, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as error:
                    raise ValueError(f"{path}:{number}: not valid JSON ({error.msg})") from None
                if not isinstance(row, dict):
                    raise ValueError(f"{path}:{number}: expected a JSON object per line, found {type(row).__name__}")
                yield number, row
            return
        if format == "tsv":
            reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        else:
            reader = csv.reader(f)
        names, start = None, 1
        field_limit = csv.field_size_limit(_LARGEST_FIELD)
        try:
            for fields in reader:
                number, start = start, reader.line_num + 1
                if not fields or (len(fields) == 1 and not fields[0].strip()):
                    continue
                if header and names is None:
                    names = [name.strip() for name in fields]
                    if len(set(names)) != len(names):
                        raise ValueError(f"{path}:{number}: the header names a column twice: {names}")
                    continue
                if names is not None:
                    if len(fields) != len(names):
                        raise ValueError(
                            f"{path}:{number}: {len(fields)} fields but the header has {len(names)} "
                            f"({names}); a missing column or a stray delimiter?"
                        )
                    yield number, dict(zip(names, fields))
                else:
                    yield number, fields
        except csv.Error as error:
            raise ValueError(f"{path}:{reader.line_num}: {error}") from None
        finally:
            csv.field_size_limit(field_limit)


def get_column(row, column, path, number):
    """`row[column]` (a name, or an index for header-less files), or a ValueError naming `path:line`."""
    try:
        value = row[column]
    except (KeyError, IndexError, TypeError):
        if isinstance(row, dict):
            available = list(row)
            raise ValueError(f"{path}:{number}: no column {column!r}; the row has {available}") from None
        raise ValueError(f"{path}:{number}: no column {column!r}; the row has {len(row)} fields") from None
    return value


def window_spans(num_tokens, window_size, stride):
    """`(start, end)` token spans of overlapping windows that cover `num_tokens` tokens.

    Windows start every `stride` tokens (BERT's `doc_stride`) until one
    reaches the end; a sequence that fits has the single window `(0, num_tokens)`.
    The windows of `keras_bert.postprocessing.text_windows.window_table`, for one sequence.

    Args:
        num_tokens: int, length of the sequence (0 gives one empty window).
        window_size: int, tokens per window.
        stride: int in `[1, window_size]`, tokens between window starts.

    Returns:
        list of `(start, end)`, `end` exclusive.
    """
    if window_size < 1:
        raise ValueError(f"`window_size` must be positive. Received: window_size={window_size}")
    if not 1 <= stride <= window_size:
        raise ValueError(
            f"`stride` must be in [1, window_size={window_size}] so windows leave no gaps. Received: stride={stride}"
        )
    _, start, length = text_windows.window_table([num_tokens], window_size, stride)
    return [(s, s + n) for s, n in zip(start.numpy().tolist(), length.numpy().tolist())]


def pair_window_spans(length_a, length_b, sequence_length, stride):
    """Windows over a text pair too long for one sequence: `[((a_start, a_end), (b_start, b_end)), ...]`.

    The longer segment is windowed and the shorter one is repeated whole in
    every window, keeping at most `(sequence_length - 3) // 2` tokens; see
    `keras_bert.postprocessing.text_windows.pair_table`, whose windows these
    are for one pair. A pair that fits is one window, untouched.

    Args:
        length_a, length_b: token counts of the two segments.
        sequence_length: packed length (`[CLS] a [SEP] b [SEP]`).
        stride: tokens between window starts; cut to the window size.

    Returns:
        list of `((a_start, a_end), (b_start, b_end))`, ends exclusive.
    """
    if sequence_length - 3 < 2:
        raise ValueError(f"`sequence_length` must be at least 5 for text pairs. Received: {sequence_length}")
    _, (start_a, count_a), (start_b, count_b), _ = text_windows.pair_table(
        [length_a], [length_b], sequence_length, stride
    )
    columns = [t.numpy().tolist() for t in (start_a, count_a, start_b, count_b)]
    return [((a, a + m), (b, b + n)) for a, m, b, n in zip(*columns)]


def max_context_mask(spans):
    """Whether each token of each window is scored there, by BERT's "max context" rule.

    A token inside several overlapping windows counts only in the window
    where it has the most context (`keras_bert.postprocessing.text_windows.max_context`:
    the largest `min(left, right)`, then the longer window, the first window
    winning an exact tie), as `_check_is_max_context` in Google's run_squad.py.

    Args:
        spans: `(start, end)` windows over one sequence, in order of their starts.

    Returns:
        list of bool numpy arrays, one of length `end - start` per window.
    """
    if not spans:
        return []
    start = tf.constant([s for s, _ in spans], tf.int32)
    length = tf.constant([e - s for s, e in spans], tf.int32)
    width = max(e - s for s, e in spans)
    mask = text_windows.max_context(tf.zeros_like(start), start, length, width, len(spans) - 1).numpy()
    return [mask[w, : e - s] for w, (s, e) in enumerate(spans)]


def pack_ids(tokens_a, tokens_b, sequence_length, cls_id, sep_id, pad_id):
    """`[CLS] a [SEP] (b [SEP])` padded to `sequence_length`, as int32 numpy rows (no truncation)."""
    ids = [cls_id, *tokens_a, sep_id]
    segments = [0] * len(ids)
    if tokens_b is not None:
        ids += [*tokens_b, sep_id]
        segments += [1] * (len(tokens_b) + 1)
    if len(ids) > sequence_length:
        raise ValueError(f"{len(ids)} tokens do not fit in sequence_length={sequence_length}")
    padding = sequence_length - len(ids)
    return (
        np.asarray(ids + [pad_id] * padding, "int32"),
        np.asarray(segments + [0] * padding, "int32"),
        np.asarray([1] * len(ids) + [0] * padding, "int32"),
    )


class TaskFeatures:
    """Model-ready arrays of a data set, and what maps predictions back to it.

    Attributes:
        x: dict of int32 arrays `token_ids`, `segment_ids`, `padding_mask`,
            shape `(num_features, sequence_length)` (or `(num_features,
            num_choices, sequence_length)` for multiple choice).
        y: labels (an array, or a dict of arrays for several outputs), or None.
        sample_weight: optional float32 array matching `y`.
        info: dict of task-specific extras (label names, window → example
            index, token offsets, counts of truncated inputs, ...).
    """

    def __init__(self, x, y=None, sample_weight=None, info=None):
        self.x = {k: np.asarray(v, "int32") for k, v in x.items()}
        self.y = y
        self.sample_weight = sample_weight
        self.info = dict(info or {})

    def __len__(self):
        return len(self.x["token_ids"])

    def __repr__(self):
        shape = self.x["token_ids"].shape
        return f"TaskFeatures({len(self)} features, token_ids {shape}, info keys {sorted(self.info)})"

    def dataset(
        self, batch_size=32, shuffle=False, seed=0, labels=True, drop_remainder=False, length_buckets=None, repeat=False
    ):
        """A `tf.data.Dataset` of `(x, y[, sample_weight])` batches (or `x` alone).

        Args:
            batch_size: int.
            shuffle: reshuffle the features every epoch (seeded).
            seed: the shuffle seed.
            labels: include `y` (and `sample_weight`); False gives batches of `x` only.
            drop_remainder: drop a last, smaller batch (of each bucket, with `length_buckets`).
            length_buckets: optional list of sequence lengths, e.g. `[16, 32, 48]`:
                batches hold sequences of similar length, cut to the smallest
                bucket length (or the full length) that holds their real tokens.
                Saves the compute spent on padding when most texts are short;
                the order of the features is lost, so use it for training only.
                2-D inputs only (not multiple choice).
            repeat: repeat the features forever (each pass reshuffled); pass
                `steps_per_epoch` to `fit`. With `length_buckets` this also
                keeps batches full across passes, so no example is dropped.
        """
        elements = (self.x,)
        if labels and self.y is not None:
            elements += (self.y,)
            if self.sample_weight is not None:
                elements += (self.sample_weight,)
        dataset = tf.data.Dataset.from_tensor_slices(elements if len(elements) > 1 else elements[0])
        if shuffle:
            dataset = dataset.shuffle(len(self), seed=seed, reshuffle_each_iteration=True)
        if repeat:
            dataset = dataset.repeat()
        if length_buckets:
            return self._bucketed(dataset, elements, batch_size, drop_remainder, length_buckets)
        return dataset.batch(batch_size, drop_remainder=drop_remainder).prefetch(tf.data.AUTOTUNE)

    def _bucketed(self, dataset, elements, batch_size, drop_remainder, length_buckets):
        token_ids = self.x["token_ids"]
        if token_ids.ndim != 2:
            raise ValueError("`length_buckets` works on inputs of shape (num_features, sequence_length) only.")
        length = token_ids.shape[1]
        boundaries = sorted({int(b) for b in length_buckets if 0 < int(b) < length}) + [length]
        pad_id = int(token_ids[self.x["padding_mask"] == 0][0]) if np.any(self.x["padding_mask"] == 0) else 0
        single = len(elements) == 1

        def per_token(array):
            return np.ndim(array) >= 2 and np.shape(array)[1] == length

        def trim(*element):
            n = tf.reduce_sum(element[0]["padding_mask"])
            return tuple(
                tf.nest.map_structure(lambda t, a: t[:n] if per_token(a) else t, e, a)
                for e, a in zip(element, elements)
            )

        def padding(value, array):
            if not per_token(array):
                return tf.constant(0, tf.as_dtype(np.asarray(array).dtype))
            return tf.constant(value, tf.as_dtype(np.asarray(array).dtype))

        padding_values = [{k: padding(pad_id if k == "token_ids" else 0, v) for k, v in self.x.items()}]
        for extra in elements[1:]:
            # Token labels pad with -100 (ignored); sample weights with 0.
            fill = -100 if extra is self.y else 0
            padding_values.append(tf.nest.map_structure(lambda a, fill=fill: padding(fill, a), extra))
        dataset = dataset.map((lambda x: trim(x)) if single else trim)
        dataset = dataset.bucket_by_sequence_length(
            element_length_func=lambda *e: tf.shape(e[0]["token_ids"])[0],
            bucket_boundaries=[b + 1 for b in boundaries],
            bucket_batch_sizes=[batch_size] * (len(boundaries) + 1),
            padding_values=tuple(padding_values),
            pad_to_bucket_boundary=True,
            drop_remainder=drop_remainder,
        )
        if single:
            dataset = dataset.map(lambda *e: e[0])
        return dataset.prefetch(tf.data.AUTOTUNE)
