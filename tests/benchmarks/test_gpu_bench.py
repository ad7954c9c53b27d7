"""The GPU benchmark's machinery on this machine's CPU: device calls, rows, JSON merging and the report section.

No timing assertions, and no GPU needed: the figures come from `make bench-gpu` on a GPU machine.
"""

import json

import keras
import numpy as np
import pytest

from benchmarks import gpu, gpu_cases, gpu_report
from benchmarks.report import write_report
from keras_bert import BertBackbone


def test_keras_forward_call_runs_the_model_on_the_device_and_matches_predict():
    model = BertBackbone(vocabulary_size=50, num_layers=1, num_heads=2, hidden_dim=8, intermediate_dim=16,
                         max_sequence_length=16, dropout=0.0)
    x = gpu_cases.token_inputs(2, 8)
    x["token_ids"] = x["token_ids"] % 50
    expected = model.predict_on_batch(x)["sequence_output"]
    out = gpu_cases.to_numpy(gpu_cases.keras_forward_call(model, x)())
    np.testing.assert_allclose(out, expected, atol=1e-5)


def test_train_rows_name_the_attention_path_only_where_it_differs():
    backend = keras.backend.backend()
    rows = gpu_cases.train_configs(backend, quick=True)
    variants = {(impl, variant) for impl, _, _, variant in rows}
    if backend == "torch":
        assert {("keras_bert", "explicit"), ("keras_bert", "fused"), ("keras_bert", "compiled")} <= variants
    else:  # no fused attention dropout on TensorFlow or JAX: no row may claim one
        assert variants == {("keras_bert", ""), ("keras_hub", ""), ("hf_transformers", "")}
    full_jax = gpu_cases.train_configs("jax", quick=False)
    assert {p for _, p, _, _ in full_jax} == {"bf16"} and ("keras_hub", "bf16", 0.1, "") in full_jax


def test_parse_shapes():
    assert gpu.parse_shapes("64x128,16x512") == [(64, 128), (16, 512)]
    assert gpu.parse_shapes(None) is None
    for bad in ("64", "64x0", "ax128", "64x128x2"):
        with pytest.raises(ValueError, match="BATCHxLENGTH"):
            gpu.parse_shapes(bad)


def _record(job, impl, config, median, case="forward", **extra):
    return {"case": case, "impl": impl, "backend": "torch" if impl == "hf_transformers" else job, "config": config,
            "unit": "tokens/s", "items_per_call": 1, "median": median, "min": median, "max": median, "repeats": 1,
            "flops_per_item": 1e6, "gflops": median / 1000, "job": job, "extra": extra}


def _fake_job(records):
    def run_job(backend, case_names, quick, timeout, output, shapes_text=None):
        mine = [dict(r, job=backend) for r in records if r["job"] == backend]
        return {"environment": {"device": "Fake GPU", "backend": backend}, "records": mine, "errors": []}, 3

    return run_job


def test_append_keeps_the_other_backends_results(tmp_path, monkeypatch):
    records = [_record("torch", "keras_bert", "base 2x2 bf16", 10.0), _record("jax", "keras_bert", "base 2x2 bf16", 20.0)]
    monkeypatch.setattr(gpu, "run_job", _fake_job(records))
    out = str(tmp_path / "gpu.json")
    assert gpu.main(["--backends", "torch", "--out", out, "--no-render"]) == 0
    assert gpu.main(["--backends", "jax", "--append", "--out", out, "--no-render"]) == 0
    saved = json.loads(open(out, encoding="utf-8").read())
    assert sorted(r["job"] for r in saved["records"]) == ["jax", "torch"]
    assert set(saved["environments"]) == {"jax", "torch"} and len(saved["earlier_runs"]) == 1
    # A rerun of one process replaces its rows and its run in the header; the other process's run stays.
    assert gpu.main(["--backends", "torch", "--append", "--out", out, "--no-render"]) == 0
    saved = json.loads(open(out, encoding="utf-8").read())
    assert sorted(r["job"] for r in saved["records"]) == ["jax", "torch"]
    assert [gpu.run_backends(r) for r in saved["earlier_runs"] + [saved["run"]]] == [["jax"], ["torch"]]
    assert gpu.run_backends({"command": "python -m benchmarks.gpu --backends jax --append"}) == ["jax"]
    assert gpu.run_backends({"command": "python -m benchmarks.gpu"}) == ["jax", "torch"]
    # Without --append a run starts over.
    assert gpu.main(["--backends", "jax", "--out", out, "--no-render"]) == 0
    assert [r["job"] for r in json.loads(open(out, encoding="utf-8").read())["records"]] == ["jax"]


def test_gpu_section_compares_within_one_process_and_reaches_results_md(tmp_path, monkeypatch):
    records = [
        _record("torch", "keras_bert", "base 64x128 bf16", 300.0, max_abs_diff_vs_hf_fp32=0.1),
        _record("torch", "hf_transformers", "base 64x128 bf16", 1200.0),
        _record("torch", "keras_hub", "base 64x128 bf16", 150.0),
        {**_record("torch", "matmul", "base 64x128 bf16", 600_000.0), "unit": "GFLOP/s", "gflops": None},
        _record("torch", "keras_bert", "base 32x128 MLM bf16 dropout 0.1 fused attention", 25.0, case="train",
                first_loss=10.0, last_loss=6.0),
        _record("torch", "keras_bert", "base 32x128 MLM bf16 dropout 0.1 explicit attention", 20.0, case="train",
                first_loss=10.0, last_loss=6.0),
        _record("torch", "hf_transformers", "base 32x128 MLM bf16 dropout 0.1", 100.0, case="train",
                first_loss=10.0, last_loss=2.0),
        _record("jax", "hf_transformers", "base 64x128 bf16", 999.0),  # another process: never a peer of torch rows
    ]
    saved = {"run": {"command": "python -m benchmarks.gpu", "date": "today", "wall_seconds": 9},
             "environments": {"torch": {"device": "Fake GPU", "keras": "3"}}, "records": records, "errors": []}
    text = "\n".join(gpu_report.gpu_section(saved))
    assert "## GPU: Fake GPU" in text
    assert "| 0.25× |" in text  # ours 300 vs HF 1200 in the torch process (not the JAX process's 999)
    assert "| 2.00× |" in text  # ours 300 vs keras-hub 150
    assert "| 1.25× |" in text  # fused attention dropout 25 vs written out 20
    assert "| 0.25× | – | 10.00 → 6.00 |" in text  # the fused train row against HF's same setting
    assert "1.0e-01" in text and "600 TF/s" in text  # max |diff| vs HF fp32; the matmul probe

    monkeypatch.setattr("benchmarks.report.load_gpu_results", lambda: saved)
    compiled = {**saved, "environments": {"torch": {"device": "Fake H100", "torch": "2"}}, "records": [
        _record("torch", "keras_bert", "base 64x128 bf16 eager", 100.0),
        _record("torch", "keras_bert", "base 64x128 bf16 traced torch.compile reduce-overhead", 450.0,
                first_call_s=15.0, max_abs_diff_vs_our_eager=0.125),
        _record("torch", "hf_transformers", "base 64x128 bf16 eager", 300.0),
        _record("torch", "hf_transformers", "base 64x128 bf16 torch.compile reduce-overhead", 600.0, first_call_s=9.0),
    ]}
    monkeypatch.setattr("benchmarks.report.load_compiled_gpu_results", lambda: compiled)
    run = {"date": "today", "quick": False, "wall_seconds": 1, "job_seconds": {}, "loadavg_start": "0",
           "loadavg_end": "0", "machine": {"cpus": 2, "platform": "p", "python": "3"}, "versions": {},
           "command": "test"}
    write_report(str(tmp_path / "RESULTS.md"), run, [], [])
    written = (tmp_path / "RESULTS.md").read_text()
    assert "## GPU: Fake GPU" in written
    assert "## GPU: Fake H100, torch without eager Python" in written
    # ours compiled 450: vs HF eager 300, vs HF's fastest 600, vs our eager 100; first call; diff vs our eager
    assert "| 1.50× | 0.75× | 4.50× | 15.0 | 1.2e-01 |" in written


def test_the_explicit_attention_row_trains_through_the_written_out_probabilities():
    """The row swaps our layer's choice of attention path; a break in that swap must fail here, not on a lent
    GPU (it did once: the row crashed after `attention_dropout_fuses` took `export_form`)."""
    import keras_bert.layers.self_attention as self_attention

    x, y, w = gpu_cases.pretraining_batch(2, 16, 3)
    losses = []
    step = gpu_cases.keras_train_call("keras_bert", "tiny", "fp32", 0.1, x, y["mlm"], w["mlm"], losses)
    with gpu_cases.explicit_attention_dropout():
        assert self_attention.attention_dropout_fuses(export_form=False) is False
        step()
    assert len(losses) == 1 and np.isfinite(losses[0])
    from keras_bert.layers._fused import attention_dropout_fuses

    assert self_attention.attention_dropout_fuses is attention_dropout_fuses  # restored on leaving
