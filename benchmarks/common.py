"""What every benchmark case shares: timing, FLOP counts, result records, machine facts.

A result record is a plain dict (JSON-ready):

    {"case": "forward", "impl": "keras_bert", "backend": "jax", "config": "base 8x128 fp32",
     "unit": "tokens/s", "items_per_call": 1024, "median": ..., "min": ..., "max": ...,
     "repeats": 5, "flops_per_item": ..., "gflops": ..., "extra": {...}}

`median`/`min`/`max` are rates (items per second) over the timed repeats, after
warm-up calls that are not counted (they include tracing and compilation).
"""

import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

DATA = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "data"))


# Two-sided 95% quantiles of Student's t by degrees of freedom (n - 1 runs), so no scipy is needed; past 20
# degrees of freedom the 20's quantile is used, which makes the interval slightly wider than it need be.
T_95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086}


def interval(values):
    """{"mean", "ci95" (half width of the 95% t-interval over n - 1; None for one value), "n", "values"} of
    figures from independent runs (seeds)."""
    values = [float(v) for v in values]
    if not values:
        return {"mean": None, "ci95": None, "n": 0, "values": []}
    n = len(values)
    half = None if n < 2 else T_95.get(n - 1, T_95[20]) * statistics.stdev(values) / math.sqrt(n)
    return {"mean": round(statistics.fmean(values), 4), "ci95": None if half is None else round(half, 4), "n": n,
            "values": [round(v, 4) for v in values]}


def time_interleaved(fns, warmup=1, repeats=3, min_seconds=0.0, budget_seconds=None, pause=0.05):
    """Seconds per call of each of several callables, measured in alternating rounds.

    Implementations that are compared with each other are timed in the same
    process, round by round (each round times every callable once, in a
    rotated order), so a change in the machine's load during the run falls on
    all of them alike instead of on whichever ran during the busy minute. A
    short pause before each timed repeat lets the previous runtime's spinning
    worker threads (OpenMP, Eigen) go idle before the next one starts.

    Args:
        fns: dict name -> callable that blocks until its work is done.
        warmup: untimed calls of each callable first (tracing, compilation).
        repeats: timed rounds.
        min_seconds: a timed repeat loops a callable until this long has
            passed and reports the mean per call.
        budget_seconds: a callable whose timed calls have taken this long
            stops after two repeats (e.g. int8 where a backend has no fast
            int8 kernel).
        pause: seconds of sleep before each timed repeat.

    Returns:
        dict name -> list of seconds per call (two to `repeats` entries).
    """
    names = list(fns)
    for name in names:
        for _ in range(warmup):
            fns[name]()
    times = {name: [] for name in names}
    spent = dict.fromkeys(names, 0.0)
    for round_index in range(repeats):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            if budget_seconds is not None and len(times[name]) >= 2 and spent[name] > budget_seconds:
                continue
            time.sleep(pause)
            calls, start = 0, time.perf_counter()
            while True:
                fns[name]()
                calls += 1
                elapsed = time.perf_counter() - start
                if elapsed >= min_seconds:
                    break
            times[name].append(elapsed / calls)
            spent[name] += elapsed
    return times


def record(case, impl, backend, config, unit, items_per_call, seconds, flops_per_item=None, **extra):
    """A result record from per-call seconds (see the module docstring)."""
    rates = [items_per_call / s for s in seconds]
    out = {
        "case": case,
        "impl": impl,
        "backend": backend,
        "config": config,
        "unit": unit,
        "items_per_call": items_per_call,
        "median": statistics.median(rates),
        "min": min(rates),
        "max": max(rates),
        "repeats": len(rates),
        "flops_per_item": flops_per_item,
        "gflops": statistics.median(rates) * flops_per_item / 1e9 if flops_per_item else None,
        "extra": extra,
    }
    return out


def check_record(r):
    """Raises ValueError unless `r` is a well-formed record with positive finite rates."""
    for key in ("case", "impl", "backend", "config", "unit", "median", "min", "max", "repeats"):
        if key not in r:
            raise ValueError(f"record lacks {key!r}: {r}")
    for key in ("median", "min", "max"):
        if not (isinstance(r[key], (int, float)) and math.isfinite(r[key]) and r[key] > 0):
            raise ValueError(f"record {key}={r[key]!r} is not a positive finite number: {r}")
    if not r["min"] <= r["median"] <= r["max"]:
        raise ValueError(f"record has min > median or median > max: {r}")
    if r["gflops"] is not None and not (math.isfinite(r["gflops"]) and r["gflops"] > 0):
        raise ValueError(f"record gflops={r['gflops']!r}: {r}")
    json.dumps(r)  # JSON-ready
    return r


# --- FLOP counts (multiply-adds count 2; embeddings, LayerNorm, softmax and GELU are not counted).


def encoder_flops_per_token(num_layers, hidden_dim, intermediate_dim, sequence_length):
    """Forward FLOPs per token of the transformer stack (QKV, attention, output, feed-forward)."""
    h, i, t = hidden_dim, intermediate_dim, sequence_length
    per_layer = 2 * (3 * h * h) + 2 * (2 * t * h) + 2 * (h * h) + 2 * (2 * h * i)
    return num_layers * per_layer


def forward_flops_per_token(size, sequence_length):
    """Backbone forward FLOPs per token, the pooler spread over the sequence."""
    from keras_bert.models.bert_sizes import BERT_SIZES

    s = BERT_SIZES[size]
    pooler = 2 * s["hidden_dim"] ** 2 / sequence_length
    return encoder_flops_per_token(s["num_layers"], s["hidden_dim"], s["intermediate_dim"], sequence_length) + pooler


def pretraining_flops_per_token(size, sequence_length, num_predictions, vocabulary_size):
    """Training-step FLOPs per token (3x forward) of MLM+NSP with logits at the masked positions only."""
    from keras_bert.models.bert_sizes import BERT_SIZES

    h = BERT_SIZES[size]["hidden_dim"]
    head = num_predictions * (2 * h * h + 2 * h * vocabulary_size) / sequence_length
    return 3 * (forward_flops_per_token(size, sequence_length) + head)


# --- machine and versions


def machine_info():
    info = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            text = f.read()
        names = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")]
        flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
        info["cpu"] = names[0] if names else platform.processor()
        info["isa"] = [f for f in ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_int8") if f in flags]
    except OSError:
        info["cpu"] = platform.processor()
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            info["memory_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except (OSError, ValueError, IndexError):
        pass
    return info


def loadavg():
    try:
        with open("/proc/loadavg", encoding="utf-8") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


def versions():
    from importlib import metadata

    out = {}
    for name in ("keras", "keras-hub", "tensorflow", "tensorflow-text", "jax", "jaxlib", "torch", "transformers",
                 "tokenizers", "numpy"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    try:
        out["keras-bert"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
            cwd=os.path.dirname(os.path.abspath(__file__)),
        ).stdout.strip() + " (+ working tree)"
    except (OSError, subprocess.CalledProcessError):
        out["keras-bert"] = "unknown"
    return out


def log(*args):
    print(*args, file=sys.stderr, flush=True)
