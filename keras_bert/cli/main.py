"""`keras-bert`: the command line.

    keras-bert vocab    --corpus texts/ --size 8000 --out vocab.txt
    keras-bert pretrain --corpus texts/ --vocab vocab.txt --size mini --steps 5000 --out runs/mini [--resume]
    keras-bert finetune --task classify --init hf_or_keras_model --train train.tsv --eval dev.tsv --out runs/sst
    keras-bert convert  uncased_L-12_H-768_A-12/ out/bert.keras      (or an HF folder; --to hf for the reverse)
    keras-bert export   runs/sst/model.keras --out saved_models/sst    (TF SavedModel, tokenizer inside)
    keras-bert predict  saved_models/sst "a gorgeous, witty, seductive movie."   (JSON lines out)

Each subcommand lives in its own module (`keras_bert.cli.vocab`, ...), with
`add_<command>_arguments(parser)` and `run_<command>(args)`; this module
builds the parser from them and turns errors into messages.

User errors (bad arguments, missing or malformed files) end with exit code 2
and a one-line reason; `--debug` shows the traceback instead. Ctrl-C ends
with exit code 130.
"""

import argparse
import sys

from keras_bert.cli import convert, export, finetune, predict, pretrain, vocab
from keras_bert import __version__
from keras_bert.cli.errors import UserError


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (with where to find help), not the whole usage text."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _add_command(subparsers, name, help, add_arguments, run):
    parser = subparsers.add_parser(name, help=help)
    add_arguments(parser)
    parser.set_defaults(run=run)


def build_parser():
    """The `keras-bert` argument parser, with every subcommand."""
    parser = _Parser(prog="keras-bert", description="BERT in Keras 3: pretrain, convert, fine-tune, export.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--version", action="version", version=f"keras-bert {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    _add_command(subparsers, "vocab", vocab.HELP, vocab.add_vocab_arguments, vocab.run_vocab)
    _add_command(subparsers, "pretrain", pretrain.HELP, pretrain.add_pretrain_arguments, pretrain.run_pretrain)
    _add_command(subparsers, "finetune", finetune.HELP, finetune.add_finetune_arguments, finetune.run_finetune)
    _add_command(subparsers, "convert", convert.HELP, convert.add_convert_arguments, convert.run_convert)
    _add_command(subparsers, "export", export.HELP, export.add_export_arguments, export.run_export)
    _add_command(subparsers, "predict", predict.HELP, predict.add_predict_arguments, predict.run_predict)
    return parser


def main(argv=None):
    """Runs `keras-bert ARGV` (default: sys.argv); returns the exit status."""
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if extras and args.command == "predict" and not any(e.startswith("-") for e in extras):
        # argparse takes a positional list only before the options; texts after them are texts too.
        args.texts = [*args.texts, *extras]
    elif extras:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    try:
        status = args.run(args)
    except KeyboardInterrupt:
        print("keras-bert: interrupted", file=sys.stderr)
        return 130
    except (UserError, ValueError, FileNotFoundError, OSError) as error:
        if args.debug:
            raise
        message = " ".join(str(error).split())
        print(f"keras-bert {args.command}: error: {message}", file=sys.stderr)
        return 2
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
