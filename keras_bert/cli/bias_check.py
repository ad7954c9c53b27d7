"""`keras-bert bias-check`: does a classifier's answer change when only a pronoun or a name changes?

    keras-bert bias-check runs/sst --file reviews.txt --out bias_report          # the built-in pairs
    keras-bert bias-check runs/sst --pairs my_pairs.tsv "He was superb." "Mary's script is dull."
    keras-bert bias-check model.keras --tokenizer vocab.txt --pairs builtin --pairs my_pairs.tsv --file reviews.txt

MODEL is a `keras-bert finetune` output folder or a `.keras` file of a classifier or regressor, found and
loaded as `keras-bert predict` loads it. Every text that holds a term of the pairs is predicted as it is and
with the terms swapped (both directions, whole words, case kept); the command prints a summary (flip rate,
mean and largest change of the predicted label's probability, per pair, the worst texts) and with `--out DIR`
writes DIR/report.json (`keras_bert.fairness.BiasReport`). Texts without any term are counted and said.

A pairs file has one `term<TAB>term` pair per line (UTF-8; blank lines and `#` comments skipped); `builtin`
names the built-in lists (he/she, him/her, his/her(s), himself/herself, gendered nouns, first names by gender).
A malformed pairs file (the line is named), a term in two pairs, an empty text, or texts none of which holds a
term end the command with a one-line error before the model loads, and nothing is written.
"""

import os

from keras_bert.cli.errors import UserError
from keras_bert.cli.predict import _read_inputs
from keras_bert.cli.preflight import existing_file, local_model, model_reference, pairs_source
from keras_bert.fairness.bias_check import check_counterfactual_bias, checked_texts
from keras_bert.fairness.counterfactual_swapper import CounterfactualSwapper
from keras_bert.fairness.term_pairs import BUILTIN

HELP = "counterfactual bias check: swap he/she, names or your own term pairs and see how predictions change"


# What the command reads, checked before TensorFlow loads (`preflight`): option -> (its flag, the check).
INPUTS = {"model": (None, local_model), "file": ("--file", existing_file), "pairs": ("--pairs", pairs_source),
          "tokenizer": ("--tokenizer", model_reference)}
EPILOG = (
    "Output: a summary on stdout; with --out DIR, DIR/report.json holds every compared text (original, swapped, "
    "both predictions, the change, whether the label flipped), the statistics overall and per pair, and the worst "
    "texts. Change: the absolute change of the probability of the label predicted for the original text (a "
    "regressor: of its value). Pairs files: one term<TAB>term per line."
)


def add_bias_check_arguments(parser):
    """Adds the `keras-bert bias-check` arguments to an argparse (sub)parser."""
    parser.epilog = EPILOG
    parser.add_argument("model", help="a finetune folder or a .keras file of a classifier or regressor")
    parser.add_argument("texts", nargs="*", help="texts to check (default: --file or stdin)")
    parser.add_argument("--file", help="a text file with one text per line ('-' for stdin)")
    parser.add_argument("--pairs", action="append", metavar="PAIRS",
                        help="'builtin' (the default) or a pairs file (term<TAB>term per line); repeat it to join "
                             "lists (--pairs builtin --pairs my_pairs.tsv), a term may be in one pair only")
    parser.add_argument("--out", help="write DIR/report.json (default: the summary only)", metavar="DIR")
    parser.add_argument("--worst", type=int, default=10, metavar="N",
                        help="how many of the most changed texts report.json lists")
    parser.add_argument("--tokenizer",
                        help=".keras models: vocab.txt or checkpoint folder (default: found beside the model)")
    parser.add_argument("--sequence-length", type=int, help="packed length (default: the run's, else 128)")
    parser.add_argument("--batch-size", type=int, default=32, help="texts per forward pass")


def _check_up_front(args):
    """The texts, after every check that needs no model: pairs files, empty texts, texts without any term."""
    if args.batch_size < 1:
        raise UserError("--batch-size must be at least 1")
    if args.worst < 0:
        raise UserError("--worst must be 0 or more")
    if args.out and os.path.isfile(args.out):
        raise UserError(f"--out {args.out} is a file; expected a folder for report.json")
    args.pairs = args.pairs or [BUILTIN]
    try:
        swapper = CounterfactualSwapper(args.pairs)
        where, texts = zip(*_read_inputs(args))  # predict's reader: arguments, --file or stdin
        texts = checked_texts(texts, where)
    except (ValueError, FileNotFoundError) as error:
        raise UserError(str(error)) from None
    if not any(swapper.contains_term(text) for text in texts):
        raise UserError(f"none of the {len(texts):,} texts holds a term of the pairs ({' + '.join(args.pairs)}): "
                        "nothing to compare")
    return swapper.pairs, texts


def run_bias_check(args):
    """Prints the bias check's summary (and writes --out DIR/report.json); returns the exit status (0)."""
    pairs, texts = _check_up_front(args)  # before the model loads: a mistake costs no waiting, writes nothing
    report = check_counterfactual_bias(args.model, texts, pairs, tokenizer=args.tokenizer,
                                       sequence_length=args.sequence_length, batch_size=args.batch_size,
                                       worst=args.worst)
    print(report.summary())
    if args.out:
        print(f"report: {report.write(args.out)}")
    return 0
