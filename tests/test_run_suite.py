"""The runner behind `make test`: passes side by side, failures reported with their output."""

import sys

import pytest

import run_suite


@pytest.mark.only_backend("tensorflow", reason="process scheduling in pure Python; no Keras backend involved")
def test_runs_passes_two_at_a_time_and_reports_the_failing_one(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    # Each of the first two passes waits for the other to start: one at a time, the first would time out.
    def waiting_for_the_other(mine, other, then):
        return [sys.executable, "-c",
                f"import pathlib, sys, time\n"
                f"pathlib.Path({str(tmp_path / mine)!r}).touch()\n"
                f"for _ in range(100):\n"
                f"    if pathlib.Path({str(tmp_path / other)!r}).exists(): break\n"
                f"    time.sleep(0.1)\n"
                f"else: sys.exit('the other pass never started')\n"
                f"{then}"]

    first = waiting_for_the_other("one-started", "two-started", "time.sleep(0.5)")
    second = waiting_for_the_other("two-started", "one-started", "print('boom: the assertion text'); sys.exit(3)")
    third = [sys.executable, "-c", "import os; print('OpenMP threads:', os.environ.get('OMP_NUM_THREADS')); "
                                   "print('3 passed in 0.1s')"]
    failed = run_suite.run_passes([("one", first, {}), ("two", second, {}), ("three", third, {})], 2, str(tmp_path))
    out = capsys.readouterr().out
    assert failed == ["two"]
    assert "boom: the assertion text" in out and "two: FAILED (exit 3)" in out
    assert "three: passed" in out and "3 passed in 0.1s" in out
    # Side by side, each pass gets one OpenMP thread (its whole output is in its log).
    assert "OpenMP threads: 1" in (tmp_path / "three.log").read_text()
    assert out.index("=== one: started") < out.index("=== two: started") < out.index("two: FAILED")


@pytest.mark.only_backend("tensorflow", reason="argument parsing in pure Python; no Keras backend involved")
def test_orders_backends_longest_first_and_passes_pytest_arguments(tmp_path):
    args = run_suite.parse_args(["--backends", "torch tensorflow", "--", "-k", "resume"])
    names = [name for name, _, _ in run_suite.passes(args, str(tmp_path))]
    assert names == ["KERAS_BACKEND=tensorflow", "KERAS_BACKEND=torch", "notebooks"]
    command = run_suite.passes(args, str(tmp_path))[0][1]
    assert command[-2:] == ["-k", "resume"] and f"--basetemp={tmp_path}/tmp-tensorflow" in command
    with pytest.raises(SystemExit):
        run_suite.parse_args(["--backends", "theano"])


@pytest.mark.only_backend("tensorflow", reason="process scheduling in pure Python; no Keras backend involved")
def test_logs_are_kept_in_the_named_folder_when_every_pass_passes(tmp_path, monkeypatch, capsys):
    def two_passes(args, scratch):
        return [(name, [sys.executable, "-c", f"print('slowest durations of {name}'); print('1 passed in 0.1s')"], {})
                for name in ("KERAS_BACKEND=jax", "notebooks")]

    monkeypatch.setattr(run_suite, "passes", two_passes)
    assert run_suite.main(["--logs", str(tmp_path / "logs")]) == 0
    assert "all passes passed" in capsys.readouterr().out
    assert (tmp_path / "logs" / "KERAS_BACKEND-jax.log").read_text() == "slowest durations of KERAS_BACKEND=jax\n1 passed in 0.1s\n"
    assert "slowest durations of notebooks" in (tmp_path / "logs" / "notebooks.log").read_text()
