"""ELECTRA (replaced-token detection) against BERT's masked LM: the same budget of pretraining, then the same fine-tuning.

Pretrains two encoders of the same named size from scratch on Jane Austen
(../shared/data/austen: five novels for training, Emma held out), the same
vocabulary (learned from the training novels), batches, steps and seed:
  1. `--objective bert`: `BertPretrainer`, MLM + NSP;
  2. `--objective electra`: `ElectraPretrainer`, a generator `--generator-size`
     as wide and the discriminator (lambda = 50).
Then fine-tunes each encoder (the BERT backbone; ELECTRA's discriminator,
through `finetune --init <run folder>`) on the movie-review sentiment split
of benchmarks/finetune_sentiment.py, with one recipe, and prints the held-out
pretraining metrics, the held-out sentiment accuracy and F1, and wall/CPU
minutes of every phase.

    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/electra_pretraining.py [--size mini] [--steps 3000] \
        [--report electra.json]
    ... --quick    # a tiny setting that checks the plumbing in a few minutes (no figures to report)

ELECTRA's paper reports its gain at equal compute; a step of ELECTRA costs
more than a step of BERT (the generator's forward and backward pass, and the
discriminator over every token), so the wall and CPU minutes are part of the
comparison, not only the accuracies.

Not part of the test suite: the default setting takes well over an hour on a 2-core CPU.
"""

import argparse
import glob
import json
import os
import tempfile
import time
from pathlib import Path

from benchmarks.finetune_sentiment import read_split, write_tsv

AUSTEN = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "austen"


def pretrain_run(objective, files, vocab, out, options, generator_size):
    """Pretrains one encoder with `objective`; returns its record (held-out metrics, minutes)."""
    from keras_bert.jobs.pretrain import pretrain

    wall, cpu = time.time(), time.process_time()
    extra = {"objective": "electra", "generator_size": generator_size} if objective == "electra" else {}
    summary = pretrain(
        files["train"], vocab, out, size=options["size"], steps=options["steps"],
        sequence_length=options["sequence_length"], batch_size=options["batch_size"],
        learning_rate=options["pretrain_learning_rate"], seed=options["seed"], eval_corpus=files["heldout"],
        eval_batches=options["eval_batches"], tensorboard=False, verbose=options["verbose"], **extra,
    )
    final = summary["final_metrics"]
    record = {
        "objective": objective,
        "heldout": summary.get("heldout") or {
            "mlm_accuracy": final.get("val_mlm_accuracy"), "nsp_accuracy": final.get("val_nsp_accuracy")
        },
        "baselines": summary["baselines"],
        "wall_minutes": round((time.time() - wall) / 60, 2),
        "cpu_minutes": round((time.process_time() - cpu) / 60, 2),
    }
    print(json.dumps(record))
    return record


def finetune_run(objective, init, files, out, options):
    from keras_bert.jobs.finetune import finetune

    wall, cpu = time.time(), time.process_time()
    summary = finetune(
        "classify", init, files["train"], out, eval=files["heldout"], learning_rate=options["finetune_learning_rate"],
        sequence_length=64, batch_size=32, epochs=options["finetune_epochs"], seed=options["seed"],
        verbose=options["verbose"],
    )
    record = {
        "objective": objective,
        "accuracy": round(summary["metrics"]["accuracy"], 4),
        "f1": round(summary["metrics"]["f1"], 4),
        "wall_minutes": round((time.time() - wall) / 60, 2),
        "cpu_minutes": round((time.process_time() - cpu) / 60, 2),
    }
    print(json.dumps(record))
    return record


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="mini")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--vocabulary-size", type=int, default=8000)
    parser.add_argument("--generator-size", type=float, default=0.25)
    parser.add_argument("--pretrain-learning-rate", type=float, default=5e-4)
    parser.add_argument("--finetune-learning-rate", type=float, default=1e-4)
    parser.add_argument("--finetune-epochs", type=int, default=2)
    parser.add_argument("--eval-batches", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny size, 20 steps, 200 sentiment examples")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--report", help="write the results as JSON here")
    args = parser.parse_args(argv)

    import keras

    from keras_bert.preprocessing.vocabulary import learn_vocabulary, write_vocabulary

    options = dict(
        size="tiny" if args.quick else args.size, steps=20 if args.quick else args.steps,
        sequence_length=32 if args.quick else args.sequence_length, batch_size=8 if args.quick else args.batch_size,
        pretrain_learning_rate=args.pretrain_learning_rate, finetune_learning_rate=args.finetune_learning_rate,
        finetune_epochs=1 if args.quick else args.finetune_epochs, eval_batches=2 if args.quick else args.eval_batches,
        seed=args.seed, verbose=0 if args.quiet else 1, generator_size=args.generator_size,
    )
    train_rows, heldout_rows, counts = read_split()
    if args.quick:
        train_rows, heldout_rows = train_rows[:200], heldout_rows[:100]
    novels = sorted(p for p in glob.glob(str(AUSTEN / "*.txt")) if not p.endswith("emma.txt"))
    print(f"backend {keras.backend.backend()}, {os.cpu_count()} CPUs; options {options}")
    report = {"backend": keras.backend.backend(), "options": options, "sentiment_data": counts,
              "pretraining": [], "finetuning": []}
    with tempfile.TemporaryDirectory(prefix="keras-bert-electra-") as work:
        text = {"train": novels[:1] if args.quick else novels, "heldout": str(AUSTEN / "emma.txt")}
        vocab = os.path.join(work, "vocab.txt")
        size = 600 if args.quick else args.vocabulary_size
        write_vocabulary(learn_vocabulary(text["train"], size), vocab)
        sentiment = {"train": os.path.join(work, "train.tsv"), "heldout": os.path.join(work, "heldout.tsv")}
        write_tsv(train_rows, sentiment["train"])
        write_tsv(heldout_rows, sentiment["heldout"])
        for objective in ("bert", "electra"):
            run_folder = os.path.join(work, objective)
            report["pretraining"].append(
                pretrain_run(objective, text, vocab, run_folder, options, args.generator_size)
            )
            report["finetuning"].append(
                finetune_run(objective, run_folder, sentiment, os.path.join(work, f"{objective}_sst"), options)
            )
    print()
    print(f"{'objective':10} {'pretrain min':>12} {'sentiment acc':>14} {'F1':>7} {'finetune min':>13}")
    for p, f in zip(report["pretraining"], report["finetuning"]):
        print(f"{p['objective']:10} {p['wall_minutes']:12.2f} {f['accuracy']:14.4f} {f['f1']:7.4f} {f['wall_minutes']:13.2f}")
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
