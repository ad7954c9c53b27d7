"""What each task's exported signatures return, written as TensorFlow graph code.

Every output has the batch as its first axis (what TF Serving's row format
needs). Per-example lists (entities) are padded: strings with "", numbers
with -1, and `num_entities` says how many are real.

| task              | `serve_token_ids`                  | `serve_text`                                                        |
|-------------------|------------------------------------|---------------------------------------------------------------------|
| backbone          | sequence_output, pooled_output     | + padding_mask (embeddings of raw text)                             |
| classifier        | logits, probabilities              | probabilities, label, score                                         |
| regressor         | value                              | value                                                               |
| token_classifier  | logits, probabilities              | entity_type/text/start/end/score, num_entities, token_probabilities |
| question_answerer | start_logits, end_logits           | answer, answer_start, answer_end, score                             |
| multiple_choice   | logits, probabilities              | probabilities, choice, choice_text, score                           |

Character offsets (`entity_start`, `answer_start`, ...) index the original
string in Unicode code points, as Python's `text[start:end]` does.
"""

import tensorflow as tf

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
    return {"logits": outputs, "probabilities": tf.nn.softmax(outputs, axis=-1)}


def text_outputs(module, **texts):
    """The `serve_text` outputs of `module`'s task, from its raw-string inputs."""
    if module._task == "backbone":
        return _backbone_outputs(module, **texts)
    return get_task(module._task).load("export_outputs")(module, **texts)


def _backbone_outputs(module, text, text_pair=None):
    """Embeddings of raw text, with the padding mask that says which positions are tokens."""
    inputs = module.pack_texts(text, text_pair)
    outputs = module._call_model(inputs)
    return {**outputs, "padding_mask": inputs["padding_mask"]}


def classifier_outputs(module, text, text_pair=None):
    """The most probable label (a name when the module has a label table), its score, all probabilities."""
    logits = module._call_model(module.pack_texts(text, text_pair))
    probabilities = tf.nn.softmax(logits, axis=-1)
    best = tf.argmax(probabilities, axis=-1)
    if module.label_table is not None:
        label = module.label_table.lookup(best)
    else:
        label = tf.strings.as_string(best)
    return {"probabilities": probabilities, "label": label, "score": tf.reduce_max(probabilities, axis=-1)}


def regressor_outputs(module, text, text_pair=None):
    """The predicted value of each text (or text pair)."""
    outputs = module._call_model(module.pack_texts(text, text_pair))
    return {"value": outputs[:, 0]}


def token_classifier_outputs(module, text):
    """Entity spans: each word takes the tag of its first wordpiece; BIO runs become entities.

    The same decoding as `TokenClassifierPipeline` and seqeval's default mode:
    an entity starts at `B-X`, or at an `I-X` that does not continue an `X`,
    and runs over the following `I-X`. Tokens past the sequence length get no
    tag (the text is truncated; the Python pipeline windows instead).
    """
    tokenizer = module.tokenizer
    ids, char_starts, char_ends = tokenizer.tokenize_with_offsets(text, unit="char")
    _, byte_starts, byte_ends = tokenizer.tokenize_with_offsets(text, unit="byte")
    inputs = module.pack_texts(ids)
    probabilities = tf.nn.softmax(module._call_model(inputs), axis=-1)  # [batch, length, tags]
    batch_size = tf.shape(text, out_type=tf.int64)[0]
    row_of_word, first, last = _kept_words(tokenizer.tokenize_words(text), inputs["padding_mask"])

    # Tag of each word = argmax at its first wordpiece (+1: after [CLS]).
    word_probabilities = tf.gather_nd(probabilities, tf.stack([row_of_word, first + 1], axis=1))
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
        "token_probabilities": probabilities,
    }


def _kept_words(words, padding_mask):
    """`(row_of_word, first, last)`: each word's row and its first and last token's index in the row.

    `words` is the tokenizer's `(batch, words, wordpieces)` ragged tensor;
    words past the packed length (truncation) or without tokens are dropped.
    """
    pieces = tf.cast(words.row_lengths(axis=2), tf.int64)  # [batch, (words)]
    row_of_word = pieces.value_rowids()
    word_end_in_row = tf.cumsum(pieces, axis=1).flat_values  # exclusive end, per row
    word_start_in_row = word_end_in_row - pieces.flat_values
    kept_tokens = tf.cast(tf.reduce_sum(padding_mask, axis=-1), tf.int64) - 2
    keep = (pieces.flat_values > 0) & (word_end_in_row <= tf.gather(kept_tokens, row_of_word))
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
    """The best span of the (first window of the) context, as `QuestionAnswererPipeline` scores spans.

    The question keeps its first `max_query_length` tokens and the context
    fills the rest of the sequence; context past it is not searched (the
    Python pipeline windows long contexts instead). Span score =
    start logit + end logit over spans of at most `max_answer_length` tokens
    inside the context; `score` is that span's probability among all such
    spans. With `allow_no_answer`, [CLS] wins when its score is higher and the
    answer is "" with start = end = -1.
    """
    tokenizer = module.tokenizer
    question_ids = tokenizer.tokenize(question)[:, : module._max_query_length]
    context_ids, char_starts, char_ends = tokenizer.tokenize_with_offsets(context, unit="char")
    _, byte_starts, byte_ends = tokenizer.tokenize_with_offsets(context, unit="byte")
    question_length = tf.cast(question_ids.row_lengths(), tf.int32)
    budget = module._sequence_length - 3 - question_length
    context_kept = tf.minimum(tf.cast(context_ids.row_lengths(), tf.int32), budget)
    context_ids = tf.ragged.boolean_mask(
        context_ids,
        tf.ragged.range(context_ids.row_lengths()) < tf.cast(context_kept, tf.int64)[:, tf.newaxis],
    )
    inputs = module.pack_texts(question_ids, context_ids)
    outputs = module._call_model(inputs)
    start_logits, end_logits = outputs["start"], outputs["end"]
    length = tf.shape(start_logits)[1]

    # Context token k sits at position question_length + 2 + k.
    offset = question_length + 2
    positions = tf.range(length)[tf.newaxis, :]
    is_context = (positions >= offset[:, tf.newaxis]) & (positions < (offset + context_kept)[:, tf.newaxis])
    valid = (
        is_context[:, :, tf.newaxis]
        & is_context[:, tf.newaxis, :]
        & (positions[:, :, tf.newaxis] <= positions[:, tf.newaxis, :])
        & (positions[:, tf.newaxis, :] - positions[:, :, tf.newaxis] < module._max_answer_length)
    )
    span_scores = start_logits[:, :, tf.newaxis] + end_logits[:, tf.newaxis, :]
    span_scores = tf.where(valid, span_scores, -1e9)
    flat = tf.reshape(span_scores, [tf.shape(span_scores)[0], -1])
    best = tf.argmax(flat, axis=-1, output_type=tf.int32)
    best_score = tf.reduce_max(flat, axis=-1)
    has_span = tf.reduce_any(valid, axis=[1, 2])
    probability = tf.exp(best_score - tf.reduce_logsumexp(flat, axis=-1))
    start_token = best // length - offset
    end_token = best % length - offset
    answered = has_span
    if module._allow_no_answer:
        null_score = start_logits[:, 0] + end_logits[:, 0]
        answered = has_span & (best_score > null_score)

    def context_value(offsets, token):
        # Dense with one spare column, so rows with an empty context index something.
        dense = tf.pad(offsets.to_tensor(default_value=0), [[0, 0], [0, 1]])
        return tf.gather(dense, tf.maximum(token, 0), batch_dims=1)

    answered = answered & (context_kept > 0)
    start = context_value(char_starts, start_token)
    end = context_value(char_ends, end_token)
    byte_start = context_value(byte_starts, start_token)
    byte_end = context_value(byte_ends, end_token)
    answer = tf.strings.substr(context, byte_start, tf.maximum(byte_end - byte_start, 0))
    return {
        "answer": tf.where(answered, answer, ""),
        "answer_start": tf.where(answered, start, -1),
        "answer_end": tf.where(answered, end, -1),
        "score": tf.where(has_span, probability, 0.0),
    }


def multiple_choice_outputs(module, context, choices):
    """Pairs (context, choice) packed per choice; the best choice by probability."""
    num_choices = tf.shape(choices)[1]
    packed = module.pack_texts(tf.repeat(context, num_choices), tf.reshape(choices, [-1]))
    packed = {k: tf.reshape(v, [-1, num_choices, tf.shape(v)[-1]]) for k, v in packed.items()}
    probabilities = tf.nn.softmax(module._call_model(packed), axis=-1)
    choice = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
    return {
        "probabilities": probabilities,
        "choice": choice,
        "choice_text": tf.gather(choices, choice, batch_dims=1),
        "score": tf.reduce_max(probabilities, axis=-1),
    }

