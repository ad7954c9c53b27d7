"""The task registry: one entry per fine-tuning task, naming every part that serves it.

Fine-tuning (`keras_bert.jobs`), the text pipelines (`keras_bert.pipelines`) and
SavedModel export (`keras_bert.export`) all look a task up here, by one name:

| name              | CLI word        | model                                   |
|-------------------|-----------------|-----------------------------------------|
| classifier        | classify        | BertClassifier (num_classes > 1)        |
| regressor         | regress         | BertClassifier (num_classes = 1)        |
| token_classifier  | ner             | BertTokenClassifier                     |
| question_answerer | qa              | BertQuestionAnswerer                    |
| multiple_choice   | multiple-choice | BertMultipleChoice                      |
| text_embedder     | embed           | BertTextEmbedder (no finetune job: `fit` on pairs) |

`TASKS` holds the tasks `keras-bert finetune` trains; `SERVED_TASKS` adds those
that only pipelines and export serve (the text embedder, trained with its own
`fit` on contrastive pairs). `get_task` and `task_for_model` look in both.

Parts are named as "module:attribute" and imported when asked for: this module
sits below every part it names (it imports nothing of the package), so the jobs,
pipelines and export code can all read it without an import cycle, and asking
for a pipeline never imports the fine-tuning job.
"""

import dataclasses
import difflib
import importlib

_PARTS = ("model", "reader", "features", "finetune", "pipeline", "export_outputs")


@dataclasses.dataclass(frozen=True)
class Task:
    """One fine-tuning task and where each of its parts lives.

    Attributes:
        name: the task's one name in code, files (finetune.json) and SavedModels.
        cli_name: the word `keras-bert finetune --task` takes.
        description: one line for `--help`.
        model: the task model class.
        reader: reads a labelled file into examples.
        features: examples -> `TaskFeatures` (the preprocessor).
        finetune: the fine-tuning job's handler (read, features, model, evaluate).
        pipeline: the raw-text pipeline class.
        export_outputs: the SavedModel's `serve_text` outputs for this task.
    """

    name: str
    cli_name: str
    description: str
    model: str
    reader: str | None
    features: str | None
    finetune: str | None
    pipeline: str
    export_outputs: str

    def load(self, part):
        """The object named by `part` ("model", "reader", ..., "export_outputs"), imported now."""
        if part not in _PARTS:
            raise ValueError(f"A task has no part {part!r}; parts: {_PARTS}")
        if getattr(self, part) is None:
            raise ValueError(f"The {self.name} task has no {part} (`keras-bert finetune` does not train it).")
        module, attribute = getattr(self, part).split(":")
        return getattr(importlib.import_module(module), attribute)

    def matches(self, model):
        """Whether `model` (a task model instance) is this task's kind."""
        if not isinstance(model, self.load("model")):
            return False
        if self.name in ("classifier", "regressor"):
            return (model.num_classes == 1) == (self.name == "regressor")
        return True


_CLASSIFICATION = "keras_bert.preprocessing.task_data.classification_data"
_CLASSIFIER = Task(
    name="classifier",
    cli_name="classify",
    description="labels for texts or text pairs (TSV/CSV/JSONL)",
    model="keras_bert.models.bert_classifier:BertClassifier",
    reader=f"{_CLASSIFICATION}:read_classification_data",
    features=f"{_CLASSIFICATION}:classification_features",
    finetune="keras_bert.jobs.finetune_handlers:ClassifierJob",
    pipeline="keras_bert.pipelines.text_classifier_pipeline:TextClassifierPipeline",
    export_outputs="keras_bert.export.task_outputs:classifier_outputs",
)
TASKS = {
    task.name: task
    for task in (
        _CLASSIFIER,
        # The classifier's model, files and pipeline with one output (`num_classes=1`).
        dataclasses.replace(
            _CLASSIFIER, name="regressor", cli_name="regress",
            description="one real value per text or text pair (TSV/CSV/JSONL)",
            finetune="keras_bert.jobs.finetune_handlers:RegressorJob",
            export_outputs="keras_bert.export.task_outputs:regressor_outputs",
        ),
        Task(
            name="token_classifier",
            cli_name="ner",
            description="a tag per word, e.g. named entities (CoNLL / BIO files)",
            model="keras_bert.models.bert_token_classifier:BertTokenClassifier",
            reader="keras_bert.preprocessing.task_data.ner_data:read_conll",
            features="keras_bert.preprocessing.task_data.ner_data:ner_features",
            finetune="keras_bert.jobs.finetune_handlers:TokenClassifierJob",
            pipeline="keras_bert.pipelines.token_classifier_pipeline:TokenClassifierPipeline",
            export_outputs="keras_bert.export.task_outputs:token_classifier_outputs",
        ),
        Task(
            name="question_answerer",
            cli_name="qa",
            description="answer spans in a context (SQuAD 1.1 / 2.0 JSON)",
            model="keras_bert.models.bert_question_answerer:BertQuestionAnswerer",
            reader="keras_bert.preprocessing.task_data.squad_data:read_squad",
            features="keras_bert.preprocessing.task_data.squad_data:squad_features",
            finetune="keras_bert.jobs.finetune_handlers:QuestionAnswererJob",
            pipeline="keras_bert.pipelines.question_answerer_pipeline:QuestionAnswererPipeline",
            export_outputs="keras_bert.export.task_outputs:question_answerer_outputs",
        ),
        Task(
            name="multiple_choice",
            cli_name="multiple-choice",
            description="the best of several endings (SWAG-style CSV)",
            model="keras_bert.models.bert_multiple_choice:BertMultipleChoice",
            reader="keras_bert.preprocessing.task_data.multiple_choice_data:read_multiple_choice",
            features="keras_bert.preprocessing.task_data.multiple_choice_data:multiple_choice_features",
            finetune="keras_bert.jobs.finetune_handlers:MultipleChoiceJob",
            pipeline="keras_bert.pipelines.multiple_choice_pipeline:MultipleChoicePipeline",
            export_outputs="keras_bert.export.task_outputs:multiple_choice_outputs",
        ),
    )
}
CLI_NAMES = {task.cli_name: task.name for task in TASKS.values()}
_TEXT_EMBEDDER = Task(
    name="text_embedder",
    cli_name="embed",
    description="one vector per text (sentence embeddings), trained with BertTextEmbedder.fit on pairs",
    model="keras_bert.models.bert_text_embedder:BertTextEmbedder",
    reader=None,
    features=None,
    finetune=None,
    pipeline="keras_bert.pipelines.text_embedder_pipeline:TextEmbedderPipeline",
    export_outputs="keras_bert.export.task_outputs:text_embedder_outputs",
)
SERVED_TASKS = {**TASKS, _TEXT_EMBEDDER.name: _TEXT_EMBEDDER}
_SERVED_CLI_NAMES = {task.cli_name: task.name for task in SERVED_TASKS.values()}


def get_task(name):
    """The `Task` called `name` (its name or its CLI word: "classifier" or "classify").

    Raises:
        ValueError naming the known tasks and the closest match.
    """
    name = _SERVED_CLI_NAMES.get(name, name)
    if name in SERVED_TASKS:
        return SERVED_TASKS[name]
    known = sorted(SERVED_TASKS) + sorted(_SERVED_CLI_NAMES)
    close = difflib.get_close_matches(str(name), known, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise ValueError(f"Unknown task {name!r}; known tasks: {sorted(SERVED_TASKS)} (CLI: {sorted(_SERVED_CLI_NAMES)}).{hint}")


def task_for_model(model):
    """The `Task` whose model `model` is, or None (a backbone, a pretrainer)."""
    for task in SERVED_TASKS.values():
        if task.matches(model):
            return task
    return None
