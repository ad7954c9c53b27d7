"""Span and n-gram masking (TensorFlow, batched): runs of whole words chosen until the budget is full.

SpanBERT (Joshi et al., 2020) masks spans whose length in words is drawn from
a geometric distribution with `p = 0.2`, clipped at 10 words; its code (and
the paper's "mean span length 3.8") drops the tail beyond 10 and renormalises,
so `P(l) = p (1 - p)^(l - 1) / (1 - (1 - p)^10)` for `l = 1..10`: that is what
`span_length_probabilities("span")` gives. The n-gram masking of ALBERT
(after Joshi et al. and ERNIE) draws `n` in `1..max_ngram` with weights
`1/n`. Both are the same procedure with another length distribution.

Differences from SpanBERT's code, on purpose: a span never cuts a word (its
code may cut the last word when the budget runs out; here a span ends at the
last whole word that still fits, so the budget can stay a token or two short
when only long words remain); a span stops at a special token and at an
already-masked word; the anchor word is drawn uniformly among the words that
can still be masked (SpanBERT draws a token and moves to its word's start,
favouring long words).
"""

import numpy as np
import tensorflow as tf

from keras_bert.preprocessing.pretraining.config import check_choice, check_span_options

SPAN_MASKING = ("span", "ngram")


def span_length_probabilities(masking, span_p=0.2, max_span_length=10, max_ngram=3):
    """float64 `(L,)`: the probability of a span of `1..L` words.

    Args:
        masking: "span" (geometric with `span_p`, tail beyond
            `max_span_length` dropped and renormalised) or "ngram" (weights
            `1/n` for `n` in `1..max_ngram`).
    """
    check_choice("masking", masking, SPAN_MASKING)
    check_span_options(span_p, max_span_length, max_ngram)
    if masking == "span":
        lengths = np.arange(1, max_span_length + 1)
        weights = span_p * (1.0 - span_p) ** (lengths - 1)
    else:
        weights = 1.0 / np.arange(1, max_ngram + 1)
    return weights / weights.sum()


def choose_spans(word_starts, maskable, wanted, seed, length_probabilities, num_slots):
    """Chooses spans of whole words per row until `wanted` tokens are chosen.

    Each round, every row that is not full draws a span length `l` (in
    words) from `length_probabilities` and places it whole: `l` consecutive
    words, all maskable and not yet chosen, within the remaining budget,
    starting at a random word among those where such a span fits. Where none
    fits (near the end of the budget), the span starts at a random free word
    that fits and takes the words after it up to `l`, stopping before an
    unmaskable or chosen word and before the budget overflows. So the
    lengths placed follow the distribution except for the span that ends a
    row's budget. Each round takes at least one token from every row that
    can still take one, so `num_slots` rounds (>= `wanted`) suffice.

    Args:
        word_starts: int32 `(batch, length)`, 1 where a word starts (and on
            special tokens and padding).
        maskable: bool `(batch, length)`.
        wanted: int32 `(batch,)`, the budget of tokens per row.
        seed: int64 `(2,)`, the stateless seed.
        length_probabilities: 1-D probabilities of spans of 1, 2, ... words.
        num_slots: `P`, an upper bound of `wanted`.

    Returns:
        `(chosen, drawn, placed)`: bool `(batch, length)`, the chosen tokens;
        int32 `(batch, num_slots)`, the span length drawn in each round and
        the number of words that round placed (0 for rounds that had
        nothing left to place).
    """
    shape = tf.shape(word_starts)
    batch_size, length = shape[0], shape[1]
    # Word index of every token; per-word lengths and maskability on a word axis of size `length`.
    word_id = tf.cumsum(tf.concat([tf.zeros([batch_size, 1], tf.int32), word_starts[:, 1:]], 1), axis=1)
    flat_word = word_id + tf.range(batch_size)[:, None] * length
    segments = batch_size * length
    word_len = tf.reshape(tf.math.unsorted_segment_sum(tf.ones_like(flat_word), flat_word, segments), shape)
    word_ok = tf.reshape(tf.math.unsorted_segment_min(tf.cast(maskable, tf.int32), flat_word, segments), shape) > 0
    word_ok = word_ok & (word_len > 0)  # the word axis is longer than the number of words
    word_index = tf.range(length)[None, :]
    logits = tf.math.log(tf.constant(length_probabilities, tf.float32))[None, :]

    def one_round(i, taken, total, drawn, placed):
        round_seeds = tf.random.experimental.stateless_split(tf.random.experimental.stateless_fold_in(seed, i), 2)
        remaining = wanted - total  # (batch,)
        free = word_ok & ~taken
        eligible = free & (word_len <= remaining[:, None])
        has_room = tf.reduce_any(eligible, axis=1)
        span = tf.random.stateless_categorical(
            tf.tile(logits, [batch_size, 1]), 1, round_seeds[1], dtype=tf.int32
        )[:, 0] + 1
        # Where `span` whole words from word w are all free and within budget: window sums by cumsum.
        blocked_before = _exclusive_cumsum(tf.cast(~free, tf.int32))
        tokens_before = _exclusive_cumsum(tf.where(free, word_len, 0))
        end = tf.minimum(word_index + span[:, None], length)
        window_blocked = tf.gather(blocked_before, end, batch_dims=1) - blocked_before[:, :-1]
        window_tokens = tf.gather(tokens_before, end, batch_dims=1) - tokens_before[:, :-1]
        whole = (
            (word_index + span[:, None] <= length) & (window_blocked == 0) & (window_tokens <= remaining[:, None])
        )
        starts = tf.where(tf.reduce_any(whole, axis=1, keepdims=True), whole, eligible)
        noise = tf.random.stateless_uniform(shape, round_seeds[0])
        anchor = tf.argmax(tf.where(starts, noise, -1.0), axis=1, output_type=tf.int32)
        in_span = (word_index >= anchor[:, None]) & (word_index < (anchor + span)[:, None]) & has_room[:, None]
        # The span ends before its first word that is not free, and before the budget overflows.
        blocked = tf.cumsum(tf.cast(in_span & ~free, tf.int32), axis=1) > 0
        prefix = in_span & ~blocked
        take = prefix & (tf.cumsum(tf.where(prefix, word_len, 0), axis=1) <= remaining[:, None])
        slot = tf.one_hot(i, num_slots, dtype=tf.int32)[None, :]
        drawn += slot * tf.where(has_room, span, 0)[:, None]
        placed += slot * tf.reduce_sum(tf.cast(take, tf.int32), axis=1)[:, None]
        total += tf.reduce_sum(tf.where(take, word_len, 0), axis=1)
        return i + 1, taken | take, total, drawn, placed

    zeros = tf.zeros([batch_size, num_slots], tf.int32)
    _, taken, _, drawn, placed = tf.while_loop(
        lambda i, *_: i < num_slots,
        one_round,
        (tf.constant(0), tf.zeros(shape, tf.bool), tf.zeros([batch_size], tf.int32), zeros, zeros),
    )
    return tf.gather(taken, word_id, batch_dims=1), drawn, placed


def _exclusive_cumsum(values):
    """int32 `(batch, length + 1)`: the sums of `values[:, :j]` for j = 0..length."""
    return tf.concat([tf.zeros_like(values[:, :1]), tf.cumsum(values, axis=1)], axis=1)
