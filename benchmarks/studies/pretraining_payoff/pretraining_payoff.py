"""Does pretraining pay off downstream? Pretrain from scratch under a wall-clock budget, then fine-tune.

For each objective in `--objectives`, under the same budget (default 20 minutes, calibration
included; `keras_bert.jobs.pretrain_budget`):
  1. learn a WordPiece vocabulary on the unlabeled text (once, shared by every run);
  2. pretrain a BERT of `--size` from random weights on five Austen novels plus the
     movie-review TRAINING sentences with their labels removed (task-adaptive pretraining;
     the validation and test sentences are never seen), each review sentence its own document;
     Persuasion is held out and scored at every checkpoint (the learning curve);
  3. fine-tune it on the training sentences of the movie-review split of
     `benchmarks/finetune_sentiment.py` (train / validation / test, the split `make demo` uses;
     the same recipe for every model), the validation sentences choosing the epoch, and score
     the test sentences once.
Beside them: the same model from random initialisation with the same fine-tuning (no
pretraining). For reference, all-MiniLM-L6-v2 fine-tuned with the demo recipe: its test accuracy
is in benchmarks/studies/demo_recipe/ (not rerun here).

What chose what: the validation sentences choose every fine-tuning run's epoch and, with a grid,
each model's fine-tuning learning rate; the test sentences choose nothing, and the downstream
figure reported is their accuracy (`test_accuracy`; `validation_accuracy` beside it is the
chosen, optimistic one). The pretraining corpus holds the training sentences only. Persuasion
chooses nothing here (no checkpoint is selected on it), but it ranked the settings of the budget
recipe in benchmarks/studies/pretraining_sweep/, so for that recipe its MLM accuracy is a
validation figure.

    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/pretraining_payoff/pretraining_payoff.py \\
        [--budget-minutes 20] [--objectives mlm_nsp ...] [--size mini] [--report out.json]

With `--finetune-learning-rates R1 R2 ...` each model (random initialisation too) is fine-tuned at every
rate of the grid and keeps the rate of the best validation accuracy, the grid growing past an edge while
the edge wins; `--finetune-seeds S1 S2 ...` fine-tunes each model once per seed at that rate and reports
the mean and standard deviation of the test accuracy; `--reuse-pretraining` /
`--reuse-finetuning` take finished runs in `--work` with the same settings instead of running them again.
`--finetune-pooling mean` puts every model's classifier head (random initialisation's too) on the mean of
the token vectors instead of BERT's pooled [CLS] vector (`keras-bert finetune --pooling`); its fine-tuning
folders end in `_mean`. Variants of one pretraining setting, each beside the plain runs in one `--work` (same
vocabulary, splits and random-initialisation arm), in folders suffixed by what differs: `--review-repeats N`
(the review sentences written N times into the corpus: `_reviews_xN`), `--pretraining-dropout X`
(`_dropoutX`), `--pretraining-seed S` (a second pretraining run of the same settings: `_seedS`).

Writes the table (stdout, and JSON with `--report`) and one learning-curve PNG per run
(held-out masked-token accuracy, and the sentence task's, against wall minutes) under
`--curves` (default benchmarks/studies/pretraining_payoff/payoff_curves/), which notebook 01 shows.

Not part of the test suite: each run takes its budget (minutes) on a 2-core CPU.
"""

import argparse
import inspect
import json
import os
import shutil
import sys
import time
from pathlib import Path

import keras
import numpy as np

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))  # the checkout

from benchmarks.finetune_sentiment import read_split, write_split_files  # noqa: E402
from keras_bert.models.bert_classifier import BertClassifier  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
AUSTEN = ROOT / ".." / "shared" / "data" / "austen"
HELDOUT_NOVEL = "persuasion.txt"
# A line of its own that ends a document: every review sentence is one document, so NSP's
# "next" segments never join two unrelated reviews.
DOCUMENT_SEPARATOR = "<end of review>"
# Each objective's data and model options (what `keras-bert pretrain` flags set).
OBJECTIVES = {
    "mlm_nsp": {},
}
try:  # The objectives added beside MLM + NSP, where this version of the package has them.
    from keras_bert.preprocessing.pretraining.config import OBJECTIVES as _PACKAGE_OBJECTIVES  # noqa: E402

    OBJECTIVES.update(_PACKAGE_OBJECTIVES)
except ImportError:
    pass
# ELECTRA's replaced-token detection is a model (`pretrain(objective="electra")`, a generator a quarter as
# wide), not a data option: on mlm_nsp's batches (NSP labels unused); its "held-out MLM" is the generator's.
OBJECTIVES["electra"] = {"masking": "whole-word", "objective": "electra"}


# What the model is pretrained on: BERT's recipe of general text plus the task's own sentences, or the
# task's sentences alone (task-adaptive pretraining, many epochs over a small in-domain corpus).
CORPORA = ("austen+reviews", "reviews")


def check_review_repeats(review_repeats):
    if isinstance(review_repeats, bool) or not isinstance(review_repeats, int) or review_repeats < 1:
        raise ValueError(f"review_repeats must be a positive int. Received: {review_repeats!r}")
    return review_repeats


def corpus_suffix(review_repeats):
    """The folder suffix of a corpus with the reviews repeated ("" for the plain corpus)."""
    return "" if check_review_repeats(review_repeats) == 1 else f"_reviews_x{review_repeats}"


def pretraining_suffix(args):
    """The suffix of the pretraining and fine-tuning folders of a run whose corpus mix, pretraining dropout or
    pretraining seed differs from the plain experiment's: each variant keeps its own runs beside the plain ones
    in one --work folder (same vocabulary, same splits, so the random-initialisation arm is shared)."""
    dropout, seed = getattr(args, "pretraining_dropout", None), getattr(args, "pretraining_seed", None)
    return (corpus_suffix(getattr(args, "review_repeats", 1)) + ("" if dropout is None else f"_dropout{dropout:g}")
            + ("" if seed is None else f"_seed{seed}"))


def pretraining_seed(args):
    """The seed of the pretraining run (weights, masks, sentence order): --pretraining-seed, else --seed."""
    seed = getattr(args, "pretraining_seed", None)
    return args.seed if seed is None else seed


def pretraining_dropout(args):
    """The backbone's dropout while pretraining: --pretraining-dropout, else `pretrain`'s default."""
    dropout = getattr(args, "pretraining_dropout", None)
    if dropout is None:
        from keras_bert.jobs.pretrain import pretrain

        dropout = inspect.signature(pretrain).parameters["dropout"].default
    return dropout


def prepare_corpus(work, train_rows, corpus_kind="austen+reviews", review_repeats=1):
    """(training files, held-out files): the Austen novels but one (unless `corpus_kind` is "reviews"),
    and the review sentences, unlabeled, written `review_repeats` times (each copy masked anew in training:
    the in-domain text's share of the steps grows without touching the novels)."""
    if corpus_kind not in CORPORA:
        raise ValueError(f"corpus_kind must be one of {CORPORA}. Received: {corpus_kind!r}")
    check_review_repeats(review_repeats)
    corpus = Path(work) / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    files = []
    novels = sorted(AUSTEN.glob("*.txt")) if corpus_kind == "austen+reviews" else []
    for novel in novels:
        if novel.name != HELDOUT_NOVEL:
            shutil.copyfile(novel, corpus / novel.name)
            files.append(str(corpus / novel.name))
    suffix = "" if review_repeats == 1 else f"_x{review_repeats}"
    reviews = corpus / f"movie_review_train_sentences{suffix}.txt"
    with open(reviews, "w", encoding="utf-8") as f:
        for _ in range(review_repeats):
            for text, _ in train_rows:  # the labels are dropped here
                f.write(f"{' '.join(text.split())}\n{DOCUMENT_SEPARATOR}\n")
    files.append(str(reviews))
    return files, [str(AUSTEN / HELDOUT_NOVEL)]


def vocabulary(work, files, size):
    from keras_bert.preprocessing.vocabulary import learn_vocabulary, write_vocabulary

    path = Path(work) / f"vocab_{size}.txt"
    if not path.exists():
        write_vocabulary(learn_vocabulary(files, size), str(path))
    return str(path)


class LearningCurve(keras.callbacks.Callback):
    """Each checkpoint's held-out metrics and the wall minutes since `started` (the job's start)."""

    def __init__(self, started):
        super().__init__()
        self.started = started
        self.points = []

    def on_epoch_end(self, epoch, logs=None):
        point = {"minutes": round((time.time() - self.started) / 60, 3)}
        point.update({k: round(float(v), 4) for k, v in (logs or {}).items() if k.startswith("val_")})
        self.points.append(point)


def pretrain_run(name, files, heldout, vocab, work, args):
    from keras_bert.jobs.pretrain_budget import pretrain_within_budget

    started = time.time()
    curve = LearningCurve(started)
    out = Path(work) / f"pretrain_{name}{pretraining_suffix(args)}"
    summary = pretrain_within_budget(
        files, vocab, str(out), args.budget_minutes, eval_corpus=heldout, eval_batches=args.eval_batches,
        size=args.size, sequence_length=args.sequence_length, batch_size=args.batch_size,
        learning_rate=args.learning_rate, pack_sequences=args.pack_sequences, seed=pretraining_seed(args),
        document_separator=DOCUMENT_SEPARATOR,
        overwrite=True, tensorboard=False, verbose=0 if args.quiet else 1, callbacks=[curve],
        **({} if args.pretraining_dropout is None else {"dropout": args.pretraining_dropout}),
        **OBJECTIVES[name],
    )
    return str(out), summary, curve.points


def reused_pretraining(name, work, args):
    """`(folder, config)` of an earlier `pretrain_run` of `name` in `work` (`--reuse-pretraining`).

    Raises:
        ValueError: no such run, or it was pretrained with other settings (named) than `args` ask for.
    """
    folder = Path(work) / f"pretrain_{name}{pretraining_suffix(args)}"
    if not (folder / "config.json").exists() or not (folder / "model.keras").exists():
        raise ValueError(f"--reuse-pretraining: {folder} holds no finished pretraining run (config.json, model.keras)")
    with open(folder / "config.json", encoding="utf-8") as f:
        config = json.load(f)
    job = config["job"]
    wanted = {"size": args.size, "sequence_length": args.sequence_length, "batch_size": args.batch_size,
              "learning_rate": args.learning_rate, "pack_sequences": args.pack_sequences,
              "objective": OBJECTIVES[name].get("objective", "bert"),
              **{k: v for k, v in OBJECTIVES[name].items() if k != "objective"},
              "dropout": pretraining_dropout(args),
              "seed": pretraining_seed(args)}
    different = {k: (job.get(k), v) for k, v in wanted.items() if job.get(k) != v}
    if different:
        raise ValueError(f"--reuse-pretraining: {folder} was pretrained with other settings "
                         f"(setting: (that run's, asked for)): {different}")
    return str(folder), config


def choose_finetune_learning_rate(init, files, out, args, vocab=None):
    """`(learning rate, {rate: finetune_run's record})`: fine-tunes `init` at every `--finetune-learning-rates`
    rate (seed `--seed`, each in `{out}_lr{rate}`) on the training sentences, the validation sentences choosing
    each run's epoch, and keeps the rate of the best validation accuracy (the first of a tie). The test
    sentences take no part in the choice.

    A best rate at an edge of the grid says the best may lie beyond it: the grid then grows past that
    edge (doubling, or halving), up to `--grid-extensions` rates, while the edge keeps winning.
    """
    runs = {}

    def score(rate):
        runs[rate] = finetune_run(init, files, f"{out}_lr{rate:g}", args, vocab, rate)
        if not args.quiet:
            print(f"  {init}: learning rate {rate:g} -> validation accuracy {runs[rate]['validation_accuracy']:.4f}")

    for rate in args.finetune_learning_rates:
        score(rate)
    for _ in range(args.grid_extensions):
        best = max(runs, key=lambda r: runs[r]["validation_accuracy"])
        if len(runs) < 2 or best not in (min(runs), max(runs)):
            break
        score(best * 2 if best == max(runs) else best / 2)
    return max(runs, key=lambda r: runs[r]["validation_accuracy"]), runs


def finetune_arm(init, files, out, args, vocab=None):
    """`finetune_run` at `--finetune-learning-rate`, or, with a grid (`--finetune-learning-rates`), at the grid's
    rate of the best validation accuracy (its `--seed` run is the grid's own); then once more per other
    `--finetune-seeds` seed at that rate. The row: test accuracy (mean and spread over the seeds; the test set chose
    nothing), validation accuracy (the set that chose the epochs and the rate), the rate and the grid's scores."""
    grid = bool(args.finetune_learning_rates) and len(args.finetune_learning_rates) > 1
    runs, by_rate = {}, None
    if grid:
        rate, by_rate = choose_finetune_learning_rate(init, files, out, args, vocab)
        folder = f"{out}_lr{rate:g}"
        runs[args.seed] = by_rate[rate]
    else:
        rate, folder = args.finetune_learning_rate, out
    seeds = getattr(args, "finetune_seeds", None) or [args.seed]
    for seed in seeds:
        if seed not in runs:
            runs[seed] = finetune_run(init, files, folder if seed == args.seed else f"{folder}_seed{seed}", args,
                                      vocab, rate, seed)
    row = dict(runs[seeds[0]])
    if len(seeds) > 1:
        # One test score moves by about a point between seeds at this size: the mean is the result,
        # the sample standard deviation says how far apart two models must be to be told apart.
        row = {"finetune_minutes": round(sum(runs[seed]["finetune_minutes"] for seed in seeds), 2)}
        for split in ("validation", "test"):
            accuracies = [runs[seed][f"{split}_accuracy"] for seed in seeds]
            row[f"{split}_accuracy"] = round(float(np.mean(accuracies)), 4)
            row[f"{split}_accuracy_std"] = round(float(np.std(accuracies, ddof=1)), 4)
            row[f"{split}_accuracy_by_seed"] = {str(seed): runs[seed][f"{split}_accuracy"] for seed in seeds}
            row[f"{split}_f1"] = round(float(np.mean([runs[seed][f"{split}_f1"] for seed in seeds])), 4)
    row["finetune_learning_rate"] = rate
    if by_rate is not None:
        row["validation_accuracy_by_learning_rate"] = {f"{k:g}": v["validation_accuracy"] for k, v in by_rate.items()}
    return row


def finished_finetuning(out, init, files, learning_rate, args, seed=None):
    """The summary (finetune.json) of a finished fine-tuning run in `out` with these exact settings (`seed`
    default: `args.seed`) and these train / validation / test files, made after `init` was (a pretraining folder's
    model.keras), or None: `--reuse-finetuning` then skips the run. A run without a test section (made before
    the split had one) is never reused."""
    seed = args.seed if seed is None else seed
    summary_path = Path(out) / "finetune.json"
    if not summary_path.exists():
        return None
    with open(summary_path, encoding="utf-8") as f:
        summary = json.load(f)
    job = summary["job"]
    same = (job["init"] == init and job["train"] == files["train"] and job["eval"] == files["validation"]
            and job.get("test") == files["test"] and job["learning_rate"] == learning_rate
            and job["epochs"] == args.finetune_epochs and job["seed"] == seed
            and job.get("pooling", "cls") == args.finetune_pooling)
    model = Path(init) / "model.keras"
    stale = model.exists() and model.stat().st_mtime > summary_path.stat().st_mtime
    complete = "validation" in summary.get("metrics", {}) and "test" in summary.get("metrics", {})
    return summary if same and not stale and complete else None


def _run_record(summary, minutes):
    """A fine-tuning run's row: validation (chose its epoch) and test (chose nothing) accuracy and F1."""
    validation, test = summary["metrics"]["validation"], summary["metrics"]["test"]
    return {"validation_accuracy": round(validation["accuracy"], 4), "validation_f1": round(validation["f1"], 4),
            "test_accuracy": round(test["accuracy"], 4), "test_f1": round(test["f1"], 4),
            "chosen_epoch": (summary.get("best_epoch") or {}).get("epoch"), "finetune_minutes": round(minutes, 2)}


def finetune_run(init, files, out, args, vocab=None, learning_rate=None, seed=None):
    """Fine-tunes `init` on `files["train"]`, the epoch chosen on `files["validation"]`, scored once on
    `files["test"]`; returns `_run_record`'s row."""
    from keras_bert.jobs.finetune import finetune

    learning_rate = learning_rate or args.finetune_learning_rate
    seed = args.seed if seed is None else seed
    started = time.time()
    summary = finished_finetuning(out, init, files, learning_rate, args, seed) if args.reuse_finetuning else None
    if summary is not None:
        return {**_run_record(summary, summary["wall_seconds"] / 60), "reused_finetuning": out}
    summary = finetune(
        "classify", init, files["train"], out, eval=files["validation"], test=files["test"], vocab=vocab,
        learning_rate=learning_rate, sequence_length=64, batch_size=32,
        epochs=args.finetune_epochs, seed=seed, verbose=0 if args.quiet else 1,
        length_buckets=[16, 32, 48], tensorboard=False, overwrite=True, pooling=args.finetune_pooling,
    )
    return _run_record(summary, (time.time() - started) / 60)


def plot_curve(name, points, folder):
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a benchmark machine
    import matplotlib.pyplot as plt

    keys = sorted({k for p in points for k in p if k.startswith("val_") and k.endswith("accuracy")})
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for key in keys:
        ax.plot([p["minutes"] for p in points if key in p], [p[key] for p in points if key in p], marker="o",
                label=key.removeprefix("val_"))
    ax.set_xlabel("wall minutes (calibration included)")
    ax.set_ylabel("held-out accuracy (Persuasion)")
    ax.set_title(f"pretraining: {name}")
    ax.grid(alpha=0.3)
    ax.legend()
    Path(folder).mkdir(parents=True, exist_ok=True)
    path = Path(folder) / f"{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return str(path)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-minutes", type=float, default=20.0)
    parser.add_argument("--objectives", nargs="+", default=["mlm_nsp"], help=f"of {sorted(OBJECTIVES)}")
    parser.add_argument("--size", default="mini")
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=5e-4, help="pretraining peak learning rate")
    parser.add_argument("--pack-sequences", action="store_true",
                        help="pretrain on rows packed with several short sentence pairs (`keras-bert pretrain "
                             "--pack-sequences`; not for electra, whose backbone takes no packed rows)")
    parser.add_argument("--corpus", choices=CORPORA, default="austen+reviews",
                        help="pretraining text: the Austen novels and the review training sentences, or the "
                             "review sentences alone (task-adaptive); Persuasion is the held-out MLM text for both; "
                             "only the training split's review sentences, never the validation or test ones")
    parser.add_argument("--review-repeats", type=int, default=1,
                        help="write the review sentences this many times into the pretraining corpus (their share "
                             "of the steps grows); the vocabulary already in --work is kept, and the runs go to "
                             "folders suffixed _reviews_xN beside the plain corpus's")
    parser.add_argument("--pretraining-dropout", type=float,
                        help="the backbone's dropout while pretraining (default: pretrain's 0.1); fine-tuning keeps "
                             "finetune's 0.1 either way. Runs go to folders suffixed _dropoutX")
    parser.add_argument("--pretraining-seed", type=int,
                        help="seed of the pretraining runs alone (default: --seed, which also draws the development "
                             "split and the first fine-tuning seed): a second pretraining run of the same settings, "
                             "in folders suffixed _seedN, fine-tuned exactly as the first")
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--eval-batches", type=int, default=20)
    parser.add_argument("--finetune-learning-rate", type=float, default=5e-4)
    parser.add_argument("--finetune-learning-rates", type=float, nargs="+",
                        help="a grid: each model (random initialisation too) is fine-tuned at every rate and keeps "
                             "the rate of the best validation accuracy; the test sentences never take part in the "
                             "choice")
    parser.add_argument("--grid-extensions", type=int, default=2,
                        help="rates added past an edge of the grid while the edge rate is the best")
    parser.add_argument("--reuse-finetuning", action="store_true",
                        help="take the result of a finished fine-tuning run in --work with the same settings "
                             "(made after its pretrained model) instead of running it again")
    parser.add_argument("--finetune-epochs", type=int, default=3)
    parser.add_argument("--finetune-pooling", choices=BertClassifier.POOLING_MODES, default="cls",
                        help="the classifier head's input for every model (`keras-bert finetune --pooling`): BERT's "
                             "pooler on [CLS], or the mean of the token vectors")
    parser.add_argument("--finetune-seeds", type=int, nargs="+",
                        help="fine-tune each model once per seed at its rate and report the mean test accuracy "
                             "and its standard deviation (default: --seed alone); the rate is chosen with --seed")
    parser.add_argument("--reuse-pretraining", action="store_true",
                        help="fine-tune the pretraining runs already in --work (refused if their settings differ) "
                             "instead of pretraining again")
    parser.add_argument("--skip-random-init", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", default=str(ROOT / "benchmarks" / ".cache" / "payoff"),
                        help="vocabulary, pretraining runs and fine-tuning runs (kept)")
    parser.add_argument("--curves", default=str(ROOT / "benchmarks" / "studies" / "pretraining_payoff" / "payoff_curves"))
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--report", help="write the results as JSON here")
    args = parser.parse_args(argv)
    unknown = [o for o in args.objectives if o not in OBJECTIVES]
    if unknown:
        parser.error(f"unknown objective(s) {unknown}; this package has {sorted(OBJECTIVES)}")

    if args.review_repeats < 1:
        parser.error(f"--review-repeats must be at least 1; received {args.review_repeats}")
    if args.pretraining_dropout is not None and not 0 <= args.pretraining_dropout < 1:
        parser.error(f"--pretraining-dropout must be in [0, 1); received {args.pretraining_dropout}")

    splits, counts = read_split()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    files, heldout_novel = prepare_corpus(work, splits["train"], args.corpus, args.review_repeats)
    split = write_split_files(splits, str(work))
    vocab = vocabulary(work, files, args.vocab_size)
    if args.finetune_learning_rates and len(args.finetune_learning_rates) == 1:
        args.finetune_learning_rate = args.finetune_learning_rates[0]
    print(f"backend {keras.backend.backend()}, {os.cpu_count()} CPUs; split {counts}; vocabulary {vocab}")

    rows = []
    pooled = "" if args.finetune_pooling == "cls" else f"_{args.finetune_pooling}"  # fine-tuning folders' suffix
    if not args.skip_random_init:
        row = {"objective": "none (random initialisation)", "pretraining_accuracy": None, "pretrain_minutes": 0}
        row.update(finetune_arm(args.size, split, str(work / f"finetune_random{pooled}"), args, vocab=vocab))
        rows.append(row)
        print(json.dumps(row))
    variant = pretraining_suffix(args)  # the pretraining folders' suffix, the fine-tuning folders' and the curves'
    for name in args.objectives:
        if args.reuse_pretraining:
            folder, config = reused_pretraining(name, work, args)
            summary = {"final_metrics": config["final_metrics"],
                       "budget": {"reused": folder, "steps": config["steps"],
                                  "job_minutes": round(config["wall_seconds"] / 60, 2)}}
            points = None
        else:
            folder, summary, points = pretrain_run(name, files, heldout_novel, vocab, work, args)
        final = summary["final_metrics"]
        row = {
            "objective": name,
            # MLM + NSP and span/SOP log `val_mlm_accuracy`, ELECTRA its generator's, RoBERTa's MLM-only model
            # plain `val_accuracy`.
            "pretraining_accuracy": next(
                (final[k] for k in ("val_mlm_accuracy", "val_generator_accuracy", "val_accuracy") if k in final), None),
            "sentence_task_accuracy": final.get("val_nsp_accuracy"),
            "pretraining_final_metrics": final,
            "budget": summary["budget"],
            "pretrain_minutes": summary["budget"]["job_minutes"],
            "curve": points,
            "curve_png": plot_curve(f"{name}{variant}", points, args.curves) if points else None,
        }
        row.update(finetune_arm(folder, split, str(work / f"finetune_{name}{variant}{pooled}"), args))
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "curve"}))

    report = {"backend": keras.backend.backend(), "data": counts, "options": vars(args), "results": rows,
              "selection": "validation sentences: each fine-tuning run's epoch and, with a grid, each model's "
                           "learning rate; test sentences: chose nothing (test_accuracy is the downstream figure)",
              "reference": {"model": "all-MiniLM-L6-v2 fine-tuned with the demo recipe",
                            "results": "benchmarks/studies/demo_recipe/ (its test accuracy)"}}
    print()
    print("downstream: test accuracy (the test sentences chose nothing); validation accuracy chose the epochs "
          "and the rate")
    print(f"{'objective':30} {'Persuasion MLM':>14} {'validation':>10} {'test':>17} {'pretrain min':>12}")
    for r in rows:
        mlm = "-" if r["pretraining_accuracy"] is None else f"{r['pretraining_accuracy']:.4f}"
        spread = f" ± {r['test_accuracy_std']:.4f}" if "test_accuracy_std" in r else ""
        print(f"{r['objective']:30} {mlm:>14} {r['validation_accuracy']:10.4f} {r['test_accuracy']:8.4f}{spread:9} "
              f"{r['pretrain_minutes']:12.2f}")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
