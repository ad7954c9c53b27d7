"""Runs the whole suite: pytest once per Keras backend, then the notebooks (`make test`).

    .venv/bin/python tests/run_suite.py [--backends "tensorflow jax torch"] [--jobs 2]
                                        [--no-notebooks] [--logs DIR] [-- PYTEST_ARGS ...]

Why two at a time: a pytest pass over tiny models is mostly single-threaded
Python (tracing, small ops, child processes starting), about one core on
average, so one pass at a time leaves half of a 2-core machine idle. The
passes are independent processes (each its own backend, its own `--basetemp`;
ports and scratch folders are picked fresh), so they run side by side, the
longest first, and the notebooks take the next free slot. Side by side, each
process gets one OpenMP thread (see `launch`).

Each pass writes its output to a log file; when it ends, its closing line
(or, if it failed, its whole log) is printed. Every pass runs to the end; the
exit status is 1 if any of them failed, 2 on bad arguments.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
# Longest pass first. Side by side on the 2-core machine (2026-12-01, every cache cold): TensorFlow 20-23 min,
# JAX 12-14, torch 12-14, notebooks 4-5; in this order TensorFlow and then the notebooks fill one slot, JAX and
# then torch the other, and the two finish close together.
BACKENDS = ("tensorflow", "jax", "torch")


def parse_args(argv):
    pytest_args = []
    if "--" in argv:
        cut = argv.index("--")
        argv, pytest_args = argv[:cut], argv[cut + 1:]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default=" ".join(BACKENDS),
                        help="space-separated Keras backends to run the suite on (default: all three)")
    parser.add_argument("--jobs", type=int, default=2, help="passes that run at the same time (default 2)")
    parser.add_argument("--no-notebooks", action="store_true", help="skip executing the notebooks")
    parser.add_argument("--logs", metavar="DIR",
                        help="write each pass's log to DIR and keep it (default: a scratch folder, removed "
                             "when every pass passes); e.g. with `-- --durations=0` to see where the time goes")
    args = parser.parse_args(argv)
    args.backends = args.backends.split()
    unknown = [b for b in args.backends if b not in BACKENDS]
    if unknown or not args.backends:
        parser.error(f"--backends takes some of {' '.join(BACKENDS)}; got {args.backends or 'nothing'}")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    args.pytest_args = pytest_args
    return args


def passes(args, scratch):
    """(name, command, extra environment) for each pass, longest first."""
    found = []
    for backend in sorted(args.backends, key=BACKENDS.index):
        basetemp = os.path.join(scratch, f"tmp-{backend}")
        command = [sys.executable, "-m", "pytest", "tests", "-q", "-p", "no:cacheprovider",
                   f"--basetemp={basetemp}", *args.pytest_args]
        found.append((f"KERAS_BACKEND={backend}", command, {"KERAS_BACKEND": backend}))
    if not args.no_notebooks:
        found.append(("notebooks", [sys.executable, os.path.join(REPO, "notebooks", "run_notebooks.py")], {}))
    return found


def closing_line(log_path):
    """pytest's (or the notebook runner's) last non-empty line."""
    with open(log_path, encoding="utf-8", errors="replace") as f:
        lines = [line.rstrip() for line in f if line.strip()]
    return lines[-1] if lines else "(no output)"


def run_passes(queue, jobs, log_folder):
    """Runs (name, command, extra env) passes, `jobs` at a time, in order, each writing its log into
    `log_folder`; returns the names that failed."""
    queue = list(queue)
    running = {}  # Popen -> (name, log path, log file, start time)
    failed = []

    def launch(name, command, extra_env):
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": os.environ.get("TF_CPP_MIN_LOG_LEVEL", "2"), **extra_env}
        if jobs > 1:
            # PyTorch's OpenMP threads spin while they wait: two processes with two threads each on
            # two cores starve each other. Measured: tests/models/test_task_learning.py on torch, two copies
            # at once, 264 s with the default threads, 68 s with one each (one copy alone: ~69 s).
            # TensorFlow and JAX (Eigen pools) showed no such loss (144 vs 139 s, 125 vs 132 s).
            env.setdefault("OMP_NUM_THREADS", "1")
        log_path = os.path.join(log_folder, name.replace("=", "-") + ".log")
        log = open(log_path, "w", encoding="utf-8")
        process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        running[process] = (name, log_path, log, time.monotonic())
        print(f"=== {name}: started ({len(running)} running, log {log_path})", flush=True)

    try:
        while queue or running:
            while queue and len(running) < jobs:
                launch(*queue.pop(0))
            time.sleep(0.2)
            for process in [p for p in running if p.poll() is not None]:
                name, log_path, log, began = running.pop(process)
                log.close()
                took = time.monotonic() - began
                if process.returncode == 0:
                    print(f"=== {name}: passed in {took / 60:.1f} min: {closing_line(log_path)}", flush=True)
                    continue
                failed.append(name)
                print(f"=== {name}: FAILED (exit {process.returncode}) in {took / 60:.1f} min; its output:", flush=True)
                with open(log_path, encoding="utf-8", errors="replace") as f:
                    sys.stdout.write(f.read())
                print(f"=== end of {name}'s output (kept in {log_path})", flush=True)
    finally:
        # Ctrl-C (or any error here) must not leave passes running in the background.
        for process in running:
            process.send_signal(signal.SIGINT)
        for process in running:
            process.wait()
            running[process][2].close()
    return failed


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    scratch = tempfile.mkdtemp(prefix="keras-bert-suite-")
    logs = scratch
    if args.logs:
        os.makedirs(args.logs, exist_ok=True)
        logs = args.logs
    start = time.monotonic()
    try:
        failed = run_passes(passes(args, scratch), args.jobs, logs)
    except KeyboardInterrupt:
        print(f"\ninterrupted; logs in {logs}", file=sys.stderr)
        return 130
    total = (time.monotonic() - start) / 60
    if failed:
        print(f"FAILED: {', '.join(failed)} (whole suite {total:.1f} min; logs in {logs})")
        return 1
    print(f"all passes passed in {total:.1f} min")
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
