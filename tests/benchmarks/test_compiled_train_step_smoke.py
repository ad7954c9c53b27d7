"""Smoke test of the compiled-train-step benchmark (issue 48): a tiny in-process run gives every row, ratio and
rewrite count, and the table. No timing assertions: the figures come from the real run
(docs/results/studies/compiled_train_step.md). Compiled with "aot_eager" here (the real run uses inductor)."""

import json

import pytest

from benchmarks.studies.compiled_train_step import compiled_train_step as bench
from keras_bert.torch_training import compiled_train_step


@pytest.mark.only_backend("torch", reason="the benchmark times the torch backend's compiled train step")
def test_tiny_run_reports_every_row(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(compiled_train_step, "COMPILER", "aot_eager")
    out = tmp_path / "results.json"
    # Without the two ablation rows, which are two more compiled copies of the same step (here: seconds each).
    bench.main(["--configs", "tiny:2x16", "--rounds", "1", "--no-ablations", "--out", str(out)])
    result = json.loads(out.read_text())
    (record,) = result["records"]
    assert sorted(record["ms_per_step"]) == ["keras_bert compiled", "keras_bert eager", "transformers eager"]
    assert record["vs_keras_bert_eager"]["keras_bert eager"] == 1.0
    assert record["vs_transformers_eager"]["transformers eager"] == 1.0
    rewrites = record["graph_rewrites"]["keras_bert compiled"]
    assert rewrites["onednn_linear"] > 0 and rewrites["dropout"] > 0
    assert [name for name, *_ in bench.OURS[2:]] == ["compiled, MKL linears", "compiled, full last block"]
    assert result["machine"]["cpus"] and result["threads"] >= 1
    assert "| tiny 2x16 fp32 | keras_bert compiled |" in capsys.readouterr().out
