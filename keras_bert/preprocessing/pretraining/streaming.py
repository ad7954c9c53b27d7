"""Streaming stage: a corpus larger than memory → batches of NSP pairs, a bounded buffer at a time.

The in-memory path of `pretraining_dataset` reads and tokenizes the whole
corpus, then draws every epoch's pairs from it. With `streaming=True` nothing
is held whole; one epoch is one pass over the files:

- files: `tf.data` reads `stream_cycle_length` files at once and interleaves
  their documents (one from each in turn, deterministically); with `shuffle`
  the file order is permuted every epoch (seeded).
- worker share: worker `i` of `num_workers` reads a fixed part of the corpus
  (`worker_share`).
- tokenization: `stream_buffer_sentences` sentences per tokenizer call
  (`tokenize_documents`, the same ids as the in-memory path).
- pairs: each document's pairs follow `create_nsp_pairs`'s rule, except that
  a random B comes from one of the last `stream_window_documents` documents;
  the in-memory path draws it from the whole corpus.
- shuffle: pairs pass through a seeded shuffle buffer of
  `stream_shuffle_buffer` (the in-memory path permutes all of an epoch's pairs).
- packing: blocks of `4 * batch_size * max_sequences_per_pack` shuffled pairs
  are packed best-fit (`pack_pairs`).

Memory is bounded by these buffers and by the longest document (a whole file
with `document_boundary="file"`: split such files, or use "blank_line" or a
`document_separator`). The same seed gives the same batches; masks are drawn
in `tf.data` by the caller, as in dynamic mode.
"""

import collections
import random

import numpy as np
import tensorflow as tf

from keras_bert.preprocessing.pretraining.corpus import iter_file_documents, tokenize_documents
from keras_bert.preprocessing.pretraining.packing import pack_pairs, record_packing
from keras_bert.preprocessing.pretraining.seeds import batch_seed, int_seed
from keras_bert.preprocessing.pretraining.sentence_pairs import flat_document, window_pairs


def worker_share(files, num_workers=1, worker_index=0):
    """The part of the corpus worker `worker_index` of `num_workers` reads: `(files, document_shard)`.

    With at least as many files as workers, worker `i` reads files `i, i + n,
    i + 2n, ...` of `files` (in the order `expand_text_files` gives: sorted
    within a folder or glob), each whole: `document_shard` is None. With fewer
    files than workers, every worker reads every file and keeps documents
    `i, i + n, ...` of the interleaved stream: `document_shard` is `(n, i)`.
    Either way the workers' parts are disjoint and together the whole corpus.

    Args:
        files: the list of file paths.
        num_workers: `n`, the number of workers.
        worker_index: `i`, in `[0, n)`.

    Returns:
        `(files, document_shard)`.
    """
    if num_workers == 1:
        return list(files), None
    if len(files) >= num_workers:
        return list(files[worker_index::num_workers]), None
    return list(files), (num_workers, worker_index)


class StreamedPairBatches:
    """One epoch of pair batches at a time, read from the files as it goes.

    Args:
        files: the list of text file paths (see `expand_text_files`).
        tokenizer: a `BertTokenizer`.
        config: a `PretrainingDataConfig`.
        stats: a dict of corpus counts (`CORPUS_COUNTERS`), added to as files
            are read: after an epoch they count that epoch's part of the corpus
            (and every epoch read so far).

    `generator()` gives the generator function of `tf.data.Dataset.from_generator`:
    every call (a new pass over the dataset) is the next epoch and yields
    `(batch, seed)`, `batch` a dict of arrays shaped as the dynamic mode's
    pairs (or packed rows) and `seed` the int64 `(2,)` stateless seed of its masks.
    """

    def __init__(self, files, tokenizer, config, stats):
        self.files, self.document_shard = worker_share(files, config.num_workers, config.worker_index)
        self.tokenizer, self.config, self.stats = tokenizer, config, stats
        # A worker's own seed, so that workers do not draw the same pairs and masks.
        self.seed = config.seed if config.num_workers == 1 else f"{config.seed}:worker{config.worker_index}"
        self.rows_read = 0

    def generator(self):
        """The `from_generator` function. The first batch is read now: a corpus too small for one fails here."""
        first_epoch = self.batches(0)
        head = next(first_epoch, None)
        if head is None:
            self._too_small()
        epochs = iter(range(1 << 31))

        def generate():
            epoch = next(epochs)
            if epoch == 0:
                yield head
                yield from first_epoch
            else:
                yield from self.batches(epoch)

        return generate

    def _too_small(self):
        config, unit = self.config, "rows" if self.config.packing else "pairs"
        if not self.rows_read:
            shown = self.files if len(self.files) <= 3 else [*self.files[:3], "..."]
            raise ValueError(f"`files` ({len(self.files)}: {shown}) hold no usable text; counts: {self.stats}")
        raise ValueError(
            f"The corpus gives {self.rows_read} {unit}, fewer than `batch_size` {config.batch_size}"
            + (f" (worker {config.worker_index} of {config.num_workers})" if config.num_workers > 1 else "")
            + "; use a smaller batch_size or drop_remainder=False."
        )

    def batches(self, epoch):
        """Yields `(batch, seed)` of one epoch: `batch_size` rows each (the last one smaller unless dropped)."""
        config = self.config
        rows = self._shuffled_rows(epoch)
        if config.packing:
            rows = self._packed_rows(rows, epoch)
        group, index = [], 0
        for row in rows:
            if epoch == 0:
                self.rows_read += 1
            group.append(row)
            if len(group) == config.batch_size:
                yield _stack(group), batch_seed(self.seed, epoch, index)
                group, index = [], index + 1
        if group and not config.drop_remainder:
            yield _stack(group), batch_seed(self.seed, epoch, index)

    def documents(self, epoch):
        """Yields this worker's documents of one epoch, each a list of sentence strings, through `tf.data`."""
        config = self.config
        order = np.arange(len(self.files))
        if config.shuffle:
            # The run's seed, not the worker's: sharing documents needs every worker's stream in one order.
            order = np.random.default_rng([int_seed(config.seed), epoch]).permutation(len(self.files))
        paths = tf.data.Dataset.from_tensor_slices([self.files[k] for k in order])
        signature = tf.TensorSpec([None], tf.string)

        def file_documents(path):
            return tf.data.Dataset.from_generator(self._file_documents, args=(path,), output_signature=signature)

        # Sequential interleave (no parallel calls): deterministic, and one
        # document per open file is all that is held.
        documents = paths.interleave(file_documents, cycle_length=config.stream_cycle_length, block_length=1)
        if self.document_shard:
            documents = documents.shard(*self.document_shard)
        for document in documents.as_numpy_iterator():
            yield [sentence.decode("utf-8") for sentence in document]

    def _file_documents(self, path):
        config = self.config
        yield from iter_file_documents(
            path.decode("utf-8"), config.document_boundary, config.line_format, config.document_separator,
            max_line_chars=config.max_line_chars, stats=self.stats,
        )

    def tokenized(self, epoch):
        """Yields `(ids, word_starts)` per document, tokenized `stream_buffer_sentences` sentences at a time."""
        buffer, count = [], 0
        for document in self.documents(epoch):
            buffer.append(document)
            count += len(document)
            if count >= self.config.stream_buffer_sentences:
                yield from self._tokenize(buffer)
                buffer, count = [], 0
        if buffer:
            yield from self._tokenize(buffer)

    def _tokenize(self, documents):
        counts = {}
        token_docs, start_docs, counts = tokenize_documents(
            documents, self.tokenizer, max_sentence_tokens=self.config.sequence_length - 3,
            batch_size=self.config.stream_buffer_sentences, stats=counts,
        )
        for key, value in counts.items():
            self.stats[key] = self.stats.get(key, 0) + value
        return zip(token_docs, start_docs)

    def pairs(self, epoch):
        """Yields each document's pairs (dicts of arrays as `create_nsp_pairs`), B drawn from the window."""
        config, tokenizer = self.config, self.tokenizer
        rng = random.Random(f"nsp:{self.seed}:{epoch}")
        window = collections.deque(maxlen=config.stream_window_documents)
        for ids, starts in self.tokenized(epoch):
            window.append(flat_document(ids, starts))
            yield window_pairs(
                window, config.sequence_length, tokenizer.cls_token_id, tokenizer.sep_token_id,
                tokenizer.pad_token_id, rng, short_seq_prob=config.short_seq_prob,
                random_next_probability=config.random_next_probability,
            )

    def _shuffled_rows(self, epoch):
        """Yields single pairs (dicts of rows), through a seeded shuffle buffer when `shuffle`."""
        size = self.config.stream_shuffle_buffer
        rng = np.random.default_rng([int_seed(self.seed), epoch, 1])
        buffer = []
        for pairs in self.pairs(epoch):
            for k in range(len(pairs["nsp"])):
                row = {name: values[k] for name, values in pairs.items()}
                if not self.config.shuffle:
                    yield row
                elif len(buffer) < size:
                    buffer.append(row)
                else:
                    j = int(rng.integers(size))
                    buffer[j], row = row, buffer[j]
                    yield row
        for j in rng.permutation(len(buffer)):
            yield buffer[j]

    def _packed_rows(self, rows, epoch):
        """Yields packed rows, packing blocks of `4 * batch_size * S` pairs best-fit."""
        config, pad = self.config, self.tokenizer.pad_token_id
        block_size = 4 * config.batch_size * config.packing
        block, first = [], epoch == 0
        for row in rows:
            block.append(row)
            if len(block) == block_size:
                yield from self._pack_block(block, first, pad)
                block, first = [], False
        if block:
            yield from self._pack_block(block, first, pad)

    def _pack_block(self, block, record, pad):
        pairs = _stack(block)
        packed = pack_pairs(pairs, self.config.packing, pad)
        if record:  # the padding saved, as measured on the first block
            record_packing(self.stats, [pairs], [packed], pad)
        for k in range(len(packed["nsp"])):
            yield {name: values[k] for name, values in packed.items()}


def _stack(rows):
    """A list of dicts of same-shaped arrays → one dict of stacked arrays."""
    return {name: np.stack([row[name] for row in rows]) for name in rows[0]}
