"""`keras-bert pretrain`: pretrain BERT (MLM + NSP) from text files.

    keras-bert pretrain --corpus texts/ --vocab vocab.txt --size mini --steps 5000 --out runs/mini [--resume]
    keras-bert pretrain --corpus texts/ --vocab vocab.txt --budget-minutes 20 --out runs/b20   (the budget recipe)
    keras-bert pretrain ... --objective electra [--generator-size 0.25]   (ELECTRA's replaced-token detection)

Every option is a field of `keras_bert.jobs.pretrain_options.PretrainOptions`;
those left out take `pretrain`'s defaults, or with `--budget-minutes` the
budget recipe's (`keras_bert.jobs.pretrain_budget.BUDGET_RECIPE`) where it has one.
"""

import os

from keras_bert.cli.errors import UserError
from keras_bert.cli.job_arguments import add_job_options, argument_type, job_keywords
from keras_bert.cli.preflight import existing_file, matching_files
from keras_bert.jobs import job_options
from keras_bert.jobs.pretrain_options import PretrainOptions

HELP = "pretrain BERT (MLM + NSP, SOP or MLM only) from text files"
# What the command reads, checked before TensorFlow loads (`preflight`): option -> (its flag, the check).
INPUTS = {"corpus": ("--corpus", matching_files), "eval_corpus": ("--eval-corpus", matching_files),
          "vocabulary": ("--vocab", existing_file)}
# `--mesh`'s argparse type: "2x4" -> (2, 4).
mesh_shape = argument_type(job_options.mesh_shape)


def add_pretrain_arguments(parser):
    """Adds the `keras-bert pretrain` arguments to an argparse (sub)parser."""
    return add_job_options(parser, PretrainOptions)


def run_pretrain(args):
    """Runs `pretrain` (or, with --budget-minutes, `pretrain_within_budget`), prints how it ended; returns 0."""
    # defers keras (the jobs build models): `keras-bert --help` and argument errors must not wait for it
    from keras_bert.jobs.pretrain import pretrain
    from keras_bert.jobs.pretrain_budget import pretrain_within_budget  # (deferred, as above)

    keywords = job_keywords(args, PretrainOptions)
    if not os.path.isfile(keywords["vocabulary"]):
        raise UserError(f"--vocab: no such file: {keywords['vocabulary']}")
    budget_minutes = keywords.pop("budget_minutes", None)
    if budget_minutes is None:
        summary = pretrain(**keywords)
    elif "steps" in keywords:
        raise UserError("--budget-minutes sets the steps: give it or --steps, not both")
    elif "checkpoint_every" in keywords:
        raise UserError("--budget-minutes sets the checkpoints (10 of them): drop --checkpoint-every")
    else:
        summary = pretrain_within_budget(budget_minutes=budget_minutes, **keywords)
    # Readable lines; the numbers, for programs, are in the run's config.json (the command has no --quiet).
    _report(summary, os.path.join(keywords["output_dir"], "config.json"))
    return 0


def _report(summary, record):
    """The end of a run in a few lines (the job printed where the model is and the held-out accuracies)."""
    resumed = f" (resumed from step {summary['resumed_from_step']})" if summary.get("resumed_from_step") else ""
    training = ", ".join(f"{name} {value:.4g}" for name, value in summary["final_metrics"].items()
                         if not name.startswith("val_"))  # the held-out ones: the job's own lines
    print(f"training metrics after {summary['steps']} steps{resumed}" + (f": {training}" if training else ""))
    budget = summary.get("budget")
    if budget and not budget.get("resumed"):
        print(f"budget {budget['minutes']:g} min: {budget['steps']} steps of {budget['step_seconds']:.3g} s after a "
              f"{budget['calibration_seconds']:g} s calibration; the whole job took {budget['job_minutes']:g} min")
    print(f"metrics, baselines and settings: {record}")
