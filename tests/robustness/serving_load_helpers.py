"""Shared pieces of the serving-under-load tests: the run size, threads that record every answer, RSS.

Size: `KERAS_BERT_LOAD_TEST_SIZE=full` runs the issue's figures (8 threads x
10,000 requests per served model, 100,000 texts through the pipeline); any
other value, or none, runs the CI size (8 x 500, 5,000 texts).
"""

import os
import threading
import time

import numpy as np
import psutil

SIZES = {
    "ci": {"threads": 8, "requests_per_thread": 500, "mixed_requests_per_thread": 100, "pipeline_texts": 5_000},
    "full": {"threads": 8, "requests_per_thread": 10_000, "mixed_requests_per_thread": 1_000, "pipeline_texts": 100_000},
}
# RSS may grow this much (a fraction) between the end of the warm-up and the end of the run. A leak
# of 1 KB per request grows a ~1.2 GB test process by 80 MB (6.7%) over the full run's 80,000 requests.
MAX_RSS_GROWTH = 0.05

# Short texts from the fixtures' vocabulary (and a few words outside it): never near the
# exported sequence length, so nothing here depends on how long texts are cut or windowed.
WORDS = ("the film was good and the plot was boring but anna smith met ivan in paris yesterday "
         "a gorgeous witty movie new york rocks délightful café in oslo tedious and flat").split()


def load_size():
    """`(name, sizes)`: "full" when KERAS_BERT_LOAD_TEST_SIZE=full, else "ci"."""
    name = "full" if os.environ.get("KERAS_BERT_LOAD_TEST_SIZE", "").strip().lower() == "full" else "ci"
    return name, SIZES[name]


def short_texts(count, seed=0):
    """`count` distinct-ish texts of 2 to 12 words, reproducible."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(2, 13)))) for _ in range(count)]


def rss_bytes():
    return psutil.Process().memory_info().rss


def run_in_threads(call, plan, threads, judge):
    """Runs `call(k)` for every request index `k` of `plan[t]` in thread `t`, all threads started together.

    Each outcome is judged where it happens and only the verdict is kept: holding 80,000 answers
    until the end would itself grow the process by ~100 MB and hide what serving does to memory.

    Args:
        judge: `judge(k, status, value)` with status "ok" (value: the answer) or "error" (value:
            the exception) returns `(problem or None, difference from the expected answer)`.

    Returns:
        `(problems, worst_difference, seconds)`: `problems` lists `(k, problem)` for every request
        judged wrong; `seconds` is the wall time from the common start to the last thread's end.
    """
    verdicts = [[None] * len(requests) for requests in plan]
    start = threading.Barrier(threads + 1)

    def worker(t):
        start.wait()
        for j, k in enumerate(plan[t]):
            try:
                outcome = ("ok", call(k))
            except Exception as error:  # noqa: BLE001  (every failure is recorded and judged)
                outcome = ("error", error)
            verdicts[t][j] = judge(k, *outcome)

    pool = [threading.Thread(target=worker, args=(t,), name=f"load-{t}") for t in range(threads)]
    for thread in pool:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in pool:
        thread.join()
    seconds = time.perf_counter() - began
    problems = [(plan[t][j], problem) for t, row in enumerate(verdicts) for j, (problem, _) in enumerate(row) if problem]
    worst = max(difference for row in verdicts for _, difference in row)
    return problems, worst, seconds


def thread_plan(num_payloads, threads, requests_per_thread, offset=0):
    """Payload indices per thread: each thread walks the payloads from its own starting point."""
    return [[(offset + 7 * t + j) % num_payloads for j in range(requests_per_thread)] for t in range(threads)]


def max_difference(answer, reference):
    """Largest |difference| between two answers (dicts of arrays, or lists of pipeline dicts); labels must match."""
    if isinstance(answer, dict):
        if answer.keys() != reference.keys():
            return np.inf
        worst = 0.0
        for key, value in answer.items():
            value, expected = np.asarray(value), np.asarray(reference[key])
            if value.shape != expected.shape:
                return np.inf
            if value.dtype.kind in "OSU":  # labels: exact
                if not np.array_equal(value, expected):
                    return np.inf
            elif value.size:
                worst = max(worst, float(np.max(np.abs(value.astype("float64") - expected))))
        return worst
    if len(answer) != len(reference):
        return np.inf
    worst = 0.0
    for got, expected in zip(answer, reference):
        if got["label"] != expected["label"] or got["probabilities"].keys() != expected["probabilities"].keys():
            return np.inf
        worst = max(worst, *(abs(got["probabilities"][k] - p) for k, p in expected["probabilities"].items()))
    return worst


def report(what, **figures):
    """One line of measured figures, shown with `pytest -s` (the README's table comes from these)."""
    parts = [f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items()]
    print(f"\n[serving load] {what}: " + " ".join(parts), flush=True)
