"""Explanations on disk: `attributions.jsonl`, `report.html` and a PNG per explanation, all or nothing."""

import glob
import json
import os
import shutil
import tempfile

from keras_bert.explain.attribution_plot import plot_attributions
from keras_bert.explain.html_report import report_html


def png_name(number):
    """The PNG of the `number`-th row (1-based): `explanation_001.png`, ..."""
    return f"explanation_{number:03d}.png"


# What an earlier report may have left in the folder (removed when a new one is written there).
_REPORT_FILES = ("attributions.jsonl", "report.html", "deletion_curve.json", "explanation_[0-9][0-9][0-9]*.png")


def write_attribution_report(rows, out_dir, task, title="Token attributions", pictures=True, extra=None):
    """Writes the rows' report files into `out_dir` (created; the files of an earlier report there replaced).

    The files are written to a temporary folder beside `out_dir` and moved in
    at the end, so a failure leaves `out_dir` as it was.

    Args:
        rows: a list of `TokenAttributions`.
        out_dir: the folder.
        task: the model's task kind (the report's labels).
        title: the HTML page's title.
        pictures: also draw one PNG per row (needs matplotlib).
        extra: optional dict `{file name: JSON-able value}` written beside them
            (the command's `deletion_curve.json`).

    Returns:
        The paths written, in order: the JSON lines, the page, the PNGs.
    """
    parent = os.path.dirname(os.path.abspath(out_dir))
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".explain-", dir=parent)
    try:
        names = ["attributions.jsonl", "report.html"]
        with open(os.path.join(staging, names[0]), "w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row.to_dict(), ensure_ascii=False) + "\n")
        with open(os.path.join(staging, names[1]), "w", encoding="utf-8") as f:
            f.write(report_html(rows, task, title))
        for name, value in (extra or {}).items():
            names.append(name)
            with open(os.path.join(staging, name), "w", encoding="utf-8") as f:
                json.dump(value, f, indent=1)
        if pictures:
            for number, row in enumerate(rows, 1):
                names.append(png_name(number))
                plot_attributions(row, os.path.join(staging, names[-1]))
        os.makedirs(out_dir, exist_ok=True)
        for pattern in _REPORT_FILES:
            for stale in glob.glob(os.path.join(glob.escape(str(out_dir)), pattern)):
                os.remove(stale)
        for name in names:
            os.replace(os.path.join(staging, name), os.path.join(out_dir, name))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [os.path.join(out_dir, name) for name in names]
