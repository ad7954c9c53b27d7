"""`keras-bert distill`: a smaller student from a fine-tuned teacher (the DistilBERT recipe).

    keras-bert distill --teacher runs/sst --train train.tsv --eval dev.tsv --student-layers 3 \\
        --temperature 2 --alpha 0.5 --out runs/student

The student (in `--out`, a folder like `keras-bert finetune`'s) exports, predicts
and serves like any fine-tuned model; see `keras_bert.jobs.distill`. Every option
is a field of `keras_bert.jobs.distill_options.DistillOptions`.
"""

import json
import os

from keras_bert.cli.job_arguments import add_job_options, job_keywords
from keras_bert.cli.preflight import existing_file, local_model, model_reference
from keras_bert.jobs.distill_options import DistillOptions

HELP = "distil a fine-tuned classifier or tagger into a student with fewer layers"
# What the command reads, checked before TensorFlow loads (`preflight`): option -> (its flag, the check).
INPUTS = {"teacher": ("--teacher", local_model), "vocab": ("--vocab", model_reference),
          "train": ("--train", existing_file), "eval": ("--eval", existing_file)}


def add_distill_arguments(parser):
    """Adds the `keras-bert distill` arguments to an argparse (sub)parser."""
    return add_job_options(parser, DistillOptions)


def _shown(metrics):
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items() if k != "per_type"}


def run_distill(args):
    """Runs `distill` with parsed `keras-bert distill` arguments; returns the exit status (0)."""
    # defers keras (the job builds models): `keras-bert --help` and argument errors must not wait for it
    from keras_bert.jobs.distill import distill

    keywords = job_keywords(args, DistillOptions)
    summary = distill(**keywords)
    if keywords.get("verbose") == 0:
        print(json.dumps({"student": _shown(summary["student"]), "teacher": _shown(summary["teacher"]),
                          "model": os.path.join(keywords["output_dir"], "model.keras")}))
    return 0
