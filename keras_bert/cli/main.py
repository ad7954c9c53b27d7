"""`keras-bert`: the command line.

    keras-bert vocab    --corpus texts/ --size 8000 --out vocab.txt
    keras-bert pretrain --corpus texts/ --vocab vocab.txt --size mini --steps 5000 --out runs/mini [--resume]
    keras-bert finetune --task classify --init hf_or_keras_model --train train.tsv --eval dev.tsv --out runs/sst
    keras-bert distill  --teacher runs/sst --train train.tsv --eval dev.tsv --student-layers 3 --out runs/student
    keras-bert convert  uncased_L-12_H-768_A-12/ out/bert.keras      (or an HF folder; --to hf for the reverse)
    keras-bert export   runs/sst/model.keras --out saved_models/sst    (TF SavedModel, tokenizer inside)
    keras-bert predict  saved_models/sst "a gorgeous, witty, seductive movie."   (JSON lines out)
    keras-bert embed    all-MiniLM-L6-v2/ "A man is eating food."   (sentence embeddings: JSON lines or --out .npy)
    keras-bert bias-check runs/sst --file reviews.txt --out bias_report   (do answers change with he/she, names?)
    keras-bert explain  runs/sst "a gorgeous, witty movie." --out explained   (which words drove the prediction?)

Each subcommand lives in its own module (`keras_bert.cli.vocab`, ...), with
`add_<command>_arguments(parser)` and `run_<command>(args)`; this module
builds the parser from them and turns errors into messages.

User errors (bad arguments, missing or malformed files) end with exit code 2
(1 for `convert`) and a one-line reason; `--debug` shows the traceback instead.
Ctrl-C ends with exit code 130. A backend Keras cannot load (`KERAS_BACKEND`)
and a missing input file (each module's `INPUTS`) are found before TensorFlow
loads (`preflight`).
"""

import argparse
import os
import shlex
import sys

from keras_bert import _command_line_startup
from keras_bert._version import __version__
from keras_bert.cli import (
    bias_check, convert, distill, embed, explain, export, finetune, predict, preflight, pretrain, vocab,
)
from keras_bert.cli.errors import UserError


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (with where to find help), not the whole usage text."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


class _HelpWithDefaults(argparse.HelpFormatter):
    """Shows each option's default after its help, unless the help already gives it."""

    def _get_help_string(self, action):
        text = action.help or ""
        if _has_default_to_show(action) and "default" not in text:
            text += " (default: %(default)s)"
        return text.replace("%(default)s", str(_default(action)).replace("%", "%%"))


def _default(action):
    # A job's option is left out of the arguments when not given (its job's default applies): `job_arguments`.
    return getattr(action, "job_default", action.default)


def _has_default_to_show(action):
    # Flags (nargs=0: store_true, store_false) say what they do; their default is their absence.
    return bool(action.option_strings) and action.nargs != 0 and _default(action) not in (None, argparse.SUPPRESS)


def _add_command(subparsers, name, module):
    """The subcommand `name` of a module with HELP, INPUTS, `add_<name>_arguments` and `run_<name>`."""
    parser = subparsers.add_parser(name, help=module.HELP, formatter_class=_HelpWithDefaults)
    function_name = name.replace("-", "_")  # `bias-check` -> add_bias_check_arguments
    getattr(module, f"add_{function_name}_arguments")(parser)
    for action in parser._actions:
        if action.help is None and _has_default_to_show(action):
            action.help = "(default: %(default)s)"  # argparse prints nothing after an option without help
    # `error_status`: `convert` reports a refused conversion with 1 (its contract), the others with 2.
    parser.set_defaults(run=getattr(module, f"run_{function_name}"), inputs=module.INPUTS,
                        error_status=getattr(module, "ERROR_STATUS", 2))


def _where_to_resume(args, argv):
    """For an interrupted training job: its last checkpoint and the command that continues from it."""
    if args.command not in ("pretrain", "finetune", "distill") or not getattr(args, "output_dir", None):
        return ""
    # defers keras (checkpointing reads .keras files): building the parser must not import it
    from keras_bert.jobs.checkpointing import read_checkpoint_state

    checkpoints = os.path.join(args.output_dir, "checkpoints")
    try:
        state = read_checkpoint_state(checkpoints)
    except ValueError:
        state = None
    if state is None:
        return f"; no checkpoint was written to {checkpoints} yet"
    words = [word for word in (sys.argv[1:] if argv is None else argv) if word not in ("--resume", "--overwrite")]
    command = " ".join(["keras-bert", *map(shlex.quote, words), "--resume"])
    return f". The last checkpoint is step {state['step']} in {checkpoints}; continue with:\n  {command}"


def build_parser():
    """The `keras-bert` argument parser, with every subcommand."""
    parser = _Parser(prog="keras-bert", description="BERT in Keras 3: pretrain, convert, fine-tune, export.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--version", action="version", version=f"keras-bert {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for name, module in (("vocab", vocab), ("pretrain", pretrain), ("finetune", finetune), ("distill", distill),
                         ("convert", convert), ("export", export), ("predict", predict), ("embed", embed),
                         ("bias-check", bias_check), ("explain", explain)):
        _add_command(subparsers, name, module)
    return parser


def main(argv=None):
    """Runs `keras-bert ARGV` (default: sys.argv); returns the exit status."""
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    takes_texts = ("predict", "embed", "bias-check", "explain")
    if extras and args.command in takes_texts and not any(e.startswith("-") for e in extras):
        # argparse takes a positional list only before the options; texts after them are texts too.
        args.texts = [*args.texts, *extras]
    elif extras:
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    # A backend Keras cannot load (as an argument error: 2) and a missing input file (as the command reports its
    # errors) are answered now, without waiting for TensorFlow.
    try:
        preflight.check_backend()
    except UserError as error:
        return _report(args, error, 2)
    try:
        preflight.check_inputs(args, args.inputs)
    except FileNotFoundError as error:
        return _report(args, error, args.error_status)
    # Only now, with arguments that parse, load TensorFlow (without its start-up notices when this process is
    # the command); `--help`, `--version` and argument errors ended above, without keras or TensorFlow.
    _command_line_startup.quiet_tensorflow_startup()
    try:
        status = args.run(args)
    except KeyboardInterrupt:
        print(f"keras-bert: interrupted{_where_to_resume(args, argv)}", file=sys.stderr)
        return 130
    except (UserError, ValueError, FileNotFoundError, OSError) as error:
        return _report(args, error, 2)
    return status or 0


def _report(args, error, status):
    """Prints `error` as one line and returns `status` (with `--debug`, raises it instead)."""
    if args.debug:
        raise error
    message = " ".join(str(error).split())
    print(f"keras-bert {args.command}: error: {message}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
