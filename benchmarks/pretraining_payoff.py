"""Does pretraining pay off downstream? Pretrain from scratch under a wall-clock budget, then fine-tune.

For each objective in `--objectives`, under the same budget (default 20 minutes, calibration
included; `keras_bert.jobs.pretrain_budget`):
  1. learn a WordPiece vocabulary on the unlabeled text (once, shared by every run);
  2. pretrain a BERT of `--size` from random weights on five Austen novels plus the
     movie-review TRAINING sentences with their labels removed (task-adaptive pretraining;
     the held-out sentences are never seen), each review sentence its own document;
     Persuasion is held out and scored at every checkpoint (the learning curve);
  3. fine-tune it on the movie-review split of `benchmarks/finetune_sentiment.py` (same split,
     same recipe for every model) and score the held-out sentences.
Beside them: the same model from random initialisation with the same fine-tuning (no
pretraining) and, for reference, all-MiniLM-L6-v2 fine-tuned with that script (0.8643, measured
there: `benchmarks/finetune_sentiment.py`, see RESULTS.md; not rerun here).

    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/pretraining_payoff.py \\
        [--budget-minutes 20] [--objectives mlm_nsp ...] [--size mini] [--report out.json]

Writes the table (stdout, and JSON with `--report`) and one learning-curve PNG per run
(held-out masked-token accuracy, and the sentence task's, against wall minutes) under
`--curves` (default benchmarks/payoff_curves/), which notebook 01 shows.

Not part of the test suite: each run takes its budget (minutes) on a 2-core CPU.
"""

import argparse
import json
import os
import shutil
import sys
import time
from pathlib import Path

import keras

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.finetune_sentiment import read_split, write_tsv  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
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


def prepare_corpus(work, train_rows, corpus_kind="austen+reviews"):
    """(training files, held-out files): the Austen novels but one (unless `corpus_kind` is "reviews"),
    and the review sentences, unlabeled."""
    if corpus_kind not in CORPORA:
        raise ValueError(f"corpus_kind must be one of {CORPORA}. Received: {corpus_kind!r}")
    corpus = Path(work) / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    files = []
    novels = sorted(AUSTEN.glob("*.txt")) if corpus_kind == "austen+reviews" else []
    for novel in novels:
        if novel.name != HELDOUT_NOVEL:
            shutil.copyfile(novel, corpus / novel.name)
            files.append(str(corpus / novel.name))
    reviews = corpus / "movie_review_train_sentences.txt"
    with open(reviews, "w", encoding="utf-8") as f:
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
    out = Path(work) / f"pretrain_{name}"
    summary = pretrain_within_budget(
        files, vocab, str(out), args.budget_minutes, eval_corpus=heldout, eval_batches=args.eval_batches,
        size=args.size, sequence_length=args.sequence_length, batch_size=args.batch_size,
        learning_rate=args.learning_rate, seed=args.seed, document_separator=DOCUMENT_SEPARATOR,
        overwrite=True, tensorboard=False, verbose=0 if args.quiet else 1, callbacks=[curve],
        **OBJECTIVES[name],
    )
    return str(out), summary, curve.points


def finetune_run(init, files, out, args, vocab=None):
    from keras_bert.jobs.finetune import finetune

    started = time.time()
    summary = finetune(
        "classify", init, files["train"], out, eval=files["heldout"], vocab=vocab,
        learning_rate=args.finetune_learning_rate, sequence_length=64, batch_size=32,
        epochs=args.finetune_epochs, seed=args.seed, verbose=0 if args.quiet else 1,
        length_buckets=[16, 32, 48], tensorboard=False, overwrite=True,
    )
    return {"accuracy": round(summary["metrics"]["accuracy"], 4), "f1": round(summary["metrics"]["f1"], 4),
            "finetune_minutes": round((time.time() - started) / 60, 2)}


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
    parser.add_argument("--corpus", choices=CORPORA, default="austen+reviews",
                        help="pretraining text: the Austen novels and the review training sentences, or the "
                             "review sentences alone (task-adaptive); Persuasion is the held-out MLM text for both")
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--eval-batches", type=int, default=20)
    parser.add_argument("--finetune-learning-rate", type=float, default=5e-4)
    parser.add_argument("--finetune-epochs", type=int, default=3)
    parser.add_argument("--skip-random-init", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", default=str(ROOT / "benchmarks" / ".cache" / "payoff"),
                        help="vocabulary, pretraining runs and fine-tuning runs (kept)")
    parser.add_argument("--curves", default=str(ROOT / "benchmarks" / "payoff_curves"))
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--report", help="write the results as JSON here")
    args = parser.parse_args(argv)
    unknown = [o for o in args.objectives if o not in OBJECTIVES]
    if unknown:
        parser.error(f"unknown objective(s) {unknown}; this package has {sorted(OBJECTIVES)}")

    train, heldout, counts = read_split()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    files, heldout_novel = prepare_corpus(work, train, args.corpus)
    split = {"train": str(work / "train.tsv"), "heldout": str(work / "heldout.tsv")}
    write_tsv(train, split["train"])
    write_tsv(heldout, split["heldout"])
    vocab = vocabulary(work, files, args.vocab_size)
    print(f"backend {keras.backend.backend()}, {os.cpu_count()} CPUs; split {counts}; vocabulary {vocab}")

    rows = []
    if not args.skip_random_init:
        row = {"objective": "none (random initialisation)", "pretraining_accuracy": None, "pretrain_minutes": 0}
        row.update(finetune_run(args.size, split, str(work / "finetune_random"), args, vocab=vocab))
        rows.append(row)
        print(json.dumps(row))
    for name in args.objectives:
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
            "curve_png": plot_curve(name, points, args.curves),
        }
        row.update(finetune_run(folder, split, str(work / f"finetune_{name}"), args))
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "curve"}))

    report = {"backend": keras.backend.backend(), "data": counts, "options": vars(args), "results": rows,
              "reference": {"model": "all-MiniLM-L6-v2 fine-tuned (benchmarks/finetune_sentiment.py)",
                            "accuracy": 0.8643}}
    print()
    print(f"{'objective':30} {'held-out MLM':>12} {'downstream':>10} {'pretrain min':>12}")
    for r in rows:
        mlm = "-" if r["pretraining_accuracy"] is None else f"{r['pretraining_accuracy']:.4f}"
        print(f"{r['objective']:30} {mlm:>12} {r['accuracy']:10.4f} {r['pretrain_minutes']:12.2f}")
    print(f"{'all-MiniLM-L6-v2 (reference)':30} {'':>12} {0.8643:10.4f}")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
