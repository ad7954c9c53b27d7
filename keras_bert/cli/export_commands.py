"""`keras-bert export` and `keras-bert predict`.

    keras-bert export runs/sst/model.keras --out saved_models/sst
    keras-bert predict saved_models/sst "a gorgeous, witty, seductive movie."
    keras-bert predict runs/sst --file reviews.txt          # a .keras model or a finetune folder works too
    cat questions.tsv | keras-bert predict saved_models/qa  # question<TAB>context per line

Inputs with two or more fields (sentence pairs, question + context, context +
choices) are one line each with the fields separated by a tab. The output is
JSON lines: `{"input": ..., <the task's result keys>}`, one per input, in order.
"""

import json
import os
import sys

from keras_bert.cli.errors import UserError
from keras_bert.tasks import get_task

# Fields of one input line, by task (the SavedModel's `serve_text` inputs).
_FIELDS = {
    "question_answerer": "question<TAB>context",
    "multiple_choice": "context<TAB>choice<TAB>choice...",
}


def add_export_arguments(parser):
    parser.add_argument("model", help="a .keras file, or a `keras-bert finetune` output folder")
    parser.add_argument("--out", required=True, help="SavedModel directory to create")
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
    parser.set_defaults(run=run_export)


def add_predict_arguments(parser):
    parser.add_argument("model", help="an exported SavedModel directory, a .keras file or a finetune folder")
    parser.add_argument("texts", nargs="*", help="inputs (fields separated by a tab); default: --file or stdin")
    parser.add_argument("--file", help="a text file with one input per line ('-' for stdin)")
    parser.add_argument("--tokenizer", help=".keras models: vocab.txt or checkpoint folder (default: found beside the model)")
    parser.add_argument("--sequence-length", type=int, help=".keras models: packed length (default: the run's, else 128)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.set_defaults(run=run_predict)


# --------------------------------------------------------------------- export
def _run_job(model_path):
    """(model file, finetune.json "job" or None) of a .keras path or a finetune folder."""


    if os.path.isdir(model_path):
        folder, model_file = model_path, os.path.join(model_path, "model.keras")
        if not os.path.isfile(model_file):
            raise UserError(f"{model_path}: the folder has no model.keras (expected a `keras-bert finetune` --out folder)")
    else:
        folder, model_file = os.path.dirname(model_path) or ".", model_path
        if not os.path.isfile(model_file):
            raise UserError(f"{model_path}: no such file")
        if not model_file.endswith(".keras"):
            raise UserError(f"{model_path}: expected a .keras file or a finetune folder")
    job = None
    job_file = os.path.join(folder, "finetune.json")
    if os.path.isfile(job_file) and os.path.abspath(model_file) == os.path.abspath(os.path.join(folder, "model.keras")):
        with open(job_file, encoding="utf-8") as f:
            job = json.load(f).get("job")
    return model_file, folder, job


def _tokenizer(path, model_file, folder, job):

    from keras_bert.preprocessing.bert_tokenizer import BertTokenizer

    if path:
        return BertTokenizer.from_pretrained(path)
    if job is not None and os.path.isfile(os.path.join(folder, "vocab.txt")):
        return BertTokenizer(os.path.join(folder, "vocab.txt"), lowercase=job["lowercase"])
    try:
        return BertTokenizer.from_pretrained(model_file)
    except ValueError:
        raise UserError(
            f"{model_file}: no tokenizer found beside the model (vocab.txt of a finetune folder or a "
            f"{os.path.basename(model_file)}.vocab.txt sidecar); pass --tokenizer"
        ) from None


def _load_keras_model(model_file):
    import keras

    import keras_bert.models  # noqa: F401  (registers the classes)


    try:
        return keras.saving.load_model(model_file, compile=False)
    except Exception as error:  # Keras raises many types for a file that is not a model
        raise UserError(f"{model_file}: cannot load the model: {' '.join(str(error).split())[:300]}") from None


def _is_text_classification(task):
    """Whether a finetune record's `task` (registry name, or the CLI word of older records) classifies texts."""
    return task is not None and get_task(task).name in ("classifier", "regressor")


def run_export(args):

    from keras_bert.export.saved_model_export import export_saved_model
    from keras_bert.models import BertMaskedLM, BertPretrainer

    model_file, folder, job = _run_job(args.model)
    tokenizer = _tokenizer(args.tokenizer, model_file, folder, job)
    model = _load_keras_model(model_file)
    if args.backbone:
        if not isinstance(model, (BertPretrainer, BertMaskedLM)):
            raise UserError("--backbone applies to pretraining models (BertPretrainer, BertMaskedLM)")
        model = model.backbone
    job = job or {}
    export_saved_model(
        model,
        args.out,
        tokenizer,
        sequence_length=args.sequence_length or job.get("sequence_length"),
        text_pair=args.text_pair or (job.get("pair_column") is not None and _is_text_classification(job.get("task"))),
        allow_no_answer=args.allow_no_answer or bool(job.get("allow_no_answer")),
        overwrite=args.overwrite,
        training_backend=job.get("backend", "unknown (a .keras file does not record it)"),
    )
    return 0


# -------------------------------------------------------------------- predict
def _read_inputs(args):


    if args.texts:
        if args.file:
            raise UserError("give inputs as arguments or with --file, not both")
        return [(f"argument {i + 1}", text) for i, text in enumerate(args.texts)]
    if args.file and args.file != "-":
        try:
            with open(args.file, encoding="utf-8", newline="") as f:
                lines = f.read().splitlines()
        except UnicodeDecodeError as error:
            raise UserError(f"{args.file}: not UTF-8 text ({error.reason} at byte {error.start})") from None
        source = args.file
    else:
        if sys.stdin.isatty() and not args.file:
            raise UserError("no inputs: give texts as arguments, --file PATH, or pipe them to stdin")
        lines = sys.stdin.read().splitlines()
        source = "stdin"
    inputs = [(f"{source}:{n}", line) for n, line in enumerate(lines, 1) if line.strip()]
    if not inputs:
        raise UserError(f"{source}: no inputs (every line is empty)")
    return inputs


def _split_fields(inputs, task, num_fields):
    """Tab-separated lines → one column per `serve_text` input."""


    rows = []
    for where, line in inputs:
        fields = line.split("\t")
        if task == "multiple_choice":
            if len(fields) < 3:
                raise UserError(f"{where}: expected {_FIELDS[task]} (at least two choices); got {len(fields)} field(s)")
            rows.append((fields[0], fields[1:]))
        elif len(fields) != num_fields:
            expected = _FIELDS.get(task, "text<TAB>text_pair" if num_fields == 2 else "one text (no tab)")
            raise UserError(f"{where}: expected {expected}; got {len(fields)} tab-separated field(s)")
        else:
            rows.append(tuple(fields))
    return [list(column) for column in zip(*rows)]


def _keras_predictor(args):
    """A `(task, num_fields, predict(columns) -> results)` for a .keras model, via the Python pipelines."""
    from keras_bert.export.task_outputs import task_kind
    from keras_bert.pipelines.text_pipelines import pipeline_for

    model_file, folder, job = _run_job(args.model)
    tokenizer = _tokenizer(args.tokenizer, model_file, folder, job)
    model = _load_keras_model(model_file)
    task = task_kind(model)
    if task == "backbone":


        raise UserError(f"{model_file}: a backbone has no predictions; export it for embeddings (`keras-bert export`)")
    options = {"sequence_length": args.sequence_length or (job or {}).get("sequence_length"), "batch_size": args.batch_size}
    if task == "question_answerer" and job:
        options["allow_no_answer"] = job.get("allow_no_answer", False)
    pipeline = pipeline_for(model, tokenizer, **options)
    pairs = bool(job and job.get("pair_column") is not None and task in ("classifier", "regressor"))
    num_fields = 2 if pairs or task == "question_answerer" else 1

    def predict(columns):
        if task == "token_classifier":
            return [{"entities": e} for e in pipeline(columns[0])]
        return pipeline(*columns)

    return task, num_fields, predict


def run_predict(args):


    if args.batch_size < 1:
        raise UserError("--batch-size must be at least 1")
    if os.path.isfile(os.path.join(args.model, "saved_model.pb")):
        from keras_bert.export.exported_model import ExportedModel

        served = ExportedModel(args.model)
        task, num_fields = served.task, len(served.text_inputs)

        def predict(columns):
            results = served.predict(*columns, batch_size=args.batch_size)
            return [{"entities": r} for r in results] if task == "token_classifier" else results
    else:
        task, num_fields, predict = _keras_predictor(args)
    inputs = _read_inputs(args)
    columns = _split_fields(inputs, task, num_fields)
    for (_, line), result in zip(inputs, predict(columns)):
        fields = line.split("\t")
        shown = fields[0] if len(fields) == 1 else fields
        print(json.dumps({"input": shown, **result}, ensure_ascii=False), flush=True)
    return 0
