"""Smoke test of the benchmark suite: one quick case on the current backend, records well-formed.

No timing assertions: the figures come from `make bench`, not from tests.
"""

import time

import keras
import numpy as np
import pytest

from benchmarks import cases, common
from benchmarks.common import check_record
from benchmarks.report import write_report


# The int8 case runs `model.quantize`, whose full gc.collect() per replaced variable walks everything
# the test process holds: conftest's `frozen_gc`, as the int8 tests use.
@pytest.mark.usefixtures("frozen_gc")
def test_forward_quick_records_are_well_formed(tmp_path, monkeypatch):
    from keras_bert.torch_training import compiled_forward

    monkeypatch.setattr(compiled_forward, "COMPILE_MODE", None)  # the rows' plumbing, without inductor's minute
    records = cases.forward(quick=True, dtypes=("fp32", "int8"), peers=False)
    # On torch the fp32 model also runs through TracedTorchModel and compiled (Keras' int8 layers are not traced).
    torch_rows = [("keras_bert_traced", "tiny 2x16 fp32"), ("keras_bert_compiled", "tiny 2x16 fp32")]
    traced = torch_rows if keras.backend.backend() == "torch" else []
    assert [(r["impl"], r["config"]) for r in records] == [
        ("keras_bert", "tiny 2x16 fp32"), ("keras_bert", "tiny 2x16 int8")] + traced
    for r in records:
        check_record(r)
        assert r["backend"] == keras.backend.backend()
        assert r["unit"] == "tokens/s" and r["items_per_call"] == 32
        assert r["gflops"] > 0
    # int8 stays close to fp32 (Keras' quantization on our layers).
    assert records[1]["extra"]["relative_error_vs_fp32"] < 0.05
    if traced:  # the traced and compiled graphs compute what the Keras model computes
        assert records[2]["extra"]["relative_error_vs_fp32"] < 1e-6
        assert records[3]["extra"]["relative_error_vs_fp32"] < 1e-5  # oneDNN's sums in another order

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


@pytest.mark.only_backend("tensorflow", reason="timing and report plumbing in pure Python; no Keras backend involved")
def test_time_interleaved_rotates_rounds_and_stops_over_budget_callables():
    calls = []
    slow_sleep = 0.1  # far above a scheduling hiccup: the suite runs two passes side by side

    def fast():
        calls.append("fast")

    def slow():
        calls.append("slow")
        time.sleep(slow_sleep)

    times = common.time_interleaved({"fast": fast, "slow": slow}, warmup=1, repeats=4, budget_seconds=1.5 * slow_sleep, pause=0)
    # Warm-up once each, then rounds in rotated order; "slow" stops after two timed repeats (over budget).
    assert calls[:2] == ["fast", "slow"]
    assert calls[2:] == ["fast", "slow", "slow", "fast", "fast", "fast"]
    assert len(times["fast"]) == 4 and len(times["slow"]) == 2
    assert all(t >= slow_sleep for t in times["slow"]) and all(t < slow_sleep for t in times["fast"])


@pytest.mark.only_backend("tensorflow", reason="timing and report plumbing in pure Python; no Keras backend involved")
def test_report_compares_only_figures_from_the_same_process(tmp_path):
    def rec(job, impl, rate, case="forward", config="base 8x128 fp32", backend="jax"):
        r = cases.record(case, impl, backend, config, "tokens/s", 1, [1 / rate], 1e9)
        return {**r, "job": job}

    records = [
        rec("jax", "keras_bert", 1000), rec("jax", "keras_hub", 800), rec("jax", "hf_transformers", 500),
        rec("jax", "numpy", 500, case="matmul_peak", config="fp32 2048x2048", backend="cpu"),
        rec("jax", "jax_xla", 2000, case="matmul_peak", config="fp32 2048x2048", backend="jax"),
        # A second process where HF ran fast: our jax figure must not be divided by it.
        rec("torch", "keras_bert", 900, backend="torch"), rec("torch", "keras_hub", 1000, backend="torch"),
        rec("torch", "hf_transformers", 3000),
        rec("torch", "numpy", 4000, case="matmul_peak", config="fp32 2048x2048", backend="cpu"),
    ]
    run = {"date": "today", "quick": False, "wall_seconds": 1, "job_seconds": {}, "loadavg_start": "0",
           "loadavg_end": "0", "machine": {"cpus": 2, "platform": "p", "python": "3"}, "versions": {},
           "command": "test"}
    path = tmp_path / "RESULTS.md"
    write_report(str(path), run, records, [])
    goals = {line.split(" | ")[0].lstrip("| "): line for line in path.read_text().splitlines() if line.startswith("| ")}
    assert "| 0.90× |" in goals["fp32 forward vs keras-hub, same backend (worst case)"]  # torch 900 / 1000
    hf = goals["fp32 forward base 8x128: our best backend vs HF eager"]
    assert "| 2.00× |" in hf and "torch 0.30×" in hf  # jax 1000 / 500, not 1000 / 3000
    mfu = goals["fp32 forward base 8x128: MFU"]
    # jax: 1000 GFLOP/s / 2000, its own process's fastest matmul (XLA's, not numpy's 500); torch 900 / 4000 = 22%
    assert "| 50.0% |" in mfu
    assert "| jax | jax_xla | fp32 2048x2048 | – | 2000 | 2000–2000 | yes |" in path.read_text()


def test_every_matmul_probe_computes_the_product():
    """The MFU denominator's probes (numpy, torch, XLA's compiled dot through JAX in every process and through
    TensorFlow in its process) each compute a @ b in fp32: a probe that skipped the work would inflate the
    denominator's rate and deflate every MFU."""
    probes, flops = cases.fp32_matmul_probes(64)
    expected_names = {"numpy", "torch", "jax_xla"} | ({"tensorflow_xla"} if keras.backend.backend() == "tensorflow" else set())
    assert set(probes) == expected_names and flops == 2 * 64**3
    a = np.random.default_rng(0).standard_normal((64, 64), dtype="float32")
    b = np.random.default_rng(1).standard_normal((64, 64), dtype="float32")
    for name, call in probes.items():
        product = np.asarray(call())
        assert product.dtype == np.float32, name
        np.testing.assert_allclose(product, a.astype("float64") @ b, rtol=1e-4, atol=1e-4, err_msg=name)


# --- the peers at their fastest configuration (benchmarks/peers.py): records of the quick variants


# One backend (torch: Keras runs eagerly there, no train-step compilation, and the torch process also times
# the compiled step): the row's well-formedness does not depend on the backend.
@pytest.mark.only_backend("torch", reason="record plumbing of the train peers; the compiled train steps of the other backends take ~45 s more")
def test_train_quick_records_include_keras_hub_masked_lm_and_the_compiled_torch_step(monkeypatch):
    from keras_bert.torch_training import compiled_train_step

    # The row's plumbing, not inductor's kernels (tests/torch_training compiles those): the compiled step's graphs
    # run op by op. With inductor and an empty cache this test took 30 s (2026-12-01).
    monkeypatch.setattr(compiled_train_step, "COMPILER", "aot_eager")
    records = cases.train_step(quick=True)
    assert [(r["impl"], r["config"]) for r in records] == [
        ("keras_bert", "tiny 4x32 MLM+NSP"), ("keras_bert", "tiny 4x32 MLM"),
        ("keras_bert_compiled", "tiny 4x32 MLM+NSP"), ("hf_transformers", "tiny 4x32 MLM+NSP"),
        ("keras_hub", "tiny 4x32 MLM")]
    for r in records:
        check_record(r)
        assert r["extra"]["first_loss"] > 0
    assert records[4]["backend"] == keras.backend.backend()
    assert records[4]["extra"]["metric"] == "accuracy" and "metric" not in records[1]["extra"]
    # The compiled row is `jit_compile=True` (CompiledTrainStep) from the eager row's weights: the first losses
    # differ only by dropout's masks (the compiled step draws its own).
    assert records[2]["extra"]["jit_compile"] == "True" and records[0]["extra"]["jit_compile"] != "True"
    assert abs(records[2]["extra"]["first_loss"] / records[0]["extra"]["first_loss"] - 1) < 0.01


@pytest.mark.only_backend("torch", reason="Keras runs eagerly on torch: no compiled steps; the metric does not depend on the backend")
def test_keras_hub_masked_lm_computes_the_accuracy_our_masked_lm_computes():
    from benchmarks.peers import keras_hub_masked_lm_step
    from harness import tiny_backbone
    from keras_bert import BertMaskedLM

    x, y, w = cases.pretraining_batch(2, 16, 4)
    losses = []
    hub = keras_hub_masked_lm_step("tiny", cases.VOCAB, x, y["mlm"], w["mlm"], losses)
    hub()
    ours = BertMaskedLM(tiny_backbone(vocabulary_size=cases.VOCAB, max_sequence_length=16))
    ours.compile()
    hub_logs = hub.model.train_on_batch(x, y["mlm"], w["mlm"], return_dict=True)
    our_logs = ours.train_on_batch(x, y["mlm"], w["mlm"], return_dict=True)
    # Both compute a loss and one weighted masked-token accuracy every step (keras-hub names it after the class).
    assert sorted(hub_logs) == ["loss", "sparse_categorical_accuracy"] and sorted(our_logs) == ["accuracy", "loss"]
    assert len(losses) == 1 and losses[0] > 0


def _tiny_classifier_folder(folder, pooling="cls"):
    """A `keras-bert finetune`-shaped folder around a tiny random classifier and the fixtures' vocabulary."""
    import json
    import shutil

    from harness import tiny_backbone
    from keras_bert.models import BertClassifier
    from task_helpers import FIXTURES

    keras.utils.set_random_seed(0)
    model = BertClassifier(tiny_backbone(), num_classes=2, label_names=["negative", "positive"], pooling=pooling)
    folder.mkdir()
    model.save(str(folder / "model.keras"))
    shutil.copy(FIXTURES / "vocab.txt", folder / "vocab.txt")
    (folder / "finetune.json").write_text(json.dumps({"job": {"task": "classify", "lowercase": True, "sequence_length": 32}}))
    return folder


@pytest.mark.only_backend("torch", reason="the peer is a torch module; the Keras model it is checked against does the same on every backend")
@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_transformers_peer_computes_our_classifiers_logits(tmp_path, pooling):
    import torch

    folder = _tiny_classifier_folder(tmp_path / "run", pooling=pooling)
    hf, tokenizer, positive = cases._hf_classifier(str(folder))
    encoding = tokenizer(["the man went to the store", "a dog"], padding=True, return_tensors="pt")
    with torch.inference_mode():
        theirs = hf(**encoding).logits.numpy()
    model = keras.saving.load_model(str(folder / "model.keras"))
    ours = keras.ops.convert_to_numpy(model.predict_on_batch({
        "token_ids": encoding["input_ids"].numpy().astype("int32"),
        "padding_mask": encoding["attention_mask"].numpy().astype("int32"),
        "segment_ids": encoding["token_type_ids"].numpy().astype("int32")}))
    assert positive == 1 and np.abs(ours).max() > 1e-3
    np.testing.assert_allclose(theirs, ours, atol=1e-5)


# Also covers the forward case's ONNX path: the same `export_onnx` / `torch.onnx.export` + quantize_dynamic
# (checked by hand: `cases.forward(quick=True, onnx=True)`; a second test of it costs ~60 s of exports).
@pytest.mark.only_backend("tensorflow", reason="the ONNX rows run in the TensorFlow process only (graphs do not depend on the backend)")
def test_end_to_end_quick_records_include_hf_bf16_and_onnx_peers(tmp_path):
    records = cases.end_to_end(quick=True, dtypes=("fp32",), folder=str(_tiny_classifier_folder(tmp_path / "run")))
    rows = {(r["impl"], r["config"].rsplit(" ", 1)[1]): r for r in records}
    assert set(rows) == {("keras_bert", "fp32"), ("hf_transformers", "fp32"), ("hf_transformers", "bf16")} | {
        (impl, dtype) for impl in ("keras_bert_onnxruntime", "hf_onnxruntime") for dtype in ("fp32", "int8")}
    for r in records:
        check_record(r)
        assert r["unit"] == "sentences/s" and 0 <= r["extra"]["accuracy"] <= 1
    assert rows[("hf_transformers", "bf16")]["extra"]["hf_bf16_variant"] in ("bf16 cast", "bf16 autocast")
    # The same weights through ONNX Runtime give the same held-out accuracy as through Keras (fp32).
    assert rows[("keras_bert_onnxruntime", "fp32")]["extra"]["accuracy"] == rows[("keras_bert", "fp32")]["extra"]["accuracy"]


@pytest.mark.only_backend("tensorflow", reason="timing and report plumbing in pure Python; no Keras backend involved")
def test_report_goals_against_the_peers_fastest_configuration(tmp_path):
    def rec(impl, rate, config, case="end_to_end", accuracy=0.85, backend="jax"):
        r = cases.record(case, impl, backend, config, "sentences/s", 1, [1 / rate], accuracy=accuracy,
                         first_loss=10.0, last_loss=9.0, examples_per_s=rate)
        return {**r, "job": "jax"}

    e2e = "MiniLM-L6 classifier"
    records = [
        rec("keras_bert", 100, f"{e2e} fp32"), rec("keras_bert", 400, f"{e2e} int8", accuracy=0.84),  # -1 pt: excluded
        rec("keras_bert_onnxruntime", 300, f"{e2e} int8", accuracy=0.848),
        rec("hf_transformers", 80, f"{e2e} fp32"), rec("hf_transformers", 120, f"{e2e} bf16"),
        rec("hf_onnxruntime", 150, f"{e2e} int8"),
        # forward: our fastest path of each shape (base: Keras bf16; mini: the ONNX Runtime route, int8) against
        # transformers' fastest of the same shape (bf16 here, not its slower fp32)
        rec("keras_bert", 900, "base 8x128 fp32", case="forward"), rec("keras_bert", 1500, "base 8x128 bf16", case="forward"),
        rec("hf_transformers", 1000, "base 8x128 fp32", case="forward"),
        rec("hf_transformers", 2000, "base 8x128 bf16", case="forward"),
        rec("keras_bert", 10000, "mini 32x128 fp32", case="forward"),
        rec("keras_bert_onnxruntime", 30000, "mini 32x128 int8", case="forward"),
        rec("hf_transformers", 20000, "mini 32x128 bf16", case="forward"),
        # the torch process's compiled training step against its eager step and transformers'
        rec("keras_bert", 10, "mini 16x128 MLM+NSP", case="train"), rec("hf_transformers", 8, "mini 16x128 MLM+NSP", case="train"),
        rec("keras_bert_compiled", 20, "mini 16x128 MLM+NSP", case="train"),
        rec("keras_bert", 10, "mini 16x128 MLM", case="train"), rec("keras_hub", 8, "mini 16x128 MLM", case="train"),
    ]
    run = {"date": "today", "quick": False, "wall_seconds": 1, "job_seconds": {}, "loadavg_start": "0",
           "loadavg_end": "0", "machine": {"cpus": 2, "platform": "p", "python": "3"}, "versions": {},
           "command": "test"}
    path = tmp_path / "RESULTS.md"
    write_report(str(path), run, records, [])
    goals = {line.split(" | ")[0].lstrip("| "): line for line in path.read_text().splitlines() if line.startswith("| ")}
    fastest = goals["end to end, our fastest vs HF's fastest configuration (≤ 0.5 pt accuracy loss)"]
    assert "| 2.00× |" in fastest and "keras_bert_onnxruntime int8 vs hf_onnxruntime int8" in fastest  # 300 / 150
    forward = goals["forward: every backend's fastest path (Keras or its ONNX Runtime route) vs transformers' fastest (worst case)"]
    assert "| 0.75× |" in forward and "worst: jax keras_bert base 8x128 bf16 vs HF bf16" in forward  # 1500 / 2000
    assert "jax keras_bert_onnxruntime mini 32x128 int8 vs HF bf16 1.50×" in forward  # 30000 / 20000
    assert "| 2.00× |" in goals["torch training step mini 16x128 MLM+NSP: compiled vs our eager"]  # 20 / 10
    assert "| 2.50× |" in goals["torch training step mini 16x128 MLM+NSP: compiled vs transformers eager"]  # 20 / 8
    mlm_goal = goals["MLM training step vs keras-hub BertMaskedLM, same backend (worst case)"]
    assert "| 1.25× |" in mlm_goal
    # This keras-hub row records no metric: a run from before keras-hub was timed with its accuracy metric.
    assert "keras-hub timed without the accuracy metric ours computes" in mlm_goal
    assert "keras-hub rows that record no metric" in next(
        line for line in path.read_text().splitlines() if line.startswith("Ours: `BertPretrainer.train_on_batch`"))
    records[-1]["extra"]["metric"] = "accuracy"
    write_report(str(path), run, records, [])
    text = path.read_text()
    # (The GPU section further down describes the committed GPU rows, which record no metric.)
    training = next(line for line in text.splitlines() if line.startswith("Ours: `BertPretrainer.train_on_batch`"))
    assert "timed without the accuracy metric" not in text and "keras-hub rows that record no metric" not in training
    assert "keras-hub is compiled with its own defaults, sparse cross-entropy and weighted masked-token accuracy" in training


@pytest.mark.only_backend("torch", reason="the TracedTorchModel rows belong to the torch process")
def test_end_to_end_on_torch_times_the_traced_and_compiled_models_with_the_same_accuracy(tmp_path, monkeypatch):
    from keras_bert.torch_training import compiled_forward

    monkeypatch.setattr(compiled_forward, "COMPILE_MODE", None)  # the rows' plumbing, without inductor's minute
    records = cases.end_to_end(quick=True, dtypes=("fp32",), peers=False,
                               folder=str(_tiny_classifier_folder(tmp_path / "run")))
    rows = {(r["impl"], r["config"].rsplit(" ", 1)[1]): r for r in records}
    assert set(rows) == {("keras_bert", "fp32"), ("keras_bert_traced", "fp32"), ("keras_bert_compiled", "fp32")}
    for r in records:
        check_record(r)
    for impl in ("keras_bert_traced", "keras_bert_compiled"):
        assert rows[(impl, "fp32")]["extra"]["accuracy"] == rows[("keras_bert", "fp32")]["extra"]["accuracy"]
