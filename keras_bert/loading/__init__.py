"""Loading "a model the user names": one resolver for the command line, the jobs and the pipelines.

    files = resolve_model("bert_base_en_uncased")   # preset, hf://, run folder, .keras, checkpoint (, size)
    files = find_model("runs/sst")                    # a .keras file or a job's output folder only
    model = load_keras_model(files)
    tokenizer = load_tokenizer(files)
    backbone, tokenizer, description = load_init("runs/pretrained", dropout=0.1)   # `finetune --init`

`model_files` says what a reference is and where its weights, vocabulary,
casing and job record are; `loaders` builds the model and the tokenizer from
that; `initial_backbone` is the fine-tuning job's start. Below this part are
the readers it calls (`converters`, `run_folders`, `models`); above it, everything
that takes a model from a user (`cli`, `jobs`, `pipelines`).
"""

from keras_bert.loading.initial_backbone import load_init, pooler_never_trained
from keras_bert.loading.loaders import load_keras_model, load_tokenizer
from keras_bert.loading.model_files import ModelFiles, find_model, reported_as, resolve_model

__all__ = [
    "ModelFiles",
    "find_model",
    "load_init",
    "load_keras_model",
    "load_tokenizer",
    "pooler_never_trained",
    "reported_as",
    "resolve_model",
]
