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
