"""The test side of long inputs: windows built by hand, the model run on them, results aggregated in numpy.

Nothing here calls keras_bert's windowing code (`window_spans`,
`pair_window_spans`, `max_context_mask`, `text_windows`): the windows follow
the rules as BERT's run_squad.py and the pipelines' docstrings state them, so a
pipeline or SavedModel that reads only the first window, ignores its stride
or scores a token outside its max-context window disagrees with these.

The models get weights drawn from numpy (the same on every backend) and
large enough that a model's outputs depend strongly on which tokens it reads;
Keras' own initialisation gives near-uniform outputs that hardly change
between windows, which is what lets a first-window-only reader pass.
"""

import keras
import numpy as np

from harness import tiny_backbone

INPUTS = ("token_ids", "segment_ids", "padding_mask")
TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
# Three or more windows at sequence length 16 (14 tokens per window): 40-60 wordpieces,
# different words in each third, so that later windows change the answer.
LONG_TEXT = (
    "the film was good and the cast was great and lovely . "
    "the plot was dull and boring and the script was weak and silly . "
    "awful , tedious , terrible , clumsy and bad , a really weak and dull show ."
)
LONG_NER_TEXT = (
    "anna smith met ivan in paris . the team came out on a rainy day . "
    "marco jones lives in rome and works for acme corp in lima with hana lee . "
    "ella joined initech in cairo and ben met carla in oslo yesterday ."
)

# A context over three times a question-answering sequence of 32 (about 100 wordpieces).
LONG_CONTEXT = LONG_NER_TEXT + (
    " the news came on a cold night and people in san york met the show team ; femi and jo live in lima ."
    " yesterday the boat , the bike and the red car of gus were at the market in oslo , near the office ."
    " ben met ella there ."
)


def varied(model, seed=0):
    """Gives `model` weights from numpy's generator `seed`: identical on every backend, outputs far from uniform."""
    rng = np.random.default_rng(seed)
    for weight in model.weights:
        shape = tuple(weight.shape)
        if weight.path.endswith("gamma"):
            value = np.ones(shape)
        elif len(shape) == 1:
            value = rng.normal(0.0, 0.1, shape)
        elif "embedding" in weight.path:
            value = rng.normal(0.0, 1.0, shape)
        else:
            value = rng.normal(0.0, 1.5 / np.sqrt(shape[0]), shape)
        weight.assign(value.astype("float32"))
    return model


def task_model(kind, seed=0, max_sequence_length=64):
    """A tiny task model with `varied` weights: "classifier", "regressor", "token_classifier", "question_answerer",
    "multiple_choice"."""
    from keras_bert import BertClassifier, BertMultipleChoice, BertQuestionAnswerer, BertTokenClassifier

    backbone = tiny_backbone(max_sequence_length=max_sequence_length)
    model = {
        "classifier": lambda: BertClassifier(backbone, num_classes=3, label_names=["negative", "neutral", "positive"]),
        "regressor": lambda: BertClassifier(backbone, num_classes=1),
        "token_classifier": lambda: BertTokenClassifier(backbone, num_classes=len(TAGS), label_names=TAGS),
        "question_answerer": lambda: BertQuestionAnswerer(backbone),
        "multiple_choice": lambda: BertMultipleChoice(backbone),
    }[kind]()
    return varied(model, seed)


def hand_windows(num_tokens, size, stride):
    """`(start, end)` windows: one every `stride` tokens until one reaches the end (run_squad's doc spans)."""
    starts = [0]
    while starts[-1] + size < num_tokens:
        starts.append(starts[-1] + stride)
    return [(s, min(s + size, num_tokens)) for s in starts]


def hand_pair_windows(length_a, length_b, sequence_length, stride):
    """The documented pair rule: the longer segment windowed (the second on a tie), the shorter repeated,
    cut to half of `sequence_length - 3`."""
    room = sequence_length - 3
    short, long = sorted((length_a, length_b))
    kept = min(short, room // 2)
    size = room - kept
    spans = hand_windows(long, size, min(stride, size))
    if length_a > length_b:
        return [(span, (0, kept)) for span in spans]
    return [((0, kept), span) for span in spans]


def pack(tokenizer, a, b, sequence_length):
    """`[CLS] a [SEP] (b [SEP])` + padding, as three int32 lists."""
    ids = [tokenizer.cls_token_id, *a, tokenizer.sep_token_id]
    segments = [0] * len(ids)
    if b is not None:
        ids += [*b, tokenizer.sep_token_id]
        segments += [1] * (len(b) + 1)
    pad = sequence_length - len(ids)
    assert pad >= 0, "a hand-built window does not fit"
    return ids + [tokenizer.pad_token_id] * pad, segments + [0] * pad, [1] * len(ids) + [0] * pad


def stack(rows):
    return {name: np.asarray([r[i] for r in rows], "int32") for i, name in enumerate(INPUTS)}


def ids_of(tokenizer, text):
    return [int(i) for i in keras.ops.convert_to_numpy(tokenizer.tokenize(text))]


def softmax(x):
    x = np.asarray(x, "float64")
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def classifier_logits(model, tokenizer, text, sequence_length, stride, pair=None, first_window_only=False):
    """Mean logits over the hand-built windows of `text` (or the pair `text`, `pair`)."""
    a = ids_of(tokenizer, text)
    if pair is None:
        spans = [((s, e), None) for s, e in hand_windows(len(a), sequence_length - 2, stride)]
        b = None
    else:
        b = ids_of(tokenizer, pair)
        spans = hand_pair_windows(len(a), len(b), sequence_length, stride)
    if first_window_only:
        spans = spans[:1]
    rows = [pack(tokenizer, a[sa:ea], None if b is None else b[sb[0] : sb[1]], sequence_length)
            for (sa, ea), sb in spans]
    return np.asarray(model.predict(stack(rows), verbose=0), "float64").mean(axis=0), len(spans)


def tagger_word_tags(model, tokenizer, text, sequence_length, stride):
    """Each word's tag: the argmax, at its first wordpiece, of the token logits averaged over the windows.

    Returns `(tags, scores, num_windows, token_probabilities)`, the last `(num_tokens, num_tags)`.
    """
    words = [keras.ops.convert_to_numpy(w).tolist() for w in tokenizer.tokenize_words(text)]
    ids = [i for word in words for i in word]
    spans = hand_windows(len(ids), sequence_length - 2, stride)
    logits = model.predict(stack([pack(tokenizer, ids[s:e], None, sequence_length) for s, e in spans]), verbose=0)
    total = np.zeros((len(ids), len(TAGS)))
    count = np.zeros((len(ids), 1))
    for row, (s, e) in zip(logits, spans):
        total[s:e] += row[1 : 1 + e - s]
        count[s:e] += 1
    probabilities = softmax(total / count)
    tags, scores, token = [], [], 0
    for word in words:
        if word:
            tags.append(TAGS[int(np.argmax(probabilities[token]))])
            scores.append(float(probabilities[token].max()))
        token += len(word)
    return tags, scores, len(spans), probabilities


def is_max_context(spans, window, position, later_wins_ties=False):
    """run_squad's `_check_is_max_context`: the window where `position` has the most context wins.

    On a tie the earlier window wins, as in run_squad; `later_wins_ties` reverses that (what a wrong
    decoder would do), so a test can show that its inputs hold ties that decide answers.
    """
    best_score, best_window = None, None
    for index, (start, end) in enumerate(spans):
        if not start <= position < end:
            continue
        score = min(position - start, end - 1 - position) + 0.01 * (end - start)
        if best_score is None or score > best_score or (later_wins_ties and score == best_score):
            best_score, best_window = score, index
    return best_window == window


def qa_answer(model, tokenizer, question, context, sequence_length, doc_stride, max_query_length,
              max_answer_length=30, n_best_size=20, windows=None, later_wins_ties=False):
    """The answer span (character offsets) decoded from hand-built windows, run_squad style.

    Returns `(start, end, probability, num_windows, answer_window)` (`(-1, -1, 0.0, num_windows, None)`
    when no span qualifies); `windows` (a list of window indices) keeps only those windows, to show
    what a reader of fewer windows would answer; `later_wins_ties` see `is_max_context`.
    """
    q = ids_of(tokenizer, question)[:max_query_length]
    ids, starts, ends = (keras.ops.convert_to_numpy(t).tolist()
                         for t in tokenizer.tokenize_with_offsets(context, unit="char"))
    room = sequence_length - 3 - len(q)
    spans = hand_windows(len(ids), room, min(doc_stride, room))
    rows = [pack(tokenizer, q, ids[s:e], sequence_length) for s, e in spans]
    logits = model.predict(stack(rows), verbose=0)
    first = len(q) + 2
    candidates = []
    for w, (s, e) in enumerate(spans):
        if windows is not None and w not in windows:
            continue
        start_logits, end_logits = logits["start"][w], logits["end"][w]
        top_starts = np.argsort(start_logits)[::-1][:n_best_size]
        top_ends = np.argsort(end_logits)[::-1][:n_best_size]
        for i in top_starts:
            token_i = s + i - first
            if not (first <= i < first + e - s) or not is_max_context(spans, w, token_i, later_wins_ties):
                continue
            for j in top_ends:
                token_j = s + j - first
                if not (first <= j < first + e - s) or j < i or j - i + 1 > max_answer_length:
                    continue
                candidates.append((float(start_logits[i] + end_logits[j]), starts[token_i], ends[token_j], w))
    candidates.sort(key=lambda c: -c[0])
    ranked = candidates[:n_best_size]
    if not ranked:
        return -1, -1, 0.0, len(spans), None
    probability = softmax([c[0] for c in ranked])[0]
    return ranked[0][1], ranked[0][2], probability, len(spans), ranked[0][3]
