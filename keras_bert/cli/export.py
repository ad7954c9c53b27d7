"""`keras-bert export`: a model and its tokenizer as a TF SavedModel that takes raw strings.

    keras-bert export runs/sst/model.keras --out saved_models/sst
    keras-bert export runs/sst --out saved_models/sst      # a finetune folder: its vocab and options
    keras-bert export minilm.keras --format hub-encoder --out saved_models/minilm_hub   # TF Hub-style, trainable
"""

from keras_bert.cli.errors import UserError
from keras_bert.cli.model_files import find_model, load_keras_model, load_tokenizer
from keras_bert.export.hub_export import export_hub_encoder
from keras_bert.export.saved_model_export import export_saved_model
from keras_bert.models import BertMaskedLM, BertPretrainer
from keras_bert.tasks import CLI_NAMES

HELP = "export a model + tokenizer as a TF SavedModel that takes raw strings"
# What a fine-tuning run records about reading long texts and decoding answers; export serves with them.
_RECORDED_WINDOW_OPTIONS = (
    "window_stride", "doc_stride", "max_query_length", "max_answer_length", "null_score_diff_threshold",
)


def add_export_arguments(parser):
    """Adds the `keras-bert export` arguments to an argparse (sub)parser."""
    parser.add_argument("model", help="a .keras file, or a `keras-bert finetune` output folder")
    parser.add_argument("--out", required=True, help="SavedModel directory to create")
    parser.add_argument(
        "--format", choices=["saved-model", "hub-encoder"], default="saved-model",
        help="saved-model: raw strings in, the task's answers out (serving); hub-encoder: the backbone as TF Hub-style "
        "encoder/ + preprocessor/ SavedModels that train further (hub.KerasLayer, TFSMLayer)",
    )
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
    model_file, run = find_model(args.model)
    tokenizer = load_tokenizer(args.tokenizer, model_file, run)
    model = load_keras_model(model_file)
    pretraining_model = isinstance(model, (BertPretrainer, BertMaskedLM))
    if args.backbone:
        if not pretraining_model:
            raise UserError("--backbone applies to pretraining models (BertPretrainer, BertMaskedLM)")
        model = model.backbone
    elif pretraining_model and args.format != "hub-encoder":  # hub-encoder takes the backbone of any model
        # The library's message names `model.backbone`, which a command-line user cannot type.
        raise UserError(
            f"{model_file} is a pretraining model ({type(model).__name__}): add --backbone to export its "
            f"encoder (embeddings), or fine-tune it first (keras-bert finetune --init {args.model} ...)"
        )
    job = run.job if run is not None else {}
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
