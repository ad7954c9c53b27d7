"""Token classification (NER) data: CoNLL/BIO files → wordpiece-aligned `TaskFeatures` → word tags.

    sentences = read_conll("train.conll")
    label_names = ner_label_names(sentences)
    features = ner_features(sentences, tokenizer, label_names, sequence_length=128)
    model.fit(features.dataset(batch_size=32, shuffle=True), epochs=3)
    tags = word_predictions(model.predict(features.dataset(labels=False)), features)

Alignment (BERT's NER recipe): a word's label goes to its first wordpiece;
its other wordpieces, [CLS], [SEP] and padding get -100 and count neither in
the loss nor in the metrics. Words cut off by the sequence length, and the
rare word the tokenizer turns into no token at all (e.g. only control
characters), get "O" when predictions are mapped back; both are counted in
`features.info`.
"""

import dataclasses
import io
import os
import re

import keras
import numpy as np
import tensorflow as tf

from keras_bert._utf8 import read_utf8
from keras_bert.preprocessing.input_packer import BertInputPacker
from keras_bert.preprocessing.task_data.task_features import TaskFeatures

IGNORE_LABEL = -100
_TAG = re.compile(r"^(O|[BI]-\S+)$")
_MULTI = re.compile(r"[|,;]")
DOCSTART = "-DOCSTART-"


@dataclasses.dataclass
class TaggedSentence:
    """A sentence of words with one tag each (tags None when unlabelled).

    Attributes:
        words: list of strings.
        tags: list of BIO tag strings ("O", "B-PER", "I-PER", ...) or None.
        source: `"file:line"` of the sentence's first word.
    """

    words: list
    tags: list = None
    source: str = ""


def read_conll(path, word_column=0, tag_column=-1, labelled=True):
    """Reads a CoNLL-style file: one token per line, columns separated by whitespace.

    Sentences are separated by blank lines; `-DOCSTART-` lines (CoNLL-2003
    document breaks) are skipped. Every token line must have as many columns
    as the file's first one; tags must be BIO ("O", "B-TYPE", "I-TYPE"; an
    "I-" after "O" counts as the start of an entity, as in CoNLL-2003's IOB1).

    Args:
        path: the file.
        word_column: index of the word column.
        tag_column: index of the tag column (default: the last).
        labelled: False for files of words only (one column), for prediction.

    Returns:
        list of `TaggedSentence`.

    Raises:
        ValueError: naming `file:line`, for ragged columns (a token with more
            than one label, or a missing one), a tag that is not BIO, or a
            file without sentences.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No such file: {path}")
    sentences, words, tags, first = [], [], [], None
    num_columns, columns_line = None, None

    def close():
        nonlocal words, tags, first
        if words:
            sentences.append(TaggedSentence(words, tags if labelled else None, f"{path}:{first}"))
        words, tags, first = [], [], None

    # LF, CRLF and CR line ends alike; bad bytes are reported as path:line.
    with io.StringIO(read_utf8(path), newline=None) as f:
        for number, line in enumerate(f, start=1):
            fields = line.split()
            if not fields:
                close()
                continue
            if fields[0] == DOCSTART:
                close()
                continue
            if num_columns is None:
                num_columns, columns_line = len(fields), number
                if labelled and num_columns < 2:
                    raise ValueError(
                        f"{path}:{number}: one column only ({line.strip()!r}); a labelled CoNLL file needs a word "
                        "and a tag on every token line"
                    )
            if len(fields) != num_columns:
                raise ValueError(
                    f"{path}:{number}: {len(fields)} columns ({line.strip()!r}), but the file's first token line "
                    f"({path}:{columns_line}) has {num_columns}: ragged columns (a token with more than one label, "
                    "a missing label, or a word containing a space?)"
                )
            try:
                word = fields[word_column]
                tag = fields[tag_column] if labelled else None
            except IndexError:
                raise ValueError(f"{path}:{number}: no column {word_column} / {tag_column} in {fields}") from None
            if labelled and _MULTI.search(tag):
                raise ValueError(
                    f"{path}:{number}: tag {tag!r} holds more than one label; a token takes exactly one BIO tag"
                )
            if labelled and not _TAG.match(tag):
                raise ValueError(f"{path}:{number}: tag {tag!r} is not a BIO tag (O, B-TYPE or I-TYPE)")
            if first is None:
                first = number
            words.append(word)
            tags.append(tag)
    close()
    if not sentences:
        raise ValueError(f"{path}: no sentences")
    return sentences


def ner_label_names(sentences):
    """"O", then "B-T", "I-T" for every entity type T in `sentences` (sorted)."""
    types = sorted({tag[2:] for s in sentences for tag in s.tags if tag != "O"})
    return ["O"] + [f"{prefix}-{t}" for t in types for prefix in ("B", "I")]


def _ragged(values, dtype=None):
    """A ragged `(batch_size, None)` tensor from a list of lists, a dense 2-D tensor, or a ragged one."""
    if isinstance(values, tf.RaggedTensor):
        return values
    if isinstance(values, tf.Tensor):
        return tf.RaggedTensor.from_tensor(values) if values.shape.rank == 2 else values
    return tf.ragged.constant([list(v) for v in values], dtype=dtype, ragged_rank=1)


@keras.saving.register_keras_serializable(package="keras_bert")
class BertTokenClassifierPreprocessor:
    """Words and word tags → `BertTokenClassifier` inputs and wordpiece labels, in `tf.data` or eagerly.

    Args:
        tokenizer: a `BertTokenizer`.
        sequence_length: length of the packed sequences (words past it are dropped).
        label_names: the tag set in id order; needed to map string tags.

    Call arguments:
        x: words, a ragged string tensor of shape `(batch_size, None)` (or a
            list of word lists).
        y: optional tags of the same shape: int ids, or strings when
            `label_names` is given.
        sample_weight: optional word-level weights of the same shape, moved
            to the first wordpieces like the labels (other positions weigh 0).

    Returns:
        `x` (a dict of int32 arrays of shape `(batch_size, sequence_length)`),
        or `(x, y[, sample_weight])` with int32 labels of the same shape:
        the word's tag id on its first wordpiece, -100 everywhere else.
    """

    def __init__(self, tokenizer, sequence_length=128, label_names=None):
        if isinstance(tokenizer, dict):
            tokenizer = keras.saving.deserialize_keras_object(tokenizer)
        self.tokenizer = tokenizer
        self.sequence_length = sequence_length
        self.label_names = list(label_names) if label_names is not None else None
        self.packer = BertInputPacker.from_tokenizer(tokenizer, sequence_length)
        # Packs per-token codes (label + 1, or word index + 1; 0 = none) exactly
        # like the token ids, so labels and tokens are cut at the same place.
        self.code_packer = BertInputPacker(sequence_length, cls_token_id=0, sep_token_id=0, pad_token_id=0)
        self._table = None
        if self.label_names is not None:
            self._table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(
                    tf.constant(self.label_names), tf.range(len(self.label_names), dtype=tf.int32)
                ),
                default_value=-1,
            )

    def word_texts(self, words):
        """Ragged words `(batch, words)` → flat `(total_words,)`: each word as it is tokenized.

        With a tokenizer whose tokens hold the space before a word (byte-level
        BPE), every word but a sentence's first gets that space, so that the
        words are tokenized as they are in running text, where the tagger
        will read them (`tokenize_words`).
        """
        if not self.tokenizer.space_before_words:
            return words.flat_values
        place = tf.range(tf.size(words.flat_values, out_type=tf.int64)) - tf.gather(
            words.row_starts(), words.value_rowids()
        )
        return tf.where(place > 0, tf.strings.join([" ", words.flat_values]), words.flat_values)

    def _pieces(self, words):
        """Ragged ids `(batch, tokens)`; per token, its word's flat index and whether it starts the word."""
        words = _ragged(words)
        pieces = self.tokenizer.tokenize(self.word_texts(words))  # (total_words, pieces)
        ids = words.with_flat_values(pieces).merge_dims(1, 2)  # (batch, tokens)
        word_of_token = pieces.value_rowids()
        position = tf.range(tf.size(word_of_token, out_type=tf.int64)) - tf.gather(pieces.row_starts(), word_of_token)
        return words, ids, word_of_token, tf.equal(position, 0)

    def _codes(self, ids, first, values):
        """Packs `values + 1` at first pieces (0 elsewhere); returns packed values (-1 where none)."""
        codes = tf.where(first, tf.cast(values, tf.int32) + 1, 0)
        return self.code_packer(ids.with_flat_values(codes))["token_ids"] - 1

    def _tag_ids(self, tags):
        tags = _ragged(tags)
        if tags.dtype == tf.string:
            if self._table is None:
                raise ValueError("String tags need `label_names`.")
            ids = self._table.lookup(tags.flat_values)
            with tf.control_dependencies(
                [tf.debugging.assert_non_negative(ids, message="A tag is not one of `label_names`.")]
            ):
                ids = tf.identity(ids)
            return tags.with_flat_values(ids)
        return tf.cast(tags, tf.int32)

    def __call__(self, x, y=None, sample_weight=None):
        words, ids, word_of_token, first = self._pieces(x)
        packed = self.packer(ids)
        if y is None:
            return packed
        tags = self._tag_ids(y).flat_values
        labels = self._codes(ids, first, tf.gather(tags, word_of_token))
        labels = tf.where(labels < 0, IGNORE_LABEL, labels)
        if sample_weight is not None:
            weights = tf.cast(_ragged(sample_weight, tf.float32).flat_values, tf.float32)
            token_weight = tf.where(first, tf.gather(weights, word_of_token), 0.0)
            # The packed position of every token (its flat index), -1 for [CLS]/[SEP]/padding.
            every = tf.ones_like(first)
            position = self._codes(ids, every, tf.range(tf.size(word_of_token)))
            sample_weight = tf.where(position >= 0, tf.gather(token_weight, tf.maximum(position, 0)), 0.0)
        return keras.utils.pack_x_y_sample_weight(packed, labels, sample_weight)

    def word_index(self, words):
        """int32 `(batch_size, sequence_length)`: the word whose first wordpiece sits at each position, -1 elsewhere."""
        words, ids, word_of_token, first = self._pieces(words)
        local = word_of_token - tf.gather(words.row_starts(), tf.gather(words.value_rowids(), word_of_token))
        return self._codes(ids, first, local)

    def get_config(self):
        return {
            "tokenizer": keras.saving.serialize_keras_object(self.tokenizer),
            "sequence_length": self.sequence_length,
            "label_names": self.label_names,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def ner_features(sentences, tokenizer, label_names=None, sequence_length=128, batch_size=1024):
    """Model-ready features of tagged (or untagged) sentences.

    Args:
        sentences: list of `TaggedSentence`.
        tokenizer: a `BertTokenizer`.
        label_names: the tag set in id order (default `ner_label_names(sentences)`).
        sequence_length: packed length.
        batch_size: sentences preprocessed per call (memory only).

    Returns:
        `TaskFeatures` with `y` (int32 `(num_sentences, sequence_length)`,
        -100 at ignored positions; None when untagged) and `info`:
        `label_names`, `word_index` (see `BertTokenClassifierPreprocessor.word_index`),
        `num_words` per sentence, `num_truncated_sentences`, `num_truncated_words`,
        `num_words_without_tokens`.

    Raises:
        ValueError: naming `file:line`, for a tag outside `label_names`.
    """
    if not sentences:
        raise ValueError("No sentences to build features from.")
    tagged = all(s.tags is not None for s in sentences)
    if tagged:
        label_names = list(label_names) if label_names is not None else ner_label_names(sentences)
        index = {name: i for i, name in enumerate(label_names)}
        for sentence in sentences:
            for offset, tag in enumerate(sentence.tags):
                if tag not in index:
                    path, _, line = sentence.source.rpartition(":")
                    where = f"{path}:{int(line) + offset}" if line.isdigit() else sentence.source
                    raise ValueError(
                        f"{where}: tag {tag!r} is not one of the {len(label_names)} tags {label_names} "
                        "(the training data's)"
                    )
    preprocessor = BertTokenClassifierPreprocessor(tokenizer, sequence_length, label_names)
    parts = []
    for start in range(0, len(sentences), batch_size):
        chunk = sentences[start : start + batch_size]
        words = _ragged([s.words for s in chunk])
        part = {"word_index": preprocessor.word_index(words).numpy()}
        if tagged:
            tags = tf.ragged.constant([[index[t] for t in s.tags] for s in chunk], dtype=tf.int32, ragged_rank=1)
            x, y = preprocessor(words, tags)
            part["y"] = y.numpy()
        else:
            x = preprocessor(words)
        part.update({k: v.numpy() for k, v in x.items()})
        # Words that became no token at all, per sentence.
        lengths = tokenizer.tokenize(preprocessor.word_texts(words)).row_lengths()
        part["empty_words"] = tf.reduce_sum(tf.cast(words.with_flat_values(lengths == 0), tf.int32), axis=1).numpy()
        parts.append(part)
    x = {k: np.concatenate([p[k] for p in parts]) for k in ("token_ids", "segment_ids", "padding_mask")}
    word_index = np.concatenate([p["word_index"] for p in parts])
    empty = np.concatenate([p["empty_words"] for p in parts])
    num_words = np.asarray([len(s.words) for s in sentences], "int32")
    covered = np.asarray([np.count_nonzero(row >= 0) for row in word_index], "int32")
    truncated = num_words - covered - empty  # words past the sequence length
    info = {
        "label_names": label_names,
        "word_index": word_index,
        "num_words": num_words,
        "num_truncated_sentences": int(np.count_nonzero(truncated > 0)),
        "num_truncated_words": int(truncated.sum()),
        "num_words_without_tokens": int(empty.sum()),
    }
    y = np.concatenate([p["y"] for p in parts]) if tagged else None
    return TaskFeatures(x, y, info=info)


def word_predictions(logits, features, label_names=None, default="O"):
    """Token logits → one tag per word (the tag predicted on its first wordpiece).

    Args:
        logits: float array `(num_sentences, sequence_length, num_classes)`.
        features: the `TaskFeatures` the logits were predicted from (its
            `info["word_index"]` and `info["num_words"]`).
        label_names: the tag names (default `features.info["label_names"]`).
        default: the tag of words with no position (cut off, or tokenless).

    Returns:
        list of lists of tag strings, one per word of every sentence.
    """
    label_names = label_names or features.info["label_names"]
    if label_names is None:
        raise ValueError("`label_names` is needed to name the predicted tags.")
    predicted = np.argmax(np.asarray(logits), axis=-1)
    word_index, num_words = features.info["word_index"], features.info["num_words"]
    results = []
    for row, positions, n in zip(predicted, word_index, num_words):
        tags = [default] * int(n)
        for position in np.nonzero(positions >= 0)[0]:
            tags[positions[position]] = label_names[row[position]]
        results.append(tags)
    return results
