"""`keras-bert distill`: a smaller student from a fine-tuned teacher (the DistilBERT recipe).

    keras-bert distill --teacher runs/sst --train train.tsv --eval dev.tsv --student-layers 3 \\
        --temperature 2 --alpha 0.5 --out runs/student

The student (in `--out`, a folder like `keras-bert finetune`'s) exports, predicts
and serves like any fine-tuned model; see `keras_bert.jobs.distill`.
"""

import json
import os

from keras_bert.cli.errors import UserError

HELP = "distil a fine-tuned classifier or tagger into a student with fewer layers"


def add_distill_arguments(parser):
    """Adds the `keras-bert distill` arguments to an argparse (sub)parser."""
    parser.add_argument("--teacher", required=True,
                        help="the teacher: a `keras-bert finetune` --out folder, or a .keras classifier/tagger file")
    parser.add_argument("--train", required=True, help="training file (labelled, as for finetune)")
    parser.add_argument("--eval", help="held-out file: student and teacher are both scored on it")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--student-layers", type=int, default=3,
                        help="the student's transformer blocks, taken from every other one of the teacher's")
    parser.add_argument("--layer-indices", type=int, nargs="+",
                        help="the teacher blocks the student starts from (default: evenly spaced, first and last kept)")
    parser.add_argument("--temperature", type=float, default=2.0, help="softmax temperature of the soft targets")
    parser.add_argument("--alpha", type=float, default=0.5,
                        help="weight of the soft targets (KL * T^2); 1 - alpha goes to the labels' cross-entropy")
    parser.add_argument("--hidden-loss-weight", type=float, default=0.0,
                        help="weight of a cosine loss between student blocks and the teacher blocks they came from "
                             "(the teacher then runs at every step instead of once up front)")
    parser.add_argument("--vocab", help="vocab.txt (default: the teacher folder's)")
    parser.add_argument("--sequence-length", type=int, help="default: the teacher run's, else 128")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=1e-4)
    parser.add_argument("--warmup-ratio", type=float, default=0.1)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--length-buckets", type=int, nargs="+",
                        help="train on batches of similar length, cut to these lengths (e.g. 16 32 48)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no progress output; one JSON line of held-out metrics")
    parser.add_argument("--overwrite", action="store_true", help="start over in an --out folder that holds a run")
    parser.add_argument("--resume", action="store_true", help="continue from the last checkpoint in --out")
    parser.add_argument("--no-tensorboard", action="store_true", help="write no TensorBoard logs to --out/logs")
    group = parser.add_argument_group("files (default: as the teacher's fine-tuning run read them)")
    group.add_argument("--format", choices=["tsv", "csv", "jsonl"])
    group.add_argument("--text-column")
    group.add_argument("--pair-column")
    group.add_argument("--label-column")
    group.add_argument("--word-column", type=int, help="tagger (CoNLL) files")
    group.add_argument("--tag-column", type=int, help="tagger (CoNLL) files")


def run_distill(args):
    """Runs `distill` with parsed `keras-bert distill` arguments; returns the exit status (0)."""
    # defers keras (the job builds models): `keras-bert --help` and argument errors must not wait for it
    from keras_bert.jobs.distill import distill

    if args.student_layers < 1:
        raise UserError(f"--student-layers must be at least 1. Received: {args.student_layers}")
    names = ("format", "text_column", "pair_column", "label_column", "word_column", "tag_column")
    task_options = {name: getattr(args, name) for name in names if getattr(args, name) is not None}
    summary = distill(
        teacher=args.teacher, train=args.train, output_dir=args.out, eval=args.eval,
        student_layers=args.student_layers, layer_indices=args.layer_indices, temperature=args.temperature,
        alpha=args.alpha, hidden_loss_weight=args.hidden_loss_weight, vocab=args.vocab,
        sequence_length=args.sequence_length, batch_size=args.batch_size, epochs=args.epochs,
        learning_rate=args.learning_rate, warmup_ratio=args.warmup_ratio, weight_decay=args.weight_decay,
        seed=args.seed, length_buckets=args.length_buckets, verbose=0 if args.quiet else 1, resume=args.resume,
        overwrite=args.overwrite, tensorboard=not args.no_tensorboard, **task_options,
    )
    if args.quiet:
        def shown(metrics):
            return {k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items() if k != "per_type"}

        print(json.dumps({"student": shown(summary["student"]), "teacher": shown(summary["teacher"]),
                          "model": os.path.join(args.out, "model.keras")}))
    return 0
