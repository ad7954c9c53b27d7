"""Masking stage (TensorFlow, batched): which tokens the MLM head predicts, and how they are hidden.

15% of the real tokens (never `[CLS]`/`[SEP]`/`[PAD]`), at most
`max_predictions_per_seq`, are chosen — single tokens, whole words, or spans
and n-grams of whole words (`span_masking`) — and replaced 80% by `[MASK]`,
10% by a random token and 10% left as they are.

Differences from google-research/bert, on purpose: the number of predictions
is 15% of the real tokens, not of the sequence with its three special tokens;
random replacement tokens are drawn from the vocabulary minus special and
`[unused*]` tokens.
"""

import re

import numpy as np
import tensorflow as tf

from keras_bert.preprocessing.pretraining.config import check_masking_rate
from keras_bert.preprocessing.pretraining.span_masking import (
    SPAN_MASKING,
    choose_spans,
    span_length_probabilities,
)


def random_token_pool(tokenizer):
    """Ids a masked position may be replaced by: not special, not `[unused*]`."""
    special = set(tokenizer.special_token_ids)
    unused = re.compile(r"^\[unused\d+\]$")
    return np.array(
        [
            i
            for i, token in enumerate(tokenizer.get_vocabulary())
            if i not in special and not unused.match(token)
        ],
        np.int32,
    )


def mask_tokens(
    token_ids,
    seed,
    mask_token_id,
    unmaskable_token_ids,
    random_token_ids,
    word_starts=None,
    masking_rate=0.15,
    max_predictions_per_seq=20,
    mask_token_rate=0.8,
    random_token_rate=0.1,
    span_lengths=None,
):
    """Chooses and corrupts MLM positions in a batch (TensorFlow ops).

    Per sequence, `k = min(max_predictions_per_seq, max(1, round(masking_rate
    * n)))` of its `n` maskable tokens are chosen. With `word_starts`, whole
    words are chosen together: words are visited in random order and a word
    is taken if all its pieces still fit into `k` (the original BERT rule), so
    a word is never partly masked. With `word_starts` and `span_lengths`,
    runs of whole words are chosen (`span_masking.choose_spans`): span
    (SpanBERT) and n-gram masking. Every chosen position independently
    becomes `[MASK]` (`mask_token_rate`), a random token from
    `random_token_ids` (`random_token_rate`) or stays as it is.

    Args:
        token_ids: int32 tensor of shape `(batch_size, sequence_length)`.
        seed: int tensor of shape `(2,)`, the stateless RNG seed; the same
            seed and inputs give the same output.
        mask_token_id: id of `[MASK]`.
        unmaskable_token_ids: ids never chosen (`[CLS]`, `[SEP]`, `[PAD]`).
        random_token_ids: 1-D ids to draw random replacements from.
        word_starts: optional int tensor shaped like `token_ids`: 1 where a
            word starts (and on special tokens).
        masking_rate: share of the maskable tokens to predict.
        max_predictions_per_seq: `P`, the number of prediction slots.
        mask_token_rate: share of the chosen positions set to `[MASK]`.
        random_token_rate: share set to a random token.
        span_lengths: optional 1-D probabilities of spans of 1, 2, ... words
            (`span_length_probabilities`); needs `word_starts`.

    Returns:
        A dict: `"token_ids"` (int32 `(batch_size, sequence_length)`, the
        corrupted input), `"mask_positions"` (int32 `(batch_size, P)`,
        ascending, 0 in unused slots), `"mlm_ids"` (int32 `(batch_size, P)`,
        the original ids there, 0 in unused slots) and `"mlm_weights"`
        (float32 `(batch_size, P)`, 1.0 for real predictions).
    """
    check_masking_rate(masking_rate)
    if mask_token_rate < 0 or random_token_rate < 0 or mask_token_rate + random_token_rate > 1:
        raise ValueError(
            "`mask_token_rate` and `random_token_rate` must be >= 0 and sum to <= 1; "
            f"received {mask_token_rate!r} and {random_token_rate!r}"
        )
    token_ids = tf.convert_to_tensor(token_ids, tf.int32)
    seed = tf.cast(tf.convert_to_tensor(seed), tf.int64)
    # seeds[0]: which tokens; [1]: [MASK] / random / kept; [2]: random ids; [3]: spans.
    seeds = tf.random.experimental.stateless_split(seed, 4)
    num_slots = int(max_predictions_per_seq)
    if num_slots < 1 or (token_ids.shape[1] is not None and num_slots > token_ids.shape[1]):
        raise ValueError(
            "`max_predictions_per_seq` must be in [1, sequence_length "
            f"{token_ids.shape[1]}]; received {max_predictions_per_seq!r}"
        )

    maskable, wanted = _maskable_and_wanted(token_ids, unmaskable_token_ids, masking_rate, num_slots)
    scores = tf.random.stateless_uniform(tf.shape(token_ids), seeds[0])
    if span_lengths is not None:
        if word_starts is None:
            raise ValueError("`span_lengths` (span or n-gram masking) needs `word_starts`; received None")
        chosen, _, _ = choose_spans(
            tf.cast(word_starts, tf.int32), maskable, wanted, seeds[3], span_lengths, num_slots
        )
    elif word_starts is None:
        chosen = _choose_tokens(maskable, wanted, scores, num_slots)
    else:
        chosen = _choose_whole_words(tf.cast(word_starts, tf.int32), maskable, wanted, scores)
    slots = _prediction_slots(token_ids, chosen, num_slots)
    corrupted = _corrupt(
        token_ids, chosen, seeds, mask_token_id, random_token_ids, mask_token_rate, random_token_rate
    )
    return {"token_ids": corrupted, **slots}


def _maskable_and_wanted(token_ids, unmaskable_token_ids, masking_rate, num_slots):
    """bool `(batch, length)`: may be chosen; int32 `(batch,)`: how many to choose, `k` of `mask_tokens`."""
    unmaskable = tf.constant(list(unmaskable_token_ids), tf.int32)
    maskable = tf.reduce_all(token_ids[:, :, None] != unmaskable[None, None, :], axis=-1)
    num_maskable = tf.reduce_sum(tf.cast(maskable, tf.int32), axis=1)
    wanted = tf.cast(tf.round(tf.cast(num_maskable, tf.float32) * masking_rate), tf.int32)
    return maskable, tf.minimum(tf.minimum(tf.maximum(wanted, 1), num_slots), num_maskable)


def _choose_tokens(maskable, wanted, scores, num_slots):
    """Each token is its own word: the `wanted` best-scored maskable tokens, bool `(batch, length)`."""
    batch_size = tf.shape(maskable)[0]
    scores = tf.where(maskable, scores, -1.0)
    top = tf.math.top_k(scores, k=num_slots).indices
    take = tf.range(num_slots)[None, :] < wanted[:, None]
    return tf.scatter_nd(
        tf.stack([tf.repeat(tf.range(batch_size), num_slots), tf.reshape(top, [-1])], 1),
        tf.reshape(tf.cast(take, tf.int32), [-1]),
        tf.shape(maskable),
    ) > 0


def _choose_whole_words(word_starts, maskable, wanted, scores):
    """Whole-word choice: words in random order, taken while they fit.

    Args:
        word_starts: int32 `(batch, length)`, 1 where a word starts.
        maskable: bool `(batch, length)`.
        wanted: int32 `(batch,)`, tokens to choose per row.
        scores: float32 `(batch, length)` uniform noise; the score of a word's
            first piece orders the words.

    Returns:
        bool `(batch, length)`, the chosen tokens.
    """
    shape = tf.shape(word_starts)
    batch_size, length = shape[0], shape[1]
    # Word index of every token (special tokens are words that never fit).
    word_id = tf.cumsum(tf.concat([tf.zeros([batch_size, 1], tf.int32), word_starts[:, 1:]], 1), axis=1)
    flat_word = word_id + tf.range(batch_size)[:, None] * length
    word_len = tf.math.unsorted_segment_sum(
        tf.ones_like(flat_word), flat_word, batch_size * length
    )
    word_ok = tf.math.unsorted_segment_min(
        tf.cast(maskable, tf.int32), flat_word, batch_size * length
    )
    word_len = tf.reshape(word_len, [batch_size, length])
    word_ok = tf.reshape(word_ok, [batch_size, length]) > 0
    word_score = tf.math.unsorted_segment_max(scores, flat_word, batch_size * length)
    word_score = tf.reshape(word_score, [batch_size, length])
    word_len = tf.where(word_ok, word_len, 0)
    # Visit words by decreasing score; empty slots (len 0) are skipped.
    rank_order = tf.argsort(tf.where(word_len > 0, word_score, -1.0), axis=1, direction="DESCENDING")
    ranked_len = tf.gather(word_len, rank_order, batch_dims=1)

    # Greedy: take a word when it still fits; one step per word slot.
    def step(total, lengths):
        take = (lengths > 0) & (total + lengths <= wanted)
        return total + tf.where(take, lengths, 0)

    totals = tf.scan(
        step, tf.transpose(ranked_len), initializer=tf.zeros([batch_size], tf.int32)
    )
    totals = tf.transpose(totals)  # running total after each ranked word
    before = tf.concat([tf.zeros([batch_size, 1], tf.int32), totals[:, :-1]], 1)
    taken_ranked = totals > before
    taken = tf.scatter_nd(
        tf.stack(
            [tf.repeat(tf.range(batch_size), length), tf.reshape(rank_order, [-1])], 1
        ),
        tf.reshape(tf.cast(taken_ranked, tf.int32), [-1]),
        [batch_size, length],
    )
    return tf.gather(taken, word_id, batch_dims=1) > 0


def _prediction_slots(token_ids, chosen, num_slots):
    """Chosen positions, ascending, padded with 0 (weight 0) to `P` slots, and their original ids."""
    length = token_ids.shape[1] or tf.shape(token_ids)[1]
    positions = tf.range(length)[None, :]
    key = tf.where(chosen, positions, length + positions)
    order = tf.sort(key, axis=1)[:, :num_slots]
    weights = order < length
    mask_positions = tf.where(weights, order, 0)
    mlm_ids = tf.where(weights, tf.gather(token_ids, mask_positions, batch_dims=1), 0)
    return {"mask_positions": mask_positions, "mlm_ids": mlm_ids, "mlm_weights": tf.cast(weights, tf.float32)}


def _corrupt(token_ids, chosen, seeds, mask_token_id, random_token_ids, mask_token_rate, random_token_rate):
    """The chosen positions set to `[MASK]`, a random token, or kept, by one uniform draw each."""
    action = tf.random.stateless_uniform(tf.shape(token_ids), seeds[1])
    pool = tf.constant(random_token_ids, tf.int32)
    random_ids = tf.gather(
        pool,
        tf.random.stateless_uniform(
            tf.shape(token_ids), seeds[2], minval=0, maxval=tf.shape(pool)[0], dtype=tf.int32
        ),
    )
    corrupted = tf.where(chosen & (action < mask_token_rate), mask_token_id, token_ids)
    use_random = chosen & (action >= mask_token_rate) & (action < mask_token_rate + random_token_rate)
    return tf.where(use_random, random_ids, corrupted)


class BatchMasker:
    """`mask_tokens` with a tokenizer's ids and one config's settings; `__call__` masks one batch of pairs.

    Args:
        tokenizer: the `BertTokenizer` that made the pairs.
        masking: `"token"`, `"whole-word"`, `"span"` or `"ngram"`.
        masking_rate: share of the real tokens to predict.
        max_predictions_per_seq: `P`.
        span_p, max_span_length: `"span"`: the span-length distribution.
        max_ngram: `"ngram"`: the longest n-gram.
    """

    def __init__(
        self, tokenizer, masking, masking_rate, max_predictions_per_seq, span_p=0.2, max_span_length=10, max_ngram=3
    ):
        self.whole_word = masking != "token"
        span_lengths = None
        if masking in SPAN_MASKING:
            span_lengths = span_length_probabilities(masking, span_p, max_span_length, max_ngram)
        self.kwargs = dict(
            span_lengths=span_lengths,
            mask_token_id=tokenizer.mask_token_id,
            unmaskable_token_ids=(
                tokenizer.cls_token_id,
                tokenizer.sep_token_id,
                tokenizer.pad_token_id,
                tokenizer.mask_token_id,
            ),
            random_token_ids=random_token_pool(tokenizer),
            masking_rate=masking_rate,
            max_predictions_per_seq=max_predictions_per_seq,
        )

    def __call__(self, batch, seed):
        """Masks `batch["token_ids"]` (int32 `(B, T)`) with the stateless `seed` (int64 `(2,)`)."""
        return mask_tokens(
            batch["token_ids"],
            seed,
            word_starts=batch["word_starts"] if self.whole_word else None,
            **self.kwargs,
        )
