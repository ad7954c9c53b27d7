"""`MultipleChoicePipeline`: which choice fits a context best.

    pipeline = keras_bert.MultipleChoicePipeline(choice_model, tokenizer)
    pipeline("She opened the umbrella", ["because it rained.", "to eat it."])
    # {"choice": 0, "text": "because it rained.", "score": 0.91, "probabilities": [0.91, 0.09]}
"""

import numpy as np

from keras_bert.pipelines.task_pipeline import TaskPipeline, check_texts, softmax, text_batch
from keras_bert.preprocessing.tasks.multiple_choice_data import MultipleChoiceExample, multiple_choice_features


class MultipleChoicePipeline(TaskPipeline):
    """Which choice fits a context best.

    Args:
        model: a `BertMultipleChoice`.
        tokenizer: the `BertTokenizer` it was trained with.
        sequence_length: packed length of each (context, choice) sequence (default 128).
        batch_size: examples per forward pass.

    Call arguments:
        contexts: a string or a list of strings.
        choices: a list of choices (strings) per context (a single list for a single context).
        questions: optional text put before every choice, one per context.

    Returns:
        For each context, `{"choice", "text", "score", "probabilities"}`: the
        index and text of the best choice, its probability, and all of them.
    """

    def __call__(self, contexts, choices, questions=None):
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
        if not examples:
            return []
        features = multiple_choice_features(examples, self.tokenizer, self.sequence_length)
        probabilities = softmax(self._predict(features.x))
        results = []
        for example, p in zip(examples, probabilities):
            best = int(np.argmax(p))
            results.append({
                "choice": best, "text": example.choices[best], "score": float(p[best]),
                "probabilities": [float(q) for q in p],
            })
        return results[0] if single else results
