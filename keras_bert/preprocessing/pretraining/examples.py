"""Examples stage: masked pairs → the `(x, y, sample_weight)` that `BertPretrainer` trains on.

`to_model_inputs` does it for one batch (inside tf.data in dynamic mode);
`create_pretraining_examples` does it for `dupe_factor` whole rounds over the
corpus at once, as numpy arrays for the TFRecords of static mode.
"""

import keras
import numpy as np
import tensorflow as tf

from keras_bert.preprocessing.pretraining.config import (
    MASKING,
    WORD_MASKING,
    check_choice,
    default_max_predictions,
)
from keras_bert.preprocessing.pretraining.masking import BatchMasker
from keras_bert.preprocessing.pretraining.packing import pack_pairs, record_packing
from keras_bert.preprocessing.pretraining.seeds import batch_seed
from keras_bert.preprocessing.pretraining.sentence_pairs import create_sentence_rows

# The int32 features of every example (`nsp` aside: one label, or one per packed slot).
INT_FEATURES = ("token_ids", "segment_ids", "padding_mask", "mask_positions", "mlm_ids")
# The extra features of packed examples (`nsp` then holds one label per slot).
PACKED_FEATURES = ("sequence_ids", "position_ids", "nsp_positions", "nsp_weights")


def to_model_inputs(masked, segment_ids, nsp, pad_token_id, packing=None):
    """Masking output → `(x, y, sample_weight)` as `BertPretrainer` takes it.

    Args:
        masked: the dict `mask_tokens` returns.
        segment_ids: int `(B, T)`.
        nsp: int `(B,)`, or `(B, S)` for packed rows.
        pad_token_id: id of `[PAD]`.
        packing: for packed rows, the dict with `sequence_ids`,
            `position_ids`, `nsp_positions` and `nsp_weights` (see `pack_pairs`).

    Returns:
        `(x, y, sample_weight)` as described in `pretraining_dataset`.
    """
    x = {
        "token_ids": masked["token_ids"],
        "segment_ids": tf.cast(segment_ids, tf.int32),
        "padding_mask": tf.cast(masked["token_ids"] != pad_token_id, tf.int32),
        "mask_positions": masked["mask_positions"],
    }
    y = {"mlm": masked["mlm_ids"], "nsp": tf.cast(nsp, tf.int32)}
    if packing is not None:
        for name in ("sequence_ids", "position_ids", "nsp_positions"):
            x[name] = tf.cast(packing[name], tf.int32)
        weights = {"mlm": masked["mlm_weights"], "nsp": tf.cast(packing["nsp_weights"], tf.float32)}
        return x, y, weights
    # Keras wants a weight for every output once any is given: NSP weighs 1.
    nsp_weights = tf.ones_like(y["nsp"], dtype=tf.float32)
    return x, y, {"mlm": masked["mlm_weights"], "nsp": nsp_weights}


def without_sentence_task(x, y, sample_weight):
    """`(x, y, sample_weight)` of MLM only (`sentence_task="none"`): no NSP label, weight or positions.

    The rows carry a dummy all-0 `nsp` through packing, masking and TFRecords;
    it is dropped here, so the model (`BertPretrainer(sentence_head=False)`)
    sees `y = {"mlm": ...}` and no `nsp_positions`.
    """
    x = {k: v for k, v in x.items() if k != "nsp_positions"}
    return x, {"mlm": y["mlm"]}, {"mlm": sample_weight["mlm"]}


def check_masking(masking, word_starts):
    check_choice("masking", masking, MASKING)
    if masking in WORD_MASKING and word_starts is None:
        raise ValueError(f"`masking={masking!r}` needs `word_starts` (from tokenize_documents); received None")


def create_pretraining_examples(
    token_documents,
    tokenizer,
    sequence_length=128,
    word_starts=None,
    masking="token",
    masking_rate=0.15,
    max_predictions_per_seq=None,
    short_seq_prob=0.1,
    random_next_probability=0.5,
    dupe_factor=1,
    seed=0,
    batch_size=256,
    progress=False,
    pack_sequences=False,
    max_sequences_per_pack=3,
    stats=None,
    sentence_task="nsp",
    span_p=0.2,
    max_span_length=10,
    max_ngram=3,
):
    """Static examples: `dupe_factor` rounds of sentence pairs (or rows), each masked once.

    Args:
        token_documents: documents of per-sentence id arrays (from
            `tokenize_documents`).
        tokenizer: the `BertTokenizer` that made them.
        sequence_length: length of every example.
        word_starts: the word-start flags from `tokenize_documents` (needed
            for `masking="whole-word"`).
        masking: `"token"`, `"whole-word"`, `"span"` or `"ngram"`.
        masking_rate: share of real tokens to predict.
        max_predictions_per_seq: prediction slots `P` (default
            `round(0.15 * sequence_length)`).
        short_seq_prob: see `create_nsp_pairs`.
        random_next_probability: see `create_nsp_pairs`.
        dupe_factor: rounds over the corpus, each with new pairs and masks.
        seed: int or str.
        batch_size: pairs masked per TensorFlow call (does not change results).
        progress: show a progress bar.
        pack_sequences: pack up to `max_sequences_per_pack` pairs per row
            (see `pack_pairs`) before masking.
        max_sequences_per_pack: `S`, with `pack_sequences`.
        stats: optional dict; with `pack_sequences`, rows and padding
            fractions before and after packing are added to it.
        sentence_task: "nsp", "sop" or "none" (see `create_sentence_rows`;
            "none" keeps an all-0 `nsp`, dropped when read back).
        span_p, max_span_length, max_ngram: span / n-gram masking (see
            `PretrainingDataConfig`).

    Returns:
        A dict of numpy arrays with `num_examples` rows: `token_ids`,
        `segment_ids`, `padding_mask`, `mask_positions`, `mlm_ids` (int32),
        `mlm_weights` (float32) and `nsp` (int32). With `pack_sequences`,
        also `sequence_ids`, `position_ids` (int32 `(num_examples, T)`),
        `nsp_positions` (int32) and `nsp_weights` (float32), and `nsp` has
        shape `(num_examples, S)`.
    """
    check_masking(masking, word_starts)
    num_slots = max_predictions_per_seq or default_max_predictions(sequence_length, masking_rate)
    special_ids = (tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id)
    pair_rounds = [
        create_sentence_rows(
            token_documents, sequence_length, *special_ids, word_starts=word_starts, sentence_task=sentence_task,
            short_seq_prob=short_seq_prob, random_next_probability=random_next_probability, seed=f"{seed}:{d}",
            cross_documents=not pack_sequences,  # as the dynamic path: packed documents never share a row's attention
        )
        for d in range(dupe_factor)
    ]
    rounds = pair_rounds
    if pack_sequences:
        rounds = [pack_pairs(r, max_sequences_per_pack, tokenizer.pad_token_id) for r in pair_rounds]
        if stats is not None:
            record_packing(stats, pair_rounds, rounds, tokenizer.pad_token_id)
    masker = BatchMasker(tokenizer, masking, masking_rate, num_slots, span_p, max_span_length, max_ngram)
    return _mask_rounds(rounds, masker, tokenizer.pad_token_id, seed, batch_size, progress, pack_sequences)


def _mask_rounds(rounds, masker, pad_token_id, seed, batch_size, progress, packed):
    """Masks every round of pairs (`packed`: rows), `batch_size` at a time; arrays as `create_pretraining_examples`."""
    bar = keras.utils.Progbar(sum(len(r["nsp"]) for r in rounds), unit_name="example") if progress else None
    mask_fn = tf.function(masker.__call__, reduce_retracing=True)
    outputs = {k: [] for k in (*INT_FEATURES, "mlm_weights", "nsp", *(PACKED_FEATURES if packed else ()))}
    for d, pairs in enumerate(rounds):
        for b, begin in enumerate(range(0, len(pairs["nsp"]), batch_size)):
            batch = {k: v[begin : begin + batch_size] for k, v in pairs.items()}
            masked = mask_fn(batch, batch_seed(seed, d, b))
            inputs = to_model_inputs(
                masked, batch["segment_ids"], batch["nsp"], pad_token_id, packing=batch if packed else None
            )
            for key, value in _example_features(*inputs).items():
                outputs[key].append(np.asarray(value))
            if bar is not None:
                bar.add(len(batch["nsp"]))
    return {k: np.concatenate(v) for k, v in outputs.items()}


def _example_features(x, y, weights):
    """`(x, y, sample_weight)` → one flat dict under the names of `create_pretraining_examples`."""
    features = {
        "token_ids": x["token_ids"],
        "segment_ids": x["segment_ids"],
        "padding_mask": x["padding_mask"],
        "mask_positions": x["mask_positions"],
        "mlm_ids": y["mlm"],
        "mlm_weights": weights["mlm"],
        "nsp": y["nsp"],
    }
    if "sequence_ids" in x:  # packed rows
        features.update({k: x[k] for k in ("sequence_ids", "position_ids", "nsp_positions")})
        features["nsp_weights"] = weights["nsp"]
    return features
