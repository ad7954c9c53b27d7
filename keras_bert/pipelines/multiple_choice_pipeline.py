"""`MultipleChoicePipeline`: which choice fits a context best.

    pipeline = keras_bert.MultipleChoicePipeline(choice_model, tokenizer)
    pipeline("She opened the umbrella", ["because it rained.", "to eat it."])
    # {"choice": 0, "text": "because it rained.", "score": 0.91, "probabilities": [0.91, 0.09]}
"""

import numpy as np
import tensorflow as tf

from keras_bert.pipelines.task_pipeline import TaskPipeline, check_texts, reading_report, text_batch
from keras_bert.postprocessing import text_windows
from keras_bert.postprocessing.label_scores import label_scores
from keras_bert.preprocessing.task_data.multiple_choice_data import MultipleChoiceExample


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
        windows = self._windows(examples)
        x = {k: v.numpy() for k, v in self.packer(windows["first"], windows["second"]).items()}
        # Every window is its own one-choice block: a sequence's logit does not
        # depend on the other sequences of its block (the choices axis is
        # folded into the batch), so windows of any count per choice fit.
        logits = self._predict({k: v[:, np.newaxis, :] for k, v in x.items()})[:, 0]
        num_choices = len(examples[0].choices)
        means = text_windows.mean_over_windows(logits, windows["owner"], len(examples) * num_choices)
        probabilities, best, score = (t.numpy() for t in label_scores(tf.reshape(means, [-1, num_choices])))
        results = [
            {"choice": int(b), "text": example.choices[b], "score": float(s), "probabilities": [float(q) for q in p]}
            for example, p, b, s in zip(examples, probabilities, best, score)
        ]
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
        windows = self._windows(examples)
        num_choices = len(examples[0].choices)
        counts = text_windows.windows_per_row(windows["owner"], len(examples) * num_choices).numpy()
        dropped = windows["dropped"].numpy().reshape(-1, num_choices)
        tokens = self.tokenizer.tokenize(tf.constant([e.context for e in examples])).row_lengths().numpy()
        return reading_report(tokens, counts.reshape(-1, num_choices).max(axis=1), dropped.sum(axis=1), single)

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
        """`text_windows.windows_of` the (context, choice) pairs, row `example * num_choices + choice`."""
        tokenizer = self.tokenizer
        first = tokenizer.tokenize(tf.constant([e.context for e in examples for _ in e.choices]))
        # The second segment is `question + " " + choice`, joined before tokenizing as in training.
        second = tokenizer.tokenize(tf.constant([f"{e.question} {c}" for e in examples for c in e.choices]))
        return text_windows.windows_of(
            first, self.sequence_length, self.window_stride, second, self.packer.separators_between
        )
