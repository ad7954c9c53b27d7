"""Cell formatting and record look-ups shared by the CPU report (`report.py`) and the GPU section (`gpu_report.py`)."""


def fmt(x, digits=0):
    if x is None:
        return "–"
    if isinstance(x, str):
        return x
    return f"{x:,.{digits}f}"


def rate(r):
    digits = 0 if r["median"] >= 100 else 1
    return f"{fmt(r['median'], digits)} ({fmt(r['min'], digits)}–{fmt(r['max'], digits)})"


def ratio(a, b):
    return None if not a or not b else a["median"] / b["median"]


def x(v):
    return "–" if v is None else f"{v:.2f}×"


def find(records, **match):
    for r in records:
        if all(r.get(k) == v for k, v in match.items()):
            return r
    return None


def peer(records, r, **match):
    """The record matching `match` measured in the same process (job) as `r`: the fair comparison."""
    return find(records, job=r.get("job"), **match)


def timed_without_metric(keras_hub_record):
    """True for a keras-hub MLM row from before 2026-11-27, when keras-hub was compiled with the loss alone."""
    return "metric" not in keras_hub_record.get("extra", {})


def keras_hub_mlm_note(train_records):
    """What keras-hub's MLM rows were compiled with, as their records say."""
    hub = [r for r in train_records if r["impl"] == "keras_hub"]
    notes = []
    if not all(timed_without_metric(r) for r in hub):
        notes.append("keras-hub is compiled with its own defaults, sparse cross-entropy and weighted masked-token "
                     "accuracy: the loss and metric our `compile()` computes.")
    if any(timed_without_metric(r) for r in hub):
        notes.append("keras-hub rows that record no metric (runs before 2026-11-27) compiled keras-hub with the loss "
                     "alone, while ours also computed masked-token accuracy every step: in a same-process A/B on the "
                     "AVX2 machine that metric cost keras-hub's step 3.2% on JAX and 4.2% on TensorFlow "
                     "(`benchmarks/results_cited/2026-11-27-0028-mlm-step-same-metric.json`).")
    return " ".join(notes)
