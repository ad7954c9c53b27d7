"""`QuestionAnswererPipeline`: answers to questions about contexts, as exact substrings of the context.

    pipeline = keras_bert.QuestionAnswererPipeline(qa_model, tokenizer)
    pipeline("Who wrote it?", "It was written by Ada.")
    # {"answer": "Ada", "start": 18, "end": 21, "score": 0.93}
"""

from keras_bert.pipelines.task_pipeline import TaskPipeline, check_texts, reading_report, text_batch
from keras_bert.preprocessing.task_data.squad_data import SquadExample, decode_answers, fit_qa_lengths, squad_features


class QuestionAnswererPipeline(TaskPipeline):
    """Answer spans of questions about contexts, as exact substrings of the context.

    Contexts longer than one sequence are windowed as in training; a context
    token that lies in several windows may start an answer only in the window
    where it has the most context (BERT's max-context rule, see
    `decode_answers`). The windows and the decoding are
    `keras_bert.postprocessing`'s, which the exported SavedModel's
    `serve_text` runs in its graph.

    Args:
        model: a `BertQuestionAnswerer`.
        tokenizer: the `BertTokenizer` it was trained with.
        sequence_length: packed length (default 384, at most the model's).
        doc_stride: tokens between context window starts (default 128, cut to fit).
        max_query_length: question tokens kept (default 64).
        max_answer_length: longest answer in tokens (default 30).
        allow_no_answer: answer "" when [CLS] scores best (SQuAD 2.0 models).
        null_score_diff_threshold: margin the "no answer" score needs to win.
        batch_size: sequences per forward pass.

    Call arguments:
        questions: a string or a list of strings.
        contexts: a string or a list of strings, one per question.

    Returns:
        For each question, `{"answer", "start", "end", "score"}`: the answer
        text (`context[start:end]`; "" with start = end = -1 for no answer)
        and its probability among the n-best candidates.
    """

    def __init__(
        self,
        model,
        tokenizer,
        sequence_length=None,
        doc_stride=128,
        max_query_length=64,
        max_answer_length=30,
        allow_no_answer=False,
        null_score_diff_threshold=0.0,
        batch_size=32,
    ):
        if sequence_length is None:
            sequence_length = min(384, model.backbone.max_sequence_length)
        super().__init__(model, tokenizer, sequence_length, batch_size)
        self.max_query_length, self.doc_stride = fit_qa_lengths(
            self.sequence_length, doc_stride, max_query_length, getattr(tokenizer, "separators_between", 1)
        )
        self.max_answer_length = max_answer_length
        self.allow_no_answer = allow_no_answer
        self.null_score_diff_threshold = null_score_diff_threshold

    def __call__(self, questions, contexts):
        examples, features, single = self._features(questions, contexts)
        if not examples:
            return []
        logits = self._predict(features.x)
        decoded = decode_answers(
            logits, features, examples, max_answer_length=self.max_answer_length,
            allow_no_answer=self.allow_no_answer, null_score_diff_threshold=self.null_score_diff_threshold,
        )
        results = [
            {"answer": d["text"], "start": d["start"], "end": d["end"], "score": d["score"]}
            for d in (decoded[e.id] for e in examples)
        ]
        return results[0] if single else results

    def input_stats(self, questions, contexts):
        """How each context is read, without running the model.

        Returns:
            For each question, `{"tokens", "windows", "truncated_tokens"}`:
            the context's wordpieces, the windows it is read in, and the
            question's tokens past `max_query_length` (dropped). A dict for a
            single question.
        """
        examples, features, single = self._features(questions, contexts)
        if not examples:
            return []
        info = features.info
        return reading_report(
            info["num_context_tokens"], info["num_windows"], info["num_truncated_question_tokens"], single
        )

    def _features(self, questions, contexts):
        """`(examples, TaskFeatures, single)` after the input checks; no examples for no questions."""
        questions, single = text_batch(questions, "questions")
        contexts, _ = text_batch(contexts, "contexts")
        if len(contexts) == 1 and len(questions) > 1:
            contexts = contexts * len(questions)
        if len(contexts) != len(questions):
            raise ValueError(f"{len(questions)} questions but {len(contexts)} contexts.")
        check_texts(questions, "question")
        check_texts(contexts, "context")
        if not questions:
            return [], None, single
        examples = [SquadExample(str(i), q, c) for i, (q, c) in enumerate(zip(questions, contexts))]
        features = squad_features(
            examples, self.tokenizer, self.sequence_length, self.doc_stride, self.max_query_length
        )
        return examples, features, single
