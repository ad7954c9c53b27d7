"""`keras-bert convert`: the command line of `keras_bert.jobs.convert.convert`.

    keras-bert convert uncased_L-12_H-768_A-12/ bert.keras       # TF1 -> .keras
    keras-bert convert bert.keras bert_hf/ --to hf               # .keras -> HF folder
    keras-bert convert bert_base_en_uncased bert.keras           # a preset name (keras_bert.list_presets())
    keras-bert convert runs/sst sst_hf/ --to hf                  # fine-tuned classifier -> BertForSequenceClassification

A refused conversion (a bad or missing source, an existing destination)
prints one line to stderr and exits with status 1.
"""

import argparse
import sys

from keras_bert.option_values import CONVERT_MODEL_CHOICES as MODEL_CHOICES
from keras_bert.option_values import CONVERT_TARGETS as TARGETS

HELP = "convert checkpoints: Google TF1 / Hugging Face / .keras"


def add_convert_arguments(parser):
    """Adds `convert`'s arguments to an argparse (sub)parser."""
    parser.add_argument(
        "source",
        help="TF1 folder or checkpoint prefix, Hugging Face folder, hf://owner/name, preset name "
        "(bert_base_en_uncased, google-bert/bert-base-uncased, ...), .keras file or finetune --out folder",
    )
    parser.add_argument("destination", help="a .keras path, or a folder for --to hf")
    parser.add_argument("--to", choices=TARGETS, default=None, help="output format (default: by destination name)")
    parser.add_argument(
        "--model", choices=MODEL_CHOICES, default="auto", help="model class (default: by the heads the source holds)"
    )
    parser.add_argument("--vocabulary", default=None, help="vocab.txt to use instead of the source's")
    parser.add_argument(
        "--lowercase",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="whether the tokenizer lowercases (default: from the source)",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing destination")
    parser.add_argument("--cache-dir", default=None, help="Hugging Face cache folder for presets and hf:// sources")
    return parser


def run_convert(args):
    """Runs `keras-bert convert` with parsed `args`; prints a one-line summary.

    Returns:
        The exit status: 0 on success, 1 when the conversion was refused
        (the reason is printed to stderr).
    """
    # defers keras (the conversion builds models): `keras-bert --help` and argument errors must not wait for it
    from keras_bert.jobs.convert import convert

    try:
        result = convert(
            args.source,
            args.destination,
            to=args.to,
            model=args.model,
            vocabulary=args.vocabulary,
            do_lower_case=args.lowercase,
            overwrite=args.overwrite,
            cache_dir=args.cache_dir,
        )
    except (ValueError, OSError) as error:
        if getattr(args, "debug", False):
            raise
        print(f"keras-bert convert: error: {' '.join(str(error).split())}", file=sys.stderr)  # one line
        return 1
    print(result.summary())
    return 0
