"""MkDocs hooks of the site (mkdocs.yml `hooks:`).

The study pages (docs/results/studies/<name>.md, one per study) join the navigation by themselves: the
"Studies" section of mkdocs.yml's nav is filled here with every such page, titled by its first heading, so a
new study needs no edit of mkdocs.yml.
"""

import os
import re

_STUDIES_DIR = os.path.join("results", "studies")


def _title(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            match = re.match(r"#\s+(.+?)\s*#*\s*$", line)
            if match:
                return match.group(1)
    return os.path.splitext(os.path.basename(path))[0].replace("-", " ").replace("_", " ").capitalize()


def study_pages(docs_dir):
    """The nav entries of docs/results/studies/: its index.md first (the section's page), then by title."""
    folder = os.path.join(docs_dir, _STUDIES_DIR)
    if not os.path.isdir(folder):
        return []
    names = sorted(name for name in os.listdir(folder) if name.endswith(".md"))
    index = [f"{_STUDIES_DIR}/index.md"] if "index.md" in names else []
    pages = [{_title(os.path.join(folder, name)): f"{_STUDIES_DIR}/{name}"} for name in names if name != "index.md"]
    return index + sorted(pages, key=lambda entry: next(iter(entry)).lower())


def _fill(nav, pages):
    """Replaces the `Studies: []` entry of `nav` (nested anywhere) with `pages`, or drops it when there are none."""
    filled = []
    for entry in nav:
        if isinstance(entry, dict) and list(entry) == ["Studies"] and entry["Studies"] == []:
            if pages:
                filled.append({"Studies": pages})
            continue
        if isinstance(entry, dict):
            entry = {key: _fill(value, pages) if isinstance(value, list) else value for key, value in entry.items()}
        filled.append(entry)
    return filled


def on_config(config):
    if config.nav:
        config.nav = _fill(config.nav, study_pages(config.docs_dir))
    return config


# --------------------------------------------------------------------------- design/architecture.md
_PART_FLOORS = "<!-- generated: part floors -->"


def _structure_test():
    """tests/test_structure.py as a module: its `part_graph()` is what the test checks, read the same way here."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "tests", "test_structure.py")
    spec = importlib.util.spec_from_file_location("_docs_test_structure", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def part_floors_table():
    """Markdown: each part of keras_bert, its floor (0 imports nothing of the package) and the parts it imports."""
    graph = _structure_test().part_graph()
    floors = {}

    def floor(part, seen=()):
        if part not in floors:
            if part in seen:  # a cycle: test_structure fails on it; show it rather than loop
                return 0
            floors[part] = 1 + max((floor(p, (*seen, part)) for p in graph.get(part, ())), default=-1)
        return floors[part]

    public = sorted((part for part in graph if not part.startswith("_") and part != "__main__"),
                    key=lambda part: (-floor(part), part))
    lines = ["| floor | part | imports (parts of keras_bert) |", "|---|---|---|"]
    for part in public:
        imported = ", ".join(f"`{p}`" for p in sorted(graph[part]) if not p.startswith("_")) or "nothing"
        lines.append(f"| {floor(part)} | `{part}` | {imported} |")
    return "\n".join(lines)


def on_page_markdown(markdown, page, **kwargs):
    if _PART_FLOORS in markdown:
        markdown = markdown.replace(_PART_FLOORS, part_floors_table())
    return markdown
