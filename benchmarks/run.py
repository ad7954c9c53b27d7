"""`make bench`: keras_bert against HF transformers and keras-hub in one run; writes benchmarks/RESULTS.md.

    .venv/bin/python -m benchmarks.run            # the full run (about 21 min on a 2-core CPU)
    .venv/bin/python -m benchmarks.run --quick    # tiny shapes, one repeat: checks the machinery
    .venv/bin/python -m benchmarks.run --backends jax --cases forward

Each backend runs in its own subprocess (KERAS_BACKEND is fixed per process),
and times the peers in the same process, round by round with ours: keras-hub
on that backend, Hugging Face transformers (torch eager) and fp32 matmuls of
numpy, torch and XLA (the fastest is the MFU denominator). The text cases (tokenizers, data generation) run
in one more subprocess. Each subprocess writes its records as JSON; this
orchestrator gathers them, computes MFU and the ratios to the peers of the
same process, and writes the markdown.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

from benchmarks.common import loadavg, log, machine_info, versions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "benchmarks")
BACKENDS = ("tensorflow", "jax", "torch")
KERAS_CASES = ("forward", "train", "end_to_end")

# (label, KERAS_BACKEND for the process, cases). Each Keras backend's process also times the peers
# (keras-hub on that backend, HF transformers on torch) and a numpy matmul in the same rounds as ours
# (`common.time_interleaved`), so every ratio and every MFU compares figures taken minutes apart at
# most, under the same load, in one process.
def plan(backends, cases):
    jobs = [("text", "tensorflow", [c for c in ("tokenizer", "data_generation") if c in cases])]
    for backend in backends:
        jobs.append((backend, backend, [c for c in KERAS_CASES if c in cases]))
    return [job for job in jobs if job[2]]


def run_worker(case_names, quick, output):
    """In a subprocess: run the cases, write {"records": [...], "errors": [...]} to `output`."""
    from benchmarks.cases import CASES

    records, errors = [], []
    for name in case_names:
        start = time.perf_counter()
        try:
            records.extend(CASES[name](quick=quick))
        except Exception:  # one failing case must not lose the others' figures
            errors.append({"case": name, "error": traceback.format_exc(limit=8)})
            log(errors[-1]["error"])
        log(f"  {name}: {time.perf_counter() - start:.0f} s")
    with open(output, "w", encoding="utf-8") as f:
        json.dump({"records": records, "errors": errors}, f)


def run_job(label, backend, case_names, quick, timeout):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        output = f.name
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2", HF_HUB_OFFLINE="1",
               TOKENIZERS_PARALLELISM="true", PYTHONWARNINGS="ignore")
    command = [sys.executable, "-m", "benchmarks.run", "--worker", ",".join(case_names), "--output", output]
    if quick:
        command.append("--quick")
    log(f"[{label}] KERAS_BACKEND={backend}: {', '.join(case_names)}")
    start = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, timeout=timeout, stdout=subprocess.DEVNULL)
        code = done.returncode
    except subprocess.TimeoutExpired:
        code = "timeout"
    seconds = time.perf_counter() - start
    try:
        with open(output, encoding="utf-8") as f:
            result = json.load(f)
    except (OSError, ValueError):
        result = {"records": [], "errors": [{"case": ",".join(case_names), "error": f"worker exit {code}, no output"}]}
    finally:
        if os.path.exists(output):
            os.remove(output)
    for item in result["records"] + result["errors"]:
        item["job"] = label
    log(f"[{label}] {seconds:.0f} s, {len(result['records'])} records, {len(result['errors'])} errors")
    return result, seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes, one repeat")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--cases", default="forward,train,end_to_end,tokenizer,data_generation")
    parser.add_argument("--out", default=None, help="markdown path (default benchmarks/RESULTS.md; "
                                                     "benchmarks/.cache/RESULTS-quick.md with --quick)")
    parser.add_argument("--timeout", type=int, default=900, help="seconds per subprocess")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        return run_worker(args.worker.split(","), args.quick, args.output)

    from benchmarks.report import write_report

    out = args.out or os.path.join(HERE, ".cache" if args.quick else "", "RESULTS-quick.md" if args.quick else "RESULTS.md")
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = loadavg()
    records, errors, job_seconds = [], [], {}
    wall = time.perf_counter()
    for label, backend, case_names in plan(args.backends.split(","), args.cases.split(",")):
        result, seconds = run_job(label, backend, case_names, args.quick, args.timeout)
        records.extend(result["records"])
        errors.extend(result["errors"])
        job_seconds[label] = round(seconds)
    run = {
        "date": started.strftime("%Y-%m-%d %H:%M UTC"),
        "quick": args.quick,
        "wall_seconds": round(time.perf_counter() - wall),
        "job_seconds": job_seconds,
        "loadavg_start": load_start,
        "loadavg_end": loadavg(),
        "machine": machine_info(),
        "versions": versions(),
        "command": " ".join(["python -m benchmarks.run"] + (argv if argv is not None else sys.argv[1:])),
    }
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(os.path.splitext(out)[0] + ".json", "w", encoding="utf-8") as f:
        json.dump({"run": run, "records": records, "errors": errors}, f, indent=1)
    write_report(out, run, records, errors)
    log(f"wrote {out} ({run['wall_seconds']} s, {len(records)} records, {len(errors)} errors)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
