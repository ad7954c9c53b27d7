"""`TaskPipeline`: what every task's text pipeline shares (batching, checks, dynamic padding).

A pipeline takes raw text and returns answers; one subclass per task model
(`TextClassifierPipeline`, `TokenClassifierPipeline`, ...). A single string
in gives a single result out; a list gives a list.
"""

import functools

import keras
import numpy as np

from keras_bert.preprocessing.input_packer import BertInputPacker

# Dynamic padding rounds each batch's length up to a multiple of this: every new length is a new
# trace of a compiled Keras predict step (TensorFlow, JAX, torch with `jit_compile`). See
# `_length_multiple` for the models that run any length without one.
_LENGTH_MULTIPLE = 8


def text_batch(value, what="texts"):
    """`(list, was_single)` for a string or a list of strings.

    Raises:
        ValueError: `value` is neither, or holds something other than strings.
    """
    if isinstance(value, str):
        return [value], True
    if isinstance(value, (bytes, bytearray)) or not hasattr(value, "__iter__"):
        raise ValueError(f"`{what}` must be a string or a list of strings. Received {type(value).__name__}")
    value = list(value)
    for i, v in enumerate(value):
        if not isinstance(v, str):
            raise ValueError(f"`{what}` must be a string or a list of strings. Item {i} is a {type(v).__name__}")
    return value, False


def check_texts(texts, what="text"):
    """Raises ValueError naming the first empty (or blank) text."""
    for i, text in enumerate(texts):
        if not text.strip():
            raise ValueError(f"{what} {i} is empty.")


def reading_report(tokens, windows, truncated_tokens, single):
    """What `input_stats` returns: `{"tokens", "windows", "truncated_tokens"}` per text (a dict for a single text).

    Args:
        tokens, windows, truncated_tokens: one number per text each.
        single: the input was one string.
    """
    stats = [
        {"tokens": int(n), "windows": int(w), "truncated_tokens": int(d)}
        for n, w, d in zip(tokens, windows, truncated_tokens)
    ]
    return stats[0] if single else stats


def _sequence_length(model, sequence_length):
    limit = model.backbone.max_sequence_length
    if sequence_length is None:
        return min(128, limit)
    if sequence_length > limit:
        raise ValueError(f"`sequence_length`={sequence_length} is longer than the model's max_sequence_length={limit}.")
    return sequence_length


def _length_multiple(model):
    """What `model`'s batch lengths are rounded up to: its own `length_multiple` (`RuntimeModel`: 1),
    1 for a Keras model run eagerly on torch (nothing is traced), else `_LENGTH_MULTIPLE`."""
    if hasattr(model, "length_multiple"):
        return model.length_multiple
    if keras.backend.backend() == "torch" and not getattr(model, "jit_compile", False):
        return 1
    return _LENGTH_MULTIPLE


class TaskPipeline:
    """The base of the text pipelines: a task model, its tokenizer and how to run the model.

    Args:
        model: a keras_bert task model.
        tokenizer: the `BertTokenizer` it was trained with.
        sequence_length: packed length (default 128, at most the model's).
        batch_size: sequences per forward pass.
    """

    def __init__(self, model, tokenizer, sequence_length=None, batch_size=32):
        self.model = model
        self.tokenizer = tokenizer
        self.sequence_length = _sequence_length(model, sequence_length)
        self.batch_size = batch_size

    @functools.cached_property
    def packer(self):
        """The tokenizer's `BertInputPacker` at `sequence_length`, with its pair layout (RoBERTa's `</s></s>`)."""
        return BertInputPacker.from_tokenizer(self.tokenizer, self.sequence_length)

    def _predict(self, x):
        return self.model.predict(x, batch_size=self.batch_size, verbose=0)

    def _predict_trimmed(self, x, per_token=False):
        """Like `_predict`, with dynamic padding: batches of similar length, cut to their longest row.

        Rows are sorted by length and each batch is cut to its longest row,
        rounded up to a multiple of `_LENGTH_MULTIPLE` (few shapes, so the
        compiled predict step is traced a few times, not once per batch), or
        not rounded where nothing is traced (`_length_multiple`). Real
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
        multiple = _length_multiple(self.model)
        parts = []
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            width = int(min(full, -(-max(int(lengths[rows].max()), 1) // multiple) * multiple))
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
