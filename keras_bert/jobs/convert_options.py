"""ConvertOptions: every option of `convert` and of `keras-bert convert`, with its default, in one place."""

import dataclasses

from keras_bert.jobs.job_options import JobOptions, option
from keras_bert.option_values import CONVERT_MODEL_CHOICES, CONVERT_TARGETS


@dataclasses.dataclass(frozen=True)
class ConvertOptions(JobOptions):
    """The options of a conversion (`keras_bert.jobs.convert.convert`); each field's help says what it does."""

    POSITIONAL = ("source", "destination", "to", "model", "vocabulary", "do_lower_case", "overwrite", "cache_dir")

    source: str = option(help="TF1 folder or checkpoint prefix, Hugging Face folder (a task class's too), "
                              "hf://owner/name[@revision], preset name (bert_base_en_uncased, "
                              "google-bert/bert-base-uncased, ...), .keras file or finetune --out folder",
                         flag="source")
    destination: str = option(help="a .keras path, or a folder for --to hf", flag="destination")
    to: str = option(None, "output format (default: by destination name: .keras or not)", choices=CONVERT_TARGETS)
    model: str = option("auto", "model class: auto (by the heads the source holds: a task model for a task "
                                "checkpoint), backbone, pretrainer or masked_lm", choices=CONVERT_MODEL_CHOICES)
    vocabulary: str = option(None, "vocab.txt to use instead of the source's")
    do_lower_case: bool = option(None, "whether the tokenizer lowercases (default: from the source)",
                                 switches={"--lowercase": True, "--no-lowercase": False})
    overwrite: bool = option(False, "replace an existing destination", switches={"--overwrite": True})
    cache_dir: str = option(None, "Hugging Face cache folder for presets and hf:// sources")
