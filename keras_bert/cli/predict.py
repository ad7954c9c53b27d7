"""`keras-bert predict`: predictions on raw text, as JSON lines.

    keras-bert predict saved_models/sst "a gorgeous, witty, seductive movie."
    keras-bert predict runs/sst --file reviews.txt          # a .keras model or a finetune folder works too
    cat questions.tsv | keras-bert predict saved_models/qa  # question<TAB>context per line

Inputs with two or more fields (sentence pairs, question + context, context +
choices) are one line each with the fields separated by a tab. The output is
JSON lines, exactly one per input line and in order: `{"input": ...,
<the task's result keys>}`, or `{"input": ..., "error": ...}` for a line with
nothing to predict (a blank line, an empty field); the other lines are still
predicted and the exit status stays 0. Texts longer than the model's sequence
are read in overlapping windows (SavedModel and .keras alike); each such text
gets a `"long_input"` field and a line on stderr saying how many windows it
took and how many tokens were dropped, if any.
"""

import json
import os
import sys

from keras_bert.cli.errors import UserError
from keras_bert.cli.preflight import existing_file, local_model, model_reference

HELP = "predict on raw text with a SavedModel, ONNX / LiteRT export, .keras file or finetune folder"
# What the command reads, checked before TensorFlow loads (`preflight`): option -> (its flag, the check).
INPUTS = {"model": (None, local_model), "file": ("--file", existing_file), "tokenizer": ("--tokenizer", model_reference)}
EPILOG = (
    "Output: one JSON line per input line, in order. A blank line (or an empty tab-separated field) gives "
    '{"input": "", "error": "..."} in its place and a note on stderr; the other lines are still predicted and the '
    "exit status stays 0. Texts longer than the model's sequence are read in overlapping windows (a SavedModel "
    "does this in its graph, exactly as the .keras pipelines do); each such text gets a \"long_input\" field "
    '{"tokens", "windows", "truncated_tokens"} and one line on stderr. The echoed "input" is cut to its first '
    "80 characters plus its length unless --full-input is given."
)
# Echoed inputs longer than this are shortened (the prediction still reads all of them).
_ECHO_CHARACTERS = 80

# Fields of one input line, by task (the SavedModel's `serve_text` inputs).
_FIELDS = {
    "question_answerer": "question<TAB>context",
    "multiple_choice": "context<TAB>choice<TAB>choice...",
}
_FIELD_NAMES = {"question_answerer": ("question", "context"), "multiple_choice": ("context", "choice")}
# What a task drops when `truncated_tokens` > 0 (every task windows its long texts).
_DROPPED = {
    "question_answerer": "of the question past max_query_length",
    "multiple_choice": "of choices longer than half the sequence",
    "classifier": "of the shorter text of the pair past half the sequence",
    "regressor": "of the shorter text of the pair past half the sequence",
    "backbone": "past the sequence length",
    "text_embedder": "past the sequence length",
}


def add_predict_arguments(parser):
    """Adds the `keras-bert predict` arguments to an argparse (sub)parser."""
    parser.epilog = EPILOG
    parser.add_argument("model", help="an exported SavedModel, ONNX or LiteRT directory, a .keras file or a finetune folder")
    parser.add_argument("texts", nargs="*", help="inputs (fields separated by a tab); default: --file or stdin")
    parser.add_argument("--file", help="a text file with one input per line ('-' for stdin)")
    parser.add_argument("--tokenizer", help=".keras models: vocab.txt or checkpoint folder (default: found beside the model)")
    parser.add_argument("--sequence-length", type=int, help=".keras models: packed length (default: the run's, else 128)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--traced", action="store_true",
                        help=".keras models on KERAS_BACKEND=torch: run the model as one torch.export graph "
                             "(TracedTorchModel), without Keras' per-layer Python; same outputs, faster on a GPU")
    parser.add_argument("--full-input", action="store_true", help="echo every input whole (default: first 80 characters and the length)")


def _read_inputs(args):
    """`[(where, line)]`: every input line from the arguments, --file or stdin, blank ones included."""
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
    if not lines:
        raise UserError(f"{source}: no inputs (it is empty)")
    return [(f"{source}:{n}", line) for n, line in enumerate(lines, 1)]


def _split_fields(inputs, task, num_fields):
    """Tab-separated lines → `(rows, errors)`: the fields of each predictable line, and `{index: message}` for the others."""
    rows, errors = {}, {}
    names = _FIELD_NAMES.get(task, ("text", "text_pair"))
    for index, (where, line) in enumerate(inputs):
        if not line.strip():
            errors[index] = "empty input (a blank line): nothing to predict"
            continue
        fields = line.split("\t")
        if task == "multiple_choice":
            if len(fields) < 3:
                raise UserError(f"{where}: expected {_FIELDS[task]} (at least two choices); got {len(fields)} field(s)")
        elif len(fields) != num_fields:
            expected = _FIELDS.get(task, "text<TAB>text_pair" if num_fields == 2 else "one text (no tab)")
            raise UserError(f"{where}: expected {expected}; got {len(fields)} tab-separated field(s)")
        empty = [i for i, field in enumerate(fields) if not field.strip()]
        if empty:
            name = names[min(empty[0], len(names) - 1)]
            errors[index] = f"field {empty[0] + 1} ({name}) is empty: nothing to predict"
            continue
        rows[index] = (fields[0], fields[1:]) if task == "multiple_choice" else tuple(fields)
    return rows, errors


def _saved_model_predictor(args):
    """A `(task, num_fields, predict(columns) -> (results, stats))` for an exported SavedModel."""
    # defers TensorFlow (loads the SavedModel): `keras-bert --help` must not import it
    from keras_bert.export.runtime.exported_model import ExportedModel

    try:
        served = ExportedModel(args.model)
    except ImportError as error:  # an ONNX / LiteRT export whose runtime is not installed: names the extra
        raise UserError(str(error)) from None
    task = served.task

    def predict(columns):
        results, stats = served.predict_with_stats(*columns, batch_size=args.batch_size)
        if task == "token_classifier":
            results = [{"entities": r} for r in results]
        return results, stats

    return task, len(served.text_inputs), predict


def _is_runtime_export(path):
    """Whether `path` is an ONNX or LiteRT export directory (`keras-bert export --format onnx|litert`)."""
    # defers the export package's imports to a predict call (keeps `keras-bert --help` light)
    from keras_bert.export.onnx_litert.onnx_litert_export import runtime_format

    return os.path.isdir(path) and runtime_format(path) is not None


def _keras_predictor(args):
    """A `(task, num_fields, predict(columns) -> (results, stats))` for a .keras model, via the Python pipelines."""
    # defers TensorFlow (the serving outputs are TF graph code): `keras-bert --help` must not import it
    from keras_bert.export.task_outputs import task_kind
    # defers keras (the loaders build models): `keras-bert --help` must not import it
    from keras_bert.loading import find_model, load_keras_model, load_tokenizer
    # defers TensorFlow (the pipelines tokenize with tensorflow-text): `keras-bert --help` must not import it
    from keras_bert.pipelines.loading import pipeline_for

    files = find_model(args.model)
    tokenizer = load_tokenizer(files, args.tokenizer, flag="--tokenizer")
    model = load_keras_model(files)
    task = task_kind(model)
    if task == "backbone":
        raise UserError(f"{files.path}: a backbone has no predictions; export it for embeddings (`keras-bert export`)")
    job = files.job
    options = {"sequence_length": args.sequence_length or job.get("sequence_length"), "batch_size": args.batch_size}
    if task == "question_answerer" and job:
        options["allow_no_answer"] = job.get("allow_no_answer", False)
    pipeline = pipeline_for(model, tokenizer, **options)
    if args.traced:
        pipeline.model = _traced(model, files.path)
    pairs = job.get("pair_column") is not None and task in ("classifier", "regressor")
    num_fields = 2 if pairs or task == "question_answerer" else 1

    def predict(columns):
        if task == "text_embedder":  # one vector per text, never windowed (`keras-bert embed` writes .npy too)
            return [{"embedding": v.tolist()} for v in pipeline(columns[0])], [None] * len(columns[0])
        stats = pipeline.input_stats(*columns)
        if task == "token_classifier":
            return [{"entities": e} for e in pipeline(columns[0])], stats
        return pipeline(*columns), stats

    return task, num_fields, predict


def _traced(model, model_file):
    """`model` as a `TracedTorchModel` (what `--traced` runs), or a UserError saying why it cannot be."""
    import keras  # already imported by the model's loading; deferred so that `keras-bert --help` stays light

    # defers torch.export (and keras_bert.export) until --traced asks for it
    from keras_bert.export.torch_tracing.traced_torch_model import TracedTorchModel

    if keras.backend.backend() != "torch":
        raise UserError(
            f"--traced runs torch.export: set KERAS_BACKEND=torch (this run uses {keras.backend.backend()})"
        )
    try:
        return TracedTorchModel(model)
    except Exception as error:  # torch.export's own errors name the op; the user needs the file and the reason
        raise UserError(f"{model_file}: --traced could not trace the model with torch.export: {error}") from error


def _shown(text, full):
    """The echoed input: whole, or its first characters, "…" and its length."""
    if full or len(text) <= _ECHO_CHARACTERS:
        return text
    return f"{text[:_ECHO_CHARACTERS]}… ({len(text):,} characters)"


def _report(where, task, stats):
    """One stderr line for a text that was windowed or lost tokens, else None."""
    if stats is None or (stats["windows"] <= 1 and stats["truncated_tokens"] == 0):
        return None
    message = f"{where}: {stats['tokens']:,} tokens"
    if stats["windows"] > 1:
        message += f", read in {stats['windows']} overlapping windows"
    if stats["truncated_tokens"]:
        message += f"; {stats['truncated_tokens']:,} tokens dropped ({_DROPPED.get(task, 'past the sequence')})"
    return message


def run_predict(args):
    """Prints one JSON line per input line; returns the exit status (0)."""
    if args.batch_size < 1:
        raise UserError("--batch-size must be at least 1")
    if os.path.isfile(os.path.join(args.model, "saved_model.pb")) or _is_runtime_export(args.model):
        if args.traced:
            raise UserError(f"{args.model}: --traced applies to .keras models; this is an export, run by its runtime")
        task, num_fields, predict = _saved_model_predictor(args)
    else:
        task, num_fields, predict = _keras_predictor(args)
    inputs = _read_inputs(args)
    rows, errors = _split_fields(inputs, task, num_fields)
    order = sorted(rows)
    results, stats = predict([list(column) for column in zip(*(rows[i] for i in order))]) if order else ([], [])
    by_index = {i: (result, stat) for i, result, stat in zip(order, results, stats)}
    for index, (where, line) in enumerate(inputs):
        fields = line.split("\t") if line.strip() else [line]  # a blank line is echoed as it was
        shown = [_shown(field, args.full_input) for field in fields]
        record = {"input": shown[0] if len(shown) == 1 else shown}
        if index in errors:
            print(f"{where}: {errors[index]}; its output line holds an \"error\"", file=sys.stderr)
            record["error"] = errors[index]
        else:
            result, stat = by_index[index]
            record.update(result)
            report = _report(where, task, stat)
            if report:
                print(report, file=sys.stderr)
                record["long_input"] = stat
        print(json.dumps(record, ensure_ascii=False), flush=True)
    return 0
