"""Raw text in, answers out: one pipeline class per task model (labels, entity spans, answers, choices, embeddings).

    pipeline = keras_bert.TextClassifierPipeline(classifier, tokenizer)
    keras_bert.predict_text(tagger, tokenizer, "Ada Lovelace was born in London.")
    keras_bert.load_pipeline("runs/sst")(["..."])  # a `keras-bert finetune` output folder

`pipeline_for(model, tokenizer)` picks the class through the task registry
(`keras_bert.task_registry`). Character offsets index the original string
(`text[start:end]`). The windows over long texts and the reading of the
model's outputs (labels, entity spans, answer spans, choices) are
`keras_bert.postprocessing`'s, the functions the exported SavedModel's
`serve_text` runs in its graph.
"""

from keras_bert.pipelines.loading import load_pipeline, pipeline_for, predict_text
from keras_bert.pipelines.multiple_choice_pipeline import MultipleChoicePipeline
from keras_bert.pipelines.question_answerer_pipeline import QuestionAnswererPipeline
from keras_bert.pipelines.task_pipeline import TaskPipeline
from keras_bert.pipelines.text_classifier_pipeline import TextClassifierPipeline
from keras_bert.pipelines.text_embedder_pipeline import TextEmbedderPipeline
from keras_bert.pipelines.token_classifier_pipeline import TokenClassifierPipeline

__all__ = [
    "MultipleChoicePipeline",
    "QuestionAnswererPipeline",
    "TaskPipeline",
    "TextClassifierPipeline",
    "TextEmbedderPipeline",
    "TokenClassifierPipeline",
    "load_pipeline",
    "pipeline_for",
    "predict_text",
]
