"""Writes docs/notebooks/<name>.md from notebooks/<name>.ipynb at every build (mkdocs-gen-files), without running them.

Markdown cells are copied as they are, code cells become Python code blocks; the page adds the notebook's
Colab link, a download link and the backend its first cell picks. The notebooks keep no outputs in git
(`make notebooks` runs them, and writes executed copies to notebooks/_executed/, which is git-ignored), so
the pages show the code and the prose, and Colab shows the outputs. Links that a notebook makes to other
files of the repository (plots of a study, ...) point at GitHub, where those files are.

    .venv/bin/python docs/gen/notebook_pages.py notebooks/02_finetune_sentiment.ipynb     # prints a page
"""

import glob
import json
import os
import posixpath
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPOSITORY = "keras-bert/keras-bert"
BRANCH = "main"
GITHUB = f"https://github.com/{REPOSITORY}"
COLAB = f"https://colab.research.google.com/github/{REPOSITORY}/blob/{BRANCH}"
BACKEND_NAMES = {"tensorflow": "TensorFlow", "jax": "JAX", "torch": "PyTorch"}
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def notebooks():
    """The notebooks' paths relative to the repository root, in order."""
    return sorted(os.path.relpath(path, ROOT) for path in glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))


def page_name(notebook):
    return f"notebooks/{os.path.splitext(os.path.basename(notebook))[0]}.md"


def _source(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _outside_links(text, notebook):
    """Relative links of a markdown cell, made absolute GitHub addresses (the files are not part of the site)."""

    def absolute(match):
        bang, label, target = match.groups()
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            return match.group(0)
        path = posixpath.normpath(posixpath.join(posixpath.dirname(notebook), target))
        kind = "raw" if bang else "blob"
        return f"{bang}[{label}]({GITHUB}/{kind}/{BRANCH}/{path})"

    return _LINK.sub(absolute, text)


def _fence(code):
    ticks = "```"
    while ticks in code:
        ticks += "`"
    return ticks


def backend(cells):
    """The Keras backend the notebook's code sets (`os.environ["KERAS_BACKEND"] = "jax"`), or None."""
    for cell in cells:
        if cell["cell_type"] == "code":
            match = re.search(r"""KERAS_BACKEND["']\]\s*=\s*["'](\w+)["']""", _source(cell))
            if match:
                return match.group(1)
    return None


def page(notebook):
    """The markdown page of one notebook (a path relative to the repository root)."""
    with open(os.path.join(ROOT, notebook), encoding="utf-8") as f:
        cells = json.load(f)["cells"]
    notebook = notebook.replace(os.sep, "/")
    name = os.path.basename(notebook)
    keras_backend = backend(cells)
    links = [
        f"[:simple-googlecolab: Open in Colab]({COLAB}/{notebook})",
        f"[:material-download: Download `{name}`]({GITHUB}/raw/{BRANCH}/{notebook})",
        f"[:material-github: View on GitHub]({GITHUB}/blob/{BRANCH}/{notebook})",
    ]
    note = [
        '!!! note "A notebook, shown without running it"',
        "",
        "    This page is the notebook's code and prose; open it in Colab to run it and see its output and plots."
        + (f" It runs on the **{BACKEND_NAMES.get(keras_backend, keras_backend)}** backend (its first code cell "
           f'sets `KERAS_BACKEND="{keras_backend}"`).' if keras_backend else "")
        + " In Colab its first cell installs keras-bert and it downloads public data and weights; `make notebooks`"
          " (part of `make test`) runs it top to bottom on local copies with tiny sizes.",
        "",
    ]
    out = []
    header_done = False
    for cell in cells:
        text = _source(cell).rstrip()
        if not text:
            continue
        if cell["cell_type"] == "markdown":
            text = _outside_links(text, notebook)
            if not header_done and text.startswith("# "):
                title, _, rest = text.partition("\n")
                out += [title, "", " · ".join(links), "", *note, rest.strip(), ""]
                header_done = True
                continue
            out += [text, ""]
        elif cell["cell_type"] == "code":
            fence = _fence(text)
            out += [f"{fence}python", text, fence, ""]
    if not header_done:  # a notebook without a title cell: the file name is the title
        out = [f"# {os.path.splitext(name)[0]}", "", " · ".join(links), "", *note, *out]
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    for path in sys.argv[1:] or notebooks():
        print(page(path))
elif __name__ == "<run_path>":  # run by mkdocs-gen-files (runpy.run_path) during the build; an import writes nothing
    import mkdocs_gen_files

    for path in notebooks():
        with mkdocs_gen_files.open(page_name(path), "w") as f:
            f.write(page(path))
        mkdocs_gen_files.set_edit_path(page_name(path), "gen/notebook_pages.py")
