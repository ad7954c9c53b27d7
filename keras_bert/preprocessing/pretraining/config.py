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


@dataclasses.dataclass(frozen=True)
class PretrainingDataConfig:
    """How text becomes MLM + NSP batches (see `pretraining_dataset` for each stage).

    Corpus (`read_documents`):
        document_boundary: "chapter", "file" or "blank_line".
        line_format: "wrapped", "sentence_per_line" or "paragraph_per_line".
        document_separator: optional regex of lines that start a new document.
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

    def replace(self, **changes):
        """A copy with `changes` applied (unknown names raise TypeError naming them)."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})
        if unknown:
            raise TypeError(f"PretrainingDataConfig has no option(s) {unknown}")
        return dataclasses.replace(self, **changes)

    def to_dict(self):
        return dataclasses.asdict(self)
