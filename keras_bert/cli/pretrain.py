"""`keras-bert pretrain`: pretrain BERT (MLM + NSP) from text files.

    keras-bert pretrain --corpus texts/ --vocab vocab.txt --size mini --steps 5000 --out runs/mini [--resume]
    keras-bert pretrain --corpus texts/ --vocab vocab.txt --budget-minutes 20 --out runs/b20   (the budget recipe)
    keras-bert pretrain ... --objective electra [--generator-size 0.25]   (ELECTRA's replaced-token detection)
"""

import argparse
import os

from keras_bert.cli.errors import UserError
from keras_bert.option_values import STRATEGIES

HELP = "pretrain BERT (MLM + NSP, SOP or MLM only) from text files"
# A run of --steps takes these where they are not given. A --budget-minutes run takes the budget recipe's instead
# (`keras_bert.jobs.pretrain_budget.BUDGET_RECIPE`).
STEP_RUN_DEFAULTS = {"size": "mini", "sequence_length": 128, "learning_rate": 1e-4, "pack_sequences": False,
                     "masking": "token"}


def add_pretrain_arguments(parser):
    """Adds the `keras-bert pretrain` arguments to an argparse (sub)parser."""
    parser.add_argument("--corpus", required=True, nargs="+", help="training text files, folders or globs")
    parser.add_argument("--eval-corpus", nargs="+", help="held-out text files, evaluated at every checkpoint")
    parser.add_argument("--vocab", required=True, help="vocab.txt (see `keras-bert vocab`)")
    parser.add_argument("--cased", action="store_true", help="the vocabulary is cased")
    parser.add_argument("--size", help="tiny, mini, small, medium, base or large (default mini; with "
                        "--budget-minutes, the budget recipe's tiny)")
    parser.add_argument("--sequence-length", type=int, help="default 128; with --budget-minutes, the recipe's 64")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, help="training steps (default 1000; see --budget-minutes)")
    parser.add_argument("--budget-minutes", type=float,
                        help="instead of --steps: as many steps as fit in N wall-clock minutes, found by a short "
                             "timed calibration run (counted in the budget)")
    parser.add_argument(
        "--masking",
        choices=["token", "whole-word", "span", "ngram"],
        help="token (the default); whole-word (the default with --budget-minutes); span (SpanBERT: whole-word "
        "spans, geometric lengths); ngram (1..--max-ngram whole words, weights 1/n)",
    )
    parser.add_argument("--span-p", type=float, default=0.2, help="--masking span: geometric p in (0, 1] (default 0.2)")
    parser.add_argument("--max-span-length", type=int, default=10, help="--masking span: longest span in words")
    parser.add_argument("--max-ngram", type=int, default=3, help="--masking ngram: longest n-gram in words")
    parser.add_argument(
        "--sentence-task",
        choices=["nsp", "sop", "none"],
        default="nsp",
        help="nsp: next-sentence prediction (BERT); sop: sentence-order prediction (ALBERT); "
        "none: MLM only over rows of full sentences (RoBERTa)",
    )
    parser.add_argument("--mode", choices=["dynamic", "static"], default="dynamic", help="masks per epoch or TFRecords")
    parser.add_argument("--dupe-factor", type=int, default=5, help="static mode: passes over the corpus")
    parser.add_argument(
        "--pack-sequences",
        action=argparse.BooleanOptionalAction,
        help="pack several short sentence pairs into each row (less padding; attention stays within each pair). "
        "Default off; with --budget-minutes, on for MLM + NSP (the budget recipe)",
    )
    parser.add_argument(
        "--max-sequences-per-pack", type=int, default=3, help="with --pack-sequences: most pairs per row (default 3)"
    )
    parser.add_argument(
        "--streaming",
        action="store_true",
        help="read the corpus a bounded buffer at a time (corpora larger than memory; see the README)",
    )
    parser.add_argument("--optimizer", choices=["adamw", "lamb"], default="adamw")
    parser.add_argument("--learning-rate", type=float, help="peak learning rate (default 1e-4; with "
                        "--budget-minutes, the recipe's 2e-3)")
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
    parser.add_argument("--mesh", type=mesh_shape, help="model-parallel device mesh DATAxMODEL, e.g. 2x2")
    parser.add_argument("--tpu", help="--strategy tpu: 'local' (default: Colab, TPU VMs) or a TPU name/address")
    parser.add_argument("--steps-per-execution", type=int, default=1, help="steps per compiled call (raise on TPUs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--overwrite", action="store_true",
                        help="start over in an --out folder that holds an earlier run (its checkpoints are deleted)")
    parser.add_argument("--resume", action="store_true", help="continue from the last checkpoint in --out")
    parser.add_argument("--no-tensorboard", action="store_true")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument(
        "--objective",
        choices=["bert", "electra"],
        default="bert",
        help="bert: masked LM (+ sentence task); electra: replaced-token detection, a small generator fills the "
        "masked positions and the discriminator (the model to fine-tune) finds them",
    )
    parser.add_argument(
        "--generator-size",
        type=float,
        default=0.25,
        help="--objective electra: the generator's width as a fraction of the discriminator's, in (0, 1] "
        "(default 0.25)",
    )
    parser.add_argument(
        "--rtd-weight", type=float, default=50.0, help="--objective electra: weight of the RTD loss (default 50)"
    )


def mesh_shape(text):
    """"2x4" -> (2, 4): the (data, model) shape of a model-parallel device mesh."""
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"expected DATAxMODEL such as 2x2, got {text!r}")
    return tuple(int(p) for p in parts)


def run_pretrain(args):
    """Runs `keras_bert.jobs.pretrain.pretrain` with parsed arguments and prints its summary; returns 0."""
    # defers keras (the jobs build models): `keras-bert --help` and argument errors must not wait for it
    from keras_bert.jobs.pretrain import pretrain
    from keras_bert.jobs.pretrain_budget import pretrain_within_budget  # (deferred, as above)

    if not os.path.isfile(args.vocab):
        raise UserError(f"--vocab: no such file: {args.vocab}")
    if args.budget_minutes is not None and args.steps is not None:
        raise UserError("--budget-minutes sets the steps: give it or --steps, not both")
    if args.budget_minutes is not None and args.checkpoint_every is not None:
        raise UserError("--budget-minutes sets the checkpoints (10 of them): drop --checkpoint-every")
    settings = {"size": args.size, "sequence_length": args.sequence_length, "learning_rate": args.learning_rate,
                "pack_sequences": args.pack_sequences, "masking": args.masking}
    if args.budget_minutes is not None:
        # The settings left out are the budget recipe's (`pretrain_within_budget` fills them and says which).
        run, extra = pretrain_within_budget, {"budget_minutes": args.budget_minutes}
    else:
        run, extra = pretrain, {"steps": 1000 if args.steps is None else args.steps, "checkpoint_every": args.checkpoint_every}
        for name, value in STEP_RUN_DEFAULTS.items():
            settings[name] = value if settings[name] is None else settings[name]
    summary = run(
        **extra,
        **settings,
        corpus=args.corpus,
        vocabulary=args.vocab,
        output_dir=args.out,
        batch_size=args.batch_size,
        mode=args.mode,
        dupe_factor=args.dupe_factor,
        optimizer=args.optimizer,
        weight_decay=args.weight_decay,
        warmup_steps=args.warmup_steps,
        gradient_accumulation_steps=args.grad_accumulation,
        resume=args.resume,
        overwrite=args.overwrite,
        seed=args.seed,
        eval_corpus=args.eval_corpus,
        eval_batches=args.eval_batches,
        lowercase=not args.cased,
        dropout=args.dropout,
        dtype=f"mixed_{args.mixed_precision}" if args.mixed_precision else None,
        tensorboard=not args.no_tensorboard,
        strategy=args.strategy,
        mesh_shape=args.mesh,
        tpu=args.tpu,
        steps_per_execution=args.steps_per_execution,
        max_sequences_per_pack=args.max_sequences_per_pack,
        sentence_task=args.sentence_task,
        span_p=args.span_p,
        max_span_length=args.max_span_length,
        max_ngram=args.max_ngram,
        streaming=args.streaming,
        **_electra_arguments(args),
    )
    print(summary)
    return 0


def _electra_arguments(args):
    """The `--objective electra` options for `pretrain` (none for "bert": its defaults)."""
    if args.objective != "electra":
        return {}
    return {"objective": "electra", "generator_size": args.generator_size, "rtd_weight": args.rtd_weight}
