"""The torch training step: our eager step, our compiled step (`jit_compile=True`) and transformers' eager step.

One process, KERAS_BACKEND=torch. For each configuration, the training steps
of a sequence classifier on the same random batch, timed in alternating
rounds (`common.time_interleaved`), so a change in the machine's load falls
on all of them alike:

- keras_bert eager: `BertClassifier.train_on_batch` compiled with
  `jit_compile=False` (Keras' torch train step, `BertAdamW`'s default update);
- keras_bert compiled: the same model (same starting weights) compiled with
  `jit_compile=True`: `keras_bert.torch_training.CompiledTrainStep`;
- two ablations of it (unless `--no-ablations`): with torch's own linear
  layers (MKL) instead of oneDNN's, and with the whole last block computed
  instead of [CLS] only;
- transformers eager: `BertForSequenceClassification` stepped as transformers'
  `Trainer` steps it by default: `torch.optim.AdamW(fused=True)` with weight
  decay 0.01 except on biases and LayerNorm, `clip_grad_norm_(1.0)`.

All train with dropout 0.1 (BERT's), fp32, learning rate 3e-5. Prints one
JSON line (ms per step, tokens/s, ratios, the first and last losses, each
compiled step's first-call seconds and graph rewrites, the machine) and a
markdown table.

    KERAS_BACKEND=torch .venv/bin/python -m benchmarks.studies.compiled_train_step.compiled_train_step --threads 1
    KERAS_BACKEND=torch .venv/bin/python -m benchmarks.studies.compiled_train_step.compiled_train_step \
        --configs tiny:4x32 --rounds 1

What chose what: nothing; speed on random weights and random token ids, fixed settings.
"""

import argparse
import json
import os
import statistics
import time

import numpy as np

from benchmarks.common import loadavg, log, machine_info, time_interleaved, versions

DEFAULT_CONFIGS = ("mini:16x128", "base:8x128")
VOCAB = 30522
NUM_CLASSES = 2
LEARNING_RATE = 3e-5


def batch(size, length, seed=0):
    """Token ids, segments (half A, half B), no padding, and labels: numpy int32."""
    from benchmarks.cases import token_inputs

    x = token_inputs(size, length, seed)
    y = np.random.default_rng(seed).integers(0, NUM_CLASSES, (size,)).astype("int32")
    return x, y


# Our rows: (name, jit_compile, CompiledTrainStep arguments for the ablations, or None for what `fit` builds).
OURS = (
    ("keras_bert eager", False, None),
    ("keras_bert compiled", True, None),
    # Ablations, each with one part of the compiled step taken away:
    ("compiled, MKL linears", True, {"onednn_linears": False}),  # torch's aten.linear (MKL sgemm) instead of oneDNN
    ("compiled, full last block", True, {"forward_scope": None}),  # no [CLS]-only last block
)


def our_steps(size, x, y, losses, ablations=True):
    """{name: step} for `BertClassifier`s with the same starting weights (see `OURS`), and {name: model}."""
    import keras

    from keras_bert import BertBackbone, BertClassifier
    from keras_bert.optimizers import create_optimizer
    from keras_bert.torch_training import CompiledTrainStep

    models = {}
    for name, jit, arguments in OURS if ablations else OURS[:2]:
        keras.utils.set_random_seed(0)
        model = BertClassifier(BertBackbone.from_size(size), num_classes=NUM_CLASSES)
        model.compile(optimizer=create_optimizer(learning_rate=LEARNING_RATE), jit_compile=jit)
        if arguments is not None:
            settings = {"check_batch": model._check_data, "forward_scope": model.inference_scope, **arguments}
            model.train_function = CompiledTrainStep(model, **settings)
        models[name] = model
        losses[name] = []

    def step(name):
        model = models[name]
        return lambda: losses[name].append(float(model.train_on_batch(x, y, return_dict=True)["loss"]))

    return {name: step(name) for name in models}, models


def hf_step(size, x, y, losses):
    """One step of transformers' `BertForSequenceClassification` as its `Trainer` takes it by default."""
    import torch
    import transformers

    from benchmarks.cases import _hf_config

    torch.manual_seed(0)
    config = _hf_config(size)
    config.num_labels = NUM_CLASSES
    model = transformers.BertForSequenceClassification(config).train()
    # Trainer's groups: no decay on biases and LayerNorm weights.
    no_decay = [p for n, p in model.named_parameters() if "bias" in n or "LayerNorm" in n]
    decay = [p for n, p in model.named_parameters() if not ("bias" in n or "LayerNorm" in n)]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                                  lr=LEARNING_RATE, eps=1e-6, fused=True)
    inputs = {"input_ids": torch.from_numpy(x["token_ids"]).long(),
              "token_type_ids": torch.from_numpy(x["segment_ids"]).long(),
              "attention_mask": torch.from_numpy(x["padding_mask"]).long(), "labels": torch.from_numpy(y).long()}

    def step():
        loss = model(**inputs).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses["transformers eager"].append(float(loss.detach()))

    return step


def measure(config, rounds, min_seconds, ablations=True):
    """The record of one `size:BxL` configuration."""
    size, shape = config.split(":")
    batch_size, length = (int(n) for n in shape.split("x"))
    x, y = batch(batch_size, length)
    losses = {"transformers eager": []}
    fns, models = our_steps(size, x, y, losses, ablations)
    fns["transformers eager"] = hf_step(size, x, y, losses)
    first_call, steps = {}, {}
    for name, model in models.items():
        if not model.jit_compile:
            continue
        start = time.perf_counter()
        fns[name]()  # the first call exports and compiles
        first_call[name] = round(time.perf_counter() - start, 1)
        steps[name] = model.train_function
        if steps[name].fallback_reason is not None:
            raise RuntimeError(f"{name}: the compiled step fell back to eager: {steps[name].fallback_reason}")
        log(f"  {config} {name}: first call {first_call[name]} s ({steps[name]!r})")
    load_start = loadavg()
    seconds = time_interleaved(fns, warmup=2, repeats=rounds, min_seconds=min_seconds)
    ms = {name: statistics.median(s) * 1000 for name, s in seconds.items()}
    return {
        "config": f"{size} {batch_size}x{length} fp32",
        "ms_per_step": {name: round(v, 1) for name, v in ms.items()},
        "ms_min_max": {name: [round(min(s) * 1000, 1), round(max(s) * 1000, 1)] for name, s in seconds.items()},
        "tokens_per_s": {name: round(batch_size * length / v * 1000, 1) for name, v in ms.items()},
        "vs_keras_bert_eager": {name: round(ms["keras_bert eager"] / v, 3) for name, v in ms.items()},
        "vs_transformers_eager": {name: round(ms["transformers eager"] / v, 3) for name, v in ms.items()},
        "first_call_s": first_call,
        "compiled_steps": {name: repr(step) for name, step in steps.items()},
        "graph_rewrites": {name: next(iter(step.graphs.values()))["rewrites"] for name, step in steps.items()},
        "losses_first_last": {name: [round(v[0], 4), round(v[-1], 4)] for name, v in losses.items()},
        "rounds": rounds,
        "loadavg_start": load_start,
        "loadavg_end": loadavg(),
    }


def table(records):
    rows = [("| config | implementation | ms per step, median (min–max) | tokens/s | vs our eager | "
             "vs transformers eager | first call s |"),
            "|---|---|---|---|---|---|---|"]
    for r in records:
        for name, ms in r["ms_per_step"].items():
            low, high = r["ms_min_max"][name]
            rows.append(f"| {r['config']} | {name} | {ms:.0f} ({low:.0f}–{high:.0f}) | "
                        f"{r['tokens_per_s'][name]:,.0f} | "
                        f"{r['vs_keras_bert_eager'][name]:.2f}× | {r['vs_transformers_eager'][name]:.2f}× | "
                        f"{r['first_call_s'].get(name, '')} |")
    return "\n".join(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", nargs="+", default=list(DEFAULT_CONFIGS), help="size:BATCHxLENGTH")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--min-seconds", type=float, default=0.0, help="per timed repeat (loops the step)")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    parser.add_argument("--out", default=None, help="also write the JSON record here")
    parser.add_argument("--no-ablations", action="store_true", help="time only our eager and compiled steps and HF")
    args = parser.parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "torch")
    import keras
    import torch

    if keras.backend.backend() != "torch":
        raise SystemExit(f"run with KERAS_BACKEND=torch (this process runs {keras.backend.backend()})")
    if args.threads:
        torch.set_num_threads(args.threads)
    records = [measure(config, args.rounds, args.min_seconds, not args.no_ablations) for config in args.configs]
    result = {"case": "torch training step, eager vs compiled vs transformers", "threads": torch.get_num_threads(),
              "machine": machine_info(), "versions": versions(),
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "records": records}
    print(json.dumps(result))
    print(table(records))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
