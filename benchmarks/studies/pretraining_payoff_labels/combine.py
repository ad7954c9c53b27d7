"""Pools several runs of the study (one per pretraining seed, or an arm run on its own) into one table and two plots.

    .venv/bin/python -m benchmarks.studies.pretraining_payoff_labels.combine RESULTS.json [RESULTS.json ...] \
        [--minilm-from RESULTS.json ...] --out benchmarks/studies/pretraining_payoff_labels/results/cpu --plots benchmarks/studies/pretraining_payoff_labels/plots --name cpu

Every kept run (`"chosen": True`: the rate and step its validation accuracy chose) of every file counts once:
a pretrained init pools pretraining seeds x fine-tuning seeds; random initialisation and MiniLM, which do not
depend on the pretraining seed, pool whatever files ran them. The payoff pairs each pretrained run with
random initialisation's run of the same fine-tuning seed (the same head, batches and dropout): its own file's
where it has one, else the mean of the files that ran it. Writes `<name>.json` and `<name>.md` into `--out`, and into `--plots` the test accuracy
against labels and against pretraining minutes (`<name>_labels.png`, `<name>_minutes.png`).
"""

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the checkout
from benchmarks.common import interval  # noqa: E402
from benchmarks.studies.pretraining_payoff_labels.report import INIT_TITLES  # noqa: E402

PRETRAINED = ("pretrained_half", "pretrained_full")


def kept_runs(results_files, inits=None):
    """Every chosen run of every file (of `inits` only, if given), with its file's pretraining seed and the
    snapshot's pretraining minutes."""
    runs = []
    for path in results_files:
        results = json.loads(Path(path).read_text(encoding="utf-8"))
        if "runs" not in results or "settings" not in results:
            sys.exit(f"error: {path} is not a results.json of the study (no runs and settings)")
        snapshots = results.get("pretraining", {}).get("snapshots", {})
        for run in results["runs"]:
            if not run.get("chosen") or (inits is not None and run["init"] not in inits):
                continue
            minutes = snapshots.get(run["init"], {}).get("minutes", 0.0 if run["init"] == "random" else None)
            runs.append({**run, "pretraining_seed": results["settings"]["seed"], "file": str(path),
                         "pretraining_minutes": minutes})
    return runs


def pooled(runs, budgets):
    """Per budget and init: test and validation accuracy over the pooled runs; the paired payoff; the share closed."""
    table = {}
    for budget in budgets:
        at = [r for r in runs if r["budget"] == budget]
        row = {"labels": at[0]["labels"]}
        for init in INIT_TITLES:
            kept = [r for r in at if r["init"] == init]
            if kept:
                row[init] = {"test_accuracy": interval([r["test_accuracy"] for r in kept]),
                             "validation_accuracy": interval([r["validation_accuracy"] for r in kept]),
                             "pretraining_seeds": sorted({r["pretraining_seed"] for r in kept}),
                             "learning_rates": sorted({r["learning_rate"] for r in kept}),
                             "pretraining_minutes": _mean([r["pretraining_minutes"] for r in kept])}
        random_runs = [r for r in at if r["init"] == "random"]
        for init in PRETRAINED:
            pairs = [r["test_accuracy"] - baseline for r in at if r["init"] == init
                     for baseline in [_random_baseline(r, random_runs)] if baseline is not None]
            if pairs:
                row[f"payoff_{init}"] = interval(pairs)
                means = [row.get(name, {}).get("test_accuracy", {}).get("mean") for name in ("random", init, "minilm")]
                if None not in means and means[2] != means[0]:
                    row[f"distance_closed_{init}"] = round((means[1] - means[0]) / (means[2] - means[0]), 3)
        table[budget] = row
    return table


def _random_baseline(run, random_runs):
    """Random initialisation's test accuracy for `run`'s fine-tuning seed: its own file's run where it has one
    (the same process and machine), else the mean over the files that ran it; None where none did."""
    same_seed = [r for r in random_runs if r["seed"] == run["seed"]]
    same_file = [r["test_accuracy"] for r in same_seed if r["file"] == run["file"]]
    if same_file:
        return same_file[0]
    return float(np.mean([r["test_accuracy"] for r in same_seed])) if same_seed else None


def _mean(values):
    values = [v for v in values if v is not None]
    return round(float(np.mean(values)), 3) if values else None


def _cell(figure):
    if not figure or figure["mean"] is None:
        return "—"
    ci = "" if figure["ci95"] is None else f" ± {figure['ci95']:.3f}"
    return f"{figure['mean']:.3f}{ci} (n={figure['n']})"


def markdown(table, files, title):
    budgets = list(table)
    header = "| init | " + " | ".join(f"{b} labels" for b in budgets) + " |\n" + "|---" * (len(budgets) + 1) + "|"
    lines = [f"# {title}", "", "Pooled from: " + ", ".join(f"`{f}`" for f in files), ""]
    for figure, heading in (("test_accuracy", "Test accuracy (reported; the test split chose nothing)"),
                            ("validation_accuracy", "Validation accuracy (chose each run's rate and step)")):
        lines += [f"## {heading}", "", header]
        for init, name in INIT_TITLES.items():
            if any(init in table[b] for b in budgets):
                lines.append(f"| {name} | " + " | ".join(_cell(table[b].get(init, {}).get(figure)) for b in budgets)
                             + " |")
        lines.append("")
    lines += ["## Payoff over random initialisation (test, paired by fine-tuning seed)", "", header]
    for init in PRETRAINED:
        cells = []
        for b in budgets:
            closed = table[b].get(f"distance_closed_{init}")
            cells.append(_cell(table[b].get(f"payoff_{init}")) + ("" if closed is None else f"; closes {closed:.0%}"))
        lines.append(f"| {INIT_TITLES[init]} | " + " | ".join(cells) + " |")
    lines += ["", "Means with 95% t-intervals over every kept run (pretraining seeds x fine-tuning seeds).", ""]
    return "\n".join(lines)


def plot(table, plots, name, title):
    """Test accuracy against labels (one line per init) and against pretraining minutes (one line per budget)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    budgets = list(table)
    counts = {b: table[b]["labels"] for b in budgets}
    figure, axis = plt.subplots(figsize=(6.4, 4.2))
    for init, label in INIT_TITLES.items():
        points = [(counts[b], table[b][init]["test_accuracy"]) for b in budgets if init in table[b]]
        if points:
            axis.errorbar([x for x, _ in points], [f["mean"] for _, f in points],
                          yerr=[f["ci95"] or 0 for _, f in points], marker="o", capsize=3, label=label)
    axis.set_xscale("log")
    _save(plt, figure, axis, "training labels", title, os.path.join(plots, f"{name}_labels.png"))

    figure, axis = plt.subplots(figsize=(6.4, 4.2))
    for b in budgets:
        points = [(table[b][i]["pretraining_minutes"], table[b][i]["test_accuracy"])
                  for i in ("random", *PRETRAINED) if i in table[b] and table[b][i]["pretraining_minutes"] is not None]
        if points:
            points.sort(key=lambda p: p[0])
            axis.errorbar([x for x, _ in points], [f["mean"] for _, f in points],
                          yerr=[f["ci95"] or 0 for _, f in points], marker="o", capsize=3, label=f"{b} labels")
    _save(plt, figure, axis, "pretraining minutes (0: random initialisation)", title,
          os.path.join(plots, f"{name}_minutes.png"))


def _save(plt, figure, axis, xlabel, title, path):
    axis.set_xlabel(xlabel)
    axis.set_ylabel("test accuracy (95% interval)")
    axis.set_title(title, fontsize=10)
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="results.json files of the study")
    parser.add_argument("--minilm-from", nargs="+", default=[],
                        help="results.json files whose MiniLM runs alone count (the ceiling measured elsewhere, "
                             "e.g. on a GPU with the same protocol and arrays)")
    parser.add_argument("--out", required=True, help="folder for <name>.json and <name>.md")
    parser.add_argument("--plots", default=None, help="folder for the two PNGs (none without it)")
    parser.add_argument("--name", default="combined")
    parser.add_argument("--title", default="Pretraining payoff where labels are few")
    args = parser.parse_args(argv)
    runs = kept_runs(args.results) + kept_runs(args.minilm_from, inits=("minilm",))
    budgets = []
    for r in runs:
        if r["budget"] not in budgets:
            budgets.append(r["budget"])
    budgets.sort(key=lambda b: next(r["labels"] for r in runs if r["budget"] == b))
    table = pooled(runs, budgets)
    os.makedirs(args.out, exist_ok=True)
    files = args.results + [f"{f} (MiniLM runs only)" for f in args.minilm_from]
    Path(args.out, f"{args.name}.json").write_text(json.dumps({"files": files, "table": table}, indent=1) + "\n",
                                                   encoding="utf-8")
    text = markdown(table, files, args.title)
    Path(args.out, f"{args.name}.md").write_text(text, encoding="utf-8")
    if args.plots:
        os.makedirs(args.plots, exist_ok=True)
        plot(table, args.plots, args.name, args.title)
    print(text)
    return table


if __name__ == "__main__":
    main()
