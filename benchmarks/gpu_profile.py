"""Where the torch training step's time goes on a GPU: `torch.profiler` around our compiled step and transformers'.

    KERAS_BACKEND=torch python -m benchmarks.gpu_profile --out $OUT/gpu_profile.json   # about 2 min on an H200
    KERAS_BACKEND=torch python -m benchmarks.gpu_profile --quick                        # tiny, CPU: the machinery

The step is the GPU bench's train row (`benchmarks/gpu_cases.py`): BERT base masked LM, 32x128, bf16, dropout
0.1, ours compiled with `compile(jit_compile=True)` (`CompiledTrainStep`) against transformers' eager step with
fused AdamW. On 2026-11-30 the compiled step ran at 0.96x transformers' tokens/s on an H200 (benchmarks/
RESULTS_GPU.json); this says which kernels and which host work make up each step, so the next change is chosen
on evidence. For each side: warm-up steps first (the compiled step compiles in its first call), then
`torch.profiler` over `--steps` steps, synchronised at the end. Written: per side, the wall seconds per profiled
step, the top operators by self device time (self CPU time without a GPU) with their calls and share, the
device's busy share of the wall time, and the total per group of kernels (matmul, attention, element-wise and
the rest, by name); `--trace-dir` also writes each side's Chrome trace.

On the lent H200 (torch and jax, no keras, no network) it runs as `make bench-gpu` does there (the wheels in
`.whl/` installed into /tmp/site, `PYTHONPATH=/tmp/site`; benchmarks/gpu.py's docstring), with `--out
$OUT/gpu_profile.json --trace-dir $OUT/traces`. Not run on a GPU yet (2026-11-30: `--quick` on the CPU, 34 s).

What chose what: nothing; random weights and token ids, fixed settings.
"""

import argparse
import json
import os
import time

from benchmarks.common import log, machine_info

# Kernel groups by name, first match wins: where a change would act (a fused matmul epilogue, the attention
# kernel, the element-wise tail that inductor fuses or not, the optimizer's update).
GROUPS = (
    ("compiled graph call (host)", ("compiledfxgraph",)),
    ("matmul", ("gemm", "matmul", "mm", "addmm", "bmm", "linear", "cutlass", "sm90_", "sm80_", "nvjet")),
    ("attention", ("flash", "attention", "sdpa", "fmha", "efficient_attention")),
    ("optimizer", ("adam", "foreach", "multi_tensor")),
    ("copy", ("copy", "memcpy", "memset", "cat", "clone", "to_copy")),
    ("element-wise and reductions", ("triton", "elementwise", "reduce", "softmax", "gelu", "dropout", "layer_norm",
                                     "native_layer_norm", "add", "mul", "div", "where")),
)


def group_of(name):
    """The kernel group of an operator or kernel name ("other" when no group names it)."""
    lowered = name.lower()
    for group, needles in GROUPS:
        if any(needle in lowered for needle in needles):
            return group
    return "other"


def summarize(events, steps, wall_seconds, on_device, top):
    """The profile of `steps` steps as a record: the `top` operators by self time, per-group totals, busy share."""
    from torch.autograd import DeviceType

    if on_device:
        # The kernels' own rows: an operator's self device time is its kernels' time again (as torch's table
        # totals it, device-side rows only).
        events = [e for e in events if e.device_type != DeviceType.CPU]
    time_of = (lambda e: e.self_device_time_total) if on_device else (lambda e: e.self_cpu_time_total)
    rows = sorted((e for e in events if time_of(e) > 0), key=time_of, reverse=True)
    total_us = sum(time_of(e) for e in rows)
    groups = {}
    for e in rows:
        group = group_of(e.key)
        groups[group] = groups.get(group, 0.0) + time_of(e)
    return {
        "steps": steps,
        "wall_ms_per_step": round(1e3 * wall_seconds / steps, 3),
        "clock": "self device time" if on_device else "self CPU time",
        "profiled_ms_per_step": round(total_us / 1e3 / steps, 3),
        "busy_share_of_wall": round(total_us / 1e6 / wall_seconds, 3),
        "groups_ms_per_step": {g: round(us / 1e3 / steps, 3) for g, us in sorted(groups.items(), key=lambda kv: -kv[1])},
        "top": [{"name": e.key, "calls_per_step": round(e.count / steps, 2), "ms_per_step": round(time_of(e) / 1e3 / steps, 3),
                 "share": round(time_of(e) / total_us, 4)} for e in rows[:top]],
    }


def profile_step(step, steps, warmup, trace_path=None, top=25):
    """Runs `step` `warmup` times, then profiles `steps` calls; returns `summarize`'s record."""
    import torch

    from benchmarks.gpu_cases import synchronize

    for _ in range(warmup):
        step()
    synchronize()
    on_device = torch.cuda.is_available()
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if on_device else [])
    with torch.profiler.profile(activities=activities) as profiler:
        began = time.perf_counter()
        for _ in range(steps):
            step()
        synchronize()
        wall = time.perf_counter() - began
    if trace_path:
        profiler.export_chrome_trace(trace_path)
    return summarize(profiler.key_averages(), steps, wall, on_device, top)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="profiled steps per side (default 20)")
    parser.add_argument("--warmup", type=int, default=5, help="steps before profiling (the first compiles)")
    parser.add_argument("--quick", action="store_true", help="tiny 4x32 on whatever device there is, 2 + 2 steps")
    parser.add_argument("--out", help="write the JSON here")
    parser.add_argument("--trace-dir", help="write each side's Chrome trace (.json) into this folder")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.warmup < 1:
        parser.error("--steps and --warmup must be at least 1 (the compiled step compiles in its first call)")

    import keras

    if keras.backend.backend() != "torch":
        parser.error(f"run with KERAS_BACKEND=torch (this is {keras.backend.backend()}): it profiles torch steps")
    from benchmarks.cases import pretraining_batch
    from benchmarks.gpu_cases import device_name, hf_train_call, keras_train_call, train_shape

    size, batch, length, predictions = train_shape(args.quick)
    steps, warmup = (2, 2) if args.quick else (args.steps, args.warmup)
    x, y, w = pretraining_batch(batch, length, predictions)
    y, w = y["mlm"], w["mlm"]
    sides = {
        "keras_bert compiled": lambda losses: keras_train_call("keras_bert", size, "bf16", 0.1, x, y, w, losses,
                                                               compiled=True),
        "hf_transformers eager": lambda losses: hf_train_call(size, "bf16", 0.1, x, y, losses),
    }
    if args.trace_dir:
        os.makedirs(args.trace_dir, exist_ok=True)
    report = {"what": f"{size} {batch}x{length} MLM bf16 dropout 0.1 training step, {steps} steps profiled after "
                      f"{warmup}", "device": device_name(), "machine": machine_info(), "sides": {}}
    for name, make in sides.items():
        log(f"profiling {name}")
        losses = []
        trace = os.path.join(args.trace_dir, name.replace(" ", "_") + ".json") if args.trace_dir else None
        report["sides"][name] = {**profile_step(make(losses), steps, warmup, trace), "last_loss": losses[-1]}
    for name, side in report["sides"].items():
        print(f"{name}: {side['wall_ms_per_step']} ms a step, {side['clock']} {side['profiled_ms_per_step']} ms "
              f"(busy {100 * side['busy_share_of_wall']:.0f}%): "
              + ", ".join(f"{g} {ms}" for g, ms in side["groups_ms_per_step"].items()))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
    return report


if __name__ == "__main__":
    main()
