"""One PNG per explanation: a bar per word, red for, blue against the target (matplotlib, Agg)."""


def plot_attributions(row, path, max_words=60):
    """Draws `row`'s word attributions as horizontal bars, in reading order, to a PNG at `path`.

    Args:
        row: a `TokenAttributions`.
        path: the PNG to write.
        max_words: words shown (the first ones; a note says how many are left out).
    """
    # deferred: matplotlib is the optional `explain` extra, needed only to draw
    import matplotlib

    matplotlib.use("Agg")
    # deferred with matplotlib above (the backend must be chosen before pyplot loads)
    import matplotlib.pyplot as plt

    words, values = row.words[:max_words], row.word_attributions[:max_words]
    height = 0.9 + 0.28 * max(len(words), 1)
    figure, axes = plt.subplots(figsize=(6.4, height), dpi=100)
    colors = ["#b2182b" if v > 0 else "#2166ac" for v in values]
    positions = list(range(len(words)))
    axes.barh(positions, values, color=colors, height=0.7)
    axes.set_yticks(positions, labels=[w if len(w) <= 24 else w[:23] + "…" for w in words], fontsize=9)
    axes.invert_yaxis()
    axes.axvline(0, color="#59636e", linewidth=0.8)
    target = row.target
    title = f"target: {target['name']}" + (f" at '{target['word']}'" if target.get("word") else "")
    title += f"  (score {row.score_input:.3f}"
    title += f", baseline {row.score_baseline:.3f})" if row.score_baseline is not None else ")"
    axes.set_title(title, fontsize=10)
    method = f"integrated gradients, {row.steps} steps" if row.method == "ig" else "gradient × input"
    note = f"{method}; first {max_words} of {len(row.words)} words" if len(row.words) > max_words else method
    axes.set_xlabel(f"attribution ({note})", fontsize=9)
    axes.spines[["top", "right"]].set_visible(False)
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
