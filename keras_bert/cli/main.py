"""`keras-bert`: the command line.

    keras-bert vocab    --corpus texts/ --size 8000 --out vocab.txt
    keras-bert pretrain --corpus texts/ --vocab vocab.txt --size mini --steps 5000 --out runs/mini [--resume]
    keras-bert finetune --task classify --init hf_or_keras_model --train train.tsv --eval dev.tsv --out runs/sst
    keras-bert convert  uncased_L-12_H-768_A-12/ out/bert.keras      (or an HF folder; --to hf for the reverse)
    keras-bert export   runs/sst/model.keras --out saved_models/sst    (TF SavedModel, tokenizer inside)
    keras-bert predict  saved_models/sst "a gorgeous, witty, seductive movie."   (JSON lines out)

User errors (bad arguments, missing or malformed files) end with exit code 2
and a one-line reason; `--debug` shows the traceback instead.
"""

import argparse
import os
import sys

from keras_bert.cli.errors import UserError


def _add_vocab(subparsers):
    parser = subparsers.add_parser("vocab", help="learn a WordPiece vocabulary from text files")
    parser.add_argument("--corpus", required=True, nargs="+", help="text files, folders or globs")
    parser.add_argument("--size", type=int, default=8000, help="vocabulary size (default 8000)")
    case = parser.add_mutually_exclusive_group()
    case.add_argument("--lowercase", dest="lowercase", action="store_true", default=True, help="uncased (default)")
    case.add_argument("--cased", dest="lowercase", action="store_false", help="keep case")
    parser.add_argument("--out", required=True, help="vocab.txt to write")
    parser.set_defaults(run=_run_vocab)


def _run_vocab(args):
    from keras_bert.preprocessing.vocabulary import learn_vocabulary, write_vocabulary

    files = _expand(args.corpus)
    vocabulary = learn_vocabulary(files, args.size, lowercase=args.lowercase, verbose=True)
    write_vocabulary(vocabulary, args.out)
    print(f"wrote {len(vocabulary)} tokens to {args.out}")


def _add_pretrain(subparsers):
    from keras_bert.distribution import STRATEGIES

    parser = subparsers.add_parser("pretrain", help="pretrain BERT (MLM + NSP) from text files")
    parser.add_argument("--corpus", required=True, nargs="+", help="training text files, folders or globs")
    parser.add_argument("--eval-corpus", nargs="+", help="held-out text files, evaluated at every checkpoint")
    parser.add_argument("--vocab", required=True, help="vocab.txt (see `keras-bert vocab`)")
    parser.add_argument("--cased", action="store_true", help="the vocabulary is cased")
    parser.add_argument("--size", default="mini", help="tiny, mini, small, medium, base or large (default mini)")
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--masking", choices=["token", "whole-word"], default="token")
    parser.add_argument("--mode", choices=["dynamic", "static"], default="dynamic", help="masks per epoch or TFRecords")
    parser.add_argument("--dupe-factor", type=int, default=5, help="static mode: passes over the corpus")
    parser.add_argument(
        "--pack-sequences",
        action="store_true",
        help="pack several short sentence pairs into each row (less padding; attention stays within each pair)",
    )
    parser.add_argument(
        "--max-sequences-per-pack", type=int, default=3, help="with --pack-sequences: most pairs per row (default 3)"
    )
    parser.add_argument("--optimizer", choices=["adamw", "lamb"], default="adamw")
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--warmup-steps", type=int, help="default: 10%% of --steps")
    parser.add_argument("--grad-accumulation", type=int, help="apply the update every N batches")
    parser.add_argument("--checkpoint-every", type=int, help="steps between checkpoints (must divide --steps)")
    parser.add_argument("--eval-batches", type=int, default=20)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--mixed-precision", choices=["bfloat16", "float16"], help="mixed precision policy")
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="none",
        help="mirrored / multi-worker (TF_CONFIG) / tpu on KERAS_BACKEND=tensorflow; data-parallel / "
        "model-parallel on KERAS_BACKEND=jax; torch trains on one device. --batch-size is the global batch.",
    )
    parser.add_argument("--mesh", type=_mesh_shape, help="model-parallel device mesh DATAxMODEL, e.g. 2x2")
    parser.add_argument("--tpu", help="--strategy tpu: 'local' (default: Colab, TPU VMs) or a TPU name/address")
    parser.add_argument("--steps-per-execution", type=int, default=1, help="steps per compiled call (raise on TPUs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resume", action="store_true", help="continue from the last checkpoint in --out")
    parser.add_argument("--no-tensorboard", action="store_true")
    parser.add_argument("--out", required=True, help="output folder")
    parser.set_defaults(run=_run_pretrain)


def _run_pretrain(args):
    from keras_bert.jobs.pretrain import pretrain

    for name in ("vocab",):
        if not os.path.isfile(getattr(args, name)):
            raise UserError(f"--{name}: no such file: {getattr(args, name)}")
    summary = pretrain(
        corpus=_expand(args.corpus),
        vocabulary=args.vocab,
        output_dir=args.out,
        size=args.size,
        sequence_length=args.sequence_length,
        batch_size=args.batch_size,
        steps=args.steps,
        masking=args.masking,
        mode=args.mode,
        dupe_factor=args.dupe_factor,
        optimizer=args.optimizer,
        learning_rate=args.learning_rate,
        weight_decay=args.weight_decay,
        warmup_steps=args.warmup_steps,
        gradient_accumulation_steps=args.grad_accumulation,
        checkpoint_every=args.checkpoint_every,
        resume=args.resume,
        seed=args.seed,
        eval_corpus=_expand(args.eval_corpus) if args.eval_corpus else None,
        eval_batches=args.eval_batches,
        lowercase=not args.cased,
        dropout=args.dropout,
        dtype=f"mixed_{args.mixed_precision}" if args.mixed_precision else None,
        tensorboard=not args.no_tensorboard,
        strategy=args.strategy,
        mesh_shape=args.mesh,
        tpu=args.tpu,
        steps_per_execution=args.steps_per_execution,
        pack_sequences=args.pack_sequences,
        max_sequences_per_pack=args.max_sequences_per_pack,
    )
    print(summary)


def _mesh_shape(text):
    """"2x4" -> (2, 4): the (data, model) shape of a model-parallel device mesh."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"expected DATAxMODEL such as 2x2, got {text!r}")
    return tuple(int(p) for p in parts)


def _add_finetune(subparsers):
    from keras_bert.jobs.finetune import add_finetune_arguments, run_finetune

    parser = subparsers.add_parser("finetune", help="fine-tune a task head: classify, regress, ner, qa, multiple-choice")
    add_finetune_arguments(parser)
    parser.set_defaults(run=run_finetune)


def _add_convert(subparsers):
    from keras_bert.cli.convert import add_convert_arguments, run_convert

    parser = subparsers.add_parser("convert", help="convert checkpoints: Google TF1 / Hugging Face / .keras")
    add_convert_arguments(parser)
    parser.set_defaults(run=run_convert)


def _add_export(subparsers):
    from keras_bert.cli.export_commands import add_export_arguments

    parser = subparsers.add_parser("export", help="export a model + tokenizer as a TF SavedModel that takes raw strings")
    add_export_arguments(parser)


def _add_predict(subparsers):
    from keras_bert.cli.export_commands import add_predict_arguments

    parser = subparsers.add_parser("predict", help="predict on raw text with a SavedModel, .keras file or finetune folder")
    add_predict_arguments(parser)


def _expand(paths):
    """Folders become the text files inside them; files and globs pass through."""
    expanded = []
    for path in paths:
        if os.path.isdir(path):
            found = sorted(
                os.path.join(root, name) for root, _, names in os.walk(path) for name in names if not name.startswith(".")
            )
            if not found:
                raise UserError(f"{path}: the folder holds no files")
            expanded.extend(found)
        else:
            expanded.append(path)
    return expanded


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (with where to find help), not the whole usage text."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser():
    parser = _Parser(prog="keras-bert", description="BERT in Keras 3: pretrain, convert, fine-tune, export.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    subparsers = parser.add_subparsers(dest="command", required=True)
    _add_vocab(subparsers)
    _add_pretrain(subparsers)
    _add_finetune(subparsers)
    _add_convert(subparsers)
    _add_export(subparsers)
    _add_predict(subparsers)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
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
