"""Writing keras_bert models as Hugging Face checkpoints: BERT's, and the bare encoder of families that say how.

`save_hf_checkpoint` writes `config.json`, `model.safetensors`,
`tokenizer_config.json` and (when a vocabulary is known) `vocab.txt`, which
transformers' `BertModel`, `BertForPreTraining` or `BertForMaskedLM`
`from_pretrained` loads without missing or unexpected keys:

| keras_bert      | architecture       | tensor names                         |
|-----------------|--------------------|--------------------------------------|
| BertBackbone    | BertModel          | `embeddings.*`, `encoder.*`, `pooler.*` |
| BertPretrainer  | BertForPreTraining | `bert.*` + `cls.predictions.*` + `cls.seq_relationship.*` |
| BertMaskedLM    | BertForMaskedLM    | `bert.*` (no pooler) + `cls.predictions.*` |
| BertClassifier  | BertForSequenceClassification | `bert.*` + `classifier.*` |
| BertTokenClassifier | BertForTokenClassification | `bert.*` (no pooler) + `classifier.*` |
| BertQuestionAnswerer | BertForQuestionAnswering | `bert.*` (no pooler) + `qa_outputs.*` |
| BertMultipleChoice | BertForMultipleChoice | `bert.*` + `classifier.*` |
| ModernBertBackbone | ModernBertModel    | `embeddings.*`, `layers.*`, `final_norm.*` |
| ModernBertClassifier | ModernBertForSequenceClassification | `model.*` + `head.*` + `classifier.*` |
| ModernBertTokenClassifier | ModernBertForTokenClassification | `model.*` + `head.*` + `classifier.*` |
| ModernBertQuestionAnswerer | ModernBertForQuestionAnswering | `model.*` + `head.*` + `classifier.*` (2, H) |
| ModernBertMaskedLM (or an MLM-only BertPretrainer on it) | ModernBertForMaskedLM | `model.*` + `head.*` + `decoder.bias` |

A backbone of another family whose `hf_family.Family` names a `model_class`
is written as that class (`ModernBertBackbone` -> `ModernBertModel`), and its
task models as the family's task classes (`hf_tasks`): config.json and
model.safetensors, without tokenizer files (its tokenizer is not a WordPiece
`vocab.txt`).

Task models also write their labels into config.json (`id2label`,
`label2id`, `problem_type`; see `hf_tasks`), so transformers' pipelines
report the same label names.

The MLM decoder is tied to the word embeddings (`tie_word_embeddings`), so,
as transformers itself saves it, `cls.predictions.decoder.weight/bias` are
not stored. Numpy and safetensors only: transformers is not needed to write.
"""

import json
import os

import numpy as np

from keras_bert.atomic_files import replace_atomically
from keras_bert.converters import tokenizer_files
from keras_bert.converters.hf_bert import FAMILY as BERT
from keras_bert.converters.hf_config_fields import HF_ACTIVATION_NAMES  # noqa: F401 (importable from here, as before)
from keras_bert.converters.hf_tasks import (
    ARCHITECTURE_FAMILIES,
    TASK_ARCHITECTURES,
    WITHOUT_POOLER,
    head_prefix,
    hf_task_config,
)
from keras_bert.converters.weight_map import (
    OPTIONAL_NAMES,
    canonical_weights,
    is_backbone,
    is_encoder_backbone,
    model_family,
)

SPECIAL_TOKENS = {
    "unk_token": "[UNK]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
}


def hf_architecture(model):
    """(architecture name, tensor-name prefix) of the transformers class that matches `model`."""
    if is_backbone(model):
        return "BertModel", ""
    if is_encoder_backbone(model) and model_family(model).model_class is not None:
        return model_family(model).model_class, ""
    # Exact types (by name: keras_bert.models builds on this package, which does
    # not import it): a subclass may add heads that the architecture lacks.
    if type(model).__name__ == "BertPretrainer":
        return "BertForPreTraining", "bert."
    if type(model).__name__ == "BertMaskedLM":
        return "BertForMaskedLM", "bert."
    if type(model).__name__ == "ModernBertMaskedLM" or (
        # A ModernBERT pretrained with the masked LM alone (`keras-bert pretrain --family modernbert`).
        type(model).__name__ == "BertPretrainer" and model_family(model).model_type == "modernbert"
        and getattr(model, "next_sentence_head", None) is None
    ):
        return "ModernBertForMaskedLM", model_family(model).prefix
    if type(model).__name__ in TASK_ARCHITECTURES:
        architecture = TASK_ARCHITECTURES[type(model).__name__]
        family = model_family(model)
        if ARCHITECTURE_FAMILIES[architecture] != family.model_type:
            raise ValueError(
                f"A {type(model).__name__} on a {type(model.backbone).__name__} has no transformers class: "
                f"{architecture} holds a {ARCHITECTURE_FAMILIES[architecture]} encoder. Export its `.backbone`, "
                "or build the family's own task model (ModernBertClassifier, ...)."
            )
        if family is not BERT:
            return architecture, family.prefix
        if getattr(model, "pooling", "cls") != "cls":
            # BertForSequenceClassification reads the pooler's [CLS] vector: a mean-pooled head would load
            # without error there and answer differently.
            raise ValueError(
                f"Hugging Face's {TASK_ARCHITECTURES[type(model).__name__]} classifies BERT's pooled [CLS] vector; "
                f"this {type(model).__name__} has pooling={model.pooling!r}, which no transformers BERT class "
                "computes. Export it as a .keras file or SavedModel, or export its `.backbone`."
            )
        return TASK_ARCHITECTURES[type(model).__name__], "bert."
    raise ValueError(
        f"Hugging Face export supports BertBackbone, BertPretrainer, BertMaskedLM, "
        f"{', '.join(TASK_ARCHITECTURES)}, ModernBertBackbone. Received a "
        f"{type(model).__name__}; export its `.backbone` to get a BertModel checkpoint."
    )


def hf_config(backbone, architecture="BertModel"):
    """The Hugging Face `config.json` dict of a `BertBackbone` (inverse of `read_hf_config`).

    Args:
        backbone: a `BertBackbone`, or a backbone of a family with a `model_class`.
        architecture: the transformers class name to record.
    """
    family = model_family(backbone)
    if family is not BERT:
        return {
            "architectures": [architecture],
            "model_type": family.model_type,
            **family.config_values(backbone),
            family.activation_key: HF_ACTIVATION_NAMES[backbone.activation],
            **family.written_config(backbone),
        }
    if backbone.normalize_first:
        raise ValueError("Pre-LN backbones (normalize_first=True) have no Hugging Face BERT counterpart.")
    BERT.check_architecture(backbone)
    return {
        "architectures": [architecture],
        "model_type": BERT.model_type,
        **BERT.config_values(backbone),
        BERT.activation_key: HF_ACTIVATION_NAMES[getattr(backbone, "activation", BERT.default_activation)],
        # keras_bert has one dropout rate for both places.
        "attention_probs_dropout_prob": backbone.dropout,
        "initializer_range": 0.02,
        "pad_token_id": 0,
        "position_embedding_type": BERT.position_embedding_type,
        "tie_word_embeddings": True,
        "dtype": "float32",
    }


def hf_tensors(model):
    """Hugging Face tensor name -> numpy array, as `save_hf_checkpoint` stores them."""
    architecture, prefix = hf_architecture(model)
    heads = ("cls.", head_prefix(architecture) + ".") if architecture in TASK_ARCHITECTURES.values() else ("cls.",)
    if model_family(model) is not BERT:
        heads = model_family(model).head_prefixes  # ModernBERT's `head.`, `decoder.`, `classifier.`
    tensors = {}
    for name, array in canonical_weights(model).items():
        if architecture in WITHOUT_POOLER and name in OPTIONAL_NAMES:
            continue  # transformers builds these classes without a pooler
        if array.dtype not in (np.float32, np.float16):
            array = array.astype(np.float32)  # e.g. bfloat16 variables
        tensors[name if name.startswith(heads) else prefix + name] = np.ascontiguousarray(array)
    return tensors


def _vocabulary_lines(vocabulary):
    if isinstance(vocabulary, (str, os.PathLike)):
        return tokenizer_files.read_vocabulary_lines(vocabulary)
    if hasattr(vocabulary, "get_vocabulary"):
        vocabulary = vocabulary.get_vocabulary()
    elif hasattr(vocabulary, "vocabulary") and not isinstance(vocabulary, (list, tuple)):
        vocabulary = vocabulary.vocabulary
    return [str(token) for token in vocabulary]


def _tokenizer_config(do_lower_case, max_length, tokenizer=None):
    return {
        "tokenizer_class": "BertTokenizer",
        "do_lower_case": bool(do_lower_case),
        # A keras_bert tokenizer's own options, else BERT's defaults.
        "tokenize_chinese_chars": getattr(tokenizer, "tokenize_chinese_chars", True),
        "strip_accents": getattr(tokenizer, "strip_accents", None),
        "model_max_length": max_length,
        **SPECIAL_TOKENS,
    }


def save_hf_checkpoint(model, destination, vocabulary=None, do_lower_case=None, overwrite=False):
    """Writes `model` as a Hugging Face checkpoint folder (BERT's, or ModernBERT's bare encoder), atomically.

    Args:
        model: a `BertBackbone` (-> `BertModel`), `BertPretrainer`
            (-> `BertForPreTraining`), `BertMaskedLM` (-> `BertForMaskedLM`),
            or a task model: `BertClassifier` (-> `BertForSequenceClassification`,
            `problem_type` "regression" for `num_classes=1`), `BertTokenClassifier`
            (-> `BertForTokenClassification`), `BertQuestionAnswerer`
            (-> `BertForQuestionAnswering`), `BertMultipleChoice` (-> `BertForMultipleChoice`);
            or a `ModernBertBackbone` (-> `ModernBertModel`, config.json and weights only) and its task models
            (`ModernBertClassifier` -> `ModernBertForSequenceClassification`, with `classifier_pooling`, ...;
            `ModernBertTokenClassifier`, `ModernBertQuestionAnswerer` -> `ModernBertForTokenClassification`,
            `ModernBertForQuestionAnswering`).
        destination: the folder to create.
        vocabulary: optional vocabulary for `vocab.txt` (BERT only): a path to a
            `vocab.txt`, a list of tokens, or a tokenizer with
            `get_vocabulary()` or a `vocabulary` attribute. Its size must
            equal the model's `vocabulary_size`.
        do_lower_case: bool for `tokenizer_config.json`; None means the
            tokenizer's `lowercase` when `vocabulary` is a tokenizer, else True.
        overwrite: bool, whether to replace an existing non-empty folder.

    Returns:
        The absolute path of the folder written.

    Examples:
    ```python
    backbone = keras_bert.BertBackbone.from_pretrained("uncased_L-12_H-768_A-12/")
    save_hf_checkpoint(backbone, "bert_hf/", vocabulary="uncased_L-12_H-768_A-12/vocab.txt")
    transformers.BertModel.from_pretrained("bert_hf/")
    ```
    """
    from safetensors.numpy import save_file  # defers safetensors: an optional dependency (the hf extra)

    architecture, _ = hf_architecture(model)
    backbone = getattr(model, "backbone", model)
    config = {**hf_config(backbone, architecture), **hf_task_config(model, architecture)}
    tensors = hf_tensors(model)
    bert = model_family(backbone) is BERT
    if vocabulary is not None and not bert:
        raise ValueError(
            f"{type(backbone).__name__} checkpoints are written without tokenizer files: a WordPiece vocabulary "
            "is BERT's. Save the tokenizer's own files beside the checkpoint."
        )
    lines = None
    if vocabulary is not None:
        lines = _vocabulary_lines(vocabulary)
        if len(lines) != backbone.vocabulary_size:
            raise ValueError(
                f"The vocabulary has {len(lines)} tokens but the model's token embedding has "
                f"{backbone.vocabulary_size} rows (vocabulary_size); they must be equal."
            )
    tokenizer = vocabulary if hasattr(vocabulary, "get_vocabulary") else None
    if do_lower_case is None:
        do_lower_case = getattr(tokenizer, "lowercase", True)

    def write(folder):
        os.makedirs(folder)
        with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2, sort_keys=True)
            f.write("\n")
        # transformers refuses safetensors files without a "format" entry.
        save_file(tensors, os.path.join(folder, "model.safetensors"), metadata={"format": "pt"})
        if not bert:
            return
        with open(os.path.join(folder, tokenizer_files.TOKENIZER_CONFIG_FILE), "w", encoding="utf-8") as f:
            json.dump(_tokenizer_config(do_lower_case, backbone.max_sequence_length, tokenizer), f, indent=2)
            f.write("\n")
        if lines is not None:
            with open(os.path.join(folder, tokenizer_files.VOCABULARY_FILE), "w", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in lines))

    return replace_atomically(destination, overwrite, write)
