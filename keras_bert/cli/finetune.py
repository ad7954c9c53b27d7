"""`keras-bert finetune`: fine-tune a task head on labelled files.

    keras-bert finetune --task classify --init path/to/hf_bert --train train.tsv --eval dev.tsv \\
        --text-column sentence --label-column label --out runs/sst

`--task` takes the task registry's CLI words (classify, regress, ner, qa,
multiple-choice) and its task names (classifier, regressor, token_classifier,
question_answerer, multiple_choice); see `keras_bert.tasks`.
"""

import json
import os

from keras_bert.cli.errors import UserError
from keras_bert.cli.pretrain import mesh_shape
from keras_bert.option_values import POOLING_MODES, STRATEGIES
from keras_bert.tasks import CLI_NAMES, TASKS

HELP = "fine-tune a task head: classify, regress, ner, qa, multiple-choice"


def _task_word(value):
    """The CLI word of a task given by its CLI word or its registry name ("classifier" -> "classify")."""
    return TASKS[value].cli_name if value in TASKS else value


def add_finetune_arguments(parser):
    """Adds the `keras-bert finetune` arguments to an argparse (sub)parser."""
    # argparse converts with `type` before it checks `choices`: registry names are accepted and
    # become CLI words, while --help and the "invalid choice" error list the CLI words only.
    parser.add_argument("--task", required=True, type=_task_word, choices=list(CLI_NAMES))
    parser.add_argument("--init", required=True,
                        help="Hugging Face BERT folder, .keras file (backbone, pretrainer or task model), "
                             "preset name (bert_base_en_uncased, google-bert/bert-base-uncased, ...: "
                             "keras_bert.list_presets()) or hf://owner/name, "
                             "or a size name (tiny, mini, ...) for random weights")
    parser.add_argument("--train", required=True, help="training file")
    parser.add_argument("--eval", help="held-out file, evaluated after training")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--vocab", help="vocab.txt (default: the one of --init)")
    case = parser.add_mutually_exclusive_group()
    case.add_argument("--lowercase", dest="lowercase", action="store_true", default=None, help="uncased vocabulary")
    case.add_argument("--cased", dest="lowercase", action="store_false", help="cased vocabulary")
    parser.add_argument("--sequence-length", type=int, help="default 128 (384 for qa)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=3e-5)
    parser.add_argument("--warmup-ratio", type=float, default=0.1)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--freeze-backbone", action="store_true", help="train the task head only")
    parser.add_argument("--lora-rank", type=int, metavar="R",
                        help="LoRA: train rank-R adapters on the encoder kernels and the head only; writes "
                             "adapter.npz (adapters and head) beside model.keras (adapters merged)")
    parser.add_argument("--lora-alpha", type=float, metavar="A",
                        help="LoRA scale: the update is multiplied by A / R (default A = R)")
    parser.add_argument("--length-buckets", type=int, nargs="+",
                        help="train on batches of similar length, cut to these lengths (e.g. 16 32 48): "
                             "less compute on padding")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no progress output; one JSON line of held-out metrics")
    parser.add_argument("--overwrite", action="store_true",
                        help="start over in an --out folder that holds an earlier run (its checkpoints are deleted)")
    parser.add_argument("--resume", action="store_true",
                        help="continue from the last checkpoint in --out (one is written at every epoch end)")
    parser.add_argument("--no-tensorboard", action="store_true", help="write no TensorBoard logs to --out/logs")
    group = parser.add_argument_group("with --eval: best epoch and early stopping")
    group.add_argument("--monitor", default="val_loss",
                       help="validation metric that picks the best epoch: val_loss (smaller is better), or e.g. "
                            "val_accuracy (larger is better)")
    group.add_argument("--early-stopping-patience", type=int, metavar="N",
                       help="stop after N epochs without a better --monitor")
    group.add_argument("--keep-last-epoch", action="store_true",
                       help="model.keras is the last epoch's, not the best epoch's (the default with --eval)")
    group = parser.add_argument_group("distribution (as `keras-bert pretrain`)")
    group.add_argument(
        "--strategy", choices=STRATEGIES, default="none",
        help="mirrored / multi-worker (TF_CONFIG) / tpu on KERAS_BACKEND=tensorflow; data-parallel / "
        "model-parallel on KERAS_BACKEND=jax; torch trains on one device. --batch-size is the global batch.",
    )
    group.add_argument("--mesh", type=mesh_shape, help="model-parallel device mesh DATAxMODEL, e.g. 2x2")
    group.add_argument("--tpu", help="--strategy tpu: 'local' (default: Colab, TPU VMs) or a TPU name/address")
    group = parser.add_argument_group("classify / regress / multiple-choice files")
    group.add_argument("--format", choices=["tsv", "csv", "jsonl"], help="default: from the file extension")
    group.add_argument("--no-header", action="store_true",
                       help="TSV/CSV without a header row: columns are 0-based numbers")
    group.add_argument("--text-column", default="sentence")
    group.add_argument("--pair-column", help="second text of sentence pairs")
    group.add_argument(
        "--label-column", default="label",
        help="classify: a class name per row (any text or integer; the classes are the training file's distinct "
             "labels, sorted, numerically if all are integers; with two, F1 is reported for the second, e.g. "
             "'positive' of negative/positive or 1 of 0/1); regress: a real number",
    )
    group.add_argument("--window-stride", type=int,
                       help="split long single texts into windows every N tokens (default half a window; 0 truncates)")
    group.add_argument("--pooling", choices=POOLING_MODES, default="cls",
                       help="the head's input: BERT's pooler on [CLS], or the mean of the token vectors (for a "
                            "backbone pretrained without NSP/SOP, whose pooler never trained)")
    group = parser.add_argument_group("ner (CoNLL files)")
    group.add_argument("--word-column", type=int, default=0)
    group.add_argument("--tag-column", type=int, default=-1)
    group = parser.add_argument_group("qa (SQuAD JSON)")
    group.add_argument("--doc-stride", type=int, default=128)
    group.add_argument("--max-query-length", type=int, default=64)
    group.add_argument("--max-answer-length", type=int, default=30)
    group.add_argument("--n-best-size", type=int, default=20)
    group.add_argument("--null-score-diff-threshold", type=float, default=0.0)
    group.add_argument("--skip-mismatched-answers", action="store_true",
                       help="skip (and count) questions whose answer offsets do not match the context")
    group = parser.add_argument_group("multiple-choice (SWAG-style)")
    group.add_argument("--context-column", default="sent1")
    group.add_argument("--question-column", default="sent2", help="text put before every choice ('' for none)")
    group.add_argument("--choice-columns", nargs="+", help="default: the columns named ending0, ending1, ...")


def _column(value, header):
    """A column name, or with `--no-header` a 0-based column number."""
    if value is None or header:
        return value
    try:
        return int(value)
    except ValueError:
        raise UserError(f"With --no-header, columns are 0-based numbers. Received: {value!r}") from None


def run_finetune(args):
    """Runs `finetune` with parsed `keras-bert finetune` arguments; returns the exit status (0).

    The results are in the output folder (metrics.json, finetune.json) and on
    stdout; `--quiet` drops the progress output but still prints the held-out metrics.
    """
    # defers keras (the job builds models): `keras-bert --help` and argument errors must not wait for it
    from keras_bert.jobs.finetune import finetune

    header = not args.no_header
    summary = finetune(
        task=args.task,
        init=args.init,
        train=args.train,
        output_dir=args.out,
        eval=args.eval,
        vocab=args.vocab,
        lowercase=args.lowercase,
        sequence_length=args.sequence_length,
        batch_size=args.batch_size,
        epochs=args.epochs,
        learning_rate=args.learning_rate,
        warmup_ratio=args.warmup_ratio,
        weight_decay=args.weight_decay,
        dropout=args.dropout,
        freeze_backbone=args.freeze_backbone,
        lora_rank=args.lora_rank,
        lora_alpha=args.lora_alpha,
        seed=args.seed,
        verbose=0 if args.quiet else 1,
        text_column=_column(args.text_column, header),
        pair_column=_column(args.pair_column, header),
        label_column=_column(args.label_column, header),
        format=args.format,
        header=header,
        window_stride=args.window_stride,
        pooling=args.pooling,
        word_column=args.word_column,
        tag_column=args.tag_column,
        doc_stride=args.doc_stride,
        max_query_length=args.max_query_length,
        max_answer_length=args.max_answer_length,
        n_best_size=args.n_best_size,
        null_score_diff_threshold=args.null_score_diff_threshold,
        on_mismatch="skip" if args.skip_mismatched_answers else "raise",
        context_column=_column(args.context_column, header),
        question_column=_column(args.question_column, header) if args.question_column != "" else None,
        choice_columns=[_column(c, header) for c in args.choice_columns] if args.choice_columns else None,
        length_buckets=args.length_buckets,
        resume=args.resume,
        overwrite=args.overwrite,
        tensorboard=not args.no_tensorboard,
        monitor=args.monitor,
        early_stopping_patience=args.early_stopping_patience,
        select_best=not args.keep_last_epoch,
        strategy=args.strategy,
        mesh_shape=args.mesh,
        tpu=args.tpu,
    )
    if args.quiet:
        shown = {k: round(v, 4) if isinstance(v, float) else v for k, v in summary["metrics"].items() if k != "per_type"}
        print(json.dumps({"held_out": shown, "best_epoch": summary["best_epoch"],
                          "model": os.path.join(args.out, "model.keras")}))
    return 0
