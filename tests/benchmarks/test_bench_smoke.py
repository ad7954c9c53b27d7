"""Smoke test of the benchmark suite: one quick case on the current backend, records well-formed.

No timing assertions: the figures come from `make bench`, not from tests.
"""

import keras
import pytest

from benchmarks import cases
from benchmarks.common import check_record
from benchmarks.report import write_report


def test_forward_quick_records_are_well_formed(tmp_path):
    records = cases.forward(quick=True, dtypes=("fp32", "int8"), peers=False)
    assert [(r["impl"], r["config"]) for r in records] == [
        ("keras_bert", "tiny 2x16 fp32"), ("keras_bert", "tiny 2x16 int8")]
    for r in records:
        check_record(r)
        assert r["backend"] == keras.backend.backend()
        assert r["unit"] == "tokens/s" and r["items_per_call"] == 32
        assert r["gflops"] > 0
    # int8 stays close to fp32 (Keras' quantization on our layers).
    assert records[1]["extra"]["relative_error_vs_fp32"] < 0.05

    run = {"date": "today", "quick": True, "wall_seconds": 1, "job_seconds": {}, "loadavg_start": "0",
           "loadavg_end": "0", "machine": {"cpus": 2, "platform": "p", "python": "3"}, "versions": {},
           "command": "test"}
    peak = {**records[0], "case": "matmul_peak", "impl": "numpy", "config": "fp32 1x1", "flops_per_item": 1e9,
            "gflops": 100.0}
    write_report(str(tmp_path / "RESULTS.md"), run, records + [peak], [])
    text = (tmp_path / "RESULTS.md").read_text()
    assert "tiny 2x16 int8" in text and "## Goals" in text


def test_check_record_rejects_bad_numbers():
    good = cases.record("x", "keras_bert", "jax", "c", "tokens/s", 10, [0.5, 0.25])
    check_record(good)
    with pytest.raises(ValueError):
        check_record({**good, "median": float("nan")})
    with pytest.raises(ValueError):
        check_record({**good, "min": -1.0})
