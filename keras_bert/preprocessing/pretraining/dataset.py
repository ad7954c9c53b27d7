"""Dataset stage: text files → a `tf.data.Dataset` of MLM + NSP batches, in two modes.

"dynamic": pairs made in Python once or every epoch, masks drawn anew every
epoch inside `tf.data`. "static": `dupe_factor` rounds masked once and written
to sharded TFRecords (reused while the settings match), then read back. Both
are seeded: the same seed gives the same batches. Either can stream the corpus
(`streaming=True`, see `streaming.py`) instead of holding it in memory.
"""

import hashlib
import json
import os
import tempfile

import numpy as np
import tensorflow as tf

from keras_bert.preprocessing.pretraining.config import PretrainingDataConfig
from keras_bert.preprocessing.pretraining.corpus import (
    CORPUS_COUNTERS,
    corpus_summary,
    expand_text_files,
    read_documents,
    tokenize_documents,
)
from keras_bert.preprocessing.pretraining.examples import (
    _example_features,  # one flat dict per batch, as the in-memory static writer stores
    create_pretraining_examples,
    to_model_inputs,
    without_sentence_task,
)
from keras_bert.preprocessing.pretraining.masking import BatchMasker
from keras_bert.preprocessing.pretraining.packing import (
    PACKING_STATS,
    pack_pairs,
    packing_summary,
    record_packing,
)
from keras_bert.preprocessing.pretraining.seeds import batch_seed, int_seed
from keras_bert.preprocessing.pretraining.sentence_pairs import create_sentence_rows
from keras_bert.preprocessing.pretraining.streaming import StreamedPairBatches
from keras_bert.preprocessing.pretraining.tfrecords import read_tfrecords, write_tfrecord_batches, write_tfrecords

# Above this many bytes of text, the in-memory path suggests `streaming=True`.
STREAMING_HINT_BYTES = 1 << 30


def pretraining_dataset(files, tokenizer, config=None, *, verbose=1, return_stats=False, **options):
    """Text files → batches for MLM + NSP pretraining (`BertPretrainer.fit`).

    Args:
        files: a path, a folder, a glob, or a list of them (see `expand_text_files`).
        tokenizer: a `BertTokenizer`.
        config: a `PretrainingDataConfig` (default `PretrainingDataConfig()`):
            sequence length, batch size, masking, mode, seed, document format,
            packing, ...; see its docstring for every field.
        verbose: 1 prints a summary of the corpus and skipped input, and a
            progress bar for static generation; 0 is silent.
        return_stats: also return the counts dict.
        **options: `PretrainingDataConfig` fields that override `config`,
            e.g. `sequence_length=64, masking="whole-word"`. An unknown name
            raises `TypeError`; a bad value `ValueError` naming it.

    Returns:
        A `tf.data.Dataset` (or `(dataset, stats)`) whose elements are
        `(x, y, sample_weight)`, with `B = batch_size`, `T = sequence_length`,
        `P = max_predictions_per_seq` and `S = max_sequences_per_pack`:
        `x = {"token_ids", "segment_ids", "padding_mask": int32 (B, T),
        "mask_positions": int32 (B, P)}`,
        `y = {"mlm": int32 (B, P) original ids, "nsp": int32 (B,)}`,
        `sample_weight = {"mlm": float32 (B, P) 1.0 real / 0.0 padding
        slots, "nsp": float32 (B,) all 1.0}` (Keras needs a weight for
        every output once one output has weights).
        `stats` counts lines, skipped long / invalid-UTF-8 / control-character
        lines, documents, empty and single-sentence documents, sentences,
        tokens and (static) examples.

        With `sentence_task="none"` (MLM only) there is no `nsp`: `y` and
        `sample_weight` are `{"mlm": ...}` and packed rows have no
        `nsp_positions`. With `"sop"`, `nsp` holds the sentence-order labels.

        With `pack_sequences`, `x` also holds `"sequence_ids"` (1..k for the
        k-th pair of a row, 0 for padding) and `"position_ids"` (restarting
        at 0 for every pair), int32 (B, T), and `"nsp_positions"`, int32
        (B, S), every pair's [CLS] position; `y["nsp"]` is int32 (B, S) and
        `sample_weight["nsp"]` float32 (B, S), 1.0 for real pairs and 0.0
        for empty slots. Masking picks real tokens of any pair in the row (at
        most `P` per row, never [CLS]/[SEP]/[PAD]). `stats` then also has
        `unpacked_rows`, `packed_rows`, `padding_fraction_unpacked` and
        `padding_fraction_packed` (of the first epoch's pairs in dynamic
        mode, of all rounds in static mode).

        With `streaming=True` the corpus is read a bounded buffer at a time
        (see `streaming.py`): the dataset is one pass over the files, of
        unknown length (repeat it; every pass is a new epoch: new file order,
        pairs and masks), and `stats` count what has been read so far.

    Examples:

    ```python
    dataset = pretraining_dataset("texts/*.txt", tokenizer, sequence_length=64, masking="whole-word")
    dataset = pretraining_dataset("shards/", tokenizer, streaming=True).repeat()  # larger than memory
    config = PretrainingDataConfig(sequence_length=64, mode="static", output_dir="records")
    dataset = pretraining_dataset("texts/", tokenizer, config, seed=1)
    ```
    """
    config = _resolve_config(config, options)
    paths = _listed_files(files)
    if config.streaming:
        dataset, stats = _streamed(files, paths, tokenizer, config, verbose)
        return (dataset, stats) if return_stats else dataset
    _suggest_streaming(paths, verbose)
    token_docs, start_docs, stats = _tokenized_corpus(files, tokenizer, config)
    if verbose:
        print(f"pretraining_dataset: {corpus_summary(stats)}")
    if config.mode == "static":
        dataset = _static_dataset(files, token_docs, start_docs, tokenizer, config, stats, verbose)
    else:
        dataset = _dynamic_dataset(token_docs, start_docs, tokenizer, config, stats)
    if config.sentence_task == "none":
        dataset = dataset.map(without_sentence_task)
    if config.pack_sequences and verbose:
        print(f"pretraining_dataset: {packing_summary(stats)}")
    return (dataset, stats) if return_stats else dataset


def _resolve_config(config, options):
    """`config` (default `PretrainingDataConfig()`) with `options` applied."""
    if config is None:
        config = PretrainingDataConfig()
    elif not isinstance(config, PretrainingDataConfig):
        raise TypeError(
            f"`config` must be a PretrainingDataConfig; received {config!r} "
            "(pass options such as `sequence_length=` by name)"
        )
    return config.replace(**options) if options else config


def _listed_files(files):
    """The text files `files` names (see `expand_text_files`); an error naming `files` when there are none."""
    paths = expand_text_files(files)
    if not paths:
        raise ValueError(f"`files` names no text files; received {files!r}")
    return paths


def _suggest_streaming(paths, verbose):
    size = sum(os.path.getsize(p) for p in paths)
    if verbose and size > STREAMING_HINT_BYTES:
        print(
            f"pretraining_dataset: the corpus has {size / 2**30:.1f} GiB of text and will be held in memory; "
            "streaming=True (--streaming) reads it a bounded buffer at a time"
        )


def _streamed(files, paths, tokenizer, config, verbose):
    """The streaming path: `(dataset, stats)`, the corpus read as batches are drawn (see `streaming.py`)."""
    stats = {key: 0 for key in CORPUS_COUNTERS}
    if config.mode == "static":
        # Every pair is written; read_tfrecords batches (and drops) them.
        stream = StreamedPairBatches(paths, tokenizer, config.replace(drop_remainder=False), stats)
    else:
        stream = StreamedPairBatches(paths, tokenizer, config, stats)
    if verbose:
        share = f" (worker {config.worker_index} of {config.num_workers})" if config.num_workers > 1 else ""
        print(f"pretraining_dataset: streaming {len(stream.files)} of {len(paths)} files{share}")
    if config.mode == "static":
        dataset = _static_dataset(files, None, None, tokenizer, config, stats, verbose, stream=stream)
    else:
        pairs = tf.data.Dataset.from_generator(stream.generator(), output_signature=_batch_signature(config))
        dataset = _masked(pairs, tokenizer, config)
        if verbose:
            print(f"pretraining_dataset: first batch after {corpus_summary(stats)}")
    if config.pack_sequences and verbose and "packed_rows" in stats:
        print(f"pretraining_dataset: {packing_summary(stats)} (first block)")
    return dataset, stats


def _tokenized_corpus(files, tokenizer, config):
    """`(token_documents, word_start_documents, stats)` of the corpus; an error if nothing is usable."""
    documents, stats = read_documents(
        files, config.document_boundary, config.line_format, config.document_separator,
        max_line_chars=config.max_line_chars,
    )
    token_docs, start_docs, stats = tokenize_documents(
        documents, tokenizer, max_sentence_tokens=config.sequence_length - 3, stats=stats
    )
    if not token_docs:
        raise ValueError(f"`files` {files!r} hold no usable text; counts: {stats}")
    return token_docs, start_docs, stats


class _EpochPairs:
    """`epoch_pairs(epoch)`: that epoch's pairs (packed rows when packing), one epoch kept at a time.

    Without `resample_pairs_each_epoch` every epoch gets epoch 0's pairs. With
    packing, epoch 0's rows and padding before and after go into `stats`.
    """

    def __init__(self, token_docs, start_docs, tokenizer, config, stats):
        self.token_docs, self.start_docs = token_docs, start_docs
        self.tokenizer, self.config, self.stats = tokenizer, config, stats
        self.cache = {}

    def __call__(self, epoch):
        key = epoch if self.config.resample_pairs_each_epoch else 0
        if key not in self.cache:
            self.cache.clear()
            self.cache[key] = self._make(key)
        return self.cache[key]

    def _make(self, key):
        tokenizer, config = self.tokenizer, self.config
        pairs = create_sentence_rows(
            self.token_docs, config.sequence_length, tokenizer.cls_token_id, tokenizer.sep_token_id,
            tokenizer.pad_token_id, word_starts=self.start_docs, sentence_task=config.sentence_task,
            short_seq_prob=config.short_seq_prob,
            random_next_probability=config.random_next_probability, seed=f"{config.seed}:{key}",
            # Packed full-sentence rows: one document per row before packing, so packed documents never attend
            # to each other.
            cross_documents=not config.packing,
        )
        if not config.packing:
            return pairs
        packed = pack_pairs(pairs, config.packing, tokenizer.pad_token_id)
        if key == 0:
            record_packing(self.stats, [pairs], [packed], tokenizer.pad_token_id)
        return packed


def _dynamic_dataset(token_docs, start_docs, tokenizer, config, stats):
    """Pairs from Python (`_EpochPairs`), masked inside `tf.data` with per-batch seeds."""
    epoch_pairs = _EpochPairs(token_docs, start_docs, tokenizer, config, stats)
    num_batches, rows_per_epoch = _batches_per_epoch(len(epoch_pairs(0)["nsp"]), config)
    generate = _batch_generator(epoch_pairs, config, rows_per_epoch)
    dataset = tf.data.Dataset.from_generator(generate, output_signature=_batch_signature(config))
    # Every epoch has as many batches as the first, so the dataset has a
    # known length: Keras then shows steps, and its TensorFlow trainer does not
    # run past the end (with an unknown length, Keras 3.15 on TF averaged an
    # empty extra step into the per-output loss metrics).
    dataset = dataset.apply(tf.data.experimental.assert_cardinality(num_batches))
    return _masked(dataset, tokenizer, config)


def _masked(dataset, tokenizer, config):
    """`(batch of pairs, seed)` elements → masked `(x, y, sample_weight)` batches, in `tf.data`."""
    masker = BatchMasker(tokenizer, **config.masking_options)

    def mask(batch, seed):
        masked = masker(batch, seed)
        return to_model_inputs(
            masked, batch["segment_ids"], batch["nsp"], tokenizer.pad_token_id,
            packing=batch if config.packing else None,
        )

    return dataset.map(mask, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).prefetch(
        tf.data.AUTOTUNE
    )


def _batches_per_epoch(first_count, config):
    """`(num_batches, rows_per_epoch)` from the first epoch's `first_count` rows."""
    batch_size = config.batch_size
    if config.drop_remainder:
        num_batches, needed = first_count // batch_size, first_count // batch_size * batch_size
    else:
        num_batches, needed = -(-first_count // batch_size), first_count
    if num_batches == 0:
        raise ValueError(
            f"The corpus gives {first_count} pairs, fewer than `batch_size` {batch_size}; "
            "use a smaller batch_size or drop_remainder=False."
        )
    return num_batches, needed


def _batch_generator(epoch_pairs, config, rows_per_epoch):
    """A generator function yielding one epoch of `(batch of pairs, int64 (2,) mask seed)`."""
    epochs = iter(range(1 << 31))

    def generate():
        # A fresh iterator (a new epoch) calls this again: new pairs/masks.
        epoch = next(epochs)
        pairs = epoch_pairs(epoch)
        count = len(pairs["nsp"])
        order = np.arange(count)
        if config.shuffle:
            order = np.random.default_rng([int_seed(config.seed), epoch]).permutation(count)
        # Another epoch's pairs may number a few more or fewer: cut or wrap.
        order = np.resize(order, rows_per_epoch)
        for b, begin in enumerate(range(0, rows_per_epoch, config.batch_size)):
            rows = order[begin : begin + config.batch_size]
            batch = {k: v[rows] for k, v in pairs.items()}
            yield batch, batch_seed(config.seed, epoch, b)

    return generate


def _batch_signature(config):
    """`output_signature` of `_batch_generator`: pairs (or packed rows) and a seed."""
    T, S = config.sequence_length, config.packing
    batch_dim = config.batch_size if config.drop_remainder else None
    pairs = {
        "token_ids": tf.TensorSpec([batch_dim, T], tf.int32),
        "segment_ids": tf.TensorSpec([batch_dim, T], tf.int32),
        "word_starts": tf.TensorSpec([batch_dim, T], tf.int8),
        "nsp": tf.TensorSpec([batch_dim], tf.int32),
    }
    if S:
        pairs.update(
            {
                "sequence_ids": tf.TensorSpec([batch_dim, T], tf.int32),
                "position_ids": tf.TensorSpec([batch_dim, T], tf.int32),
                "nsp": tf.TensorSpec([batch_dim, S], tf.int32),
                "nsp_positions": tf.TensorSpec([batch_dim, S], tf.int32),
                "nsp_weights": tf.TensorSpec([batch_dim, S], tf.float32),
            }
        )
    return pairs, tf.TensorSpec([2], tf.int64)


def _static_dataset(files, token_docs, start_docs, tokenizer, config, stats, verbose, stream=None):
    """TFRecords in `config.output_dir` (reused when their settings match), read back as batches.

    With a `StreamedPairBatches` `stream`, the examples are written as they are made (`token_docs` unused).
    """
    settings = _static_settings(files, tokenizer, config)
    output_dir = config.output_dir
    if output_dir is None:
        output_dir = tempfile.mkdtemp(prefix="keras_bert_pretraining_")
    meta = _matching_metadata(output_dir, settings)
    if meta:
        paths = meta["paths"]
        stats["examples"] = meta["examples"]
        stats.update(meta.get("packing", {}))
        if verbose:
            print(f"pretraining_dataset: reusing {len(paths)} TFRecord files in {output_dir}")
    elif stream is not None:
        paths = _write_streamed_examples(stream, tokenizer, config, settings, output_dir, stats, verbose)
    else:
        paths = _write_examples(token_docs, start_docs, tokenizer, config, settings, output_dir, stats, verbose)
    return read_tfrecords(
        paths, config.sequence_length, config.num_predictions, config.batch_size, shuffle=config.shuffle,
        seed=config.seed, drop_remainder=config.drop_remainder, num_examples=stats["examples"],
        max_sequences_per_pack=config.packing,
    )


def _static_settings(files, tokenizer, config):
    """What the TFRecords depend on; equal settings in `metadata.json` let a later run reuse them."""
    settings = {
        "files": [[p, os.path.getsize(p), os.path.getmtime(p)] for p in expand_text_files(files)],
        "vocabulary": hashlib.sha256("\n".join(tokenizer.get_vocabulary()).encode()).hexdigest(),
        "tokenizer": {k: v for k, v in tokenizer.get_config().items() if k != "vocabulary"},
        "sequence_length": config.sequence_length,
        "max_predictions_per_seq": config.num_predictions,
        "masking": config.masking,
        "masking_rate": config.masking_rate,
        "short_seq_prob": config.short_seq_prob,
        "random_next_probability": config.random_next_probability,
        "dupe_factor": config.dupe_factor,
        "seed": str(config.seed),
        "num_shards": config.num_shards,
        "format": 1,
    }
    if config.packing:
        # Only when packing: unpacked settings (and so reuse of existing files) stay as they were.
        settings["max_sequences_per_pack"] = config.packing
    # Likewise the sentence task and span options, only when they shape the examples.
    if config.sentence_task != "nsp":
        settings["sentence_task"] = config.sentence_task
    if config.masking == "span":
        settings.update(span_p=config.span_p, max_span_length=config.max_span_length)
    if config.masking == "ngram":
        settings["max_ngram"] = config.max_ngram
    if config.streaming:  # likewise: other pairs (window, buffers), so other files
        settings["streaming"] = {k: getattr(config, k) for k in _STREAMING_FIELDS}
    return settings


_STREAMING_FIELDS = ("stream_cycle_length", "stream_buffer_sentences", "stream_window_documents",
                     "stream_shuffle_buffer", "shuffle", "num_workers", "worker_index")


def _matching_metadata(output_dir, settings):
    """The `metadata.json` of `output_dir` if it was written with `settings` and its files exist, else None."""
    meta_path = os.path.join(output_dir, "metadata.json")
    if not os.path.isfile(meta_path):
        return None
    with open(meta_path, encoding="utf-8") as f:
        meta = json.load(f)
    if meta and meta.get("settings") == json.loads(json.dumps(settings)) and all(
        os.path.isfile(p) for p in meta["paths"]
    ):
        return meta
    return None


def _write_examples(token_docs, start_docs, tokenizer, config, settings, output_dir, stats, verbose):
    """Makes the static examples, writes them and `metadata.json`; returns the TFRecord paths."""
    packing = config.packing
    examples = create_pretraining_examples(
        token_docs, tokenizer, config.sequence_length, word_starts=start_docs, masking=config.masking,
        masking_rate=config.masking_rate, max_predictions_per_seq=config.num_predictions,
        short_seq_prob=config.short_seq_prob, random_next_probability=config.random_next_probability,
        dupe_factor=config.dupe_factor, seed=config.seed, progress=bool(verbose),
        sentence_task=config.sentence_task, span_p=config.span_p, max_span_length=config.max_span_length,
        max_ngram=config.max_ngram,
        **({"pack_sequences": True, "max_sequences_per_pack": packing, "stats": stats} if packing else {}),
    )
    stats["examples"] = int(len(examples["nsp"]))
    _check_one_batch(stats["examples"], config)
    paths = write_tfrecords(examples, output_dir, config.num_shards, progress=bool(verbose))
    _write_metadata(output_dir, settings, paths, stats, config, verbose)
    return paths


def _write_streamed_examples(stream, tokenizer, config, settings, output_dir, stats, verbose):
    """Static mode over a stream: `dupe_factor` passes, each masked and written batch by batch."""
    pairs = tf.data.Dataset.from_generator(
        stream.generator(), output_signature=_batch_signature(config.replace(drop_remainder=False))
    )
    masked = _masked(pairs, tokenizer, config)

    def rounds():
        for _ in range(config.dupe_factor):  # every pass over `masked` is the stream's next epoch
            for x, y, weights in masked.as_numpy_iterator():
                yield _example_features(x, y, weights)

    paths, stats["examples"] = write_tfrecord_batches(rounds(), output_dir, config.num_shards, progress=bool(verbose))
    try:
        _check_one_batch(stats["examples"], config)
    except ValueError:
        for path in paths:  # nothing is left behind for a later run to reuse
            os.remove(path)
        raise
    _write_metadata(output_dir, settings, paths, stats, config, verbose)
    return paths


def _check_one_batch(num_examples, config):
    if config.drop_remainder and num_examples < config.batch_size:
        raise ValueError(
            f"The corpus gives {num_examples} examples, fewer than `batch_size` {config.batch_size}; "
            "use a smaller batch_size or drop_remainder=False."
        )


def _write_metadata(output_dir, settings, paths, stats, config, verbose):
    meta = {"settings": settings, "paths": paths, "examples": stats["examples"]}
    if config.packing:
        meta["packing"] = {k: stats[k] for k in PACKING_STATS}
    with open(os.path.join(output_dir, "metadata.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=1)
    if verbose:
        print(f"pretraining_dataset: wrote {stats['examples']} examples to {output_dir}")
