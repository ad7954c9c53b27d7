"""Smoke test of the long-input benchmark (issue 47, item 5): its `--quick` run gives well-formed speed records,
memory rows, the goal rows and a JSON report. No timing assertions: the figures come from the real run
(benchmarks/studies/modernbert_long_inputs/), not from tests."""

import json

import pytest

from benchmarks.common import check_record
from benchmarks.studies.modernbert_long_inputs import modernbert_long_inputs as bench
from benchmarks.studies.modernbert_long_inputs.tables import goals, markdown, peak


@pytest.mark.only_backend("torch", reason="the benchmark's plumbing does not depend on the backend (the real run "
                                          "has one process per backend); Keras runs eagerly on torch: seconds")
def test_quick_run_reports_every_cell_with_agreement_memory_and_goals(tmp_path):
    report = tmp_path / "results.json"
    code = bench.main(["--quick", "--in-process", "--report", str(report), "--folder", str(tmp_path / "folders")])
    results = json.loads(report.read_text())
    assert code == 0 and results["errors"] == []
    cells = sorted((r["extra"]["model"], r["extra"]["length"], r["impl"], r["extra"]["dtype"]) for r in results["records"])
    per_length = [(impl, dtype) for impl in ("hf_transformers", "keras_bert") for dtype in ("bf16", "fp32")]
    # ModernBERT at both quick lengths; BERT's windows over the longest only, in that length's rounds.
    assert cells == sorted([("modernbert", n, *c) for n in (32, 64) for c in per_length] +
                           [("bert", 64, *c) for c in per_length])
    for r in results["records"]:
        check_record(r)
        assert r["unit"] == "tokens/s" and r["items_per_call"] == r["extra"]["length"] and r["job"] == "torch"
        assert peak(results, r) > 0 and peak(results, r, "first") > 0
        # The same weights on both sides: float32 agrees, bfloat16 stays close.
        assert r["extra"]["relative_error_vs_hf_fp32"] < (1e-5 if r["extra"]["dtype"] == "fp32" else 3e-2)
    bert = [r for r in results["records"] if r["extra"]["model"] == "bert"]
    assert {r["extra"]["windows"] for r in bert} == {len(bench.windows(62, 16))} == {5}
    assert all(m["peak_rss_mib"] >= m["rss_before_mib"] > 0 for m in results["memory"])
    rows = goals(results)
    assert results["goals"] == rows and sorted(g["dtype"] for g in rows) == ["bf16", "fp32"]
    assert all(g["length"] == 64 and g["met"] == (g["speed_met"] and g["memory_met"]) for g in rows)
    assert results["run"]["machine"]["cpu_flags"] and results["run"]["command"].endswith(str(tmp_path / "folders"))
    text = markdown(results)
    assert "| 64 | torch | BERT, 5 windows | ours torch | fp32 |" in text and "ours at 64 tokens" in text


@pytest.mark.only_backend("tensorflow", reason="the package's windowing runs in TensorFlow ops")
def test_bert_windows_are_the_packages_side_by_side_windows():
    import tensorflow as tf  # the package's windowing (TensorFlow ops)

    from keras_bert.postprocessing.text_windows import single_text_table

    for text_tokens, window in ((8190, 512), (2046, 512), (62, 16), (14, 16), (15, 16)):
        _, start, length = single_text_table(tf.constant([text_tokens]), window, 0)
        assert bench.windows(text_tokens, window) == list(zip(start.numpy().tolist(), length.numpy().tolist()))
    assert len(bench.windows(8190, 512)) == 17  # 8,192 ModernBERT tokens: 16 full windows and one of 30 tokens
