"""Extractive question answering data: SQuAD 1.1 / 2.0 JSON → windowed `TaskFeatures` → answer spans.

    examples = read_squad("train-v2.0.json")
    features = squad_features(examples, tokenizer, sequence_length=384)   # doc_stride 128, max_query_length 64
    model.fit(features.dataset(batch_size=32, shuffle=True), epochs=2)
    answers = decode_answers(model.predict(features.dataset(labels=False)), features, examples)

Each feature is `[CLS] question [SEP] context window [SEP]`. A context longer
than the room left by the question is cut into windows that start every
`doc_stride` tokens (as in Google's run_squad.py). A window that holds the
whole answer is labelled with its token positions; every other window, and
every window of an unanswerable (SQuAD 2.0) question, with position 0, the
[CLS] token, which stands for "no answer here". When answers are decoded, a
context token that lies in several windows may start an answer only in the
window where it has the most context (BERT's max-context rule). The windows,
the max-context rule and the n-best decoding are
`keras_bert.postprocessing`'s, the ones the pipelines and the exported
SavedModel run.

Answer positions come from the tokenizer's character offsets into the
original context, and predictions go back through the same offsets, so a
predicted answer is an exact substring of the original context (accents,
case and spacing as written).
"""

import dataclasses
import json
import os

import numpy as np
import tensorflow as tf

from keras_bert._utf8 import read_utf8
from keras_bert.postprocessing import answer_spans, text_windows
from keras_bert.preprocessing.trimmed_offsets import trimmed_offsets
from keras_bert.preprocessing.task_data.task_features import TaskFeatures

ON_MISMATCH = ("raise", "skip")


@dataclasses.dataclass
class SquadExample:
    """One question about one context.

    Attributes:
        id: the question id.
        question: the question text.
        context: the context paragraph.
        answers: list of `(text, answer_start)`, character offsets into
            `context`; empty for an unanswerable question. Training uses the
            first; evaluation accepts any.
        is_impossible: SQuAD 2.0's "no answer in the context".
        source: where it came from, `"file: data[i].paragraphs[j].qas[k]"`.
    """

    id: str
    question: str
    context: str
    answers: list = dataclasses.field(default_factory=list)
    is_impossible: bool = False
    source: str = ""

    @property
    def answer_texts(self):
        return [text for text, _ in self.answers]


def _require(mapping, key, kind, where):
    if not isinstance(mapping, dict) or key not in mapping:
        raise ValueError(f"{where}: missing {key!r}")
    value = mapping[key]
    if not isinstance(value, kind):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ValueError(f"{where}: {key!r} must be a {expected}, found {type(value).__name__}")
    return value


def read_squad(path, on_mismatch="raise", stats=None):
    """Reads a SQuAD 1.1 or 2.0 JSON file.

    Checks what a silent error would corrupt: every answer's text must
    equal `context[answer_start : answer_start + len(text)]`; an answerable
    question needs an answer and an unanswerable one none; ids are unique;
    questions and contexts are not empty.

    Args:
        path: the JSON file (`{"version": ..., "data": [{"paragraphs": [{"context", "qas": [...]}]}]}`).
        on_mismatch: "raise" (default) or "skip" for answers whose offsets do
            not match the context; "skip" drops such questions and counts them.
        stats: optional dict; receives `questions`, `unanswerable` and
            `skipped_mismatched_answers`.

    Returns:
        list of `SquadExample`.

    Raises:
        ValueError: naming the file, the question id and its place in the JSON.
    """
    path = os.fspath(path)
    if on_mismatch not in ON_MISMATCH:
        raise ValueError(f"`on_mismatch` must be one of {ON_MISMATCH}. Received: on_mismatch={on_mismatch!r}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"No such file: {path}")
    try:
        root = json.loads(read_utf8(path))
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{path}:{error.lineno}: not valid JSON ({error.msg}, column {error.colno}); truncated or hand-edited?"
        ) from None
    articles = _require(root, "data", list, f"{path}: not SQuAD JSON (expected {{'data': [...]}});")
    examples, seen, skipped = [], {}, 0
    for i, article in enumerate(articles):
        paragraphs = _require(article, "paragraphs", list, f"{path}: data[{i}]")
        for j, paragraph in enumerate(paragraphs):
            where_p = f"{path}: data[{i}].paragraphs[{j}]"
            context = _require(paragraph, "context", str, where_p)
            if not context.strip():
                raise ValueError(f"{where_p}: empty context")
            for k, qa in enumerate(_require(paragraph, "qas", list, where_p)):
                where = f"{where_p}.qas[{k}]"
                qid = str(_require(qa, "id", (str, int), where))
                where = f"{where} (id {qid!r})"
                question = _require(qa, "question", str, where)
                if not question.strip():
                    raise ValueError(f"{where}: empty question")
                if qid in seen:
                    raise ValueError(f"{where}: duplicate id, first seen at {seen[qid]}")
                seen[qid] = where
                impossible = qa.get("is_impossible", False)
                if not isinstance(impossible, bool):
                    raise ValueError(f"{where}: 'is_impossible' must be true or false, found {impossible!r}")
                answers, mismatch = [], None
                for a, answer in enumerate(_require(qa, "answers", list, where)):
                    text = _require(answer, "text", str, f"{where}.answers[{a}]")
                    start = _require(answer, "answer_start", int, f"{where}.answers[{a}]")
                    found = context[start : start + len(text)] if start >= 0 else None
                    if not text.strip() or found != text:
                        mismatch = (
                            f"{where}.answers[{a}]: answer {text!r} at answer_start={start} does not match the "
                            f"context there ({found!r})"
                        )
                        break
                    answers.append((text, start))
                if mismatch:
                    if on_mismatch == "raise":
                        raise ValueError(mismatch + "; fix the offsets, or read with on_mismatch='skip'")
                    skipped += 1
                    continue
                if impossible and answers:
                    raise ValueError(f"{where}: marked is_impossible but has {len(answers)} answer(s)")
                if not impossible and not answers:
                    raise ValueError(f"{where}: no answers and not marked is_impossible")
                examples.append(SquadExample(qid, question, context, answers, impossible, where))
    if not examples:
        raise ValueError(f"{path}: no questions")
    if stats is not None:
        stats.update(
            questions=len(examples),
            unanswerable=sum(e.is_impossible for e in examples),
            skipped_mismatched_answers=skipped,
        )
    return examples


def answer_token_span(starts, ends, answer_start, answer_end):
    """First and last token (inclusive) overlapping the characters `[answer_start, answer_end)`, or None.

    Args:
        starts, ends: the context tokens' character spans (`ends` exclusive).
    """
    first = next((t for t, end in enumerate(ends) if end > answer_start), None)
    last = next((t for t in range(len(starts) - 1, -1, -1) if starts[t] < answer_end), None)
    if first is None or last is None or last < first:
        return None
    return first, last


def fit_qa_lengths(sequence_length, doc_stride=128, max_query_length=64, separators_between=1):
    """`(max_query_length, doc_stride)` cut to fit `sequence_length`, as the pipeline and the SavedModel use them.

    The question keeps at most half the sequence; the stride is at most the
    context room beside the longest kept question.
    """
    max_query_length = min(max_query_length, sequence_length // 2)
    doc_stride = min(doc_stride, sequence_length - 2 - separators_between - max_query_length)
    return max_query_length, doc_stride


def check_question_answering_tokenizer(tokenizer):
    """Raises ValueError, saying why, for a tokenizer question answering cannot use.

    Answers are character spans of the context: the labels and the decoding
    both need each token's span (`tokenize_with_offsets`: BertTokenizer and
    the byte-level BPE ones have it, SentencePiece does not). Windows are
    `[CLS] question [SEP] context [SEP]`, or with the family's separators
    between the two (RoBERTa's `<s> question </s></s> context </s>`).
    """
    if not hasattr(tokenizer, "tokenize_with_offsets"):
        raise ValueError(
            "Question answering maps answers to character offsets, which needs a tokenizer with "
            f"`tokenize_with_offsets` (BertTokenizer, ModernBertTokenizer); {type(tokenizer).__name__} has none."
        )


def qa_window_lengths(sequence_length, doc_stride=None, max_query_length=None, separators_between=1):
    """`(max_query_length, doc_stride)` of windows of `sequence_length` tokens: the given ones checked, the others
    derived from the length.

    Left out (None), they keep the proportions of BERT's 64 and 128 at 384 tokens (Google's run_squad.py,
    transformers' run_qa.py): a question of a quarter of the sequence at most (64 at most), windows that start
    every third of it (128 at most, and never past the context room beside the question). At 64 tokens: 16
    and 21; at 128: 32 and 42.

    `separators_between`: separators between question and context (RoBERTa's 2), which take room too.

    Raises:
        ValueError: given values that do not fit `sequence_length`, naming values that do.
    """
    specials = 2 + separators_between
    if max_query_length is None:
        max_query_length = max(1, min(64, sequence_length // 4))
    if max_query_length < 1:
        raise ValueError(f"`max_query_length` must be at least 1. Received: max_query_length={max_query_length}")
    # [CLS] question [SEP] context [SEP], a question cut to leave at least one context token.
    room = sequence_length - specials - min(max_query_length, sequence_length - specials - 1)
    if doc_stride is None:
        return max_query_length, max(1, min(128, sequence_length // 3, room))
    if not 1 <= doc_stride <= room:
        defaults = "max_query_length={}, doc_stride={}".format(
            *qa_window_lengths(sequence_length, separators_between=separators_between)
        )
        question = sequence_length - specials - doc_stride  # the longest question that leaves doc_stride context tokens
        shorter = f", or max_query_length <= {question}" if 1 <= question < max_query_length else ""
        raise ValueError(
            f"`doc_stride` must be in [1, {room}] (the context tokens that fit beside a question of "
            f"max_query_length={max_query_length} in sequence_length={sequence_length}). Received: "
            f"doc_stride={doc_stride}. Values that fit: leave out doc_stride and max_query_length ({defaults}), or "
            f"doc_stride in [1, {room}]{shorter}."
        )
    return max_query_length, doc_stride


def _context_windows(context_lengths, context_rooms, doc_stride, batch_size):
    """Per example, `[(start, end, is_max)]` of its context windows: `text_windows`' windows and max-context
    mask (bool `(end - start,)`), computed `batch_size` examples at a time."""
    windows = []
    for first in range(0, len(context_lengths), batch_size):
        lengths = np.asarray(context_lengths[first : first + batch_size], "int32")
        rooms = np.asarray(context_rooms[first : first + batch_size], "int32")
        strides = np.minimum(doc_stride, rooms)
        owner, start, length = text_windows.window_table(lengths, rooms, strides)
        most = max(text_windows.max_windows_per_token(r, s) for r, s in zip(rooms.tolist(), strides.tolist()))
        is_max = text_windows.max_context(owner, start, length, int(rooms.max()), most - 1).numpy()
        rows = [[] for _ in lengths]
        for w, (row, s, n) in enumerate(zip(owner.numpy(), start.numpy().tolist(), length.numpy().tolist())):
            rows[row].append((s, s + n, is_max[w, :n]))
        windows += rows
    return windows


def squad_features(examples, tokenizer, sequence_length=384, doc_stride=None, max_query_length=None, batch_size=2048):
    """Windowed model inputs of SQuAD examples, with labels and offsets to decode predictions.

    Args:
        examples: list of `SquadExample`.
        tokenizer: a `BertTokenizer`.
        sequence_length: packed length (BERT: 384).
        doc_stride: tokens between the starts of consecutive context windows
            (BERT: 128). Must be at most the context room per window. None:
            from `sequence_length` (`qa_window_lengths`: 128 at 384).
        max_query_length: questions are cut to this many tokens (BERT: 64).
            None: from `sequence_length` (64 at 384).
        batch_size: texts tokenized per call (memory only).

    Returns:
        `TaskFeatures` with `y = {"start", "end"}` (int32 token positions,
        0 = no answer in this window) and `info`: `example_index` (feature →
        example), `offsets` (int32 `(num_features, sequence_length, 2)`, the
        character span in the context of every context token, -1 elsewhere),
        `max_context` (bool `(num_features, sequence_length)`: the context
        tokens that are in their max-context window, see `text_windows.max_context`),
        `num_windows`, `num_truncated_question_tokens`, `num_context_tokens` (per example),
        `num_examples`, `answers_not_on_token_boundaries`.

    Raises:
        ValueError: an answer that covers no token (e.g. only whitespace),
            naming the question; window lengths that do not fit `sequence_length`;
            a tokenizer that cannot lay out question answering (see
            `check_question_answering_tokenizer`).
    """
    check_question_answering_tokenizer(tokenizer)
    if not examples:
        raise ValueError("No examples to build features from.")
    separators = tokenizer.separators_between
    max_query_length, doc_stride = qa_window_lengths(sequence_length, doc_stride, max_query_length, separators)
    questions = []
    for start in range(0, len(examples), batch_size):
        chunk = tf.constant([e.question for e in examples[start : start + batch_size]])
        questions += tokenizer.tokenize(chunk).to_list()
    contexts = list(dict.fromkeys(e.context for e in examples))
    context_tokens = {}
    for start in range(0, len(contexts), batch_size):
        chunk = contexts[start : start + batch_size]
        ids, starts, ends, _, _ = trimmed_offsets(tokenizer, tf.constant(chunk))
        for text, i, s, e in zip(chunk, ids.to_list(), starts.to_list(), ends.to_list()):
            context_tokens[text] = (i, s, e)

    cls_id, sep_id, pad_id = tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id
    second = int(tokenizer.typed_segments)  # the context's segment id, as BertInputPacker gives it
    token_ids, segment_ids, padding_mask, offsets, max_context = [], [], [], [], []
    start_positions, end_positions, example_index, question_cut = [], [], [], []
    off_boundary = 0
    windows = _context_windows(
        [len(context_tokens[e.context][0]) for e in examples],
        [sequence_length - 2 - separators - min(len(q), max_query_length) for q in questions],
        doc_stride,
        batch_size,
    )
    for index, (example, question) in enumerate(zip(examples, questions)):
        question_cut.append(max(0, len(question) - max_query_length))
        question = question[:max_query_length]
        ids, starts, ends = context_tokens[example.context]
        span = None
        if example.answers:
            text, char_start = example.answers[0]
            span = answer_token_span(starts, ends, char_start, char_start + len(text))
            if span is None:
                raise ValueError(f"{example.source}: the answer {text!r} covers no token of the context")
            if starts[span[0]] != char_start or ends[span[1]] != char_start + len(text):
                off_boundary += 1
        first_context = len(question) + 1 + separators  # [CLS] question [SEP] (RoBERTa: </s></s>)
        for window_start, window_end, is_max in windows[index]:
            row = [cls_id, *question, *[sep_id] * separators, *ids[window_start:window_end], sep_id]
            n = len(row)
            token_ids.append(row + [pad_id] * (sequence_length - n))
            segment_ids.append([0] * first_context + [second] * (n - first_context) + [0] * (sequence_length - n))
            padding_mask.append([1] * n + [0] * (sequence_length - n))
            row_offsets = np.full((sequence_length, 2), -1, "int32")
            count = window_end - window_start
            row_offsets[first_context : first_context + count, 0] = starts[window_start:window_end]
            row_offsets[first_context : first_context + count, 1] = ends[window_start:window_end]
            offsets.append(row_offsets)
            row_max = np.zeros(sequence_length, bool)
            row_max[first_context : first_context + count] = is_max
            max_context.append(row_max)
            if span is not None and window_start <= span[0] and span[1] < window_end:
                start_positions.append(span[0] - window_start + first_context)
                end_positions.append(span[1] - window_start + first_context)
            else:
                start_positions.append(0)
                end_positions.append(0)
            example_index.append(index)
    x = {"token_ids": token_ids, "segment_ids": segment_ids, "padding_mask": padding_mask}
    y = {"start": np.asarray(start_positions, "int32"), "end": np.asarray(end_positions, "int32")}
    example_index = np.asarray(example_index, "int32")
    info = {
        "example_index": example_index,
        "offsets": np.stack(offsets),
        "max_context": np.stack(max_context),
        "num_windows": np.bincount(example_index, minlength=len(examples)),
        "num_truncated_question_tokens": np.asarray(question_cut, "int32"),
        "num_context_tokens": np.asarray([len(context_tokens[e.context][0]) for e in examples], "int32"),
        "num_examples": len(examples),
        "answers_not_on_token_boundaries": off_boundary,
    }
    return TaskFeatures(x, y, info=info)


def decode_answers(
    logits,
    features,
    examples,
    n_best_size=20,
    max_answer_length=30,
    allow_no_answer=None,
    null_score_diff_threshold=0.0,
):
    """Start/end logits of all windows → the best answer span of every example.

    The decoding of `keras_bert.postprocessing.answer_spans` (the one
    `QuestionAnswererPipeline` and the exported SavedModel use): for each
    example, the `n_best_size` highest start and end logits of each window
    are paired; a pair counts if both tokens are context tokens, the start
    token is in its max-context window (`features.info["max_context"]`:
    BERT's rule for tokens in several overlapping windows; the end token is
    not checked, as in Google's run_squad.py and Hugging Face's
    `compute_predictions_logits`), the end is not before the start, and the
    span has at most `max_answer_length` tokens. Its score is `start_logit +
    end_logit`. The "no answer" score is the lowest `start_logits[0] +
    end_logits[0]` over the example's windows (Hugging Face's rule); with
    `allow_no_answer`, the answer is "" when it beats the best span by more
    than `null_score_diff_threshold`.

    Args:
        logits: dict with `start` and `end` float arrays `(num_features, sequence_length)`
            (what `BertQuestionAnswerer.predict` returns).
        features: the `TaskFeatures` of `squad_features` they were predicted from.
        examples: the `SquadExample` list the features were built from.
        n_best_size: candidates kept per side and per example.
        max_answer_length: longest answer in tokens.
        allow_no_answer: SQuAD 2.0 behaviour; default True if any example is unanswerable.
        null_score_diff_threshold: margin the null score needs to win.

    Returns:
        dict question id → `{"text", "start", "end", "score", "null_score",
        "nbest"}`: the answer (exact substring `context[start:end]`, or "" with
        start = end = -1 for no answer), the softmax probability of the chosen
        candidate among the n-best (and no-answer), the no-answer score, and
        the n-best list of `{"text", "start", "end", "logit", "probability"}`.
    """
    start_logits, end_logits = np.asarray(logits["start"]), np.asarray(logits["end"])
    if start_logits.shape[0] != len(features):
        raise ValueError(f"{start_logits.shape[0]} rows of logits for {len(features)} features.")
    if allow_no_answer is None:
        allow_no_answer = any(e.is_impossible for e in examples)
    offsets = features.info["offsets"]
    is_context = offsets[..., 0] >= 0
    # Features built before the max-context rule have no mask: every context token counts.
    max_context = features.info.get("max_context")
    can_start = is_context if max_context is None else is_context & max_context
    spans = answer_spans.nbest_spans(
        start_logits, end_logits.astype(start_logits.dtype), features.info["example_index"], len(examples),
        can_start, is_context, offsets[..., 0], offsets[..., 1], n_best_size, max_answer_length,
    )
    answered, score, probabilities = answer_spans.choose_answers(
        spans["logit"], spans["null_score"], allow_no_answer, null_score_diff_threshold
    )
    nbest_logits, null_scores = spans["logit"].numpy(), spans["null_score"].numpy()
    char_starts, char_ends = spans["char_start"].numpy(), spans["char_end"].numpy()
    answered, score, probabilities = answered.numpy(), score.numpy(), probabilities.numpy()
    results = {}
    for index, example in enumerate(examples):
        nbest = [
            {"text": example.context[s:e], "start": s, "end": e, "logit": float(logit), "probability": float(p)}
            for s, e, logit, p in zip(
                char_starts[index].tolist(), char_ends[index].tolist(), nbest_logits[index], probabilities[index]
            )
            if np.isfinite(logit)
        ]
        best = {"text": "", "start": -1, "end": -1}
        if answered[index]:
            best = {k: nbest[0][k] for k in ("text", "start", "end")}
        results[example.id] = {**best, "score": float(score[index]), "null_score": float(null_scores[index]),
                               "nbest": nbest}
    return results
