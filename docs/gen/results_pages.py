"""Writes docs/results/index.md and docs/results/gpu.md from the benchmark results files, at every build.

The tables are rendered by the same code that writes benchmarks/RESULTS.md (`benchmarks.report.write_report`,
`benchmarks.gpu_report.gpu_section` / `compiled_section`), from:

- benchmarks/RESULTS.json (the last full `make bench`: its command, date, machine and versions are in its
  `run` record, and the page prints them);
- benchmarks/RESULTS_GPU.json and benchmarks/RESULTS_GPU_compiled.json (`make bench-gpu` on a lent GPU machine).

No figure is typed here: rerun `make bench` (or `make bench-gpu`) and the pages follow.

    .venv/bin/python docs/gen/results_pages.py cpu|gpu        # prints a page
"""

import contextlib
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GITHUB = "https://github.com/keras-bert/keras-bert/blob/main"
# The part of benchmarks/ANALYSIS.md that reads the tables of this page (the rest are notes on single runs and
# by-hand studies, which have their own pages).
ANALYSIS_SECTION = "## Reading these figures"


def _benchmarks():
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from benchmarks import gpu_report, report

    return report, gpu_report


@contextlib.contextmanager
def _cpu_tables_only(report):
    """`write_report` without the GPU sections and ANALYSIS.md it appends to RESULTS.md: gpu.md has the former."""
    saved = report.load_gpu_results, report.load_compiled_gpu_results, report.ANALYSIS
    report.load_gpu_results = report.load_compiled_gpu_results = lambda *args: None
    report.ANALYSIS = os.path.join(ROOT, "benchmarks", "no analysis here")
    try:
        yield
    finally:
        report.load_gpu_results, report.load_compiled_gpu_results, report.ANALYSIS = saved


def _analysis_section():
    """The "Reading these figures" section of benchmarks/ANALYSIS.md, up to the next section of its level."""
    path = os.path.join(ROOT, "benchmarks", "ANALYSIS.md")
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(ANALYSIS_SECTION)), None)
    if start is None:
        return []
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def cpu_page():
    """The markdown of docs/results/index.md."""
    report, _ = _benchmarks()
    with open(os.path.join(ROOT, "benchmarks", "RESULTS.json"), encoding="utf-8") as f:
        saved = json.load(f)
    run = saved["run"]
    with _cpu_tables_only(report), tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "RESULTS.md")
        report.write_report(path, run, saved["records"], saved.get("errors", []))
        with open(path, encoding="utf-8") as f:
            tables = f.read().splitlines()
    if tables and tables[0].startswith("# "):
        tables = tables[1:]  # the page has its own title
    machine = run["machine"]
    out = [
        "# Benchmarks: `make bench`",
        "",
        "How fast keras-bert runs against its peers (keras-hub on the same backend, Hugging Face transformers, "
        "a numpy matmul for the machine's peak), on CPU, every figure from the last full run of the benchmark "
        "suite. This page is generated from "
        f"[`benchmarks/RESULTS.json`]({GITHUB}/benchmarks/RESULTS.json) when the site is built, by the code that "
        "writes `benchmarks/RESULTS.md` (`benchmarks/report.py`).",
        "",
        "GPU figures are on [their own page](gpu.md); the studies (one question each, run by hand) each have "
        "a page under Results. To measure on your machine: `make bench` (about 20 minutes; it rewrites both "
        "results files), or `python -m benchmarks.run --quick` for a smoke run whose figures are not to be quoted.",
        "",
        "## The run behind every figure on this page",
        "",
        *tables,
    ]
    analysis = _analysis_section()
    if analysis:
        out += ["", *analysis, "",
                f"The notes on each run (what changed between runs, reruns of single cases) are in "
                f"[`benchmarks/ANALYSIS.md`]({GITHUB}/benchmarks/ANALYSIS.md)."]
    return "\n".join(out) + "\n"


def gpu_page():
    """The markdown of docs/results/gpu.md."""
    _, gpu_report = _benchmarks()
    gpu = gpu_report.load_gpu_results()
    compiled = gpu_report.load_compiled_gpu_results()
    out = [
        "# Benchmarks on a GPU",
        "",
        "keras-bert on one data-centre GPU against Hugging Face transformers and keras-hub, forward and training "
        "step, and torch without eager Python (`TracedTorchModel`, `torch.compile`). This page is generated from "
        f"[`benchmarks/RESULTS_GPU.json`]({GITHUB}/benchmarks/RESULTS_GPU.json) and "
        f"[`benchmarks/RESULTS_GPU_compiled.json`]({GITHUB}/benchmarks/RESULTS_GPU_compiled.json) when the site is "
        "built, by the code that writes the GPU sections of `benchmarks/RESULTS.md` (`benchmarks/gpu_report.py`). "
        "Each table names the command, the date and the device of its run; compare rows within one table only.",
        "",
        "To measure on your machine: `make bench-gpu`, on a machine with one CUDA GPU and an environment whose "
        "torch and jax see it (this project's pinned venv has the CPU builds). TensorFlow is not measured on the "
        "GPU (the project pins TensorFlow's CPU wheel). The CPU tables are on [Benchmarks](index.md).",
        "",
    ]
    if gpu:
        out += gpu_report.gpu_section(gpu)
    if compiled:
        out += gpu_report.compiled_section(compiled)
    if not (gpu or compiled):
        out.append("No GPU results file is in `benchmarks/`.")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(gpu_page() if sys.argv[1:] == ["gpu"] else cpu_page())
elif __name__ == "<run_path>":  # run by mkdocs-gen-files (runpy.run_path) during the build; an import writes nothing
    import mkdocs_gen_files

    for name, make in (("results/index.md", cpu_page), ("results/gpu.md", gpu_page)):
        with mkdocs_gen_files.open(name, "w") as f:
            f.write(make())
        mkdocs_gen_files.set_edit_path(name, "gen/results_pages.py")
