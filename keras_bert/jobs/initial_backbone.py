"""Where a fine-tuning run starts: the backbone and tokenizer named by `--init`.

`--init` is a Hugging Face BERT folder, a `.keras` file holding a
`BertBackbone` or any model with a `.backbone` (a `BertPretrainer` from
`keras-bert pretrain`, whose `--objective electra` runs give the
`ElectraPretrainer`'s discriminator, a fine-tuned model), any other checkpoint
`BertBackbone.from_pretrained` reads, a preset name (`bert_base_en_uncased`,
`google-bert/bert-base-uncased`, ...) or `hf://owner/name`, read from the
Hugging Face cache (downloaded when online), or a size name ("tiny",
"mini", ...) for a randomly initialised BERT (which needs a vocabulary).
"""

import os

from keras_bert.converters.checkpoint import load_keras_backbone, resolve_location
from keras_bert.converters.tokenizer_files import read_do_lower_case
from keras_bert.models.bert_backbone import BertBackbone
from keras_bert.models.bert_sizes import BERT_SIZES
from keras_bert.run_folders import read_job_record, read_run_folder


def load_init(init, vocab=None, lowercase=None, dropout=0.1, max_sequence_length=512):
    """The backbone and tokenizer a fine-tuning run starts from.

    Args:
        init: a checkpoint folder or file (Hugging Face folder, `.keras`
            file, or whatever `BertBackbone.from_pretrained` reads), a preset
            name or `hf://owner/name`, or a size name ("tiny", ..., "large")
            for random initialisation.
        vocab: a vocab.txt; default: the one in the checkpoint folder (or beside the `.keras` file).
        lowercase: the vocabulary is uncased; default: the checkpoint's
            tokenizer_config.json, the pretraining job's record, or True.
        dropout: backbone dropout during fine-tuning (None keeps the checkpoint's).
        max_sequence_length: positions of a randomly initialised backbone.

    Returns:
        `(backbone, tokenizer, description)`.
    """
    # defers TensorFlow: the tokenizer is tensorflow_text's.
    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    init = os.fspath(init)
    if not os.path.exists(init) and init in BERT_SIZES:
        if vocab is None:
            raise ValueError(f"--init {init} starts from random weights and needs --vocab.")
        tokenizer = BertTokenizer(vocab, lowercase=True if lowercase is None else lowercase)
        backbone = BertBackbone.from_size(
            init, vocabulary_size=tokenizer.vocabulary_size(), max_sequence_length=max_sequence_length,
            dropout=0.1 if dropout is None else dropout,
        )
        return backbone, tokenizer, f"random {init} BERT"
    hub_id = None
    if not os.path.exists(init):
        try:
            local, hub_id = resolve_location(init)
        except ValueError as error:  # an unknown preset: the closest names
            raise ValueError(f"--init: {error} Sizes for random weights: {sorted(BERT_SIZES)}.") from None
        if hub_id is None:
            raise FileNotFoundError(f"--init {init}: no such file or folder (nor a size name: {sorted(BERT_SIZES)})")
        if lowercase is None:  # the snapshot folder is named by its commit: the repository's name tells
            lowercase = read_do_lower_case(local, name=hub_id.split("/")[-1])
        source, init = init, local
    run = read_run_folder(init)
    if run is not None:  # a job's --out folder: its model.keras and vocab.txt
        init = run.model_file
    folder = init if os.path.isdir(init) else os.path.dirname(os.path.abspath(init))
    if init.endswith(".keras") and os.path.isfile(init):
        backbone = _with_dropout(_keras_backbone(init), dropout)
        description = f".keras file {init}"
        if lowercase is None:
            lowercase = _recorded_lowercase(folder)
    else:
        kwargs = {} if dropout is None else {"dropout": dropout}
        backbone = BertBackbone.from_pretrained(init, **kwargs)
        description = f"preset {source} (hf://{hub_id})" if hub_id else f"checkpoint {init}"
    vocab = vocab or os.path.join(folder, "vocab.txt")
    if not os.path.isfile(vocab):
        raise FileNotFoundError(f"No vocab.txt for --init {init} (looked for {vocab}); pass --vocab.")
    options = {} if lowercase is None else {"lowercase": lowercase}
    tokenizer = BertTokenizer.from_pretrained(vocab, **options)
    if tokenizer.vocabulary_size() != backbone.vocabulary_size:
        raise ValueError(
            f"{vocab} has {tokenizer.vocabulary_size()} tokens but the model's embedding has "
            f"{backbone.vocabulary_size} rows: not the model's vocabulary."
        )
    return backbone, tokenizer, description


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
    if run.job.get("objective") == "electra":
        return "pretrained with --objective electra, whose replaced-token detection does not use it"
    if run.job.get("sentence_task") == "none":
        return "pretrained without a sentence task (MLM only); NSP or SOP is what trains it"
    return None


def _keras_backbone(path):
    try:
        return load_keras_backbone(path)[1]
    except ValueError as error:
        raise ValueError(f"--init: {error}") from None


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


def _recorded_lowercase(folder):
    """`lowercase` recorded by the keras-bert job whose record is in `folder`, if any."""
    try:
        _, job = read_job_record(folder)
    except ValueError:  # an unreadable record beside the .keras file says nothing about its casing
        return None
    if job is None or "lowercase" not in job:
        return None
    return bool(job["lowercase"])
