"""The long-input benchmark's results as markdown, and the issue's goal checked for every cell of ours.

`results` is the dict `modernbert_long_inputs.main` writes as JSON: `records`
(speed, `benchmarks.common.record` dicts with `job` = the process's Keras
backend), `memory` (one row per forward of the memory processes) and `run`.
"""

GOAL_SPEED = 1.5  # issue 47: at 8,192 tokens our best backend >= 1.5x transformers' fastest, peak memory no higher
GIB = 1024.0  # MiB per GiB


def peak(results, r, call="max"):
    """Peak RSS (MiB) measured for record `r`'s implementation at its length: during its first call, its last
    ("later"), or the highest of them ("max": the process's peak while it runs the forward)."""
    rows = [m for m in results.get("memory", []) if m["model"] == r["extra"]["model"] and m["impl"] == r["impl"]
            and m["dtype"] == r["extra"]["dtype"] and m["length"] == r["extra"]["length"]
            and (r["impl"] != "keras_bert" or m["backend"] == r["backend"])]
    if not rows:
        return None
    if call == "max":
        return max(m["peak_rss_mib"] for m in rows)
    row = min(rows, key=lambda m: m["call"]) if call == "first" else max(rows, key=lambda m: m["call"])
    return row["peak_rss_mib"]


def hf_fastest(results, r):
    """The fastest transformers record of `r`'s process, model and length (any precision)."""
    peers = [p for p in results["records"] if p["impl"] == "hf_transformers" and p.get("job") == r.get("job")
             and p["extra"]["model"] == "modernbert" and p["extra"]["length"] == r["extra"]["length"]]
    return max(peers, key=lambda p: p["median"]) if peers else None


def goals(results):
    """One row per ModernBERT cell of ours at the longest length: speed and peak memory against transformers'
    fastest of the same process (its memory from its own process; the highest peak of the calls), and whether
    each meets the goal."""
    records = [r for r in results["records"] if r["extra"]["model"] == "modernbert"]
    if not records:
        return []
    longest = max(r["extra"]["length"] for r in records)
    rows = []
    for r in records:
        if r["impl"] != "keras_bert" or r["extra"]["length"] != longest:
            continue
        hf = hf_fastest(results, r)
        ours_peak, hf_peak = peak(results, r), peak(results, hf) if hf else None
        speed = r["median"] / hf["median"] if hf else None
        rows.append({
            "length": longest, "backend": r["backend"], "dtype": r["extra"]["dtype"], "tokens_per_s": r["median"],
            "hf_fastest": f"{hf['extra']['dtype']}" if hf else None, "hf_tokens_per_s": hf["median"] if hf else None,
            "speed_ratio": speed, "peak_rss_mib": ours_peak, "hf_peak_rss_mib": hf_peak,
            "speed_met": speed is not None and speed >= GOAL_SPEED,
            "memory_met": None if ours_peak is None or hf_peak is None else ours_peak <= hf_peak,
        })
    for row in rows:
        row["met"] = bool(row["speed_met"] and row["memory_met"])
    return sorted(rows, key=lambda g: -(g["speed_ratio"] or 0))


def _gib(mib):
    return "–" if mib is None else f"{mib / GIB:.2f}"


def _rate(r):
    return f"{r['median']:,.0f} ({r['min']:,.0f}–{r['max']:,.0f})"


def _model(r):
    if r["extra"]["model"] == "modernbert":
        return "ModernBERT"
    return f"BERT, {r['extra']['windows']} windows"


def speed_table(results):
    lines = [
        ("| tokens | process | model | impl | precision | tokens/s median (min–max) | timed rounds | GFLOP/s "
         "| × transformers' fastest ModernBERT, same process | peak RSS GiB, first / later call "
         "| rel. error vs transformers fp32 |"),
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    order = {"keras_bert": 0, "hf_transformers": 1}
    records = sorted(results["records"], key=lambda r: (r["extra"]["length"], r["job"], r["extra"]["model"] != "modernbert",
                                                        order.get(r["impl"], 2), r["extra"]["dtype"]))
    for r in records:
        hf = hf_fastest(results, r)
        ratio = f"{r['median'] / hf['median']:.2f}×" if hf else "–"
        error = r["extra"]["relative_error_vs_hf_fp32"]
        impl = "ours " + r["backend"] if r["impl"] == "keras_bert" else "transformers (sdpa)"
        lines.append(
            f"| {r['extra']['length']:,} | {r['job']} | {_model(r)} | {impl} | {r['extra']['dtype']} | {_rate(r)} "
            f"| {r['repeats']} | {r['gflops']:.0f} | {ratio} | {_gib(peak(results, r, 'first'))} / {_gib(peak(results, r, 'later'))} "
            f"| {'–' if r['impl'] == 'hf_transformers' and r['extra']['dtype'] == 'fp32' else f'{error:.1e}'} |")
    return lines


def goal_table(results):
    rows = results.get("goals") or goals(results)
    if not rows:
        return []
    lines = [
        (f"| ours at {rows[0]['length']:,} tokens | tokens/s | transformers' fastest (same process) | speed × "
         f"(goal ≥ {GOAL_SPEED}×) | peak RSS GiB: ours / transformers' fastest | verdict |"),
        "|---|---|---|---|---|---|",
    ]
    for g in rows:
        speed = "–" if g["speed_ratio"] is None else f"{g['speed_ratio']:.2f}×"
        memory = {True: "no higher", False: "higher", None: "not measured"}[g["memory_met"]]
        verdict = "met" if g["met"] else "missed: " + ", ".join(
            part for part, ok in (("speed", g["speed_met"]), ("memory", g["memory_met"])) if not ok)
        lines.append(
            f"| {g['backend']} {g['dtype']} | {g['tokens_per_s']:,.0f} | {g['hf_fastest']}, {g['hf_tokens_per_s']:,.0f} "
            f"tokens/s | {speed} | {_gib(g['peak_rss_mib'])} / {_gib(g['hf_peak_rss_mib'])} ({memory}) | {verdict} |")
    return lines


def markdown(results):
    run = results.get("run", {})
    machine = run.get("machine", {})
    lines = [
        (f"Command: `{run.get('command', '?')}`; {run.get('date', '?')}, {run.get('wall_seconds', '?')} s; "
         f"{machine.get('cpu', '?')}, {machine.get('cpus', '?')} CPUs ({', '.join(machine.get('isa', []))}); "
         f"load average {run.get('loadavg_start', '?')} at the start, {run.get('loadavg_end', '?')} at the end."),
        "",
        *goal_table(results),
        "",
        *speed_table(results),
    ]
    for e in results.get("errors", []):
        lines += ["", f"Error in {e['job']}:", "", "```", e["error"].strip()[-1500:], "```"]
    return "\n".join(lines)


if __name__ == "__main__":
    #   python -m benchmarks.studies.modernbert_long_inputs.tables RESULTS.json: the goals recomputed into the file,
    #   and the markdown printed (after a change of these tables, without measuring again).
    import json
    import sys

    with open(sys.argv[1], encoding="utf-8") as f:
        saved = json.load(f)
    saved["goals"] = goals(saved)
    with open(sys.argv[1], "w", encoding="utf-8") as f:
        json.dump(saved, f, indent=1)
    print(markdown(saved))
