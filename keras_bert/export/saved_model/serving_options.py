"""ServingOptions: how a SavedModel's `serve_text` reads texts and decodes answers, fixed when it is exported."""

import dataclasses

import keras

from keras_bert.export.export_arguments import check_label_names, check_sequence_length, default_sequence_length

# The question answering options, in the order the metadata records them.
QUESTION_ANSWERING_OPTIONS = (
    "max_query_length", "doc_stride", "max_answer_length", "n_best_size", "allow_no_answer",
    "null_score_diff_threshold",
)


@dataclasses.dataclass(frozen=True)
class ServingOptions:
    """The options `export_saved_model` takes besides the model, with their defaults (one place for both).

    They are the Python pipelines' options of the same names: `serve_text`
    reads long texts in the pipelines' windows and decodes answers by their
    rules, so a SavedModel and a pipeline given the same options agree.
    `resolved` fills in what depends on the model; the SavedModel's
    `BertServingModule` builds its graph from the result, and the metadata
    records it.

    Attributes:
        sequence_length: length texts are packed to in `serve_text` (None:
            the model's default, see `export_arguments.default_sequence_length`).
        label_names: names of the classes / tags (None: the model's own).
        text_pair: whether a classifier's `serve_text` takes a second text.
        window_stride: tokens between window starts over long texts (None:
            `(sequence_length - 2) // 2`; 0: windows side by side).
        max_query_length, doc_stride, max_answer_length, n_best_size,
            allow_no_answer, null_score_diff_threshold: question answering,
            as in `QuestionAnswererPipeline`.
        training_backend: the backend the model was trained on, for the
            metadata (None: this process's).
    """

    sequence_length: int | None = None
    label_names: list | None = None
    text_pair: bool = False
    window_stride: int | None = None
    max_query_length: int = 64
    doc_stride: int = 128
    max_answer_length: int = 30
    n_best_size: int = 20
    allow_no_answer: bool = False
    null_score_diff_threshold: float = 0.0
    training_backend: str | None = None

    def resolved(self, model, task, backbone, separators_between=1):
        """These options with every default filled in for `model` (of task kind `task`), checked.

        `separators_between` is the tokenizer's (RoBERTa's question and context have 2 between them).

        Raises:
            ValueError: a length outside `[3, max_sequence_length]`, label
                names that do not fit the model, `text_pair` on a task that
                reads one text, a stride below its minimum.
        """
        sequence_length = self.sequence_length
        if sequence_length is None:
            sequence_length = default_sequence_length(model, task, backbone)
        check_sequence_length(sequence_length, backbone)
        label_names = self.label_names if self.label_names is not None else getattr(model, "label_names", None)
        label_names = check_label_names(model, task, label_names)
        if self.text_pair and task not in ("classifier", "regressor", "backbone"):
            raise ValueError(f"`text_pair` applies to classifiers and backbones, not to a {task}.")
        max_query_length, doc_stride = self.max_query_length, self.doc_stride
        if task == "question_answerer":
            # The pipeline's rule (question at most half the sequence), so both read the same windows.
            max_query_length, doc_stride = _fit_qa_lengths(
                sequence_length, doc_stride, max_query_length, separators_between
            )
        window_stride = (sequence_length - 2) // 2 if self.window_stride is None else self.window_stride
        if not isinstance(window_stride, int) or window_stride < 0:
            raise ValueError(f"`window_stride` must be an int >= 0; received {window_stride!r}")
        return dataclasses.replace(
            self,
            sequence_length=sequence_length,
            label_names=label_names,
            text_pair=bool(self.text_pair),
            window_stride=window_stride,
            max_query_length=max_query_length,
            doc_stride=doc_stride,
            allow_no_answer=bool(self.allow_no_answer),
            null_score_diff_threshold=float(self.null_score_diff_threshold),
            training_backend=self.training_backend or keras.backend.backend(),
        )

    def question_answering(self):
        """The question answering options as the metadata records them: `{name: value}`."""
        return {name: getattr(self, name) for name in QUESTION_ANSWERING_OPTIONS}


def _fit_qa_lengths(sequence_length, doc_stride, max_query_length, separators_between):
    # defers TensorFlow (squad_data tokenizes with it): `import keras_bert.export` must not import it
    from keras_bert.preprocessing.task_data.squad_data import fit_qa_lengths

    max_query_length, doc_stride = fit_qa_lengths(sequence_length, doc_stride, max_query_length, separators_between)
    if doc_stride < 1:
        raise ValueError(f"`doc_stride` must be >= 1; received {doc_stride!r}")
    return max_query_length, doc_stride
