"""The GPU profile of the training step (benchmarks/gpu_profile.py): its summary adds up and names the kernels' groups.

The full script runs BERT base on a GPU; here its profiling and summary run on a tiny torch step on the CPU. The
steps it profiles are the GPU bench's train-row builders, which tests/benchmarks/test_gpu_bench.py runs.
"""

import pytest

from benchmarks import gpu_profile


@pytest.mark.only_backend("torch", reason="string matching, the same on every backend")
def test_kernel_names_fall_in_the_group_a_change_would_act_on():
    assert gpu_profile.group_of("sm90_xmma_gemm_bf16bf16_bf16f32") == "matmul"
    assert gpu_profile.group_of("aten::addmm") == "matmul"
    assert gpu_profile.group_of("pytorch_flash::flash_fwd_kernel") == "attention"
    assert gpu_profile.group_of("aten::_fused_adamw_") == "optimizer"
    assert gpu_profile.group_of("triton_per_fused_native_layer_norm_0") == "element-wise and reductions"
    assert gpu_profile.group_of("## Call CompiledFxGraph abc ##") == "compiled graph call (host)"
    assert gpu_profile.group_of("cudaLaunchKernel") == "other"


@pytest.mark.only_backend("torch", reason="profiles a torch step with torch.profiler")
def test_a_profiled_step_is_summarized_per_step_with_shares_that_add_up(tmp_path):
    import torch

    a, b = torch.randn(64, 64), torch.randn(64, 64)
    calls = []

    def step():
        calls.append(float((torch.relu(a @ b) + 1).sum()))

    trace = tmp_path / "trace.json"
    record = gpu_profile.profile_step(step, steps=3, warmup=1, trace_path=str(trace), top=5)
    assert len(calls) == 4 and record["steps"] == 3 and trace.stat().st_size > 0
    assert record["clock"] == "self CPU time" and record["wall_ms_per_step"] > 0
    assert 0 < len(record["top"]) <= 5 and record["top"][0]["ms_per_step"] >= record["top"][-1]["ms_per_step"]
    assert any(row["name"] == "aten::mm" and row["calls_per_step"] == 1 for row in record["top"])
    assert sum(record["groups_ms_per_step"].values()) == pytest.approx(record["profiled_ms_per_step"], rel=1e-2, abs=2e-3)
    assert "matmul" in record["groups_ms_per_step"]


@pytest.mark.only_backend("torch", reason="arithmetic on profiler rows; the same on every backend")
def test_on_a_gpu_only_the_kernels_rows_count_so_an_operator_and_its_kernel_are_not_counted_twice():
    from types import SimpleNamespace

    from torch.autograd import DeviceType

    def row(key, device_type, cpu_us, device_us):
        return SimpleNamespace(key=key, count=2, device_type=device_type, self_cpu_time_total=cpu_us,
                               self_device_time_total=device_us)

    events = [row("aten::mm", DeviceType.CPU, 50.0, 300.0), row("sm90_xmma_gemm_bf16", DeviceType.CUDA, 0.0, 300.0),
              row("triton_poi_fused_add_0", DeviceType.CUDA, 0.0, 100.0)]
    record = gpu_profile.summarize(events, steps=2, wall_seconds=0.001, on_device=True, top=5)
    assert record["profiled_ms_per_step"] == 0.2 and record["busy_share_of_wall"] == 0.4
    assert [r["name"] for r in record["top"]] == ["sm90_xmma_gemm_bf16", "triton_poi_fused_add_0"]
    assert record["groups_ms_per_step"] == {"matmul": 0.15, "element-wise and reductions": 0.05}
    assert gpu_profile.summarize(events, 2, 0.001, on_device=False, top=5)["profiled_ms_per_step"] == 0.025


@pytest.mark.only_backend("jax", reason="the refusal of a backend other than torch; one backend shows it")
def test_another_backend_is_refused_before_any_model_is_built(capsys):
    with pytest.raises(SystemExit):
        gpu_profile.main(["--quick"])
    assert "KERAS_BACKEND=torch" in capsys.readouterr().err
