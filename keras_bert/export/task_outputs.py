"""What each task's exported signatures return, written as TensorFlow graph code.

Every output has the batch as its first axis (what TF Serving's row format
needs). Per-example lists (entities) are padded: strings with "", numbers
with -1, and `num_entities` says how many are real.

`serve_text` reads texts longer than the sequence as the Python pipelines
do (`keras_bert.pipelines`): in overlapping windows built in the graph
(`text_windows.py`) with the same window size, stride and aggregation
(mean logits for classifiers, regressors and choices; mean token logits for
the tagger; BERT's max-context rule and n-best decoding for answers). Every
task's `serve_text` also returns, per example, `num_tokens`, `num_windows`
and `num_truncated_tokens` (tokens no window holds: a question past
`max_query_length`, a pair's shorter segment past half the sequence, a
backbone's text past one sequence), which `keras-bert predict` reports.

| task              | `serve_token_ids`                  | `serve_text`                                                        |
|-------------------|------------------------------------|---------------------------------------------------------------------|
| backbone          | sequence_output, pooled_output     | + padding_mask (embeddings of raw text)                             |
| classifier        | logits, probabilities              | probabilities, label, score                                         |
| regressor         | value                              | value                                                               |
| token_classifier  | logits, probabilities              | entity_type/text/start/end/score, num_entities, token_probabilities (per wordpiece) |
| question_answerer | start_logits, end_logits           | answer, answer_start, answer_end, score                             |
| multiple_choice   | logits, probabilities              | probabilities, choice, choice_text, score                           |

Character offsets (`entity_start`, `answer_start`, ...) index the original
string in Unicode code points, as Python's `text[start:end]` does.
"""

import tensorflow as tf

from keras_bert.export import text_windows
from keras_bert.models import BertBackbone, BertMaskedLM, BertPretrainer
from keras_bert.tasks import get_task, task_for_model


def task_kind(model):
    """The export task of a keras_bert model: "backbone" or a task's registry name ("classifier", ...).

    Raises:
        ValueError: the model cannot be served (a pretraining model, or not a keras_bert model).
    """
    if isinstance(model, BertBackbone):
        return "backbone"  # a backbone is not a task: its outputs are embeddings
    task = task_for_model(model)
    if task is not None:
        return task.name
    if isinstance(model, (BertPretrainer, BertMaskedLM)):
        raise ValueError(
            f"A {type(model).__name__} is a pretraining model and has no serving outputs; export "
            "`model.backbone` (embeddings) or fine-tune a task model on it first."
        )
    raise ValueError(
        f"Cannot export a {type(model).__name__}: expected a keras_bert BertBackbone, BertClassifier, "
        "BertTokenClassifier, BertQuestionAnswerer or BertMultipleChoice."
    )


def token_id_outputs(module, outputs):
    """The `serve_token_ids` outputs of `module`'s task, from the model's outputs."""
    task = module._task
    if task == "backbone":
        return outputs
    if task == "regressor":
        return {"value": outputs[:, 0]}
    if task == "question_answerer":
        return {"start_logits": outputs["start"], "end_logits": outputs["end"]}
    if task == "text_embedder":
        return {"embeddings": outputs}
    return {"logits": outputs, "probabilities": tf.nn.softmax(outputs, axis=-1)}


def text_outputs(module, **texts):
    """The `serve_text` outputs of `module`'s task, from its raw-string inputs."""
    if module._task == "backbone":
        return _backbone_outputs(module, **texts)
    return get_task(module._task).load("export_outputs")(module, **texts)


def _stats(num_tokens, num_windows, num_truncated_tokens):
    """The per-text reading report every `serve_text` returns (what `keras-bert predict` prints)."""
    return {
        "num_tokens": tf.cast(num_tokens, tf.int32),
        "num_windows": tf.cast(num_windows, tf.int32),
        "num_truncated_tokens": tf.cast(num_truncated_tokens, tf.int32),
    }


def _backbone_outputs(module, text, text_pair=None):
    """Embeddings of raw text, with the padding mask that says which positions are tokens.

    Embeddings are per sequence, so a backbone truncates (longest first, as
    in training) instead of windowing; `num_truncated_tokens` says how much.
    """
    lengths = tf.cast(module.tokenizer.tokenize(text).row_lengths(), tf.int32)
    budget = module._sequence_length - 2
    if text_pair is not None:
        lengths += tf.cast(module.tokenizer.tokenize(text_pair).row_lengths(), tf.int32)
        budget -= 1
    inputs = module.pack_texts(text, text_pair)
    outputs = module._call_model(inputs)
    stats = _stats(lengths, tf.ones_like(lengths), tf.maximum(lengths - budget, 0))
    return {**outputs, "padding_mask": inputs["padding_mask"], **stats}


def _windowed_logits(module, text, text_pair=None):
    """`(logits (batch, ...), stats)`: the model's logits averaged over each text's windows.

    Single texts are windowed as `TextClassifierPipeline` windows them;
    pairs over their longer segment (`pair_window_spans`).
    """
    tokenizer = module.tokenizer
    ids = tokenizer.tokenize(text)
    lengths = tf.cast(ids.row_lengths(), tf.int32)
    if text_pair is None:
        windows, owner, _, _ = text_windows.single_windows(ids, module._sequence_length, module._window_stride)
        inputs = module.pack_texts(windows)
        dropped = tf.zeros_like(lengths)
    else:
        pair_ids = tokenizer.tokenize(text_pair)
        # RoBERTa's pairs take one separator more (`</s></s>`): one token less for the texts.
        room = module._sequence_length - (module.packer.separators_between - 1)
        windows_a, windows_b, owner, dropped = text_windows.pair_windows(
            ids, pair_ids, room, module._window_stride or module._sequence_length
        )
        inputs = module.pack_texts(windows_a, windows_b)
        lengths += tf.cast(pair_ids.row_lengths(), tf.int32)
    logits = text_windows.segment_mean(module._call_model(inputs), owner, tf.size(lengths))
    counts = tf.math.bincount(owner, minlength=tf.size(lengths), maxlength=tf.size(lengths))
    return logits, _stats(lengths, counts, dropped)


def classifier_outputs(module, text, text_pair=None):
    """The most probable label (a name when the module has a label table), its score, all probabilities.

    Probabilities are the softmax of the logits averaged over the text's windows.
    """
    logits, stats = _windowed_logits(module, text, text_pair)
    probabilities = tf.nn.softmax(logits, axis=-1)
    best = tf.argmax(probabilities, axis=-1)
    if module.label_table is not None:
        label = module.label_table.lookup(best)
    else:
        label = tf.strings.as_string(best)
    return {"probabilities": probabilities, "label": label, "score": tf.reduce_max(probabilities, axis=-1), **stats}


def regressor_outputs(module, text, text_pair=None):
    """The predicted value of each text (or text pair), averaged over its windows."""
    outputs, stats = _windowed_logits(module, text, text_pair)
    return {"value": outputs[:, 0], **stats}


def _token_logits(module, ids):
    """`(mean logits (num_tokens_in_batch, tags), num_windows)`: each token's logits averaged over its windows."""
    windows, owner, start, length = text_windows.single_windows(ids, module._sequence_length, module._window_stride)
    logits = module._call_model(module.pack_texts(windows))  # [windows, length, tags]
    base = tf.gather(tf.cast(ids.row_starts(), tf.int32), owner) + start
    token = tf.ragged.range(base, base + length)  # each window position's index into ids.flat_values
    window_of = tf.cast(token.value_rowids(), tf.int32)
    position = tf.ragged.range(length).flat_values + 1  # +1: after [CLS]
    values = tf.gather_nd(logits, tf.stack([window_of, position], axis=1))
    total = tf.size(ids.flat_values)
    mean = text_windows.segment_mean(values, token.flat_values, total)
    counts = tf.math.bincount(owner, minlength=tf.size(ids.row_lengths()), maxlength=tf.size(ids.row_lengths()))
    return mean, counts


def token_classifier_outputs(module, text):
    """Entity spans: each word takes the tag of its first wordpiece; BIO runs become entities.

    The same decoding as `TokenClassifierPipeline` and seqeval's default mode:
    an entity starts at `B-X`, or at an `I-X` that does not continue an `X`,
    and runs over the following `I-X`. Long texts are windowed as the
    pipeline windows them, and a token's logits are averaged over the windows
    that hold it. `token_probabilities` holds one row per wordpiece (no
    [CLS]/[SEP]), zeros past a text's last token.
    """
    tokenizer = module.tokenizer
    ids, char_starts, char_ends = tokenizer.tokenize_with_offsets(text, unit="char")
    _, byte_starts, byte_ends = tokenizer.tokenize_with_offsets(text, unit="byte")
    token_logits, counts = _token_logits(module, ids)
    token_probabilities = tf.nn.softmax(token_logits, axis=-1)  # [tokens of the batch, tags]
    batch_size = tf.shape(text, out_type=tf.int64)[0]
    row_of_word, first, last = _kept_words(tokenizer.tokenize_words(text))

    # Tag of each word = argmax at its first wordpiece.
    first_token = tf.gather(ids.row_starts(), row_of_word) + first
    word_probabilities = tf.gather(token_probabilities, first_token)
    tag = tf.argmax(word_probabilities, axis=-1)
    word_score = tf.reduce_max(word_probabilities, axis=-1)
    names = module._label_names
    prefixes = tf.constant([_split_tag(n)[0] for n in names])
    types = tf.constant([_split_tag(n)[1] for n in names])
    prefix, entity_type = tf.gather(prefixes, tag), tf.gather(types, tag)

    in_entity, begins = _entity_words(row_of_word, prefix, entity_type)
    entity_of_word = tf.cumsum(tf.cast(begins, tf.int64)) - 1
    word_in_entity = tf.boolean_mask(entity_of_word, in_entity)
    num_total = tf.reduce_sum(tf.cast(begins, tf.int64))

    def per_entity(values, reduce):
        return reduce(tf.boolean_mask(values, in_entity), word_in_entity, num_segments=num_total)

    first_token = per_entity(first, tf.math.unsorted_segment_min)
    last_token = per_entity(last, tf.math.unsorted_segment_max)
    score = per_entity(word_score, tf.math.unsorted_segment_mean)
    entity_row = tf.boolean_mask(row_of_word, begins)
    kind = tf.boolean_mask(entity_type, begins)

    def token_value(offsets, token):
        return tf.gather(offsets.flat_values, tf.gather(offsets.row_starts(), entity_row) + token)

    start = token_value(char_starts, first_token)
    end = token_value(char_ends, last_token)
    byte_start = tf.cast(token_value(byte_starts, first_token), tf.int32)
    byte_end = tf.cast(token_value(byte_ends, last_token), tf.int32)
    entity_text = tf.strings.substr(tf.gather(text, entity_row), byte_start, byte_end - byte_start)

    def padded(values, default):
        ragged = tf.RaggedTensor.from_value_rowids(values, entity_row, nrows=batch_size)
        return ragged.to_tensor(default_value=default)

    return {
        "entity_type": padded(kind, ""),
        "entity_text": padded(entity_text, ""),
        "entity_start": padded(start, -1),
        "entity_end": padded(end, -1),
        "entity_score": padded(score, -1.0),
        "num_entities": tf.cast(tf.math.bincount(tf.cast(entity_row, tf.int32), minlength=tf.cast(batch_size, tf.int32)), tf.int32),
        "token_probabilities": tf.RaggedTensor.from_row_splits(token_probabilities, ids.row_splits).to_tensor(0.0),
        **_stats(ids.row_lengths(), counts, tf.zeros_like(counts)),
    }


def _kept_words(words):
    """`(row_of_word, first, last)`: each word's row and its first and last token's index in the row.

    `words` is the tokenizer's `(batch, words, wordpieces)` ragged tensor;
    words without tokens are dropped.
    """
    pieces = tf.cast(words.row_lengths(axis=2), tf.int64)  # [batch, (words)]
    row_of_word = pieces.value_rowids()
    word_end_in_row = tf.cumsum(pieces, axis=1).flat_values  # exclusive end, per row
    word_start_in_row = word_end_in_row - pieces.flat_values
    keep = pieces.flat_values > 0
    row_of_word = tf.boolean_mask(row_of_word, keep)
    first = tf.boolean_mask(word_start_in_row, keep)
    last = tf.boolean_mask(word_end_in_row, keep) - 1
    return row_of_word, first, last


def _entity_words(row_of_word, prefix, entity_type):
    """`(in_entity, begins)` per word, as seqeval decodes BIO tags.

    A word starts an entity if B, or I not continuing the same type in the
    same row; it continues one if I of the previous word's type.
    """
    previous_ok = tf.concat([[False], row_of_word[1:] == row_of_word[:-1]], axis=0)
    previous_prefix = tf.concat([[""], prefix[:-1]], axis=0)
    previous_type = tf.concat([[""], entity_type[:-1]], axis=0)
    continues = (
        previous_ok
        & (prefix == "I")
        & ((previous_prefix == "B") | (previous_prefix == "I"))
        & (previous_type == entity_type)
    )
    in_entity = (prefix == "B") | (prefix == "I")
    return in_entity, in_entity & ~continues


def _split_tag(name):
    """("B" | "I" | "", type) of a tag name, as `keras_bert.metrics.entities` reads it."""
    if name in ("O", ""):
        return "", ""
    prefix, _, entity_type = name.partition("-")
    if prefix not in ("B", "I"):
        return "", ""
    return prefix, entity_type or "_"


def question_answerer_outputs(module, question, context):
    """The best answer span over all windows of the context, decoded as `QuestionAnswererPipeline` decodes.

    The question keeps its first `max_query_length` tokens; the context is
    cut into windows every `doc_stride` tokens that fill the rest of the
    sequence. In every window the `n_best_size` best start and end positions
    are paired; a pair counts if both are context tokens, the start token is
    in its max-context window (BERT's rule, `max_context_mask`), the end is
    not before the start and the span has at most `max_answer_length` tokens.
    Span score = start logit + end logit; `score` is the chosen span's
    probability among the example's `n_best_size` best spans (and "no
    answer" with `allow_no_answer`, whose score is the lowest [CLS] score of
    the windows). With `allow_no_answer`, the answer is "" with start = end =
    -1 when "no answer" beats the best span by more than
    `null_score_diff_threshold`.
    """
    windows = _qa_windows(module, question, context)
    outputs = module._call_model(module.pack_texts(windows["question"], windows["context"]))
    return _decode_spans(module, context, windows, outputs["start"], outputs["end"])


def _qa_windows(module, question, context):
    """Question + context windows, their table, the context offsets and the per-example stats."""
    tokenizer = module.tokenizer
    question_ids = tokenizer.tokenize(question)
    question_lengths = tf.cast(question_ids.row_lengths(), tf.int32)
    question_ids = question_ids[:, : module._max_query_length]
    kept_question = tf.cast(question_ids.row_lengths(), tf.int32)
    context_ids, char_starts, char_ends = tokenizer.tokenize_with_offsets(context, unit="char")
    _, byte_starts, byte_ends = tokenizer.tokenize_with_offsets(context, unit="byte")
    lengths = tf.cast(context_ids.row_lengths(), tf.int32)
    window = module._sequence_length - 3 - kept_question
    stride = tf.minimum(module._doc_stride, window)
    owner, start, length = text_windows.window_table(lengths, window, stride)
    counts = tf.math.bincount(owner, minlength=tf.size(lengths), maxlength=tf.size(lengths))
    return {
        "question": tf.gather(question_ids, owner),
        "context": text_windows.gather_windows(context_ids, owner, start, length),
        "owner": owner, "start": start, "length": length, "lengths": lengths, "window": window, "stride": stride,
        "first_context": tf.gather(kept_question, owner) + 2,  # [CLS] question [SEP]
        "offsets": (char_starts, char_ends, byte_starts, byte_ends),
        "stats": _stats(lengths, counts, question_lengths - kept_question),
    }


def _decode_spans(module, context, windows, start_logits, end_logits):
    """The answer of every example from its windows' start and end logits `(num_windows, width)`."""
    owner, first_context = windows["owner"], windows["first_context"]
    width = tf.shape(start_logits)[1]
    batch_size = tf.size(windows["lengths"])
    j = tf.range(width)[tf.newaxis, :] - first_context[:, tf.newaxis]  # context token in the window
    is_context = (j >= 0) & (j < windows["length"][:, tf.newaxis])
    is_max = text_windows.max_context(
        windows["lengths"], windows["window"], windows["stride"], owner, windows["start"], windows["length"],
        width, module._max_context_offset,
    )
    # is_max is indexed by context token; shift it to sequence positions.
    is_max = tf.gather(is_max, tf.clip_by_value(j, 0, width - 1), batch_dims=1) & is_context
    k = tf.minimum(module._n_best_size, width)
    top_start_logits, top_starts = tf.math.top_k(start_logits, k)
    top_end_logits, top_ends = tf.math.top_k(end_logits, k)
    s, e = top_starts[:, :, tf.newaxis], top_ends[:, tf.newaxis, :]
    valid = (
        tf.gather(is_max, top_starts, batch_dims=1)[:, :, tf.newaxis]
        & tf.gather(is_context, top_ends, batch_dims=1)[:, tf.newaxis, :]
        & (e >= s) & (e - s < module._max_answer_length)
    )
    pair_scores = top_start_logits[:, :, tf.newaxis] + top_end_logits[:, tf.newaxis, :]
    flat = tf.reshape(tf.where(valid, pair_scores, -float("inf")), [-1, k * k])

    def per_example(values, default):  # [windows, k*k] -> [batch, windows*k*k]
        ragged = tf.RaggedTensor.from_value_rowids(values, owner, nrows=batch_size)
        return ragged.merge_dims(1, 2).to_tensor(default_value=default)

    candidates = per_example(flat, -float("inf"))
    window_of = per_example(tf.repeat(tf.range(tf.size(owner))[:, tf.newaxis], k * k, axis=1), 0)
    start_of = per_example(tf.reshape(tf.broadcast_to(s, tf.shape(valid)), [-1, k * k]), 0)
    end_of = per_example(tf.reshape(tf.broadcast_to(e, tf.shape(valid)), [-1, k * k]), 0)
    ranked, order = tf.math.top_k(candidates, tf.minimum(module._n_best_size, tf.shape(candidates)[1]))
    has_span = tf.reduce_any(tf.math.is_finite(ranked), axis=1)
    best_score = _first_or(ranked, 0.0)
    null_score = tf.math.unsorted_segment_min(start_logits[:, 0] + end_logits[:, 0], owner, batch_size)
    pool = ranked
    if module._allow_no_answer:
        pool = tf.concat([ranked, null_score[:, tf.newaxis]], axis=1)
    log_total = tf.reduce_logsumexp(pool, axis=1)
    answered = has_span
    if module._allow_no_answer:
        answered = has_span & ~(null_score - best_score > module._null_score_diff_threshold)
        no_answer_probability = tf.exp(null_score - log_total)
    else:
        no_answer_probability = tf.zeros_like(best_score)
    score = tf.where(answered, tf.exp(best_score - log_total), no_answer_probability)
    best = _first_or(order, 0)

    def chosen(values):
        return _first_or(tf.gather(values, best[:, tf.newaxis], batch_dims=1), 0)

    window_index = chosen(window_of)
    offset = tf.gather(windows["start"] - first_context, window_index)  # sequence position -> context token
    start_token, end_token = chosen(start_of) + offset, chosen(end_of) + offset
    char_starts, char_ends, byte_starts, byte_ends = windows["offsets"]

    def context_value(offsets, token):
        # Dense with one spare column, so rows with an empty context index something.
        dense = tf.pad(offsets.to_tensor(default_value=0), [[0, 0], [0, 1]])
        return tf.gather(dense, tf.maximum(token, 0), batch_dims=1)

    byte_start = context_value(byte_starts, start_token)
    byte_end = context_value(byte_ends, end_token)
    answer = tf.strings.substr(context, byte_start, tf.maximum(byte_end - byte_start, 0))
    return {
        "answer": tf.where(answered, answer, ""),
        "answer_start": tf.where(answered, context_value(char_starts, start_token), -1),
        "answer_end": tf.where(answered, context_value(char_ends, end_token), -1),
        "score": score,
        **windows["stats"],
    }


def _first_or(values, default):
    """`values[:, 0]`, or `default` for rows of a zero-width `values` `(batch, 0)`."""
    padded = tf.concat([values, tf.fill([tf.shape(values)[0], 1], tf.cast(default, values.dtype))], axis=1)
    return padded[:, 0]


def multiple_choice_outputs(module, context, choices):
    """The best choice by probability; each (context, choice) pair windowed as `MultipleChoicePipeline` does.

    A pair too long for one sequence is windowed over its longer segment
    (`pair_window_spans`); a choice's logit is the mean over its windows.
    `num_windows` is the most windows of any of a context's choices,
    `num_truncated_tokens` the tokens no window holds, summed over its choices.
    """
    tokenizer = module.tokenizer
    batch_size, num_choices = tf.shape(choices)[0], tf.shape(choices)[1]
    context_ids = tokenizer.tokenize(tf.repeat(context, num_choices))
    windows_a, windows_b, owner, dropped = text_windows.pair_windows(
        context_ids, tokenizer.tokenize(tf.reshape(choices, [-1])), module._sequence_length,
        module._window_stride or module._sequence_length,
    )
    # One sequence per block: its logit does not depend on the other sequences of the block.
    packed = {k: v[:, tf.newaxis, :] for k, v in module.pack_texts(windows_a, windows_b).items()}
    logits = text_windows.segment_mean(module._call_model(packed)[:, 0], owner, batch_size * num_choices)
    probabilities = tf.nn.softmax(tf.reshape(logits, [batch_size, num_choices]), axis=-1)
    choice = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
    counts = tf.math.bincount(owner, minlength=batch_size * num_choices, maxlength=batch_size * num_choices)
    lengths = tf.reshape(tf.cast(context_ids.row_lengths(), tf.int32), [batch_size, num_choices])
    return {
        "probabilities": probabilities,
        "choice": choice,
        "choice_text": tf.gather(choices, choice, batch_dims=1),
        "score": tf.reduce_max(probabilities, axis=-1),
        **_stats(
            _first_or(lengths, 0),
            tf.reduce_max(tf.reshape(counts, [batch_size, num_choices]), axis=1),
            tf.reduce_sum(tf.reshape(dropped, [batch_size, num_choices]), axis=1),
        ),
    }

