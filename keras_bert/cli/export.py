"""`keras-bert export`: a model and its tokenizer as a TF SavedModel that takes raw strings.

    keras-bert export runs/sst/model.keras --out saved_models/sst
    keras-bert export runs/sst --out saved_models/sst      # a finetune folder: its vocab and options
    keras-bert export minilm.keras --format hub-encoder --out saved_models/minilm_hub   # TF Hub-style, trainable
    keras-bert export runs/sst --format onnx --quantize int8 --eval-file heldout.tsv --out saved_models/sst_onnx
    keras-bert export runs/sst --format litert --sequence-length 64 --out saved_models/sst_litert
"""

import sys

from keras_bert.cli.errors import UserError
from keras_bert.cli.preflight import existing_file, local_model, model_reference
from keras_bert.option_values import INT8_ACCURACY_TOLERANCE as DEFAULT_TOLERANCE
from keras_bert.task_registry import CLI_NAMES

HELP = "export a model + tokenizer: a TF SavedModel that takes raw strings, ONNX or LiteRT"
# What the command reads, checked before TensorFlow loads (`preflight`): option -> (its flag, the check).
INPUTS = {"model": (None, local_model), "tokenizer": ("--tokenizer", model_reference),
          "eval_file": ("--eval-file", existing_file)}
# What a fine-tuning run records about reading long texts and decoding answers; export serves with them.
_RECORDED_WINDOW_OPTIONS = (
    "window_stride", "doc_stride", "max_query_length", "max_answer_length", "null_score_diff_threshold",
)


def add_export_arguments(parser):
    """Adds the `keras-bert export` arguments to an argparse (sub)parser."""
    parser.add_argument("model", help="a .keras file, or a `keras-bert finetune` output folder")
    parser.add_argument("--out", required=True, help="SavedModel directory to create")
    parser.add_argument(
        "--format", choices=["saved-model", "hub-encoder", "onnx", "litert"], default="saved-model",
        help="saved-model: raw strings in, the task's answers out (serving); hub-encoder: the backbone as TF Hub-style "
        "encoder/ + preprocessor/ SavedModels that train further (hub.KerasLayer, TFSMLayer); onnx: the token-id graph "
        "(dynamic batch and length) for ONNX Runtime, tokenizer beside it (pip install 'keras-bert[onnx]'); litert: "
        "the token-id graph as .tflite, dynamic batch, fixed --sequence-length (pip install 'keras-bert[litert]')",
    )
    parser.add_argument("--quantize", choices=["int8"], help="onnx: also write model.int8.onnx (dynamic int8), served by default")
    parser.add_argument("--opset", type=int, help="onnx: the ONNX opset (default 17)")
    parser.add_argument(
        "--eval-file",
        help="onnx --quantize int8, classifiers: a labelled TSV/CSV/JSONL (as finetune reads it); prints fp32 and int8 "
        "accuracy and warns when int8 loses more than --accuracy-tolerance points",
    )
    parser.add_argument("--text-column", default="sentence", help="--eval-file: the text column")
    parser.add_argument("--label-column", default="label", help="--eval-file: the label column")
    parser.add_argument("--accuracy-tolerance", type=float, default=DEFAULT_TOLERANCE,
                        help=f"--eval-file: accuracy points int8 may lose before a warning (default {DEFAULT_TOLERANCE})")
    parser.add_argument(
        "--tokenizer",
        help="vocab.txt, a Hugging Face / TF1 folder, or a .keras file with its .vocab.txt "
        "(default: the finetune folder's vocab.txt, or the model's sidecar)",
    )
    parser.add_argument("--sequence-length", type=int, help="length texts are packed to (default: the run's, else 128)")
    parser.add_argument("--text-pair", action="store_true", help="classifier on sentence pairs: serve_text takes text_pair")
    parser.add_argument("--allow-no-answer", action="store_true", help="question answering: answer '' when [CLS] wins")
    parser.add_argument("--backbone", action="store_true", help="export the backbone of a pretraining model (embeddings)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing --out directory")


def trained_on_pairs(job):
    """Whether a job record (or None) is of a classifier or regressor fine-tuned on sentence pairs."""
    if not job or job.get("pair_column") is None:
        return False
    task = job.get("task")
    return CLI_NAMES.get(task, task) in ("classifier", "regressor")


def run_export(args):
    """Exports the model named on the command line; returns the exit status (0)."""
    # defers keras and TensorFlow (the exporters trace models): `keras-bert --help` and argument errors must not wait for it
    from keras_bert.export.saved_model.hub_export import export_hub_encoder
    from keras_bert.export.saved_model.saved_model_export import export_saved_model  # (deferred, as above)
    from keras_bert.loading import find_model, load_keras_model, load_tokenizer  # (deferred, as above)
    from keras_bert.models import BertMaskedLM, BertPretrainer  # (deferred, as above)

    files = find_model(args.model)
    tokenizer = load_tokenizer(files, args.tokenizer, flag="--tokenizer")
    model = load_keras_model(files)
    pretraining_model = isinstance(model, (BertPretrainer, BertMaskedLM))
    if args.backbone:
        if not pretraining_model:
            raise UserError("--backbone applies to pretraining models (BertPretrainer, BertMaskedLM)")
        model = model.backbone
    elif pretraining_model and args.format != "hub-encoder":  # hub-encoder takes the backbone of any model
        # The library's message names `model.backbone`, which a command-line user cannot type.
        raise UserError(
            f"{files.path} is a pretraining model ({type(model).__name__}): add --backbone to export its "
            f"encoder (embeddings), or fine-tune it first (keras-bert finetune --init {args.model} ...)"
        )
    job = files.job
    if args.format in ("onnx", "litert"):
        return _export_runtime(args, model, tokenizer, job)
    if args.quantize or args.eval_file or args.opset:
        raise UserError("--quantize, --opset and --eval-file apply to --format onnx")
    if args.format == "hub-encoder":
        # Any model with a backbone: the encoder is exported, a task head is not.
        export_hub_encoder(
            model, args.out, tokenizer, seq_length=args.sequence_length or job.get("sequence_length") or 128,
            overwrite=args.overwrite,
        )
        return 0
    export_saved_model(
        model,
        args.out,
        tokenizer,
        sequence_length=args.sequence_length or job.get("sequence_length"),
        text_pair=args.text_pair or trained_on_pairs(job),
        allow_no_answer=args.allow_no_answer or bool(job.get("allow_no_answer")),
        # serve long texts with the windows the run evaluated with (the defaults otherwise)
        **{k: job[k] for k in _RECORDED_WINDOW_OPTIONS if job.get(k) is not None},
        overwrite=args.overwrite,
        training_backend=job.get("backend", "unknown (a .keras file does not record it)"),
    )
    return 0


def _export_runtime(args, model, tokenizer, job):
    """`--format onnx | litert`, then the int8 accuracy check when `--eval-file` is given."""
    # defers keras and TensorFlow (the exporters trace models): `keras-bert --help` and argument errors must not wait for it
    from keras_bert.export.onnx_litert.onnx_litert_export import export_litert, export_onnx

    if args.format == "litert" and (args.quantize or args.opset):
        raise UserError("--quantize and --opset apply to --format onnx")
    if args.eval_file and args.quantize != "int8":
        raise UserError("--eval-file compares fp32 with int8: add --quantize int8")
    options = dict(
        sequence_length=args.sequence_length or job.get("sequence_length"),
        text_pair=args.text_pair or trained_on_pairs(job),
        allow_no_answer=args.allow_no_answer or bool(job.get("allow_no_answer")),
        overwrite=args.overwrite,
        training_backend=job.get("backend", "unknown (a .keras file does not record it)"),
        **{k: job[k] for k in _RECORDED_WINDOW_OPTIONS if job.get(k) is not None},
    )
    try:
        if args.format == "onnx":
            export_onnx(model, args.out, tokenizer, quantize=args.quantize, opset=args.opset, **options)
        else:
            export_litert(model, args.out, tokenizer, **options)
    except ImportError as error:
        raise UserError(str(error)) from None
    if args.eval_file:
        # defers TensorFlow (the check tokenizes with it), as the other commands do
        from keras_bert.export.runtime.int8_check import check_int8_accuracy

        report = check_int8_accuracy(
            args.out, args.eval_file, text_column=args.text_column, label_column=args.label_column,
            pair_column=job.get("pair_column") if options["text_pair"] else None, tolerance=args.accuracy_tolerance, warn=False,
        )
        print(
            f"{args.eval_file}: {report['examples']} examples, accuracy fp32 {report['fp32_accuracy']:.4f}, "
            f"int8 {report['int8_accuracy']:.4f} ({report['drop_points']:+.2f} points lost)"
        )
        if report["warning"]:
            print(f"warning: {report['warning']}", file=sys.stderr)
    return 0
