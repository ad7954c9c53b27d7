"""`keras-bert convert`: the command line of `keras_bert.jobs.convert.convert`.

    keras-bert convert uncased_L-12_H-768_A-12/ bert.keras       # TF1 -> .keras
    keras-bert convert bert.keras bert_hf/ --to hf               # .keras -> HF folder
    keras-bert convert bert_base_en_uncased bert.keras           # a preset name (keras_bert.list_presets())
    keras-bert convert runs/sst sst_hf/ --to hf                  # fine-tuned classifier -> BertForSequenceClassification

Every option is a field of `keras_bert.jobs.convert_options.ConvertOptions`. A
refused conversion (a bad or missing source, an existing destination) prints
one line to stderr and exits with status 1.
"""

import sys

from keras_bert.cli.job_arguments import add_job_options, job_keywords
from keras_bert.cli.preflight import convert_source, model_reference
from keras_bert.jobs.convert_options import ConvertOptions

HELP = "convert checkpoints: Google TF1 / Hugging Face / .keras"
# What the command reads, checked before TensorFlow loads (`preflight`): option -> (its flag, the check).
INPUTS = {"source": ("source", convert_source), "vocabulary": ("--vocabulary", model_reference)}
# A refused conversion exits with 1 (`run_convert`), a missing source too.
ERROR_STATUS = 1


def add_convert_arguments(parser):
    """Adds `convert`'s arguments to an argparse (sub)parser."""
    return add_job_options(parser, ConvertOptions)


def run_convert(args):
    """Runs `keras-bert convert` with parsed `args`; prints a one-line summary.

    Returns:
        The exit status: 0 on success, 1 when the conversion was refused
        (the reason is printed to stderr).
    """
    # defers keras (the conversion builds models): `keras-bert --help` and argument errors must not wait for it
    from keras_bert.jobs.convert import convert

    try:
        result = convert(**job_keywords(args, ConvertOptions))
    except (ValueError, OSError) as error:
        if getattr(args, "debug", False):
            raise
        print(f"keras-bert convert: error: {' '.join(str(error).split())}", file=sys.stderr)  # one line
        return 1
    print(result.summary())
    return 0
