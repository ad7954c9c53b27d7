"""`keras-bert finetune`: fine-tune a task head on labelled files.

    keras-bert finetune --task classify --init path/to/hf_bert --train train.tsv --eval dev.tsv \\
        --test test.tsv --text-column sentence --label-column label --out runs/sst

`--eval` (validation) chooses the epoch; `--test` chooses nothing and is the figure to report.

`--task` takes the task registry's CLI words (classify, regress, ner, qa,
multiple-choice) and its task names (classifier, regressor, token_classifier,
question_answerer, multiple_choice); see `keras_bert.task_registry`. Every option is a
field of `keras_bert.jobs.finetune_options.FinetuneOptions`.
"""

import json
import os

from keras_bert.cli.errors import UserError
from keras_bert.cli.job_arguments import add_job_options, job_keywords
from keras_bert.cli.preflight import existing_file, model_reference, pairs_source
from keras_bert.jobs.finetune_options import FinetuneOptions
from keras_bert.task_registry import get_task

HELP = "fine-tune a task head: classify, regress, ner, qa, multiple-choice"
# What the command reads, checked before TensorFlow loads (`preflight`): option -> (its flag, the check).
INPUTS = {"init": ("--init", model_reference), "vocab": ("--vocab", model_reference),
          **{name: (f"--{name}", existing_file) for name in ("train", "eval", "test")},
          "counterfactual_augmentation": ("--counterfactual-augmentation", pairs_source)}
# The options that name a file's columns: with --no-header, 0-based numbers.
_COLUMNS = ("text_column", "pair_column", "label_column", "context_column", "question_column", "choice_columns")


def add_finetune_arguments(parser):
    """Adds the `keras-bert finetune` arguments to an argparse (sub)parser."""
    return add_job_options(parser, FinetuneOptions)


def _column(value, header):
    """A column name, or with `--no-header` a 0-based column number."""
    if value is None or header:
        return value
    try:
        return int(value)
    except ValueError:
        raise UserError(f"With --no-header, columns are 0-based numbers. Received: {value!r}") from None


def _columns(keywords):
    """The column options with `--no-header` made numbers (defaults too), and `--question-column ''` as None."""
    header = keywords.get("header", True)
    for name, default in FinetuneOptions.defaults(*_COLUMNS).items():
        value = keywords.get(name, default)
        if name == "question_column" and value == "":
            keywords[name] = None
        elif name == "choice_columns" and value is not None:
            keywords[name] = [_column(column, header) for column in value]
        elif not header:
            keywords[name] = _column(value, header)
    return keywords


def _qa_windows(keywords):
    """Question answering's `--max-query-length` and `--doc-stride` as None when not given: the job derives them
    from the sequence length (`qa_window_lengths`), where the options' defaults are BERT's for 384 tokens."""
    if get_task(keywords["task"]).name == "question_answerer":
        for name in ("max_query_length", "doc_stride"):
            keywords.setdefault(name, None)
    return keywords


def run_finetune(args):
    """Runs `finetune` with parsed `keras-bert finetune` arguments; returns the exit status (0).

    The results are in the output folder (metrics.json, finetune.json) and on
    stdout; `--quiet` drops the progress output but still prints one JSON line: the
    `validation` and `test` metrics (each only with its file) and the chosen epoch.
    """
    # defers keras (the job builds models): `keras-bert --help` and argument errors must not wait for it
    from keras_bert.jobs.finetune import SET_NAMES, finetune

    keywords = _qa_windows(_columns(job_keywords(args, FinetuneOptions)))
    summary = finetune(**keywords)
    if keywords.get("verbose") == 0:
        shown = {split: {k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items() if k != "per_type"}
                 for split, metrics in summary["metrics"].items() if split in SET_NAMES}
        print(json.dumps({**shown, "best_epoch": summary["best_epoch"],
                          "model": os.path.join(keywords["output_dir"], "model.keras")}))
    return 0
