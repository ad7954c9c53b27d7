"""keras-bert: BERT as composable Keras 3 layers, on TensorFlow, JAX or PyTorch.

The model code (`keras_bert.layers`, `keras_bert.models`) needs only keras.
Text preprocessing needs TensorFlow and tensorflow-text; its names are
imported on first use, so `import keras_bert` works without TensorFlow.
"""

import importlib

from keras_bert import _command_line_startup, _moved_modules

# Old module paths (`keras_bert.finetuning`, ...) still import, with a DeprecationWarning.
_moved_modules.install()

# The public names that need only keras, by the module that defines them.
_MODEL_NAMES = {
    "list_presets": "keras_bert.converters.presets",
    **dict.fromkeys(
        ("BertEmbeddings", "ElectraDiscriminatorHead", "MaskedLMHead", "NextSentenceHead", "Pooler", "PredictionHead",
         "RotaryEmbedding", "SelfAttention", "SentencePooling", "SpanHead", "TransformerEncoder"),
        "keras_bert.layers",
    ),
    **dict.fromkeys(
        ("BERT_SIZES", "AlbertBackbone", "BertBackbone", "BertClassifier", "BertMaskedLM", "BertMultipleChoice",
         "BertPretrainer", "BertQuestionAnswerer", "BertTask", "BertTextEmbedder", "BertTokenClassifier",
         "DistilBertBackbone", "ElectraBackbone", "ElectraDiscriminator", "ElectraGenerator", "ElectraPretrainer",
         "EncoderBackbone", "ModernBertBackbone", "ModernBertClassifier", "ModernBertMaskedLM",
         "ModernBertQuestionAnswerer", "ModernBertTokenClassifier", "RobertaBackbone", "Distiller",
         "student_from_teacher", "MultipleNegativesRankingLoss"),
        "keras_bert.models",
    ),
    **dict.fromkeys(("BertAdamW", "BertLamb", "WarmupSchedule", "create_optimizer"), "keras_bert.optimizers"),
}

# The `keras-bert` command imports nothing heavy here: `--help` and argument errors end before keras
# loads (8-13 s with it, 0.23 s without); once its arguments parse, the command loads TensorFlow
# quietly (cli/main.py), and the names above come through `__getattr__` on first use.
if not _command_line_startup.running_as_command_line():
    # A library user's `import keras_bert`: the model classes now, so that `keras.saving.load_model`
    # finds them registered. With KERAS_BERT_QUIET_TF=1, TensorFlow first, without its start-up notices.
    _command_line_startup.quiet_tensorflow_startup()
    for _name, _module in _MODEL_NAMES.items():
        globals()[_name] = getattr(importlib.import_module(_module), _name)
    del _name, _module

from keras_bert._version import __version__  # noqa: E402  (after the start-up choices above)

# Public names whose modules import TensorFlow: resolved lazily (PEP 562).
_LAZY = {
    "BertTokenizer": "keras_bert.preprocessing.bert_tokenizer",
    "BertInputPacker": "keras_bert.preprocessing.input_packer",
    "SentencePieceTokenizer": "keras_bert.preprocessing.sentence_piece_tokenizer",
    "BytePairTokenizer": "keras_bert.preprocessing.byte_pair_tokenizer",
    "ModernBertTokenizer": "keras_bert.preprocessing.modern_bert_tokenizer",
    "learn_vocabulary": "keras_bert.preprocessing.vocabulary",
    "write_vocabulary": "keras_bert.preprocessing.vocabulary",
    "pretraining_dataset": "keras_bert.preprocessing.pretraining.dataset",
    "PretrainingDataConfig": "keras_bert.preprocessing.pretraining.config",
    "pretrain_objective_options": "keras_bert.preprocessing.pretraining.config",
    "TextClassifierPipeline": "keras_bert.pipelines.text_classifier_pipeline",
    "TokenClassifierPipeline": "keras_bert.pipelines.token_classifier_pipeline",
    "QuestionAnswererPipeline": "keras_bert.pipelines.question_answerer_pipeline",
    "MultipleChoicePipeline": "keras_bert.pipelines.multiple_choice_pipeline",
    "TextEmbedderPipeline": "keras_bert.pipelines.text_embedder_pipeline",
    "predict_text": "keras_bert.pipelines.loading",
    "load_pipeline": "keras_bert.pipelines.loading",
    # counterfactual bias checks: pure Python until a model is checked (then its pipeline's TensorFlow)
    **dict.fromkeys(("BiasReport", "CounterfactualAugmentation", "CounterfactualSwapper", "TermPairs",
                     "check_counterfactual_bias"), "keras_bert.fairness"),
    # token attributions (the tokenizer runs TensorFlow)
    **dict.fromkeys(("DeletionCurve", "TokenAttributions", "TokenAttributor", "deletion_curve",
                     "write_attribution_report"), "keras_bert.explain"),
    "export_saved_model": "keras_bert.export.saved_model.saved_model_export",
    "ExportedModel": "keras_bert.export.runtime.exported_model",
    "export_hub_encoder": "keras_bert.export.saved_model.hub_export",
    "export_onnx": "keras_bert.export.onnx_litert.onnx_litert_export",
    "export_litert": "keras_bert.export.onnx_litert.onnx_litert_export",
    "convert": "keras_bert.jobs.convert",
}

# Every public name of the package (the documentation's API reference has a page for each); `from keras_bert
# import *` resolves the lazy ones too, so it imports TensorFlow.
__all__ = sorted({*_MODEL_NAMES, *_LAZY})


# Submodules reachable as attributes (`keras_bert.distribution.strategy_scope`)
# without importing their dependencies up front.
_SUBMODULES = (
    "cli", "converters", "distribution", "examples", "explain", "export", "fairness", "jobs", "loading", "metrics",
    "pipelines", "postprocessing", "preprocessing",
)
# Where modules of the layout before issue 16 went, so `keras_bert.finetuning.finetune` keeps working.
_moved_modules.MOVED_MODULES.update({
    "keras_bert.finetuning": "keras_bert.jobs.finetune",
    "keras_bert.pretraining": "keras_bert.jobs.pretrain",
    "keras_bert.checkpointing": "keras_bert.jobs.checkpointing",
    "keras_bert.text_pipelines": "keras_bert.pipelines",
})


def __getattr__(name):
    if name in _MODEL_NAMES:
        return getattr(importlib.import_module(_MODEL_NAMES[name]), name)
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"keras_bert.{name}")
    if f"keras_bert.{name}" in _moved_modules.MOVED_MODULES:
        return importlib.import_module(f"keras_bert.{name}")
    raise AttributeError(f"module 'keras_bert' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_MODEL_NAMES) | set(_LAZY) | set(_SUBMODULES))
