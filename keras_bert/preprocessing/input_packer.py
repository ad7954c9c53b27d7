"""Packs one or two token segments into BERT's fixed-length model inputs."""

import keras
import tensorflow as tf
import tensorflow_text as tf_text  # RoundRobinTrimmer

TRUNCATE_OPTIONS = ("longest_first", "round_robin")


def longest_first_lengths(length_a, length_b, budget):
    """How many tokens of each segment Hugging Face's "longest_first" keeps.

    This is the rule of Hugging Face `tokenizers` (what transformers'
    `BertTokenizer` runs since v5): if only the longer segment must shrink,
    it gets what the shorter leaves over; if both must, the shorter gets
    `budget // 2` and the longer the rest; on a tie the second segment counts
    as the longer. (The legacy Python tokenizer removes one token at a time
    and differs on ties by one token.)

    Args:
        length_a: int tensor of shape `(batch_size,)`.
        length_b: int tensor of shape `(batch_size,)`.
        budget: int, tokens available to both segments together.

    Returns:
        `(keep_a, keep_b)`, int tensors of shape `(batch_size,)`.
    """
    short = tf.minimum(length_a, length_b)
    long = tf.maximum(length_a, length_b)
    keep_long = tf.where(short > budget, short, tf.maximum(short, budget - short))
    both = short + keep_long > budget
    keep_short = tf.where(both, budget // 2, short)
    keep_long = tf.where(both, budget // 2 + budget % 2, keep_long)
    a_is_long = length_a > length_b
    keep_a = tf.minimum(length_a, tf.where(a_is_long, keep_long, keep_short))
    keep_b = tf.minimum(length_b, tf.where(a_is_long, keep_short, keep_long))
    fits = length_a + length_b <= budget
    return tf.where(fits, length_a, keep_a), tf.where(fits, length_b, keep_b)


@keras.saving.register_keras_serializable(package="keras_bert")
class BertInputPacker:
    """Packs token ids into `[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`.

    Segments longer than the budget (`sequence_length - 2` for one segment,
    `- 3` for two) are cut from their end: `"longest_first"` trims the longer
    segment token by token exactly like Hugging Face's
    `tokenizer(a, b, truncation="longest_first", max_length=...)`;
    `"round_robin"` (keras-hub's default) gives each segment a token in turn.

    All outputs are int32 — `padding_mask` too, because a bool input breaks
    `tf.distribute.MirroredStrategy` when it builds the model.

    Args:
        sequence_length: length of the packed sequences.
        cls_token_id: id of `[CLS]`.
        sep_token_id: id of `[SEP]`.
        pad_token_id: id of `[PAD]`.
        truncate: `"longest_first"` or `"round_robin"`.
        tokenizer: optional `BertTokenizer` (or `SentencePieceTokenizer`,
            `BytePairTokenizer`); with it, the packer also accepts raw
            strings (see `from_tokenizer`).
        separators_between: separators between two segments: 1 for BERT and
            ALBERT (`[CLS] A [SEP] B [SEP]`), 2 for RoBERTa
            (`<s> A </s></s> B </s>`).
        typed_segments: give the second segment's tokens segment id 1 (BERT,
            ALBERT); `False` leaves every segment id 0 (RoBERTa has one type).

    Call arguments:
        segment_a: int ids of shape `(num_tokens,)` (one example) or
            `(batch_size, None)` (ragged or dense), or strings of shape `()` /
            `(batch_size,)` when the packer has a tokenizer.
        segment_b: optional second segment, batched like `segment_a`.

    Returns:
        A dict with `"token_ids"`, `"segment_ids"` and `"padding_mask"` (1 =
        real token, 0 = padding), int32 tensors of shape `(sequence_length,)`
        or `(batch_size, sequence_length)`.

    Examples:

    >>> packer = BertInputPacker.from_tokenizer(tokenizer, sequence_length=8)
    >>> packer(["The cat sat."], ["It purred."])["token_ids"]  # 4 + 4 tokens → 2 + 3
    <tf.Tensor: shape=(1, 8), dtype=int32, numpy=
    array([[  101,  1996,  4937,   102,  2009, 16405, 20529,   102]], dtype=int32)>
    """

    def __init__(
        self,
        sequence_length,
        cls_token_id,
        sep_token_id,
        pad_token_id,
        truncate="longest_first",
        tokenizer=None,
        separators_between=1,
        typed_segments=True,
    ):
        if separators_between not in (1, 2):
            raise ValueError(f"`separators_between` must be 1 or 2; received {separators_between!r}")
        if not isinstance(sequence_length, int) or sequence_length < 3:
            raise ValueError(
                "`sequence_length` must be an int >= 3 (room for [CLS], [SEP] and a "
                f"token); received {sequence_length!r}"
            )
        if truncate not in TRUNCATE_OPTIONS:
            raise ValueError(
                f"`truncate` must be one of {TRUNCATE_OPTIONS}; received {truncate!r}"
            )
        for name, value in (
            ("cls_token_id", cls_token_id),
            ("sep_token_id", sep_token_id),
            ("pad_token_id", pad_token_id),
        ):
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"`{name}` must be a non-negative int; received {value!r}")
        if isinstance(tokenizer, dict):
            tokenizer = keras.saving.deserialize_keras_object(tokenizer)
        self.sequence_length = sequence_length
        self.cls_token_id = cls_token_id
        self.sep_token_id = sep_token_id
        self.pad_token_id = pad_token_id
        self.truncate = truncate
        self.tokenizer = tokenizer
        self.separators_between = separators_between
        self.typed_segments = bool(typed_segments)

    @classmethod
    def from_tokenizer(cls, tokenizer, sequence_length, truncate="longest_first"):
        """A packer that takes raw strings: text (pairs) → model inputs.

        Args:
            tokenizer: a `BertTokenizer`, `SentencePieceTokenizer` or
                `BytePairTokenizer`; its special token ids and its pair
                layout (`separators_between`, `typed_segments`) are used.
            sequence_length: length of the packed sequences.
            truncate: `"longest_first"` or `"round_robin"`.
        """
        return cls(
            sequence_length,
            cls_token_id=tokenizer.cls_token_id,
            sep_token_id=tokenizer.sep_token_id,
            pad_token_id=tokenizer.pad_token_id,
            truncate=truncate,
            tokenizer=tokenizer,
            separators_between=getattr(tokenizer, "separators_between", 1),
            typed_segments=getattr(tokenizer, "typed_segments", True),
        )

    def get_config(self):
        config = {
            "sequence_length": self.sequence_length,
            "cls_token_id": self.cls_token_id,
            "sep_token_id": self.sep_token_id,
            "pad_token_id": self.pad_token_id,
            "truncate": self.truncate,
            "tokenizer": None,
            "separators_between": self.separators_between,
            "typed_segments": self.typed_segments,
        }
        if self.tokenizer is not None:
            config["tokenizer"] = keras.saving.serialize_keras_object(self.tokenizer)
        return config

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    @tf.autograph.experimental.do_not_convert  # no tensor-dependent Python control flow
    def __call__(self, segment_a, segment_b=None):
        segments = [segment_a] if segment_b is None else [segment_a, segment_b]
        segments = [self._to_ids(s) for s in segments]
        ranks = {s.shape.rank for s in segments}
        if len(ranks) != 1 or ranks.pop() not in (1, 2):
            raise ValueError(
                "Segments must all be one example (rank 1) or all a batch (rank 2); "
                f"received shapes {[s.shape for s in segments]}"
            )
        unbatched = segments[0].shape.rank == 1
        if unbatched:
            segments = [s[tf.newaxis] for s in segments]
        segments = [
            s if isinstance(s, tf.RaggedTensor) else tf.RaggedTensor.from_tensor(s)
            for s in segments
        ]
        if len(segments) == 2:
            segments = self._check_pairs(segments)
        segments = self._trim(segments)
        outputs = self._pack(segments)
        if unbatched:
            outputs = {k: v[0] for k, v in outputs.items()}
        return outputs

    @staticmethod
    def _check_pairs(segments):
        """Both segments must hold the same number of examples (a pair needs both sides)."""
        rows_a, rows_b = segments[0].nrows(), segments[1].nrows()
        static_a, static_b = tf.get_static_value(rows_a), tf.get_static_value(rows_b)
        message = "every pair needs both texts: `segment_a` and `segment_b` must hold the same number of examples"
        if static_a is not None and static_b is not None:
            if static_a != static_b:
                raise ValueError(f"{message}; received {static_a} and {static_b}")
            return segments
        # Batch sizes known only at run time (inside tf.data): check there.
        check = tf.debugging.assert_equal(rows_a, rows_b, message=message)
        with tf.control_dependencies([check]):
            return [segments[0].with_values(tf.identity(segments[0].values)), segments[1]]

    def _to_ids(self, segment):
        if not isinstance(segment, tf.RaggedTensor):
            segment = tf.convert_to_tensor(segment)
        if segment.dtype == tf.string:
            if self.tokenizer is None:
                raise ValueError(
                    "Received strings but this packer has no tokenizer; build it with "
                    "`BertInputPacker.from_tokenizer(tokenizer, sequence_length)` or "
                    "pass token ids."
                )
            segment = self.tokenizer.tokenize(segment)
        if not segment.dtype.is_integer:
            raise ValueError(f"Segments must hold int ids; received dtype {segment.dtype}")
        return tf.cast(segment, tf.int32)

    def _pack(self, segments):
        """Trimmed ragged segments → dense `[CLS] A [SEP] (B [SEP])` + pads.

        Scatters every id to its final column: a handful of dense ops, where
        ragged concatenation costs hundreds of ops to trace in every tf.data
        pipeline.
        """
        batch_size = tf.cast(segments[0].nrows(), tf.int32)
        columns = tf.range(self.sequence_length)[tf.newaxis, :]
        batch_rows = tf.range(batch_size)
        indices = [tf.stack([batch_rows, tf.zeros_like(batch_rows)], axis=1)]
        updates = [tf.fill([batch_size], self.cls_token_id)]
        segment_ids = tf.zeros([batch_size, self.sequence_length], tf.int32)
        start = tf.ones([batch_size], tf.int32)  # first column after [CLS]
        for index, segment in enumerate(segments):
            if index > 0 and self.separators_between == 2:
                # RoBERTa's second </s> opens segment B.
                indices.append(tf.stack([batch_rows, start], axis=1))
                updates.append(tf.fill([batch_size], self.sep_token_id))
                start = start + 1
            rows = tf.cast(segment.value_rowids(), tf.int32)
            row_starts = tf.cast(segment.row_starts(), tf.int32)
            column = tf.range(tf.size(rows)) - tf.gather(row_starts, rows) + tf.gather(start, rows)
            sep_column = start + tf.cast(segment.row_lengths(), tf.int32)
            indices += [tf.stack([rows, column], axis=1), tf.stack([batch_rows, sep_column], axis=1)]
            updates += [segment.values, tf.fill([batch_size], self.sep_token_id)]
            if index > 0 and self.typed_segments:
                inside = (columns >= start[:, tf.newaxis]) & (columns <= sep_column[:, tf.newaxis])
                segment_ids = tf.where(inside, index, segment_ids)
            start = sep_column + 1
        token_ids = tf.tensor_scatter_nd_update(
            tf.fill([batch_size, self.sequence_length], self.pad_token_id),
            tf.concat(indices, axis=0),
            tf.concat(updates, axis=0),
        )
        return {
            "token_ids": token_ids,
            "segment_ids": segment_ids,
            "padding_mask": tf.cast(columns < start[:, tf.newaxis], tf.int32),
        }

    def _trim(self, segments):
        budget = self.sequence_length - 1 - len(segments) - (self.separators_between - 1) * (len(segments) - 1)
        if self.truncate == "round_robin":
            return tf_text.RoundRobinTrimmer(budget).trim(segments)
        lengths = [tf.cast(s.row_lengths(), tf.int32) for s in segments]
        if len(segments) == 1:
            keep = [tf.minimum(lengths[0], budget)]
        else:
            keep = longest_first_lengths(lengths[0], lengths[1], budget)
        trimmed = []
        for segment, n in zip(segments, keep):
            # Keep the first n[row] values of each row (cheaper to trace than
            # ragged boolean_mask).
            rows = segment.value_rowids()
            position = tf.range(tf.size(rows, out_type=rows.dtype)) - tf.gather(segment.row_starts(), rows)
            kept = position < tf.cast(tf.gather(n, rows), rows.dtype)
            trimmed.append(
                tf.RaggedTensor.from_row_lengths(
                    tf.boolean_mask(segment.values, kept), tf.cast(n, rows.dtype), validate=False
                )
            )
        return trimmed
