"""The explanations as one self-contained HTML page: each text shaded word by word, red for, blue against."""

import html

# The page's only style: inline, no external assets (it opens from a file, offline, anywhere).
_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 60rem;
       color: #1f2328; line-height: 1.5; padding: 0 1rem; }
h1 { font-size: 1.4rem; margin-bottom: .2rem; }
.meta { color: #59636e; font-size: .9rem; }
.legend { display: flex; align-items: center; gap: .6rem; margin: 1rem 0 1.5rem; font-size: .9rem; }
.bar { width: 16rem; height: .9rem; border: 1px solid #d1d9e0; border-radius: 3px;
       background: linear-gradient(to right, rgb(33,102,172), #fff, rgb(178,24,43)); }
.row { border: 1px solid #d1d9e0; border-radius: 6px; padding: .8rem 1rem; margin-bottom: 1rem; }
.target { font-weight: 600; }
.field { margin: .4rem 0; font-size: 1.1rem; }
.label { color: #59636e; font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; margin-right: .4rem; }
.w { border-radius: 3px; padding: 0 1px; }
.scores { color: #59636e; font-size: .85rem; }
details { margin-top: .4rem; font-size: .85rem; }
.t { display: inline-block; border-radius: 3px; padding: 0 3px; margin: 1px; font-family: ui-monospace, monospace; }
"""
_FIELD_LABELS = {
    "classifier": ("text", "pair"), "regressor": ("text", "pair"), "token_classifier": ("text",),
    "question_answerer": ("question", "context"), "multiple_choice": ("context", "choice"),
}


def shade(value, scale):
    """A CSS background for an attribution: red for positive, blue for negative, white at 0 (white text when dark)."""
    strength = 0.0 if scale == 0 else min(abs(value) / scale, 1.0)
    red, blue = (178, 24, 43), (33, 102, 172)
    color = red if value > 0 else blue
    mixed = [round(255 + (c - 255) * strength) for c in color]
    text = "; color: #fff" if strength > 0.6 else ""  # dark text on the darkest shades is hard to read
    return f"background: rgb({mixed[0]},{mixed[1]},{mixed[2]}){text}"


def _shaded_field(text, spans, values, scale):
    """One field's text with its words in `<span>`s shaded by their attributions (the rest as it is)."""
    parts, at = [], 0
    for (start, end), value in sorted(zip(spans, values)):
        parts.append(html.escape(text[at:start]))
        parts.append(
            f'<span class="w" style="{shade(value, scale)}" title="{value:+.4f}">{html.escape(text[start:end])}</span>'
        )
        at = end
    parts.append(html.escape(text[at:]))
    return "".join(parts)


def _row_html(number, row, task):
    values = row.word_attributions
    scale = max((abs(v) for v in values), default=0.0)
    labels = _FIELD_LABELS.get(task, ("text",))
    target = row.target
    title = f"target: {html.escape(str(target['name']))}"
    if target.get("word") is not None:
        title += f" at “{html.escape(target['word'])}”"
    fields = []
    for f, text in enumerate(row.fields):
        if task == "multiple_choice" and f > 0 and f != target.get("index", -1) + 1:
            continue  # the other choices' sequences play no part in this choice's score
        spans = [(s[1], s[2]) for s in row.word_spans if s[0] == f and s[1] is not None]
        word_values = [v for s, v in zip(row.word_spans, values) if s[0] == f and s[1] is not None]
        label = labels[min(f, len(labels) - 1)]
        fields.append(f'<div class="field"><span class="label">{label}</span>'
                      f"{_shaded_field(text, spans, word_values, scale)}</div>")
    token_scale = max((abs(v) for v in row.attributions), default=0.0)
    tokens = "".join(
        f'<span class="t" style="{shade(v, token_scale)}" title="{v:+.4f}">{html.escape(t)}</span>'
        for t, v in zip(row.tokens, row.attributions)
    )
    scores = f"score at the input {row.score_input:.4f}"
    if row.score_baseline is not None:
        scores += (f" · at the baseline {row.score_baseline:.4f} · sum of attributions {sum(row.attributions):.4f}")
    return (f'<div class="row"><div class="target">{number}. {title}</div>{"".join(fields)}'
            f'<div class="scores">{scores}</div>'
            f"<details><summary>wordpieces</summary>{tokens}</details></div>")


def report_html(rows, task, title="Token attributions"):
    """The report page for `TokenAttributions` rows of one model (a string of HTML)."""
    first = rows[0] if rows else None
    method = "no rows"
    if first is not None:
        method = ("integrated gradients, " f"{first.steps} steps ({first.integration}), {first.baseline} baseline"
                  if first.method == "ig" else "gradient × input")
    body = "".join(_row_html(i + 1, row, task) for i, row in enumerate(rows))
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"
        f'<div class="meta">{html.escape(task)} · {method} · each word shaded by the sum of its wordpieces\' '
        "attributions, scaled to the largest in its row; hover for the value</div>"
        '<div class="legend"><span>against the target</span><span class="bar"></span><span>for the target</span></div>'
        f"{body}</body></html>\n"
    )
