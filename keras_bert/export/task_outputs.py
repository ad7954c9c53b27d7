"""What each task's exported signatures return: the model in the graph between tokenization and post-processing.

Every output has the batch as its first axis (what TF Serving's row format
needs). Per-example lists (entities) are padded: strings with "", numbers
with -1, and `num_entities` says how many are real.

`serve_text` reads texts as the Python pipelines (`keras_bert.pipelines`)
do, with the same functions: `keras_bert.postprocessing` builds the windows
over texts longer than the sequence and turns the model's outputs into
answers (mean logits for classifiers, regressors and choices; mean token
logits and BIO decoding for the tagger; BERT's max-context rule and n-best
decoding for answers); here they are traced into the graph. Every
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
| text_embedder     | embeddings                         | embeddings                                                          |

Character offsets (`entity_start`, `answer_start`, ...) index the original
string in Unicode code points, as Python's `text[start:end]` does.
"""

import tensorflow as tf

from keras_bert.models import BertBackbone, BertMaskedLM, BertPretrainer
from keras_bert.postprocessing import answer_spans, entity_spans, text_windows
from keras_bert.postprocessing.label_scores import label_scores
from keras_bert.preprocessing.trimmed_offsets import trimmed_offsets
from keras_bert.task_registry import get_task, task_for_model


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


def _one_sequence(module, text, text_pair=None):
    """`(inputs, outputs, stats)` of texts read as one sequence each: truncated (longest first), not windowed."""
    lengths = tf.cast(module.tokenizer.tokenize(text).row_lengths(), tf.int32)
    budget = module._sequence_length - 2
    if text_pair is not None:
        lengths += tf.cast(module.tokenizer.tokenize(text_pair).row_lengths(), tf.int32)
        budget -= 1
    inputs = module.pack_texts(text, text_pair)
    stats = _stats(lengths, tf.ones_like(lengths), tf.maximum(lengths - budget, 0))
    return inputs, module._call_model(inputs), stats


def _backbone_outputs(module, text, text_pair=None):
    """Embeddings of raw text, with the padding mask that says which positions are tokens.

    Embeddings are per sequence, so a backbone truncates (longest first, as
    in training) instead of windowing; `num_truncated_tokens` says how much.
    """
    inputs, outputs, stats = _one_sequence(module, text, text_pair)
    return {**outputs, "padding_mask": inputs["padding_mask"], **stats}


def text_embedder_outputs(module, text):
    """One embedding per text `(batch, hidden_dim)`, read as `TextEmbedderPipeline` reads it: cut to one sequence."""
    _, embeddings, stats = _one_sequence(module, text)
    return {"embeddings": embeddings, **stats}


def _windowed_logits(module, text, text_pair=None):
    """`(float64 logits (batch, ...), stats)`: the model's logits averaged over each text's windows."""
    tokenizer = module.tokenizer
    ids = tokenizer.tokenize(text)
    lengths = tf.cast(ids.row_lengths(), tf.int32)
    pair_ids = None
    if text_pair is not None:
        pair_ids = tokenizer.tokenize(text_pair)
        lengths += tf.cast(pair_ids.row_lengths(), tf.int32)
    windows = text_windows.windows_of(
        ids, module._sequence_length, module._window_stride, pair_ids, module.packer.separators_between
    )
    outputs = module._call_model(module.pack_texts(windows["first"], windows["second"]))
    batch_size = tf.size(lengths)
    logits = text_windows.mean_over_windows(outputs, windows["owner"], batch_size)
    return logits, _stats(lengths, text_windows.windows_per_row(windows["owner"], batch_size), windows["dropped"])


def classifier_outputs(module, text, text_pair=None):
    """The most probable label (a name when the module has a label table), its score, all probabilities."""
    logits, stats = _windowed_logits(module, text, text_pair)
    probabilities, best, score = label_scores(logits)
    label = module.label_table.lookup(best) if module.label_table is not None else tf.strings.as_string(best)
    return {"probabilities": tf.cast(probabilities, tf.float32), "label": label, "score": tf.cast(score, tf.float32),
            **stats}


def regressor_outputs(module, text, text_pair=None):
    """The predicted value of each text (or text pair), averaged over its windows."""
    outputs, stats = _windowed_logits(module, text, text_pair)
    return {"value": tf.cast(outputs[:, 0], tf.float32), **stats}


def token_classifier_outputs(module, text):
    """Entity spans, read as `TokenClassifierPipeline` reads them (`keras_bert.postprocessing.entity_spans`).

    `token_probabilities` holds one row per wordpiece (no [CLS]/[SEP]),
    zeros past a text's last token.
    """
    tokenizer = module.tokenizer
    ids, char_starts, char_ends, byte_starts, byte_ends = trimmed_offsets(tokenizer, text)
    windows = text_windows.windows_of(ids, module._sequence_length, module._window_stride)
    logits = module._call_model(module.pack_texts(windows["first"]))  # (windows, length, tags)
    token_logits = text_windows.token_mean_over_windows(
        logits, windows["owner"], windows["start"], windows["length"], ids.row_starts(), tf.size(ids.flat_values)
    )
    token_probabilities, words, entities = entity_spans.read_entities(
        token_logits, tokenizer.tokenize_words(text), ids.row_starts(), module._label_names
    )
    row = entities["row"]
    first_token = tf.gather(words["first_token"], entities["first_word"])
    last_token = tf.gather(words["last_token"], entities["last_word"])

    def token_value(offsets, token):
        return tf.gather(offsets.flat_values, tf.gather(offsets.row_starts(), row) + token)

    byte_start = tf.cast(token_value(byte_starts, first_token), tf.int32)
    byte_end = tf.cast(token_value(byte_ends, last_token), tf.int32)
    batch_size = tf.shape(text, out_type=tf.int64)[0]

    def padded(values, default):
        return tf.RaggedTensor.from_value_rowids(values, row, nrows=batch_size).to_tensor(default_value=default)

    counts = text_windows.windows_per_row(windows["owner"], tf.cast(batch_size, tf.int32))
    return {
        "entity_type": padded(entities["type"], ""),
        "entity_text": padded(tf.strings.substr(tf.gather(text, row), byte_start, byte_end - byte_start), ""),
        "entity_start": padded(token_value(char_starts, first_token), -1),
        "entity_end": padded(token_value(char_ends, last_token), -1),
        "entity_score": padded(tf.cast(entities["score"], tf.float32), -1.0),
        "num_entities": tf.math.bincount(
            tf.cast(row, tf.int32), minlength=tf.cast(batch_size, tf.int32), dtype=tf.int32
        ),
        "token_probabilities": tf.RaggedTensor.from_row_splits(
            tf.cast(token_probabilities, tf.float32), ids.row_splits
        ).to_tensor(0.0),
        **_stats(ids.row_lengths(), counts, tf.zeros_like(counts)),
    }


def question_answerer_outputs(module, question, context):
    """The best answer span over all windows of the context, decoded as `QuestionAnswererPipeline` decodes.

    The question keeps its first `max_query_length` tokens; the context is
    cut into windows every `doc_stride` tokens that fill the rest of the
    sequence, and `keras_bert.postprocessing.answer_spans` decodes them
    (BERT's max-context rule and n-best decoding; `score` is the answer's
    probability among the n-best spans, and "no answer" with
    `allow_no_answer`). The answer is "" with start = end = -1 when nothing
    is answered.
    """
    windows = _qa_windows(module, question, context)
    # Packed to the full sequence length, as the pipeline packs them: the n-best start and end positions
    # are taken over every position of a window, padding included (run_squad's rule).
    outputs = module._call_model(module.packer(windows["question"], windows["context"]))
    return _decode_spans(module, context, windows, outputs["start"], outputs["end"])


def _qa_windows(module, question, context):
    """Question + context windows, their table, the context offsets and the per-example stats."""
    tokenizer = module.tokenizer
    question_ids = tokenizer.tokenize(question)
    question_lengths = tf.cast(question_ids.row_lengths(), tf.int32)
    question_ids = question_ids[:, : module._max_query_length]
    kept_question = tf.cast(question_ids.row_lengths(), tf.int32)
    context_ids, char_starts, char_ends, byte_starts, byte_ends = trimmed_offsets(tokenizer, context)
    lengths = tf.cast(context_ids.row_lengths(), tf.int32)
    separators = module.packer.separators_between  # [CLS] question [SEP] context [SEP] (RoBERTa: </s></s>)
    window = module._sequence_length - 2 - separators - kept_question
    owner, start, length = text_windows.window_table(lengths, window, tf.minimum(module._doc_stride, window))
    return {
        "question": tf.gather(question_ids, owner),
        "context": text_windows.gather_windows(context_ids, owner, start, length),
        "owner": owner, "start": start, "length": length, "row_starts": context_ids.row_starts(),
        "first_context": tf.gather(kept_question, owner) + 1 + separators,
        "offsets": (char_starts, char_ends, byte_starts, byte_ends),
        "stats": _stats(
            lengths, text_windows.windows_per_row(owner, tf.size(lengths)), question_lengths - kept_question
        ),
    }


def _decode_spans(module, context, windows, start_logits, end_logits):
    """The answer of every example from its windows' start and end logits `(num_windows, width)`."""
    owner, start, length = windows["owner"], windows["start"], windows["length"]
    width = tf.shape(start_logits)[1]
    j = tf.range(width)[tf.newaxis, :] - windows["first_context"][:, tf.newaxis]  # context token in the window
    is_context = (j >= 0) & (j < length[:, tf.newaxis])
    # max_context is indexed by context token; shift it to sequence positions.
    is_max = text_windows.max_context(owner, start, length, width, module._max_context_offset)
    is_max = tf.gather(is_max, tf.clip_by_value(j, 0, width - 1), batch_dims=1) & is_context
    base = tf.gather(tf.cast(windows["row_starts"], tf.int32), owner) + start
    token = base[:, tf.newaxis] + tf.clip_by_value(j, 0, tf.maximum(length - 1, 0)[:, tf.newaxis])

    def at_positions(offsets):  # (num_windows, width): each position's token offset (0 past the tokens)
        return tf.gather(tf.concat([offsets.flat_values, [0]], axis=0), token)

    char_starts, char_ends, byte_starts, byte_ends = windows["offsets"]
    batch_size = tf.size(context)
    spans = answer_spans.nbest_spans(
        start_logits, end_logits, owner, batch_size, is_max, is_context, at_positions(char_starts),
        at_positions(char_ends), module._n_best_size, module._max_answer_length,
    )
    answered, score, _ = answer_spans.choose_answers(
        spans["logit"], spans["null_score"], module._allow_no_answer, module._null_score_diff_threshold
    )

    def best(values):  # the first of each example's n-best, 0 for an example without candidates
        return tf.concat([values, tf.zeros([batch_size, 1], values.dtype)], axis=1)[:, 0]

    window, first, last = best(spans["window"]), best(spans["start"]), best(spans["end"])
    # An example without an answer reads no bytes (its "window 0" may be another example's).
    byte_start = tf.where(answered, tf.gather_nd(at_positions(byte_starts), tf.stack([window, first], axis=1)), 0)
    byte_end = tf.where(answered, tf.gather_nd(at_positions(byte_ends), tf.stack([window, last], axis=1)), 0)
    answer = tf.strings.substr(context, byte_start, tf.maximum(byte_end - byte_start, 0))
    offset_type = char_starts.flat_values.dtype
    return {
        "answer": tf.where(answered, answer, ""),
        "answer_start": tf.where(answered, tf.cast(best(spans["char_start"]), offset_type), -1),
        "answer_end": tf.where(answered, tf.cast(best(spans["char_end"]), offset_type), -1),
        "score": tf.cast(score, tf.float32),
        **windows["stats"],
    }


def multiple_choice_outputs(module, context, choices):
    """The best choice by probability; each (context, choice) pair windowed as `MultipleChoicePipeline` does.

    A pair too long for one sequence is windowed over its longer segment; a
    choice's logit is the mean over its windows. `num_windows` is the most
    windows of any of a context's choices, `num_truncated_tokens` the tokens
    no window holds, summed over its choices.
    """
    tokenizer = module.tokenizer
    batch_size, num_choices = tf.shape(choices)[0], tf.shape(choices)[1]
    windows = text_windows.windows_of(
        tokenizer.tokenize(tf.repeat(context, num_choices)), module._sequence_length, module._window_stride,
        tokenizer.tokenize(tf.reshape(choices, [-1])), module.packer.separators_between,
    )
    # One sequence per block: its logit does not depend on the other sequences of the block.
    packed = {k: v[:, tf.newaxis, :] for k, v in module.pack_texts(windows["first"], windows["second"]).items()}
    rows = batch_size * num_choices
    logits = text_windows.mean_over_windows(module._call_model(packed)[:, 0], windows["owner"], rows)
    probabilities, choice, score = label_scores(tf.reshape(logits, [batch_size, num_choices]))
    choice = tf.cast(choice, tf.int32)
    counts = tf.reshape(text_windows.windows_per_row(windows["owner"], rows), [batch_size, num_choices])
    return {
        "probabilities": tf.cast(probabilities, tf.float32),
        "choice": choice,
        "choice_text": tf.gather(choices, choice, batch_dims=1),
        "score": tf.cast(score, tf.float32),
        **_stats(
            tokenizer.tokenize(context).row_lengths(),
            tf.reduce_max(counts, axis=1),
            tf.reduce_sum(tf.reshape(windows["dropped"], [batch_size, num_choices]), axis=1),
        ),
    }
