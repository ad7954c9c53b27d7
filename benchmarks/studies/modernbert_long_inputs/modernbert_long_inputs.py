"""ModernBERT at long inputs: ours on each Keras backend against transformers' ModernBertModel, same process and rounds.

Issue 47, item 5. A ModernBERT-base-shaped model with random weights
(transformers' `ModernBertConfig()` defaults: hidden 768, 22 layers, 12 heads,
gated feed-forward 1152, local window 128, global attention every 3rd layer)
reads one sequence (batch 1) of 512, 2,048 and 8,192 tokens, forward pass only.
The weights are written once as a transformers folder (`save_pretrained`) and
both sides load that folder, so they compute the same function: ours with
`ModernBertBackbone.from_pretrained`, transformers with
`ModernBertModel.from_pretrained(..., attn_implementation="sdpa")` in float32
and in bfloat16 (the weights cast). Today's answer to a long document is the
cost baseline: BERT-base (also one transformers folder, both sides) reading
the same number of tokens in 512-token windows side by side (`window_stride=0`
in the package's windowing: `[CLS]` + 510 tokens + `[SEP]` per window, the
last window padded, all windows one batch).

Speed: one child process per Keras backend; each times ours (`predict_on_batch`,
float32, and bfloat16 where the backend has bfloat16 kernels on a CPU: not
JAX) and transformers (torch eager, `torch.inference_mode()`) in the same
alternating rounds (`benchmarks.common.time_interleaved`): a warm-up call of
each (tracing, compilation; its outputs give the agreement check), then
`--rounds` timed rounds (default 5, 3 and 2 at 512, 2,048 and 8,192 tokens),
median reported. BERT's windows are timed in the rounds of the longest length.
Every ratio compares figures of one process.

Peak memory: resident memory (RSS), the one measure that counts every
allocator alike (XLA's, TensorFlow's, torch's, numpy's; tracemalloc sees
Python's only, torch's profiler torch's only). One fresh child process per
implementation and precision holds only that model: after loading it and
building the inputs, the process's RSS high-water mark is reset
(`/proc/self/clear_refs` 5) before each forward and read (`VmHWM`) after it,
so loading transients do not count and each figure is the process's peak
during that call: framework, weights, activations and workspace. Two calls per
length, ascending lengths: the first (with tracing/compilation on TensorFlow
and JAX) and a later one.

    .venv/bin/python -m benchmarks.studies.modernbert_long_inputs.modernbert_long_inputs \\
        --report benchmarks/studies/modernbert_long_inputs/modernbert_long_inputs_results.json   # 90 min, shared 2 cores
    ... --lengths 512,2048 --rounds 3 --backends jax,torch --no-memory   # a part of it
    ... --quick                  # tiny shape, lengths 32 and 64, one round: the machinery (3 min: 18 processes)
    ... --quick --in-process     # the same in this process, on its backend (the smoke test: seconds)

The tables: `tables.py` (`python -m benchmarks.studies.modernbert_long_inputs.tables RESULTS.json` reprints
them). Where the time goes, block by block: `layer_costs.py`.
"""

import argparse
import datetime
import gc
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

from benchmarks.common import (
    encoder_flops_per_token,
    loadavg,
    log,
    machine_info,
    record,
    time_interleaved,
    versions,
)

MODULE = "benchmarks.studies.modernbert_long_inputs.modernbert_long_inputs"
BACKENDS = ("tensorflow", "jax", "torch")
LENGTHS, ROUNDS = (512, 2048, 8192), (5, 3, 2)
QUICK_LENGTHS, QUICK_ROUNDS = (32, 64), (1, 1)
# Our precisions per backend: no bfloat16 on JAX, whose CPU compiler has no bfloat16 matmul kernel (our bf16
# forward ran at 0.90x our fp32 there in `make bench`, and the package warns when asked for it).
OUR_DTYPES = {"tensorflow": ("fp32", "bf16"), "jax": ("fp32",), "torch": ("fp32", "bf16")}
HF_DTYPES = ("fp32", "bf16")


# --- the two models, as transformers folders --------------------------------------------------------


def configs(quick):
    """(ModernBertConfig, BertConfig, BERT window length): ModernBERT-base's and BERT-base's shapes, or tiny ones."""
    import transformers  # the folders are written by a process that has torch and transformers

    if not quick:
        return transformers.ModernBertConfig(), transformers.BertConfig(), 512
    modern = transformers.ModernBertConfig(
        vocab_size=1000, hidden_size=64, num_hidden_layers=3, num_attention_heads=2, intermediate_size=96,
        local_attention=16, pad_token_id=0, bos_token_id=1, eos_token_id=2, cls_token_id=1, sep_token_id=2)
    bert = transformers.BertConfig(vocab_size=1000, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                                   intermediate_size=128, max_position_embeddings=16)
    return modern, bert, 16


def prepare(folder, quick):
    """Writes `folder/modernbert` and `folder/bert` (random weights, torch seed 0 and 1) with `save_pretrained`."""
    import torch  # as above
    import transformers

    modern, bert, _ = configs(quick)
    torch.manual_seed(0)
    transformers.ModernBertModel(modern).save_pretrained(os.path.join(folder, "modernbert"))
    torch.manual_seed(1)
    transformers.BertModel(bert).save_pretrained(os.path.join(folder, "bert"))


def _config_json(folder, model):
    with open(os.path.join(folder, model, "config.json"), encoding="utf-8") as f:
        return json.load(f)


def modernbert_inputs(config, length, seed=0):
    """One sequence: `[CLS]`, `length - 2` random tokens, `[SEP]`; no padding."""
    ids = np.random.default_rng(seed).integers(10, config["vocab_size"] - 100, (1, length)).astype("int32")
    ids[0, 0], ids[0, -1] = config["cls_token_id"], config["sep_token_id"]
    return {"token_ids": ids, "padding_mask": np.ones_like(ids)}


def windows(text_tokens, window):
    """(start, length) of the windows over `text_tokens` side by side, as the package's `window_stride=0` cuts them
    (`keras_bert.postprocessing.text_windows.single_text_table`: `window - 2` tokens each)."""
    room = window - 2
    count = 1 + math.ceil(max(text_tokens - room, 0) / room)
    return [(k * room, min(room, text_tokens - k * room)) for k in range(count)]


def window_inputs(config, length, window, seed=1):
    """BERT's batch over the text of a `length`-token ModernBERT input (`length - 2` tokens): one row per window,
    `[CLS]` (101) and `[SEP]` (102) around each."""
    spans = windows(length - 2, window)
    text = np.random.default_rng(seed).integers(200, config["vocab_size"] - 100, length - 2)
    ids, mask = np.zeros((len(spans), window), "int32"), np.zeros((len(spans), window), "int32")
    for row, (start, size) in enumerate(spans):
        ids[row, : size + 2] = [101] + list(text[start : start + size]) + [102]
        mask[row, : size + 2] = 1
    return {"token_ids": ids, "segment_ids": np.zeros_like(ids), "padding_mask": mask}


def modernbert_flops_per_token(config, length):
    """Matmul FLOPs per token the model needs (local layers: the 129 keys of each window, not all `length`)."""
    h, i, n = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    num_global = config["layer_types"].count("full_attention")
    local_keys = min(length, 2 * (config["local_attention"] // 2) + 1)
    dense = 2 * (4 * h * h + 3 * h * i)  # fused QKV + output, and the gated feed-forward (h -> 2i, i -> h)
    return n * dense + num_global * 4 * length * h + (n - num_global) * 4 * local_keys * h


# --- the implementations --------------------------------------------------------------------------


def load(folder, model, impl, dtype):
    """A callable running one forward of `model` ("modernbert" / "bert") by `impl` in `dtype`; returns float32 numpy."""
    if impl == "keras_bert":
        import keras_bert  # in the Keras child processes only

        cls = keras_bert.ModernBertBackbone if model == "modernbert" else keras_bert.BertBackbone
        ours = cls.from_pretrained(os.path.join(folder, model), dtype="float32" if dtype == "fp32" else "bfloat16")

        def call(x):
            return np.asarray(ours.predict_on_batch(x)["sequence_output"], "float32")

        return call
    import torch  # transformers runs on torch in every process
    import transformers

    cls = transformers.ModernBertModel if model == "modernbert" else transformers.BertModel
    hf = cls.from_pretrained(os.path.join(folder, model), attn_implementation="sdpa",
                             dtype=torch.float32 if dtype == "fp32" else torch.bfloat16).eval()

    def call_hf(x):
        feed = {"input_ids": torch.from_numpy(x["token_ids"]), "attention_mask": torch.from_numpy(x["padding_mask"])}
        if model == "bert":
            feed["token_type_ids"] = torch.from_numpy(x["segment_ids"])
        with torch.inference_mode():
            return hf(**feed).last_hidden_state.float().numpy()

    return call_hf


def _agreement(out, ref, mask):
    """(relative error, max |difference|) of `out` against `ref` over the real tokens."""
    keep = mask.astype(bool)
    out, ref = np.asarray(out, "float64")[keep], np.asarray(ref, "float64")[keep]
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref)), float(np.abs(out - ref).max())


def time_backend(folder, backend, lengths, rounds, quick):
    """In a child process with KERAS_BACKEND=`backend`: the speed records of every length, and of the BERT windows
    at the longest length (timed in that length's rounds)."""
    modern_config, bert_config = _config_json(folder, "modernbert"), _config_json(folder, "bert")
    window = configs(quick)[2]
    impls = [("keras_bert", d) for d in OUR_DTYPES[backend]] + [("hf_transformers", d) for d in HF_DTYPES]
    calls = {(m, impl, d): load(folder, m, impl, d) for m in ("modernbert", "bert") for impl, d in impls}
    records = []
    for length, repeats in zip(lengths, rounds):
        inputs = {"modernbert": modernbert_inputs(modern_config, length)}
        if length == max(lengths):
            inputs["bert"] = window_inputs(bert_config, length, window)
        fns = {key: (lambda call=call, x=inputs[key[0]]: call(x)) for key, call in calls.items() if key[0] in inputs}
        log(f"[{backend}] {length} tokens: warm-up ...")
        warm = {}
        for key, fn in fns.items():  # the warm-up calls (tracing, compilation); their outputs are compared
            start = time.perf_counter()
            warm[key] = (fn(), time.perf_counter() - start)
        log(f"[{backend}] {length} tokens: {repeats} rounds of {len(fns)} ...")
        times = time_interleaved(fns, warmup=0, repeats=repeats)
        for (model, impl, dtype), seconds in times.items():
            x = inputs[model]
            error, diff = _agreement(warm[(model, impl, dtype)][0], warm[(model, "hf_transformers", "fp32")][0],
                                     x["padding_mask"])
            if model == "modernbert":
                config, flops = f"modernbert {length} {dtype}", modernbert_flops_per_token(modern_config, length)
            else:
                rows = len(x["token_ids"])
                config = f"bert {rows}x{window} windows {dtype}"
                flops = encoder_flops_per_token(bert_config["num_hidden_layers"], bert_config["hidden_size"],
                                                bert_config["intermediate_size"], window) * rows * window / length
            records.append(record(
                "long_inputs", impl, backend if impl == "keras_bert" else "torch", config, "tokens/s", length,
                seconds, flops, model=model, length=length, dtype=dtype,
                warmup_seconds=warm[(model, impl, dtype)][1], relative_error_vs_hf_fp32=error,
                max_abs_diff_vs_hf_fp32=diff, windows=len(x["token_ids"]) if model == "bert" else None))
            records[-1]["job"] = backend
    return records


# --- peak memory -----------------------------------------------------------------------------------


def _status_kb(field):
    with open("/proc/self/status", encoding="utf-8") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))


def _reset_peak():
    """Resets this process's RSS high-water mark to its current RSS (Linux 4.0+); False where that is refused."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="utf-8") as f:
            f.write("5")
        return True
    except OSError:
        return False


def measure_memory(folder, model, impl, backend, dtype, lengths, quick, calls=2):
    """Peak RSS (MiB) of this process during each forward, the model loaded and nothing else (see the docstring)."""
    window = configs(quick)[2]
    call = load(folder, model, impl, dtype)
    if model == "modernbert":
        config = _config_json(folder, "modernbert")
        inputs = [(n, modernbert_inputs(config, n)) for n in sorted(lengths)]
    else:
        inputs = [(max(lengths), window_inputs(_config_json(folder, "bert"), max(lengths), window))]
    rows = []
    for length, x in inputs:
        for k in range(calls):
            gc.collect()
            # The high-water mark is reset first, then the RSS read: the mark starts at the RSS of that moment.
            reset = _reset_peak()
            before = _status_kb("VmRSS")
            start = time.perf_counter()
            call(x)
            seconds = time.perf_counter() - start
            # The call's peak is at least the RSS it started from. The kernel's counters do not promise that on
            # their own: since Linux 6.2 VmRSS and VmHWM are read from per-CPU counters that are summed lazily, and
            # the mark is only raised at unmap time, so memory freed by the call can leave VmHWM a few pages below
            # the `before` read an instant earlier (CI, 2026-11-29: both printed as 2,326 MiB, yet peak < before).
            peak = max(_status_kb("VmHWM"), before)
            rows.append({"model": model, "impl": impl, "backend": backend, "dtype": dtype, "length": length,
                         "call": k + 1, "rss_before_mib": before / 1024, "peak_rss_mib": peak / 1024,
                         "peak_is_call_peak": reset, "seconds": seconds})
            log(f"  memory {model} {impl} {backend} {dtype} {length} call {k + 1}: "
                f"{rows[-1]['peak_rss_mib']:,.0f} MiB (before {rows[-1]['rss_before_mib']:,.0f}), {seconds:.1f} s")
    return rows


def memory_cells(backends):
    """(model, impl, backend, dtype) of every memory process: transformers once per precision, ours per backend."""
    cells = []
    for model in ("modernbert", "bert"):
        cells += [(model, "hf_transformers", "torch", d) for d in HF_DTYPES]
        cells += [(model, "keras_bert", b, d) for b in backends for d in OUR_DTYPES[b]]
    return cells


# --- orchestration ---------------------------------------------------------------------------------


def _child(args, worker, backend, extra, timeout):
    """Runs `--worker` in a fresh process with KERAS_BACKEND=`backend`; returns its JSON output (or an error)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        output = f.name
    command = [sys.executable, "-m", MODULE, "--worker", worker, "--output", output, "--folder", args.folder,
               "--lengths", args.lengths, "--rounds", args.rounds, *extra] + (["--quick"] if args.quick else [])
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2", HF_HUB_OFFLINE="1",
               PYTHONWARNINGS="ignore")
    start, load_start = time.perf_counter(), loadavg()
    try:
        code = subprocess.run(command, env=env, timeout=timeout, stdout=subprocess.DEVNULL, check=False).returncode
    except subprocess.TimeoutExpired:
        code = "timeout"
    try:
        with open(output, encoding="utf-8") as f:
            result = json.load(f)
    except (OSError, ValueError):
        result = {"error": f"{worker} {backend} {' '.join(extra)}: exit {code}, no output"}
    finally:
        if os.path.exists(output):
            os.remove(output)
    result["seconds"], result["loadavg"] = round(time.perf_counter() - start), [load_start, loadavg()]
    return result


def run_worker(args):
    lengths, rounds = _lengths_and_rounds(args)
    try:
        if args.worker == "prepare":
            prepare(args.folder, args.quick)
            out = {}
        elif args.worker == "time":
            out = {"records": time_backend(args.folder, os.environ["KERAS_BACKEND"], lengths, rounds, args.quick)}
        else:
            model, impl, backend, dtype = args.cell.split(":")
            out = {"memory": measure_memory(args.folder, model, impl, backend, dtype, lengths, args.quick)}
    except Exception:  # noqa: BLE001 (the orchestrator reports it and goes on with the other children)
        out = {"error": traceback.format_exc(limit=8)}
        log(out["error"])
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(out, f)


def _lengths_and_rounds(args):
    lengths = [int(n) for n in args.lengths.split(",")]
    rounds = [int(r) for r in args.rounds.split(",")]
    if len(rounds) == 1:
        rounds = rounds * len(lengths)
    if len(rounds) != len(lengths) or min(rounds) < 1 or min(lengths) < 3:
        raise SystemExit(f"--rounds needs one count >= 1 or one per length; --lengths >= 3. Received: "
                         f"--lengths {args.lengths} --rounds {args.rounds}")
    return lengths, rounds


def run_all(args):
    """Prepares the folders, then the speed child of each backend, then the memory children, one at a time."""
    backends = args.backends.split(",")
    results = {"records": [], "memory": [], "errors": [], "job_seconds": {}, "job_loadavg": {}}

    def gather(label, result):
        results["job_seconds"][label] = result.get("seconds")
        results["job_loadavg"][label] = result.get("loadavg")  # 1/5/15-minute load at the start and the end
        results["records"] += result.get("records", [])
        results["memory"] += result.get("memory", [])
        if "error" in result:
            results["errors"].append({"job": label, "error": result["error"]})
        log(f"[{label}] {result.get('seconds')} s" + (" ERROR" if "error" in result else ""))

    if args.in_process:  # the smoke test: this process's backend, its memory figures share one process
        import keras  # the backend of this process

        lengths, rounds = _lengths_and_rounds(args)
        backend = keras.backend.backend()
        prepare(args.folder, args.quick)
        results["records"] = time_backend(args.folder, backend, lengths, rounds, args.quick)
        for model, impl, cell_backend, dtype in memory_cells([backend]):
            results["memory"] += measure_memory(args.folder, model, impl, cell_backend, dtype, lengths, args.quick)
        return results
    gather("prepare", _child(args, "prepare", "torch", [], args.timeout))
    for backend in backends:
        gather(f"time {backend}", _child(args, "time", backend, [], args.timeout))
    if not args.no_memory:
        for cell in memory_cells(backends):
            label = "memory " + ":".join(cell)
            gather(label, _child(args, "memory", cell[2], ["--cell", ":".join(cell)], args.timeout))
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default=None, help="tokens per sequence, comma-separated (default 512,2048,8192)")
    parser.add_argument("--rounds", default=None,
                        help="timed rounds after the warm-up: one count, or one per length (default 5,3,2)")
    parser.add_argument("--backends", default=",".join(BACKENDS), help="Keras backends, one child process each")
    parser.add_argument("--quick", action="store_true", help="tiny shape, lengths 32,64, one round: the machinery")
    parser.add_argument("--report", help="write the JSON results (command, date, machine, records, memory) here")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory child processes")
    parser.add_argument("--folder", help="where the transformers folders are written (default: a temporary folder)")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds per child process")
    parser.add_argument("--in-process", action="store_true",
                        help="everything in this process, on its backend (tests: memory figures not comparable)")
    parser.add_argument("--worker", choices=("prepare", "time", "memory"), help=argparse.SUPPRESS)
    parser.add_argument("--cell", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.lengths = args.lengths or ",".join(map(str, QUICK_LENGTHS if args.quick else LENGTHS))
    args.rounds = args.rounds or ",".join(map(str, QUICK_ROUNDS if args.quick else ROUNDS))
    if args.worker:
        return run_worker(args)
    _lengths_and_rounds(args)
    temporary = None if args.folder else tempfile.TemporaryDirectory(prefix="keras-bert-modernbert-")
    args.folder = args.folder or temporary.name
    started, load_start, wall = datetime.datetime.now(datetime.timezone.utc), loadavg(), time.perf_counter()
    try:
        results = run_all(args)
    finally:
        if temporary is not None:
            temporary.cleanup()
    results["run"] = {
        "command": " ".join(["python -m", MODULE] + (argv if argv is not None else sys.argv[1:])),
        "date": started.strftime("%Y-%m-%d %H:%M UTC"), "quick": args.quick, "in_process": args.in_process,
        "lengths": args.lengths, "rounds": args.rounds, "backends": args.backends,
        "wall_seconds": round(time.perf_counter() - wall), "loadavg_start": load_start, "loadavg_end": loadavg(),
        "machine": {**machine_info(), "cpu_flags": _cpu_flags()}, "versions": versions(),
    }
    from benchmarks.studies.modernbert_long_inputs.tables import (  # tables only after the run
        goals,
        markdown,
    )

    results["goals"] = goals(results)
    if args.report:
        with open(args.report, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    print(markdown(results), flush=True)
    return 1 if results["errors"] else 0


def _cpu_flags():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return []


if __name__ == "__main__":
    sys.exit(main())
