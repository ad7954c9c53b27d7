"""PretrainingDataConfig: every choice that shapes pretraining batches, in one object.

`pretraining_dataset(files, tokenizer, config)` reads it, and the pretraining job
(`keras_bert.jobs.pretrain`) takes the same object, so a new data option is added
in one place instead of being mirrored argument by argument.
"""

import dataclasses

DOCUMENT_BOUNDARIES = ("chapter", "file", "blank_line")
LINE_FORMATS = ("wrapped", "sentence_per_line", "paragraph_per_line")
MASKING = ("token", "whole-word", "span", "ngram")
MODES = ("dynamic", "static")
# "nsp": B follows A or is random (BERT); "sop": A B in order or swapped
# (ALBERT); "none": rows of contiguous full sentences, MLM only (RoBERTa).
SENTENCE_TASKS = ("nsp", "sop", "none")
# Masking kinds that choose whole words, and so need `word_starts`.
WORD_MASKING = ("whole-word", "span", "ngram")


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


def check_span_options(span_p, max_span_length, max_ngram):
    """SpanBERT's geometric `p` in (0, 1], and span / n-gram lengths of at least one word."""
    if isinstance(span_p, bool) or not isinstance(span_p, (int, float)) or not 0.0 < span_p <= 1.0:
        raise ValueError(f"`span_p` must be in (0, 1]; received {span_p!r}")
    check_positive_int("max_span_length", max_span_length)
    check_positive_int("max_ngram", max_ngram)


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
    Sentence pairs (`create_sentence_rows`):
        sequence_length: `T`, the length of every example.
        sentence_task: "nsp" (B is the next segment, label 0, or a random
            one, label 1), "sop" (A and B are consecutive segments of one
            document, label 0 in order, 1 swapped: the same head and label
            slot, 0 still meaning "B is A's true continuation") or "none"
            (rows of contiguous full sentences across documents, one segment,
            no sentence label: MLM only, as RoBERTa's FULL-SENTENCES).
        short_seq_prob: chance of a shorter random target length for a pair.
        random_next_probability: "nsp": chance that B is a random segment;
            "sop": chance that the pair is swapped (label 1 either way).
        resample_pairs_each_epoch: dynamic mode: new pairs every epoch.
    Packing (`pack_pairs`):
        pack_sequences: several short pairs per row (train a backbone built
            with `packed_inputs=True`).
        max_sequences_per_pack: `S`, the most pairs in one packed row.
    Masking (`mask_tokens`):
        masking: "token", "whole-word", "span" (SpanBERT: spans of whole
            words, lengths from a geometric distribution) or "ngram" (n whole
            words, n in 1..`max_ngram` with weights 1/n); see `mask_tokens`.
        span_p: "span": `p` of the geometric span length, in (0, 1].
        max_span_length: "span": longest span, in words (>= 1).
        max_ngram: "ngram": longest n-gram, in words (>= 1).
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
    sentence_task: str = "nsp"
    span_p: float = 0.2
    max_span_length: int = 10
    max_ngram: int = 3
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
        check_choice("sentence_task", self.sentence_task, SENTENCE_TASKS)
        check_span_options(self.span_p, self.max_span_length, self.max_ngram)
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
        if self.streaming and self.sentence_task != "nsp":
            raise ValueError(
                f"`streaming=True` draws NSP pairs only; received sentence_task={self.sentence_task!r} (read the "
                "corpus in memory for sop or none)"
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

    @property
    def masking_options(self):
        """The keyword arguments of `BatchMasker` beyond the tokenizer."""
        return dict(
            masking=self.masking, masking_rate=self.masking_rate, max_predictions_per_seq=self.num_predictions,
            span_p=self.span_p, max_span_length=self.max_span_length, max_ngram=self.max_ngram,
        )

    def replace(self, **changes):
        """A copy with `changes` applied (unknown names raise TypeError naming them)."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(f"PretrainingDataConfig has no option(s) {unknown}")
        return dataclasses.replace(self, **changes)

    def to_dict(self):
        return dataclasses.asdict(self)


# The pretraining objectives built from data options, by name: a benchmark runs
# objective X with `PretrainingDataConfig(**OBJECTIVES[X], ...)` or
# `pretrain(..., **pretrain_objective_options(X))`. Each changes one thing
# against "mlm_nsp", so a table of them reads as one factor at a time.
# ELECTRA's replaced-token detection is a model, not a data option: not here.
OBJECTIVES = {
    # BERT: whole-word MLM + next-sentence prediction.
    "mlm_nsp": {"masking": "whole-word", "sentence_task": "nsp"},
    # SpanBERT's masking (geometric spans of whole words, p 0.2, at most 10); BERT's NSP kept.
    "span": {"masking": "span", "sentence_task": "nsp", "span_p": 0.2, "max_span_length": 10},
    # n-gram whole-word masking (n in 1..3, weights 1/n, as ALBERT) with NSP.
    "ngram": {"masking": "ngram", "sentence_task": "nsp", "max_ngram": 3},
    # ALBERT's sentence-order prediction instead of NSP.
    "sop": {"masking": "whole-word", "sentence_task": "sop"},
    # RoBERTa: MLM only over rows of full sentences, no sentence task.
    "roberta": {"masking": "whole-word", "sentence_task": "none"},
}


def pretrain_objective_options(name):
    """The `PretrainingDataConfig` fields of objective `name` (a key of `OBJECTIVES`), as a new dict."""
    check_choice("objective", name, tuple(OBJECTIVES))
    return dict(OBJECTIVES[name])
