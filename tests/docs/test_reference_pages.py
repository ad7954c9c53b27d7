"""The reference pages cover the whole public surface: every exported name, every command-line option.

- Every name in `keras_bert.__all__` has exactly one API entry (`::: keras_bert.<module>.<name>`) on a page of
  docs/reference/api/ (or the jobs page that docs/gen/job_pages.py writes), the entry is that very object, and it
  has a docstring (read by griffe, as mkdocstrings reads it for the page).
- Every subcommand of `keras-bert`, and every option and argument of each, is on the command-line reference
  page, in that subcommand's section. The page is what docs/gen/cli_reference.py writes at build time; here its
  `page()` is called directly.

A new export without an entry, an entry left behind after a rename, or a new option that the generator does not
show fails here with the names. (The strict build, test_docs_build.py, catches entries that do not resolve.)
"""

import argparse
import importlib
import importlib.util
import logging
import re

import pytest

from harness import REPO_ROOT

API_PAGES = REPO_ROOT / "docs" / "reference" / "api"
GENERATORS = REPO_ROOT / "docs" / "gen"
ENTRY = re.compile(r"^:::\s+(keras_bert\.\S+)\s*$", re.MULTILINE)
ONCE = "the pages are read from the sources; the same on every backend"


def generator(name):
    """A module of docs/gen/ (imported, it writes nothing: only mkdocs-gen-files' run of it does)."""
    spec = importlib.util.spec_from_file_location(f"docs_gen_{name}", GENERATORS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def api_entries(pages_dir=API_PAGES, generated=None):
    """{`keras_bert.x.Name`: [page, ...]} of every `:::` entry on the API pages, the generated jobs page included."""
    pages = {path.name: path.read_text(encoding="utf-8") for path in sorted(pages_dir.glob("*.md"))}
    if generated is None:
        generated = {"jobs.md": generator("job_pages").page()}
    pages.update(generated)
    entries = {}
    for page, text in pages.items():
        for path in ENTRY.findall(text):
            entries.setdefault(path, []).append(page)
    return entries


def _resolve(path):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def missing_names(entries, exported):
    """The names of `exported` ({name: object}) with no entry, or with more than one, as readable problems."""
    by_object = {}
    for path in entries:
        by_object.setdefault(id(_resolve(path)), []).append(path)
    problems = []
    for name, obj in exported.items():
        paths = by_object.get(id(obj), [])
        if not paths:
            problems.append(f"{name}: no `::: keras_bert.<module>.{name}` entry on any docs/reference/api page")
        elif len(paths) > 1 or len(entries[paths[0]]) > 1:
            where = [f"{p} ({', '.join(entries[p])})" for p in paths]
            problems.append(f"{name}: more than one entry, {'; '.join(where)} (cross-references need one)")
    return problems


@pytest.fixture(scope="module")
def exported():
    import keras_bert

    return {name: getattr(keras_bert, name) for name in keras_bert.__all__}


@pytest.fixture(scope="module")
def entries():
    return api_entries()


@pytest.mark.only_backend("jax", reason=ONCE)
def test_every_exported_name_has_one_api_entry(entries, exported):
    problems = missing_names(entries, exported)
    assert not problems, "\n".join(problems)


@pytest.mark.only_backend("jax", reason=ONCE)
def test_every_api_entry_has_a_docstring(entries):
    import griffe

    logging.getLogger("griffe").setLevel(logging.ERROR)  # "no type annotation" notes: the docstrings say the types
    package = griffe.load("keras_bert", search_paths=[str(REPO_ROOT)], resolve_aliases=False)
    undocumented = []
    for path in entries:
        docstring = package[path[len("keras_bert."):]].docstring
        if docstring is None or not docstring.value.strip():
            undocumented.append(f"{path} ({', '.join(entries[path])})")
    assert not undocumented, "API entries without a docstring:\n" + "\n".join(undocumented)


def cli_sections(page):
    """{subcommand: the text of its section} of the CLI page; the text before the first section under ""."""
    sections, name = {"": []}, ""
    for line in page.splitlines():
        match = re.match(r"^## `([\w-]+)`", line)
        if match:
            name = match.group(1)
            sections[name] = []
        sections[name].append(line)
    return {key: "\n".join(lines) for key, lines in sections.items()}


def _shown(text, invocation):
    """Whether the page shows `--flag` / `name` as an option or argument (in code: `--flag`, `--flag VALUE`)."""
    return re.search(r"`\s?" + re.escape(invocation) + r"[`\s]", text) is not None


def missing_cli_entries(page, parser, subcommands):
    """Each subcommand, option and argument of the parser that its section of `page` does not show."""
    sections = cli_sections(page)
    problems = []
    for action in parser._actions:
        if action.option_strings and not isinstance(action, argparse._HelpAction):
            problems += [f"keras-bert {flag}" for flag in action.option_strings if not _shown(sections[""], flag)]
    for name, sub in subcommands.items():
        if name not in sections:
            problems.append(f"keras-bert {name}: no section")
            continue
        if not _shown(sections[""], name):
            problems.append(f"keras-bert {name}: not in the table of commands")
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            for flag in action.option_strings or [action.metavar or action.dest]:
                if not _shown(sections[name], flag):
                    problems.append(f"keras-bert {name} {flag}")
    return problems


@pytest.mark.only_backend("jax", reason=ONCE)
def test_cli_page_lists_every_subcommand_and_option():
    cli = generator("cli_reference")
    parser, _ = cli.build_parser()
    subcommands, _ = cli.subcommands(parser)
    assert {"pretrain", "finetune", "distill", "convert", "export", "predict", "embed"} <= set(subcommands)
    problems = missing_cli_entries(cli.page(), parser, subcommands)
    assert not problems, "not on the CLI reference page (docs/gen/cli_reference.py):\n" + "\n".join(problems)
