"""`make bench-gpu`: keras_bert against HF transformers and keras-hub on one CUDA GPU; the GPU section of RESULTS.md.

    python -m benchmarks.gpu                    # torch and JAX processes, about 6 minutes on an H100/H200
    python -m benchmarks.gpu --quick            # tiny shapes, one round: checks the machinery (CPU too)
    python -m benchmarks.gpu --backends torch --cases train

Each Keras backend runs in its own process (KERAS_BACKEND is fixed per
process) and times the peers in the same rounds as ours: keras-hub on that
backend and HF transformers (torch eager, on the same GPU). The cases are in
`benchmarks/gpu_cases.py`. TensorFlow is not run: its CUDA build is not part of
this project's pins (the CPU wheel is), and the GPU machines this was measured
on have no TensorFlow.

On a GPU machine that has torch, jax and transformers but no keras and no
network (this project's lent H200): carry the wheels it lacks, downloaded here
into the git-ignored `.whl/` with `pip download --no-deps --only-binary=:all:
--python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64
--platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl
keras==3.15.1 namex==0.1.0 optree==0.20.0 keras-hub==0.32.0 kagglehub==1.0.2
kagglesdk==0.1.28` (keras-hub imports kagglehub, which needs kagglesdk: the
2026-11-27 run lost two cases without it), install them there with `pip
install --no-index --no-deps --target /tmp/site .whl/*.whl` and
`PYTHONPATH=/tmp/site`, and write to `--out $OUT/RESULTS_GPU.json` (with the
committed file copied there first and `--append`, to keep the other backend's
rows). The 2026-11-30 torch run took 133 s (forward at 64x128, train) plus 82 s
(`--cases compiled`) on one warm H200. Run `--quick` here first: it runs every
row on the CPU and caught a crash of the torch train case before a device call.

Writes benchmarks/RESULTS_GPU.json (records, errors, the device and the
versions of each process) and re-renders benchmarks/RESULTS.md from
RESULTS.json with the GPU section in it (`benchmarks/gpu_report.py`). A worker
writes its records after every case, so a process stopped at its time limit
keeps the cases it finished.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
import traceback

from benchmarks.common import log

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS_GPU = os.path.join(HERE, "RESULTS_GPU.json")
BACKENDS = ("jax", "torch")
CASES = ("forward", "train", "compiled")  # compiled: torch.compile, torch process only; last, as it costs most


def parse_shapes(text):
    """"64x128,16x512" -> [(64, 128), (16, 512)]; None for None."""
    if not text:
        return None
    try:
        shapes = [tuple(int(n) for n in item.split("x")) for item in text.split(",")]
    except ValueError:
        shapes = []
    if not shapes or any(len(s) != 2 or min(s) < 1 for s in shapes):
        raise ValueError(f"--forward-shapes takes BATCHxLENGTH[,BATCHxLENGTH...]; received {text!r}")
    return shapes


def run_backends(run):
    """The backend processes a saved run timed (older files name them only in their command)."""
    if "backends" in run:
        return run["backends"]
    words = run.get("command", "").split()
    return words[words.index("--backends") + 1].split(",") if "--backends" in words[:-1] else list(BACKENDS)


def run_worker(case_names, quick, output, shapes=None):
    """In a subprocess: run the cases, rewriting {"environment", "records", "errors"} to `output` after each."""
    from benchmarks.gpu_cases import CASES as CASE_FUNCTIONS
    from benchmarks.gpu_cases import environment

    result = {"environment": environment(), "records": [], "errors": []}
    for name in case_names:
        start = time.perf_counter()
        kwargs = {"shapes": shapes} if name == "forward" and shapes else {}
        try:
            result["records"].extend(CASE_FUNCTIONS[name](quick=quick, **kwargs))
        except Exception:  # one failing case must not lose the others' figures
            result["errors"].append({"case": name, "error": traceback.format_exc(limit=8)})
            log(result["errors"][-1]["error"])
        log(f"  {name}: {time.perf_counter() - start:.0f} s")
        with open(output + ".tmp", "w", encoding="utf-8") as f:
            json.dump(result, f)
        os.replace(output + ".tmp", output)


def run_job(backend, case_names, quick, timeout, output, shapes_text=None):
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2", HF_HUB_OFFLINE="1",
               PYTHONWARNINGS="ignore",
               # JAX and torch share the GPU in the JAX process: JAX must not take 75% of it up front.
               XLA_PYTHON_CLIENT_PREALLOCATE="false")
    command = [sys.executable, "-m", "benchmarks.gpu", "--worker", ",".join(case_names), "--output", output]
    if quick:
        command.append("--quick")
    if shapes_text:
        command += ["--forward-shapes", shapes_text]
    log(f"[{backend}] {', '.join(case_names)}")
    start = time.perf_counter()
    try:
        code = subprocess.run(command, cwd=ROOT, env=env, timeout=timeout, stdout=subprocess.DEVNULL).returncode
    except subprocess.TimeoutExpired:
        code = f"stopped at its {timeout} s limit"
    seconds = round(time.perf_counter() - start)
    try:
        with open(output, encoding="utf-8") as f:
            result = json.load(f)
    except (OSError, ValueError):
        result = {"environment": {}, "records": [], "errors": []}
    if code != 0:
        result["errors"].append({"case": ",".join(case_names), "error": f"worker exit {code}"})
    for item in result["records"] + result["errors"]:
        item["job"] = backend
    log(f"[{backend}] {seconds} s, {len(result['records'])} records, {len(result['errors'])} errors")
    return result, seconds


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes, one round")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--timeout", type=int, default=600, help="seconds per backend process")
    parser.add_argument("--out", default=None, help="JSON path (default benchmarks/RESULTS_GPU.json; "
                                                    "benchmarks/.cache/RESULTS_GPU-quick.json with --quick)")
    parser.add_argument("--no-render", action="store_true", help="do not re-render benchmarks/RESULTS.md")
    parser.add_argument("--forward-shapes", default=None, help="BATCHxLENGTH,... of the forward case at base "
                                                               "(default 64x128,16x512)")
    parser.add_argument("--append", action="store_true",
                        help="keep the other backends' results already in the JSON (run one backend at a time)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        shapes = parse_shapes(args.forward_shapes)
    except ValueError as error:
        parser.error(str(error))
    if args.worker:
        return run_worker(args.worker.split(","), args.quick, args.output, shapes)

    unknown = set(args.backends.split(",")) - set(BACKENDS) or set(args.cases.split(",")) - set(CASES)
    if unknown:
        parser.error(f"unknown backend or case {sorted(unknown)}; backends: {BACKENDS}, cases: {CASES}")
    out = args.out or (os.path.join(HERE, ".cache", "RESULTS_GPU-quick.json") if args.quick else RESULTS_GPU)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    wall = time.perf_counter()
    saved = {"run": {}, "environments": {}, "records": [], "errors": []}
    backends = args.backends.split(",")
    if args.append and os.path.exists(out):
        with open(out, encoding="utf-8") as f:
            kept = json.load(f)
        saved["environments"] = {b: e for b, e in kept["environments"].items() if b not in backends}
        saved["records"] = [r for r in kept["records"] if r["job"] not in backends]
        saved["errors"] = [e for e in kept["errors"] if e["job"] not in backends]
        # The header lists the runs whose rows are in the file: a run all of whose processes are rerun now goes.
        saved["earlier_runs"] = [r for r in kept.get("earlier_runs", []) + [kept["run"]]
                                 if not set(run_backends(r)) <= set(backends)]
    for backend in backends:
        result, seconds = run_job(backend, args.cases.split(","), args.quick, args.timeout, out + f".{backend}.part",
                                  args.forward_shapes)
        saved["environments"][backend] = dict(result["environment"], seconds=seconds,
                                              date=started.strftime("%Y-%m-%d %H:%M UTC"))
        saved["records"].extend(result["records"])
        saved["errors"].extend(result["errors"])
        saved["run"] = {"date": started.strftime("%Y-%m-%d %H:%M UTC"), "quick": args.quick, "backends": backends,
                        "wall_seconds": round(time.perf_counter() - wall),
                        "command": " ".join(["python -m benchmarks.gpu"] + (argv if argv is not None else sys.argv[1:]))}
        with open(out, "w", encoding="utf-8") as f:  # after each process: a later failure keeps this one's
            json.dump(saved, f, indent=1)
        if os.path.exists(out + f".{backend}.part"):
            os.remove(out + f".{backend}.part")
    log(f"wrote {out} ({saved['run']['wall_seconds']} s, {len(saved['records'])} records, "
        f"{len(saved['errors'])} errors)")
    if not args.quick and not args.no_render and os.path.exists(os.path.join(HERE, "RESULTS.json")):
        from benchmarks.report import rerender

        rerender()
        log("re-rendered benchmarks/RESULTS.md with the GPU section")
    return 1 if saved["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
