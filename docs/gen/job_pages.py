"""Writes docs/reference/api/jobs.md at every build (mkdocs-gen-files): the jobs as Python functions.

A job function (`pretrain`, `finetune`, `distill`, `convert`) takes the fields of its options dataclass
(`keras_bert/jobs/*_options.py`) as keywords: `takes_options` gives it that signature at import time, which
static analysis cannot see. So this page shows each job's docstring through mkdocstrings (`:::`) and, below
it, its real signature and a table of its keywords generated from the dataclass: default, what it does, and
the command-line flag that sets it. Nothing is copied by hand.

    .venv/bin/python docs/gen/job_pages.py        # prints the page
"""

import dataclasses
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_reference import _as_command_line  # noqa: E402  (the generators' folder is not a package)

# (job, the module that defines it, its options class's module and name, where its `:::` entry lives)
JOBS = (
    ("pretrain", "keras_bert.jobs.pretrain", "keras_bert.jobs.pretrain_options", "PretrainOptions", None),
    ("finetune", "keras_bert.jobs.finetune", "keras_bert.jobs.finetune_options", "FinetuneOptions", None),
    ("distill", "keras_bert.jobs.distill", "keras_bert.jobs.distill_options", "DistillOptions", None),
    # `convert` is documented on the converters page (one entry per name, so cross-references are unique).
    ("convert", "keras_bert.jobs.convert", "keras_bert.jobs.convert_options", "ConvertOptions",
     "converters.md#keras_bert.jobs.convert.convert"),
)
# The `**keywords` a job passes on, and where they are documented.
MORE_KEYWORDS = {
    "pretrain": ("data_options", "every field of [`PretrainingDataConfig`](pretraining.md#keras_bert.preprocessing."
                                 "pretraining.config.PretrainingDataConfig) (`sequence_length`, `batch_size`, "
                                 "`masking`, ...), replacing those of `data`"),
    "distill": ("task_options", "the task file options of `finetune` below (`text_column`, `word_column`, ...), "
                                "when the student reads other files than the teacher's run did"),
}


def _options_class(module, name):
    with _as_command_line():
        return getattr(importlib.import_module(module), name)


def _cell(text):
    return " ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _default(field):
    if field.default is dataclasses.MISSING:
        return "required"
    return f"`{field.default!r}`".replace("|", "\\|")


def _flag(field):
    metadata = field.metadata
    if not metadata["cli"]:
        return "Python only"
    if metadata["switches"]:  # flags that set a value; their help describes the flag
        return ", ".join(f"`{flag}` (sets `{value!r}`)" for flag, value in metadata["switches"].items())
    flag = metadata["flag"] or "--" + field.name.replace("_", "-")
    return f"`{flag}`" if flag.startswith("-") else f"`{flag}` (positional)"


def signature(job, options_class):
    """`job(a, b, *, c=1, ...)` as `takes_options` makes it (`inspect.signature` of the imported job shows the same)."""
    parts, keyword_only = [], False
    for field in options_class.python_fields():
        if field.name not in options_class.POSITIONAL and not keyword_only:
            parts.append("*")
            keyword_only = True
        default = "" if field.default is dataclasses.MISSING else f"={field.default!r}"
        parts.append(f"{field.name}{default}")
    if job in MORE_KEYWORDS:
        parts.append(f"**{MORE_KEYWORDS[job][0]}")
    return f"{job}(\n" + "".join(f"    {part},\n" for part in parts) + ")"


def keyword_table(options_class):
    lines = ["| keyword | default | what it does | command line |", "|---|---|---|---|"]
    for field in options_class.python_fields():
        lines.append(f"| `{field.name}` | {_default(field)} | {_cell(field.metadata['help'] or '')} | {_flag(field)} |")
    return lines


def page():
    out = [
        "# Jobs",
        "",
        "The command line's training and conversion jobs, as Python functions: `keras-bert pretrain ...` and "
        "`keras_bert.jobs.pretrain.pretrain(...)` run the same code with the same options. Each job writes its "
        "output folder (the model, its vocabulary and a JSON record of the run), resumes from its last checkpoint "
        "with `resume=True`, and returns its metrics. Every keyword below is a field of the job's options "
        "dataclass (`keras_bert/jobs/*_options.py`): the default and the valid range are defined there once, "
        "for Python and for the [command line](../cli.md) alike, and this table is generated from it.",
        "",
        "```python",
        "from keras_bert.jobs.finetune import finetune",
        "",
        'metrics = finetune("classify", "path/to/hf_bert", "train.tsv", "runs/sst",',
        '                   eval="dev.tsv", epochs=2)',
        "```",
        "",
        "Guide: [the command line](../../guides/command-line.md).",
        "",
    ]
    for job, module, options_module, options_name, elsewhere in JOBS:
        options_class = _options_class(options_module, options_name)
        if elsewhere:
            out += [f"## `{job}`", "", f"Documented with the converters: [`{job}`]({elsewhere}). Its keywords:", ""]
        else:
            out += [f"::: {module}.{job}", "    options:", "      show_signature: false", "      separate_signature: false",
                    "      heading_level: 2", ""]
        out += ["```python", signature(job, options_class), "```", ""]
        out += [f"**Keywords** (the fields of `{options_module}.{options_name}`):", ""]
        out += keyword_table(options_class)
        if job in MORE_KEYWORDS:
            name, what = MORE_KEYWORDS[job]
            out.append(f"| `**{name}` | | {what} | |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(page())
elif __name__ == "<run_path>":  # run by mkdocs-gen-files (runpy.run_path) during the build; an import writes nothing
    import mkdocs_gen_files

    with mkdocs_gen_files.open("reference/api/jobs.md", "w") as f:
        f.write(page())
    mkdocs_gen_files.set_edit_path("reference/api/jobs.md", "gen/job_pages.py")
