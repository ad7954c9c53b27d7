"""`keras-bert predict`: predictions on raw text, as JSON lines.

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
from keras_bert.cli.model_files import find_model, load_keras_model, load_tokenizer

HELP = "predict on raw text with a SavedModel, .keras file or finetune folder"

# Fields of one input line, by task (the SavedModel's `serve_text` inputs).
_FIELDS = {
    "question_answerer": "question<TAB>context",
    "multiple_choice": "context<TAB>choice<TAB>choice...",
}


def add_predict_arguments(parser):
    """Adds the `keras-bert predict` arguments to an argparse (sub)parser."""
    parser.add_argument("model", help="an exported SavedModel directory, a .keras file or a finetune folder")
    parser.add_argument("texts", nargs="*", help="inputs (fields separated by a tab); default: --file or stdin")
    parser.add_argument("--file", help="a text file with one input per line ('-' for stdin)")
    parser.add_argument("--tokenizer", help=".keras models: vocab.txt or checkpoint folder (default: found beside the model)")
    parser.add_argument("--sequence-length", type=int, help=".keras models: packed length (default: the run's, else 128)")
    parser.add_argument("--batch-size", type=int, default=32)


def _read_inputs(args):
    """`[(where, line)]`: the inputs from the arguments, --file or stdin; blank lines skipped."""
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


def _saved_model_predictor(args):
    """A `(task, num_fields, predict(columns) -> results)` for an exported SavedModel."""
    # defers TensorFlow (loads the SavedModel): `keras-bert --help` must not import it
    from keras_bert.export.exported_model import ExportedModel

    served = ExportedModel(args.model)
    task = served.task

    def predict(columns):
        results = served.predict(*columns, batch_size=args.batch_size)
        return [{"entities": r} for r in results] if task == "token_classifier" else results

    return task, len(served.text_inputs), predict


def _keras_predictor(args):
    """A `(task, num_fields, predict(columns) -> results)` for a .keras model, via the Python pipelines."""
    # defers TensorFlow (the serving outputs are TF graph code): `keras-bert --help` must not import it
    from keras_bert.export.task_outputs import task_kind
    # defers TensorFlow (the pipelines tokenize with tensorflow-text): `keras-bert --help` must not import it
    from keras_bert.pipelines.loading import pipeline_for

    model_file, run = find_model(args.model)
    tokenizer = load_tokenizer(args.tokenizer, model_file, run)
    model = load_keras_model(model_file)
    task = task_kind(model)
    if task == "backbone":
        raise UserError(f"{model_file}: a backbone has no predictions; export it for embeddings (`keras-bert export`)")
    job = run.job if run is not None else {}
    options = {"sequence_length": args.sequence_length or job.get("sequence_length"), "batch_size": args.batch_size}
    if task == "question_answerer" and job:
        options["allow_no_answer"] = job.get("allow_no_answer", False)
    pipeline = pipeline_for(model, tokenizer, **options)
    pairs = job.get("pair_column") is not None and task in ("classifier", "regressor")
    num_fields = 2 if pairs or task == "question_answerer" else 1

    def predict(columns):
        if task == "token_classifier":
            return [{"entities": e} for e in pipeline(columns[0])]
        return pipeline(*columns)

    return task, num_fields, predict


def run_predict(args):
    """Prints one JSON line per input; returns the exit status (0)."""
    if args.batch_size < 1:
        raise UserError("--batch-size must be at least 1")
    if os.path.isfile(os.path.join(args.model, "saved_model.pb")):
        task, num_fields, predict = _saved_model_predictor(args)
    else:
        task, num_fields, predict = _keras_predictor(args)
    inputs = _read_inputs(args)
    columns = _split_fields(inputs, task, num_fields)
    for (_, line), result in zip(inputs, predict(columns)):
        fields = line.split("\t")
        shown = fields[0] if len(fields) == 1 else fields
        print(json.dumps({"input": shown, **result}, ensure_ascii=False), flush=True)
    return 0
