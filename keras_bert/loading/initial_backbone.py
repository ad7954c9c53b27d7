"""Where a fine-tuning run starts: the backbone and tokenizer named by `--init`.

`--init` is any reference `resolve_model` takes: a job's output folder or a
`.keras` file holding a `BertBackbone` or any model with a `.backbone` (a
`BertPretrainer` from `keras-bert pretrain`, whose `--objective electra` runs
give the `ElectraPretrainer`'s discriminator, a fine-tuned model), a
checkpoint of any family (a Hugging Face ModernBERT folder gives a
`ModernBertBackbone`, with the tokenizer its files name), a preset name
(`bert_base_en_uncased`, `google-bert/bert-base-uncased`, ...) or
`hf://owner/name`, read from the Hugging Face cache (downloaded when online),
or a size name ("tiny", "mini", ...) for a randomly initialised BERT (which
needs a vocabulary).
"""

import os

from keras_bert import models
from keras_bert.converters.checkpoint import load_keras_backbone, read_checkpoint
from keras_bert.converters.hf_families import FAMILIES
from keras_bert.loading.loaders import load_tokenizer
from keras_bert.loading.model_files import KERAS, SIZE, reported_as, resolve_model
from keras_bert.models.bert_backbone import BertBackbone
from keras_bert.models.pretrained import build_from_checkpoint
from keras_bert.run_folders import read_run_folder


def load_init(init, vocab=None, lowercase=None, dropout=0.1, max_sequence_length=512):
    """The backbone and tokenizer a fine-tuning run starts from.

    Args:
        init: a model reference (see the module docstring).
        vocab: a vocab.txt; default: the model's (see `ModelFiles.vocabulary`).
        lowercase: the vocabulary is uncased; default: what the model's files
            record (its job record, sidecar or hub name), else the vocabulary's
            folder, else True.
        dropout: backbone dropout during fine-tuning (None keeps the checkpoint's).
        max_sequence_length: positions of a randomly initialised backbone.

    Returns:
        `(backbone, tokenizer, description)`.

    Raises:
        FileNotFoundError, ValueError: one line, that starts with "--init" when the model is at fault.
    """
    with reported_as("--init"):
        files = resolve_model(init, sizes=True)
    if files.kind == SIZE:
        if vocab is None:
            raise ValueError(f"--init {files.reference} starts from random weights and needs --vocab.")
        tokenizer = load_tokenizer(files, vocab, True if lowercase is None else lowercase)
        backbone = BertBackbone.from_size(
            files.reference, vocabulary_size=tokenizer.vocabulary_size(), max_sequence_length=max_sequence_length,
            dropout=0.1 if dropout is None else dropout,
        )
        return backbone, tokenizer, files.description
    with reported_as("--init"):
        if files.kind == KERAS:
            backbone = _with_dropout(load_keras_backbone(files.path)[1], dropout)
        else:
            backbone = _pretrained_backbone(files.path, dropout)
    tokenizer = load_tokenizer(files, vocab, lowercase)
    if tokenizer.vocabulary_size() != backbone.vocabulary_size:
        raise ValueError(
            f"{vocab or files.vocabulary} has {tokenizer.vocabulary_size()} tokens but the model's embedding has "
            f"{backbone.vocabulary_size} rows: not the model's vocabulary."
        )
    return backbone, tokenizer, files.description


def pooler_never_trained(init):
    """Why the pooler of `init`'s backbone never trained, or None.

    BERT's pooler (the tanh layer on [CLS]) learns only from a sentence task
    (NSP, SOP). A `keras-bert pretrain` run without one (`--objective roberta`,
    `--objective electra`) leaves it at its random initial weights, which a
    classifier head on the pooled vector then has to train through.
    """
    run = read_run_folder(init) if os.path.exists(init) else None
    if run is None or run.kind != "pretrain" or run.job is None:
        return None
    if run.job.get("family") == "modernbert":
        return None  # no pooler: its pooled output is the [CLS] vector pretraining trained

    if run.job.get("objective") == "electra":
        return "pretrained with --objective electra, whose replaced-token detection does not use it"
    if run.job.get("sentence_task") == "none":
        return "pretrained without a sentence task (MLM only); NSP or SOP is what trains it"
    return None


def _pretrained_backbone(path, dropout):
    """The backbone of the checkpoint `path`, of its family's class (a ModernBERT folder: a `ModernBertBackbone`)."""
    checkpoint = read_checkpoint(path)
    backbone_class = getattr(models, FAMILIES[checkpoint.model_type].backbone_class)
    return build_from_checkpoint(checkpoint, backbone_class, **({} if dropout is None else {"dropout": dropout}))


def _with_dropout(backbone, dropout):
    """`backbone` with `dropout`, and unpacked: task heads take one example per row."""
    packed = getattr(backbone, "packed_inputs", False)
    if (dropout is None or backbone.dropout == dropout) and not packed:
        return backbone
    config = backbone.get_config()
    if packed:
        config["packed_inputs"] = False
    if dropout is not None:
        config["dropout"] = dropout
    # Its own class: the discriminator of `--objective electra` runs is an ElectraBackbone.
    rebuilt = type(backbone).from_config(config)
    rebuilt.set_weights(backbone.get_weights())
    return rebuilt
