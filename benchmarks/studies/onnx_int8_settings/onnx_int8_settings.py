"""Which dynamic-int8 setting keeps the fine-tuned MiniLM classifier closest to fp32? Chosen on validation.

Fine-tunes all-MiniLM-L6-v2 on the movie-review split of benchmarks/finetune_sentiment.py (train;
the recipe of benchmarks/studies/onnx_export/onnx_export.py: lr 1e-4, 2 epochs, the epoch chosen on
the validation set; kept in WORK/run and reused), exports it to ONNX fp32, quantizes that file with
each `quantize_dynamic` setting of `SETTINGS` and scores each through `ExportedModel`. Accuracy only.

What chose what: the validation set chose the fp32 model's epoch and then the setting (the highest
validation accuracy; a tie goes to the setting listed first, the simpler). The test set chose
nothing: only the fp32 model's and the chosen setting's test accuracies are printed and written
(`chosen`); the other settings' figures are validation figures (`settings`).

    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/onnx_int8_settings/onnx_int8_settings.py \\
        [--work WORK] [--report onnx_int8_settings_results.json]
    KERAS_BACKEND=tensorflow .venv/bin/python benchmarks/studies/onnx_int8_settings/onnx_int8_settings.py --init tiny \\
        --epochs 1 --limit-train 256 --limit-eval 64 --work /tmp/int8_check                  # a quick check
"""

import argparse
import datetime
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))  # the checkout

CACHE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".cache")
# The setting of each variant, the simplest first (a tie on validation keeps the earlier one). The last two
# leave the last two matmuls (pooler, classifier head) in fp32: `_settings` fills in their node names.
SETTINGS = {
    "per_tensor": {},
    "per_channel": {"per_channel": True},
    "per_channel_reduce_range": {"per_channel": True, "reduce_range": True},
    "per_tensor_head_fp32": {"head_fp32": True},
    "per_channel_head_fp32": {"per_channel": True, "head_fp32": True},
}


def _settings(matmuls):
    """`SETTINGS` as `quantize_dynamic` keywords, `head_fp32` turned into the last two matmuls' node names."""
    settings = {}
    for name, options in SETTINGS.items():
        options = dict(options)
        if options.pop("head_fp32", False):
            options["nodes_to_exclude"] = matmuls[-2:]
        settings[name] = options
    return settings


def choose_setting(validation_accuracy):
    """The setting of the highest validation accuracy (`{name: accuracy}`, in `SETTINGS` order); the first on a tie."""
    names = list(validation_accuracy)
    return max(names, key=lambda name: (validation_accuracy[name], -names.index(name)))


def _scores(predict, splits, accuracy):
    """`{"validation": accuracy, "test": accuracy}` of a `texts -> [{"label": ...}]` function."""
    return {name: round(accuracy(predict([text for text, _ in splits[name]]), splits[name]), 4)
            for name in ("validation", "test")}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", default=os.path.join(CACHE, "int8_settings_3way"),
                        help="the fine-tuning run, the fp32 export and each setting's int8 copy (kept and reused)")
    parser.add_argument("--init", default="minilm", choices=["minilm", "tiny"], help="what to fine-tune")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--learning-rate", type=float)
    parser.add_argument("--sequence-length", type=int, default=64)
    parser.add_argument("--limit-train", type=int, help="first N training rows (quick checks)")
    parser.add_argument("--limit-eval", type=int, help="first N validation and first N test rows (quick checks)")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--report", help="also write the results as JSON here (WORK/results.json always)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import keras
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from benchmarks.common import machine_info
    from benchmarks.studies.onnx_export.onnx_export import (
        _accuracy,
        _finetune,
        limited_split,
    )
    from keras_bert.export import ExportedModel, export_onnx
    from keras_bert.pipelines.loading import load_pipeline

    os.makedirs(args.work, exist_ok=True)
    splits, counts = limited_split(args.limit_train, args.limit_eval)
    run = os.path.join(args.work, "run")
    if not os.path.exists(os.path.join(run, "model.keras")):
        run, _ = _finetune(args, args.work, splits)
    pipe = load_pipeline(run, sequence_length=args.sequence_length, batch_size=32)
    fp32 = _scores(pipe, splits, _accuracy)
    print(f"keras fp32: validation accuracy {fp32['validation']:.4f}", flush=True)
    base = os.path.join(args.work, "onnx")
    if not os.path.exists(base):
        export_onnx(pipe.model, base, pipe.tokenizer, quantize="int8", sequence_length=args.sequence_length)
    graph = onnx.load(os.path.join(base, "model.onnx"))
    matmuls = [n.name for n in graph.graph.node if n.op_type in ("MatMul", "Gemm")]
    print(len(matmuls), "matmuls; first", matmuls[:3], "last", matmuls[-3:], flush=True)
    scores = {}
    for name, options in _settings(matmuls).items():
        target = os.path.join(args.work, f"onnx_{name}")
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(base, target)
        quantize_dynamic(os.path.join(base, "model.onnx"), os.path.join(target, "model.int8.onnx"),
                         weight_type=QuantType.QInt8, **options)
        served = ExportedModel(target, precision="int8", tokenizer=pipe.tokenizer)
        scores[name] = _scores(lambda texts, served=served: served.predict(texts, batch_size=32), splits, _accuracy)
        print(f"{name}: validation accuracy {scores[name]['validation']:.4f} "
              f"({100 * (scores[name]['validation'] - fp32['validation']):+.2f} points vs fp32)", flush=True)
    chosen = choose_setting({name: s["validation"] for name, s in scores.items()})
    report = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_info(), "backend": keras.backend.backend(), "data": counts,
        "options": {k: v for k, v in vars(args).items() if k not in ("quiet", "report")},
        "selection": "the validation set chose the fp32 model's epoch and the setting (highest validation accuracy, "
                     "the first listed on a tie); test figures only for the fp32 model and the chosen setting",
        "fp32": {"validation_accuracy": fp32["validation"], "test_accuracy": fp32["test"]},
        "settings": {name: {"validation_accuracy": s["validation"],
                            "validation_points_vs_fp32": round(100 * (s["validation"] - fp32["validation"]), 2)}
                     for name, s in scores.items()},
        "chosen": {"setting": chosen, "validation_accuracy": scores[chosen]["validation"],
                   "test_accuracy": scores[chosen]["test"],
                   "test_points_vs_fp32": round(100 * (scores[chosen]["test"] - fp32["test"]), 2)},
    }
    c = report["chosen"]
    print(f"\nchosen on validation: {chosen}; test accuracy {c['test_accuracy']:.4f} against fp32's "
          f"{fp32['test']:.4f} ({c['test_points_vs_fp32']:+.2f} points; the test set chose nothing)")
    for path in [os.path.join(args.work, "results.json")] + ([args.report] if args.report else []):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)
    return report


if __name__ == "__main__":
    main()
