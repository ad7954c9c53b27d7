"""Puts each study's plots into the site at build time (mkdocs-gen-files), so git holds one copy of each.

A study keeps its script, results file and plots together in benchmarks/studies/<name>/ (plots in any
subfolder, e.g. pretraining_payoff/payoff_curves/). Its page, docs/results/studies/<name>.md, shows them as
`![...](<name>/<file>.png)`: this script copies every PNG of benchmarks/studies/<name>/ to
results/studies/<name>/<file>.png in the built site. Two plots of one study with the same file name are an
error (the page could not tell them apart).

    .venv/bin/python docs/gen/study_plots.py        # lists what the build would copy
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STUDIES = os.path.join(ROOT, "benchmarks", "studies")
HIDDEN = (".", "_")  # .prepared/, __pycache__/: inputs and caches, not plots


def plots():
    """{site path: source path} of every study plot, e.g. results/studies/pretraining_payoff/mlm_nsp.png."""
    found = {}
    for study in sorted(os.listdir(STUDIES)):
        folder = os.path.join(STUDIES, study)
        if not os.path.isdir(folder) or study.startswith(HIDDEN):
            continue
        for directory, subfolders, files in os.walk(folder):
            subfolders[:] = sorted(name for name in subfolders if not name.startswith(HIDDEN))
            for name in sorted(files):
                if not name.lower().endswith(".png"):
                    continue
                target = f"results/studies/{study}/{name}"
                source = os.path.join(directory, name)
                if target in found:
                    raise ValueError(f"two plots of the study {study!r} are named {name}: {found[target]} and {source}")
                found[target] = source
    return found


if __name__ == "__main__":
    for target, source in plots().items():
        print(f"{os.path.relpath(source, ROOT)} -> {target}")
    sys.exit(0)
elif __name__ == "<run_path>":  # run by mkdocs-gen-files (runpy.run_path) during the build; an import writes nothing
    import mkdocs_gen_files

    for target, source in plots().items():
        with open(source, "rb") as f, mkdocs_gen_files.open(target, "wb") as out:
            out.write(f.read())
