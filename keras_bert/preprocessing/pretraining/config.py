"""PretrainingDataConfig: every choice that shapes pretraining batches, in one object.

`pretraining_dataset(files, tokenizer, config)` reads it, and the pretraining job
(`keras_bert.jobs.pretrain`) takes the same object, so a new data option is added
in one place instead of being mirrored argument by argument.
"""

import dataclasses

DOCUMENT_BOUNDARIES = ("chapter", "file", "blank_line")
LINE_FORMATS = ("wrapped", "sentence_per_line", "paragraph_per_line")
MASKING = ("token", "whole-word")
MODES = ("dynamic", "static")


def default_max_predictions(sequence_length, masking_rate=0.15):
    """`round(masking_rate * sequence_length)`: 19 for 128, 77 for 512."""
    return max(1, int(round(masking_rate * sequence_length)))


def check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"`{name}` must be one of {choices}; received {value!r}")


def check_positive_int(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"`{name}` must be a positive int; received {value!r}")


def check_probability(name, value):
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"`{name}` must be in [0, 1]; received {value!r}")


def check_sequence_length(sequence_length):
    # [CLS] A [SEP] B [SEP] with one token each in A and B.
    if not isinstance(sequence_length, int) or sequence_length < 5:
        raise ValueError(f"`sequence_length` must be an int >= 5; received {sequence_length!r}")


def check_masking_rate(masking_rate):
    if not 0.0 < masking_rate < 1.0:
        raise ValueError(f"`masking_rate` must be in (0, 1); received {masking_rate!r}")


@dataclasses.dataclass(frozen=True)
class PretrainingDataConfig:
    """How text becomes MLM + NSP batches (see `pretraining_dataset` for each stage).

    Corpus (`read_documents`):
        document_boundary: "chapter", "file" or "blank_line".
        line_format: "wrapped", "sentence_per_line" or "paragraph_per_line".
        document_separator: optional line (compared after stripping) that ends a document.
        max_line_chars: longer lines are skipped (and counted).
    Sentence pairs (`create_nsp_pairs`):
        sequence_length: `T`, the length of every example.
        short_seq_prob: chance of a shorter random target length for a pair.
        random_next_probability: chance that B is a random segment (label 1).
        resample_pairs_each_epoch: dynamic mode: new pairs every epoch.
    Packing (`pack_pairs`):
        pack_sequences: several short pairs per row (train a backbone built
            with `packed_inputs=True`).
        max_sequences_per_pack: `S`, the most pairs in one packed row.
    Masking (`mask_tokens`):
        masking: "token" or "whole-word".
        masking_rate: share of the real tokens to predict.
        max_predictions_per_seq: `P` (default `round(0.15 * T)`).
    Dataset:
        batch_size: `B`.
        mode: "dynamic" (masks drawn anew every epoch in tf.data) or "static"
            (`dupe_factor` rounds masked once and written as TFRecords).
        dupe_factor, output_dir, num_shards: static mode.
        shuffle: shuffle examples every epoch (seeded).
        drop_remainder: drop the last smaller batch (fixed shapes for XLA and distribution).
        seed: int or str; the same seed gives the same batches.
    Streaming (`streaming.StreamedPairBatches`, for corpora larger than memory):
        streaming: read the files through `tf.data` a bounded buffer at a
            time instead of holding the tokenized corpus (see the README).
        stream_cycle_length: files read at once, their documents interleaved.
        stream_buffer_sentences: sentences tokenized per tokenizer call.
        stream_window_documents: the recent documents a random B is drawn from.
        stream_shuffle_buffer: pairs (packed: rows) shuffled together.
        num_workers, worker_index: this process's share of the corpus in a
            multi-worker run (streaming only; see `streaming.worker_share`).

    A bad value raises `ValueError` naming the field and the value received.
    """

    sequence_length: int = 128
    batch_size: int = 32
    masking: str = "token"
    mode: str = "dynamic"
    seed: object = 0
    masking_rate: float = 0.15
    max_predictions_per_seq: object = None
    short_seq_prob: float = 0.1
    random_next_probability: float = 0.5
    resample_pairs_each_epoch: bool = True
    dupe_factor: int = 5
    output_dir: object = None
    num_shards: int = 4
    shuffle: bool = True
    drop_remainder: bool = True
    document_boundary: str = "chapter"
    line_format: str = "wrapped"
    document_separator: object = None
    max_line_chars: int = 20_000
    pack_sequences: bool = False
    max_sequences_per_pack: int = 3
    streaming: bool = False
    stream_cycle_length: int = 4
    stream_buffer_sentences: int = 4096
    stream_window_documents: int = 128
    stream_shuffle_buffer: int = 10_000
    num_workers: int = 1
    worker_index: int = 0

    def __post_init__(self):
        check_sequence_length(self.sequence_length)
        check_positive_int("batch_size", self.batch_size)
        check_choice("masking", self.masking, MASKING)
        check_choice("mode", self.mode, MODES)
        check_masking_rate(self.masking_rate)
        if not 1 <= self.num_predictions <= self.sequence_length:
            raise ValueError(
                f"`max_predictions_per_seq` must be in [1, sequence_length]; received {self.num_predictions!r}"
            )
        check_probability("short_seq_prob", self.short_seq_prob)
        check_probability("random_next_probability", self.random_next_probability)
        check_positive_int("dupe_factor", self.dupe_factor)
        check_choice("document_boundary", self.document_boundary, DOCUMENT_BOUNDARIES)
        check_choice("line_format", self.line_format, LINE_FORMATS)
        check_positive_int("max_line_chars", self.max_line_chars)
        if not isinstance(self.pack_sequences, bool):
            raise ValueError(f"`pack_sequences` must be True or False; received {self.pack_sequences!r}")
        check_positive_int("max_sequences_per_pack", self.max_sequences_per_pack)
        self._check_streaming()

    def _check_streaming(self):
        if not isinstance(self.streaming, bool):
            raise ValueError(f"`streaming` must be True or False; received {self.streaming!r}")
        for name in ("stream_cycle_length", "stream_buffer_sentences", "stream_window_documents",
                     "stream_shuffle_buffer", "num_workers"):
            check_positive_int(name, getattr(self, name))
        if not isinstance(self.worker_index, int) or not 0 <= self.worker_index < self.num_workers:
            raise ValueError(
                f"`worker_index` must be in [0, num_workers {self.num_workers}); received {self.worker_index!r}"
            )
        if self.num_workers > 1 and not self.streaming:
            raise ValueError(
                f"`num_workers` {self.num_workers} needs `streaming=True`: the in-memory path gives every "
                "worker the whole corpus (its batches are sharded by the distribution strategy)"
            )

    @property
    def num_predictions(self):
        """`P`: `max_predictions_per_seq`, or its default for `sequence_length` when unset."""
        return self.max_predictions_per_seq or default_max_predictions(self.sequence_length, self.masking_rate)

    @property
    def packing(self):
        """`S` when pairs are packed into rows, else None."""
        return self.max_sequences_per_pack if self.pack_sequences else None

    def replace(self, **changes):
        """A copy with `changes` applied (unknown names raise TypeError naming them)."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(f"PretrainingDataConfig has no option(s) {unknown}")
        return dataclasses.replace(self, **changes)

    def to_dict(self):
        return dataclasses.asdict(self)
