"""The study's figures: means with 95% intervals over fine-tuning seeds, the payoff, and the markdown table."""

import json
import os

from benchmarks.common import interval

INIT_TITLES = {"random": "(a) random initialisation", "pretrained_half": "(b) ours, pretrained: half-way snapshot",
               "pretrained_full": "(b) ours, pretrained: end of the run", "minilm": "(c) all-MiniLM-L6-v2 (ceiling)"}


def summarize(runs, budgets, inits):
    """Per budget and init: test accuracy (reported) and validation accuracy (what chose), over the runs kept.

    Only runs at the chosen learning rate of their (init, budget) count (`"chosen": True`). Also the
    payoff of each pretrained init over random initialisation, paired by fine-tuning seed, and the
    share of the distance from random initialisation to all-MiniLM-L6-v2 that it closes.
    """
    table = {}
    for budget in budgets:
        row = {}
        for init in inits:
            kept = [r for r in runs if r["budget"] == budget and r["init"] == init and r.get("chosen")]
            row[init] = {"test_accuracy": interval([r["test_accuracy"] for r in kept]),
                         "validation_accuracy": interval([r["validation_accuracy"] for r in kept]),
                         "learning_rate": kept[0]["learning_rate"] if kept else None}
        for init in ("pretrained_half", "pretrained_full"):
            if init in inits and "random" in inits:
                row[f"payoff_{init}"] = _paired(runs, budget, init, "random")
                if "minilm" in inits:
                    row[f"distance_closed_{init}"] = _closed(row, init)
        table[budget] = row
    return table


def _paired(runs, budget, init, baseline):
    """Test-accuracy differences init - baseline, paired by seed (same head init and data order)."""
    def by_seed(name):
        return {r["seed"]: r["test_accuracy"] for r in runs if r["budget"] == budget and r["init"] == name
                and r.get("chosen")}

    ours, base = by_seed(init), by_seed(baseline)
    return interval([ours[s] - base[s] for s in sorted(set(ours) & set(base))])


def _closed(row, init):
    """(init - random) / (MiniLM - random) on mean test accuracy, or None."""
    means = [row[name]["test_accuracy"]["mean"] for name in ("random", init, "minilm")]
    if None in means or means[2] == means[0]:
        return None
    return round((means[1] - means[0]) / (means[2] - means[0]), 3)


def _cell(figure):
    if figure["mean"] is None:
        return "—"
    ci = "" if figure["ci95"] is None else f" ± {figure['ci95']:.3f}"
    return f"{figure['mean']:.3f}{ci} (n={figure['n']})"


def markdown(results):
    """A short markdown page: what ran where, the test table, the validation table, the payoff, the skips."""
    env, table = results["environment"], results.get("summary", {})
    budgets = list(table)
    inits = [i for i in results["settings"]["inits"] if i in INIT_TITLES]
    lines = []
    if results["quick"]:
        lines += ["> QUICK MODE: tiny model, few steps, a slice of the data, on " + env["device"] +
                  ". These numbers check the machinery; they are not results.", ""]
    lines += [f"# Pretraining payoff where labels are few ({env['date']}, {env['device']})", "",
              f"Command: `{results['command']}`", ""]
    pre = results.get("pretraining")
    if pre:
        electra = pre.get("objective") == "electra"  # studies before --objective pretrained with MLM
        objective = (f"ELECTRA's replaced-token detection (generator {pre['generator']['hidden_dim']} wide)"
                     if electra else "MLM")
        lines += [f"Pretraining: BERT {pre['model']['size']} ({pre['model']['parameters']:,} parameters), {objective}, "
                  f"{pre['steps_done']} steps of {pre['batch_size']} x {pre['sequence_length']} tokens in "
                  f"{pre['minutes']:.2f} min, {pre['tokens_per_second']:,.0f} tokens/s; held-out masked-token "
                  f"accuracy{' (the generator)' if electra else ''}: "
                  + ", ".join(f"{k} {v['austen_heldout']['accuracy']:.3f} (Austen) / "
                              f"{v['review_validation']['accuracy']:.3f} (validation sentences)"
                              for k, v in pre["snapshots"].items()), ""]
        if electra:
            lines += ["Replaced-token detection on held-out Austen (the encoder fine-tuned; calling every token "
                      "original scores the baseline): " + ", ".join(
                          f"{k} {v['austen_heldout']['rtd_accuracy']:.3f} (baseline "
                          f"{v['austen_heldout']['all_original_accuracy']:.3f}; replaced tokens found "
                          f"{v['austen_heldout']['rtd_replaced_accuracy']:.3f})" for k, v in pre["snapshots"].items()),
                      ""]
    for figure, title in (("test_accuracy", "Test accuracy (reported; the test split chose nothing)"),
                          ("validation_accuracy", "Validation accuracy (chose the rate and the step)")):
        lines += [f"## {title}", "", "| init | " + " | ".join(f"{b} labels" for b in budgets) + " |",
                  "|---" * (len(budgets) + 1) + "|"]
        for init in inits:
            cells = " | ".join(_cell(table[b][init][figure]) for b in budgets)
            lines.append(f"| {INIT_TITLES[init]} | {cells} |")
        lines.append("")
    payoff = [k for k in (table[budgets[0]] if budgets else {}) if k.startswith("payoff_")]
    if payoff:
        lines += ["## Payoff over random initialisation (test, paired by seed)", "",
                  "| init | " + " | ".join(f"{b} labels" for b in budgets) + " |", "|---" * (len(budgets) + 1) + "|"]
        for key in payoff:
            init = key.removeprefix("payoff_")
            cells = []
            for b in budgets:
                closed = table[b].get(f"distance_closed_{init}")
                cells.append(_cell(table[b][key]) + ("" if closed is None else f"; closes {closed:.0%}"))
            lines.append(f"| {INIT_TITLES[init]} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["Means over fine-tuning seeds with 95% t-intervals; one pretraining run (seed "
              f"{results['settings']['seed']}).", ""]
    if results.get("wall_seconds") is not None:
        compiled = {"pretraining": (pre or {}).get("compile_seconds"), **results.get("finetuning_compile_seconds", {})}
        lines += [f"Wall time {results['wall_seconds']:.0f} s of a {results['settings']['time_limit']:.0f} s limit; "
                  f"compile seconds {compiled}; timeline (s) {results.get('timeline_seconds')}.", ""]
    if results.get("errors"):
        lines += ["## Errors", ""]
        lines += [f"- {e['what']}: {e['error'].strip().splitlines()[-1]}" for e in results["errors"]] + [""]
    if results.get("skipped"):
        lines += ["## Skipped (time guard)", ""] + [f"- {s}" for s in results["skipped"]] + [""]
    return "\n".join(lines)


def write(results, folder):
    """Writes results.json and results.md into `folder`, each atomically (a kill leaves the previous pair)."""
    os.makedirs(folder, exist_ok=True)
    for name, text in (("results.json", json.dumps(results, indent=1) + "\n"), ("results.md", markdown(results))):
        path = os.path.join(folder, name)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(path + ".tmp", path)
