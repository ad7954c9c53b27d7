"""Answer spans from a question answerer's start and end logits: BERT's n-best decoding over all windows.

One definition, in TensorFlow ops, of how `QuestionAnswererPipeline`, the
fine-tuning job's SQuAD evaluation (`decode_answers`) and the exported
SavedModel's `serve_text` turn logits into answers: the pipelines and the
evaluation run it eagerly, the SavedModel traces it.

The rule (Google's run_squad.py and Hugging Face's
`compute_predictions_logits`): in every window the `n_best_size` highest
start logits and the `n_best_size` highest end logits (over every position of
the window, as the model computed them) are paired; a pair is a candidate if
both positions are context tokens, the start token is in its max-context
window (`text_windows.max_context`; the end is not checked), the end is not
before the start and the span has at most `max_answer_length` tokens. A
candidate scores `start_logit + end_logit`; candidates with the same
character span keep the best score. An example's n-best list is its
`n_best_size` best candidates over all its windows, ties in the order the
candidates were found (window, then start rank, then end rank). The "no
answer" score is the lowest `start_logits[0] + end_logits[0]` over the
example's windows.

The character spans are the context tokens' without the white space at
their ends (`keras_bert.preprocessing.trimmed_offsets`).
"""

import tensorflow as tf


def nbest_spans(start_logits, end_logits, owner, num_examples, can_start, can_end, char_start, char_end,
                n_best_size=20, max_answer_length=30):
    """Every example's n-best answer spans, best first.

    Args:
        start_logits, end_logits: float32 `(num_windows, width)`.
        owner: int32 `(num_windows,)`, the example of each window (in order).
        num_examples: int32 scalar.
        can_start: bool `(num_windows, width)`, context tokens in their max-context window.
        can_end: bool `(num_windows, width)`, context tokens.
        char_start, char_end: int `(num_windows, width)`, the character span
            of each position's token (read only where `can_end`).
        n_best_size: Python int, candidates kept per side of a window and per example.
        max_answer_length: Python int, the longest span in tokens.

    Returns:
        A dict of `(num_examples, n)` tensors, `n = min(n_best_size, candidates)`:
        `logit` (float32, -inf past an example's last candidate), `char_start`,
        `char_end` (int64), and `window`, `start`, `end` (int32: the window
        and the positions in it of the candidate's first occurrence), plus
        `null_score` float32 `(num_examples,)`.
    """
    width = tf.shape(start_logits)[1]
    k = tf.minimum(n_best_size, width)
    # top_k breaks ties between equal logits towards the earlier position.
    top_start_logits, top_starts = tf.math.top_k(start_logits, k)
    top_end_logits, top_ends = tf.math.top_k(end_logits, k)
    s, e = top_starts[:, :, tf.newaxis], top_ends[:, tf.newaxis, :]  # (windows, k, 1), (windows, 1, k)
    valid = (
        tf.gather(can_start, top_starts, batch_dims=1)[:, :, tf.newaxis]
        & tf.gather(can_end, top_ends, batch_dims=1)[:, tf.newaxis, :]
        & (e >= s) & (e - s < max_answer_length)
    )
    pair_logits = top_start_logits[:, :, tf.newaxis] + top_end_logits[:, tf.newaxis, :]
    # Candidates of the batch, flat, in the order they are found: window, start rank, end rank.
    where = tf.cast(tf.where(valid), tf.int32)  # (candidates, 3): window, start rank, end rank
    window = where[:, 0]
    start = tf.gather_nd(top_starts, where[:, :2])
    end = tf.gather_nd(top_ends, tf.stack([where[:, 0], where[:, 2]], axis=1))
    logit = tf.gather_nd(pair_logits, where)
    example = tf.gather(owner, window)
    span_start = tf.cast(tf.gather_nd(char_start, tf.stack([window, start], axis=1)), tf.int64)
    span_end = tf.cast(tf.gather_nd(char_end, tf.stack([window, end], axis=1)), tf.int64)
    # One entry per (example, character span), in order of first occurrence, with its best logit.
    size = tf.maximum(tf.reduce_max(tf.concat([span_end, [0]], axis=0)), 0) + 1
    key = (tf.cast(example, tf.int64) * size + span_start) * size + span_end
    unique_key, group = tf.unique(key, out_idx=tf.int32)
    num_groups = tf.size(unique_key)
    group_logit = tf.math.unsorted_segment_max(logit, group, num_groups)
    first = tf.math.unsorted_segment_min(tf.range(tf.size(key)), group, num_groups)
    group_example = tf.gather(example, first)

    def per_example(values, default):  # (groups,) -> (num_examples, most groups of an example)
        ragged = tf.RaggedTensor.from_value_rowids(values, group_example, nrows=num_examples)
        return ragged.to_tensor(default_value=default)

    padded_logits = per_example(group_logit, -float("inf"))
    ranked, order = tf.math.top_k(padded_logits, tf.minimum(n_best_size, tf.shape(padded_logits)[1]))
    chosen = tf.gather(per_example(first, 0), order, batch_dims=1)
    null_score = tf.math.unsorted_segment_min(start_logits[:, 0] + end_logits[:, 0], owner, num_examples)
    return {
        "logit": ranked,
        "char_start": tf.gather(span_start, chosen),
        "char_end": tf.gather(span_end, chosen),
        "window": tf.gather(window, chosen),
        "start": tf.gather(start, chosen),
        "end": tf.gather(end, chosen),
        "null_score": null_score,
    }


def choose_answers(nbest_logits, null_score, allow_no_answer=False, null_score_diff_threshold=0.0):
    """Whether each example is answered, its score and the probabilities of its n-best list.

    Args:
        nbest_logits: float32 `(num_examples, n)`, `nbest_spans(...)["logit"]`.
        null_score: float32 `(num_examples,)`.
        allow_no_answer: Python bool; SQuAD 2.0: "no answer" competes.
        null_score_diff_threshold: the margin by which "no answer" must beat
            the best span to win.

    Returns:
        `(answered, score, probabilities)`: bool `(num_examples,)` (False
        where no span is a candidate, or "no answer" wins); float64
        `(num_examples,)`, the chosen answer's probability (0 for an
        unanswered example without `allow_no_answer`); float64
        `(num_examples, n + allow_no_answer)`, the softmax over the n-best
        logits (and the null score last, with `allow_no_answer`), 0 past an
        example's candidates.
    """
    pool = tf.cast(nbest_logits, tf.float64)
    null = tf.cast(null_score, tf.float64)
    best = _first_or(pool, -float("inf"))
    has_span = tf.math.is_finite(best)
    if allow_no_answer:
        pool = tf.concat([pool, null[:, tf.newaxis]], axis=1)
    finite = tf.math.is_finite(pool)
    top = tf.reduce_max(tf.where(finite, pool, tf.float64.min), axis=1, keepdims=True)
    exp = tf.where(finite, tf.exp(tf.where(finite, pool - top, 0.0)), 0.0)
    probabilities = tf.math.divide_no_nan(exp, tf.reduce_sum(exp, axis=1, keepdims=True))
    best_probability = _first_or(probabilities, 0.0)
    if not allow_no_answer:
        return has_span, tf.where(has_span, best_probability, 0.0), probabilities
    answered = has_span & ~(null - best > null_score_diff_threshold)
    return answered, tf.where(answered, best_probability, probabilities[:, -1]), probabilities


def _first_or(values, default):
    """`values[:, 0]`, or `default` for rows of a zero-width `values` `(batch, 0)`."""
    padded = tf.concat([values, tf.fill([tf.shape(values)[0], 1], tf.cast(default, values.dtype))], axis=1)
    return padded[:, 0]
