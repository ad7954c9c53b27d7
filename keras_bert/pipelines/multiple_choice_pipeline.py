"""`MultipleChoicePipeline`: which choice fits a context best.

    pipeline = keras_bert.MultipleChoicePipeline(choice_model, tokenizer)
    pipeline("She opened the umbrella", ["because it rained.", "to eat it."])
    # {"choice": 0, "text": "because it rained.", "score": 0.91, "probabilities": [0.91, 0.09]}
"""

import numpy as np
import tensorflow as tf

from keras_bert.pipelines.task_pipeline import TaskPipeline, check_texts, softmax, text_batch
from keras_bert.preprocessing.tasks.classification_data import average_windows
from keras_bert.preprocessing.tasks.multiple_choice_data import MultipleChoiceExample
from keras_bert.preprocessing.tasks.task_features import pack_ids, pair_window_spans

_INPUTS = ("token_ids", "segment_ids", "padding_mask")


class MultipleChoicePipeline(TaskPipeline):
    """Which choice fits a context best.

    Each choice is read as the pair `(context, question + " " + choice)`, as
    in training. A pair too long for one sequence is windowed like a text pair
    of `TextClassifierPipeline`: over its longer segment (usually the
    context), the shorter one repeated in every window; a choice's logit is
    the mean over its windows, and the probabilities are the softmax of those
    means over the choices. The exported SavedModel's `serve_text` does the
    same in its graph.

    Args:
        model: a `BertMultipleChoice`.
        tokenizer: the `BertTokenizer` it was trained with.
        sequence_length: packed length of each (context, choice) sequence (default 128).
        window_stride: tokens between window starts (cut to the window size);
            default `(sequence_length - 2) // 2`, as for single texts.
        batch_size: examples per forward pass.

    Call arguments:
        contexts: a string or a list of strings.
        choices: a list of choices (strings) per context (a single list for a single context).
        questions: optional text put before every choice, one per context.

    Returns:
        For each context, `{"choice", "text", "score", "probabilities"}`: the
        index and text of the best choice, its probability, and all of them.
    """

    def __init__(self, model, tokenizer, sequence_length=None, window_stride=None, batch_size=32):
        super().__init__(model, tokenizer, sequence_length, batch_size)
        self.window_stride = (self.sequence_length - 2) // 2 if window_stride is None else window_stride

    def __call__(self, contexts, choices, questions=None):
        examples, single = self._examples(contexts, choices, questions)
        if not examples:
            return []
        x, owner, _ = self._windows(examples)
        # Every window is its own one-choice block: a sequence's logit does not
        # depend on the other sequences of its block (the choices axis is
        # folded into the batch), so windows of any count per choice fit.
        logits = self._predict({k: v[:, np.newaxis, :] for k, v in x.items()})
        num_choices = len(examples[0].choices)
        means = average_windows(logits, owner, len(examples) * num_choices).reshape(len(examples), num_choices)
        results = []
        for example, p in zip(examples, softmax(means)):
            best = int(np.argmax(p))
            results.append({
                "choice": best, "text": example.choices[best], "score": float(p[best]),
                "probabilities": [float(q) for q in p],
            })
        return results[0] if single else results

    def input_stats(self, contexts, choices, questions=None):
        """How each context is read, without running the model.

        Returns:
            For each context, `{"tokens", "windows", "truncated_tokens"}`: the
            context's wordpieces, the most windows any of its choices is read
            in, and the tokens no window holds, summed over the choices. A
            dict for a single context.
        """
        examples, single = self._examples(contexts, choices, questions)
        if not examples:
            return []
        _, owner, dropped = self._windows(examples)
        num_choices = len(examples[0].choices)
        windows = np.bincount(owner, minlength=len(examples) * num_choices).reshape(-1, num_choices)
        dropped = np.asarray(dropped).reshape(-1, num_choices)
        tokens = [len(t) for t in self.tokenizer.tokenize(tf.constant([e.context for e in examples])).to_list()]
        stats = [
            {"tokens": n, "windows": int(w.max()), "truncated_tokens": int(d.sum())}
            for n, w, d in zip(tokens, windows, dropped)
        ]
        return stats[0] if single else stats

    def _examples(self, contexts, choices, questions):
        contexts, single = text_batch(contexts, "contexts")
        if single:
            choices = [choices]
            questions = None if questions is None else [questions]
        check_texts(contexts, "context")
        questions = questions or [""] * len(contexts)
        if not len(contexts) == len(choices) == len(questions):
            raise ValueError(f"{len(contexts)} contexts, {len(choices)} choice lists, {len(questions)} questions.")
        examples = [MultipleChoiceExample(c, q, list(ch)) for c, q, ch in zip(contexts, questions, choices)]
        for example in examples:
            check_texts(example.choices, "choice")
            if len(example.choices) != len(examples[0].choices):
                raise ValueError(f"Every context needs the same number of choices; received {len(example.choices)} "
                                 f"and {len(examples[0].choices)}.")
        return examples, single

    def _windows(self, examples):
        """`(x, owner, dropped)`: packed windows `(num_windows, sequence_length)`, the (example, choice) row
        `example * num_choices + choice` of each, and per row the tokens no window holds."""
        tokenizer = self.tokenizer
        first = tokenizer.tokenize(tf.constant([e.context for e in examples for _ in e.choices])).to_list()
        # The second segment is `question + " " + choice`, joined before tokenizing as in training.
        second = tokenizer.tokenize(tf.constant([f"{e.question} {c}" for e in examples for c in e.choices])).to_list()
        special = (self.sequence_length, tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id)
        rows, owner, dropped = [], [], []
        for row, (a, b) in enumerate(zip(first, second)):
            spans = pair_window_spans(len(a), len(b), self.sequence_length, self.window_stride or self.sequence_length)
            for (a_start, a_end), (b_start, b_end) in spans:
                rows.append(pack_ids(a[a_start:a_end], b[b_start:b_end], *special))
                owner.append(row)
            kept = (spans[-1][0][1] - spans[0][0][0]) + (spans[-1][1][1] - spans[0][1][0])
            dropped.append(len(a) + len(b) - kept)
        x = {name: np.stack([r[i] for r in rows]) for i, name in enumerate(_INPUTS)}
        return x, np.asarray(owner, "int32"), dropped
