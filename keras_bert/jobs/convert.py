"""Converting checkpoints between Google TF1, Hugging Face folders and `.keras` files.

`keras-bert convert` (`keras_bert.cli.convert`) runs `convert`:

    keras-bert convert uncased_L-12_H-768_A-12/ bert.keras       # TF1 -> .keras
    keras-bert convert hf_bert/ bert.keras                       # HF folder -> .keras
    keras-bert convert hf://owner/name bert.keras                # hub (or its cache) -> .keras
    keras-bert convert bert.keras bert_hf/ --to hf               # .keras -> HF folder
    keras-bert convert bert_base_en_uncased bert.keras           # a preset (keras_bert.list_presets())
    keras-bert convert runs/sst bert_sst_hf/ --to hf             # fine-tuned -> BertForSequenceClassification

The model class follows what the source holds: MLM and NSP heads give a
`BertPretrainer`, an MLM head alone a `BertMaskedLM`, a Hugging Face task
head (`BertForSequenceClassification`, ...) or a fine-tuned `.keras` task
model that task model (`BertClassifier`, ...; see `converters.hf_tasks`),
no heads a `BertBackbone` (or pass `model=`). A `.keras` destination gets the source's
vocabulary and lowercasing choice in sidecar files (`bert.vocab.txt`,
`bert.tokenizer_config.json`), which a later `--to hf` conversion picks up.
Every destination is written under a temporary name beside it and renamed
into place, so a failed conversion leaves nothing behind.
"""

import dataclasses
import json
import os
import shutil

from keras_bert.converters import tokenizer_files
from keras_bert.converters.checkpoint import read_checkpoint
from keras_bert.atomic_files import replace_atomically
from keras_bert.converters.hf_writer import save_hf_checkpoint
from keras_bert.jobs.convert_options import ConvertOptions
from keras_bert.jobs.job_options import takes_options
from keras_bert.models.bert_backbone import BertBackbone
from keras_bert.models.bert_masked_lm import BertMaskedLM
from keras_bert.models.bert_pretrainer import BertPretrainer
from keras_bert.models.bert_classifier import BertClassifier
from keras_bert.models.bert_multiple_choice import BertMultipleChoice
from keras_bert.models.bert_question_answerer import BertQuestionAnswerer
from keras_bert.models.bert_token_classifier import BertTokenClassifier
from keras_bert.models.pretrained import build_from_checkpoint, task_head_arguments
from keras_bert.option_values import CONVERT_MODEL_CHOICES as MODEL_CHOICES
from keras_bert.option_values import CONVERT_TARGETS as TARGETS

# Task models that have a Hugging Face class: "auto" converts them as they are.
TASK_CLASSES = {cls.__name__: cls for cls in (BertClassifier, BertTokenClassifier, BertQuestionAnswerer, BertMultipleChoice)}


@dataclasses.dataclass
class ConversionResult:
    """What `convert` did.

    Attributes:
        source_format: "hf", "tf1" or "keras".
        source_name: the source's format in words (e.g. "Google TF1 checkpoint").
        model_class: name of the keras_bert class converted.
        num_params: int, the model's parameter count.
        destination: absolute path written.
        target: "hf" or "keras".
        vocabulary: path of the vocabulary written, or None.
    """

    source_format: str
    source_name: str
    model_class: str
    num_params: int
    destination: str
    target: str
    vocabulary: object

    def summary(self):
        """One line for the command line."""
        target = "Hugging Face folder" if self.target == "hf" else ".keras file"
        vocabulary = "with vocab.txt" if self.vocabulary else "no vocabulary"
        return (
            f"Converted {self.source_name} -> {target}: {self.model_class}, "
            f"{self.num_params:,} parameters, {vocabulary} -> {self.destination}"
        )

    def __repr__(self):
        return f"ConversionResult({self.summary()!r})"


def _model_class(checkpoint, model):
    if model not in MODEL_CHOICES:
        raise ValueError(f"`model` must be one of {MODEL_CHOICES}. Received: model={model!r}")
    if model == "auto":
        if checkpoint.task_head is not None:  # a Hugging Face task folder: its own class
            return TASK_CLASSES[checkpoint.task_head.model_classes()[0]]
        if type(checkpoint.keras_model).__name__ in TASK_CLASSES:  # a fine-tuned task model, as it is
            return type(checkpoint.keras_model)
        heads = checkpoint.heads
        if heads >= {"masked_lm", "next_sentence"}:
            return BertPretrainer
        if "masked_lm" in heads:
            return BertMaskedLM
        return BertBackbone
    return {"backbone": BertBackbone, "pretrainer": BertPretrainer, "masked_lm": BertMaskedLM}[model]


def _target(destination, to):
    if to is None:
        return "keras" if os.fspath(destination).endswith(".keras") else "hf"
    if to not in TARGETS:
        raise ValueError(f"`to` must be one of {TARGETS} or None. Received: to={to!r}")
    if (to == "keras") != os.fspath(destination).endswith(".keras"):
        raise ValueError(
            f"A .keras destination (to='keras') must end in '.keras', a Hugging Face folder (to='hf') must not. "
            f"Received: to={to!r}, destination={os.fspath(destination)!r}"
        )
    return to


def _write_keras(model, destination, vocabulary_file, do_lower_case, overwrite):
    destination = replace_atomically(destination, overwrite, model.save)
    vocabulary_path, config_path = tokenizer_files.keras_sidecar_files(destination)
    if vocabulary_file is None:
        # Without a vocabulary there is no tokenizer to describe; sidecars
        # left by an earlier conversion to this name would mislead.
        for stale in (vocabulary_path, config_path):
            if os.path.exists(stale):
                os.remove(stale)
        return destination, None

    def copy_vocabulary(temporary):
        shutil.copyfile(vocabulary_file, temporary)

    def write_config(temporary):
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump({"do_lower_case": bool(do_lower_case)}, f)
            f.write("\n")

    replace_atomically(vocabulary_path, True, copy_vocabulary)
    replace_atomically(config_path, True, write_config)
    return destination, vocabulary_path


@takes_options(ConvertOptions)
def convert(options):
    """Converts a BERT checkpoint to a `.keras` file or a Hugging Face folder.

    Args:
        options: given as keywords or in order, the fields of `ConvertOptions`
            (`source`, `destination`, `to`, `model`, `vocabulary`,
            `do_lower_case`, `overwrite`, `cache_dir`; each documented there).

    Returns:
        A `ConversionResult`.
    """
    o = options
    target = _target(o.destination, o.to)
    checkpoint = read_checkpoint(o.source, o.cache_dir)
    cls = _model_class(checkpoint, o.model)
    if o.vocabulary is not None:
        checkpoint.vocabulary_file = os.fspath(o.vocabulary)
    if o.do_lower_case is not None:
        checkpoint.do_lower_case = bool(o.do_lower_case)
    head_kwargs = task_head_arguments(checkpoint, cls, {})[0] if cls.__name__ in TASK_CLASSES else None
    converted = build_from_checkpoint(
        checkpoint, cls, None if cls is BertBackbone else BertBackbone, head_kwargs=head_kwargs
    )
    if target == "keras":
        destination, written = _write_keras(
            converted, o.destination, checkpoint.vocabulary_file, checkpoint.do_lower_case, o.overwrite
        )
    else:
        destination = save_hf_checkpoint(
            converted,
            o.destination,
            vocabulary=checkpoint.vocabulary_file,
            do_lower_case=checkpoint.do_lower_case,
            overwrite=o.overwrite,
        )
        written = checkpoint.vocabulary_file and os.path.join(destination, tokenizer_files.VOCABULARY_FILE)
    return ConversionResult(
        checkpoint.format, checkpoint.format_name, cls.__name__, converted.count_params(), destination, target, written
    )
