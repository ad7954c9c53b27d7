"""Writes docs/reference/cli.md from the `keras-bert` argument parser, at every build (mkdocs-gen-files).

Nothing here is copied by hand: the subcommands, their options, help texts, defaults, choices and groups are
read from `keras_bert.cli.main.build_parser()`, whose job options come from the jobs' option dataclasses
(`keras_bert/jobs/*_options.py` through `keras_bert/cli/job_arguments.py`). tests/docs/test_reference_pages.py
checks that every subcommand and option of the parser is on the page.

    .venv/bin/python docs/gen/cli_reference.py        # prints the page
"""

import argparse
import contextlib
import sys


@contextlib.contextmanager
def _as_command_line():
    """Imports keras_bert as the `keras-bert` command does: without loading keras or TensorFlow.

    `import keras_bert` loads the model classes unless the process is the command line
    (`keras_bert._command_line_startup.running_as_command_line`, which reads `sys.argv[0]`); the parser itself
    needs neither, and the docs build should not spend seconds importing them.
    """
    argv = sys.argv
    sys.argv = ["keras-bert", *argv[1:]]
    try:
        yield
    finally:
        sys.argv = argv


def build_parser():
    import importlib

    with _as_command_line():
        main = importlib.import_module("keras_bert.cli.main")  # the module (keras_bert.cli.main is also a function)
    return main.build_parser(), main


def subcommands(parser):
    """`{name: subparser}` in the order `keras-bert --help` lists them, and `{name: one-line help}`."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: choice.help for choice in action._choices_actions}
    return dict(action.choices), helps


def _escape(text):
    """Text for a markdown table cell (help strings may hold `|`, `<...>` and newlines)."""
    return " ".join(str(text).split()).replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def _code(text):
    text = str(text)
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}".replace("|", "\\|")


def _help_text(action, main):
    """The help string as `--help` prints it, without the "(default: ...)" that the table has its own column for."""
    text = action.help or ""
    if text == argparse.SUPPRESS:
        return ""
    params = dict(vars(action), prog="keras-bert", default=main._default(action))
    if params.get("choices") is not None:
        params["choices"] = ", ".join(map(str, params["choices"]))
    text = text % params if "%" in text else text
    # `_add_command` gives an option without help the text "(default: X)": the table shows X in its own column.
    return "" if text.startswith("(default:") else text


def _default_cell(action, main):
    if not action.option_strings:
        return "required"
    if action.required:
        return "required"
    if not main._has_default_to_show(action):
        return "–"
    default = main._default(action)
    if isinstance(default, (list, tuple)):
        default = " ".join(map(str, default))
    return _code(default)


def _invocation(action, parser):
    """`--flag VALUE` / `--x, --no-x` / `name` as the help lists it; `--flag {a,b}` as `--flag FLAG` (the table
    lists the choices in the description column, where they wrap)."""
    import re

    formatter = parser._get_formatter()
    if not action.option_strings:
        return _code(action.metavar or action.dest)
    text = re.sub(r"\{[^}]*\}", action.dest.upper(), formatter._format_action_invocation(action))
    return ", ".join(_code(part.strip()) for part in text.split(", "))


def _choices(action):
    if action.choices is None or isinstance(action, argparse._SubParsersAction):
        return ""
    return "one of " + ", ".join(_code(choice) for choice in action.choices)


def _group_table(actions, parser, main):
    kind = "option" if all(action.option_strings for action in actions) else "argument"
    lines = [f"| {kind} | what it does | default |", "|---|---|---|"]
    for action in actions:
        what = _escape(_help_text(action, main))
        invocation = _invocation(action, parser)
        choices = _choices(action)
        if choices and "one of" not in what:
            what = f"{what} ({choices})" if what else choices
        lines.append(f"| {invocation} | {what} | {_default_cell(action, main)} |")
    return lines


def _usage(parser):
    """The usage text without its "usage: " label (continuation lines moved left by as much)."""
    first, *rest = parser.format_usage().strip().splitlines()
    cut = len("usage: ")
    return "\n".join([first[cut:], *(line[cut:] if line[:cut].isspace() else line for line in rest)])


def _example_lines(text):
    """A subcommand module's example command lines, their trailing "   (remarks)" as shell comments."""
    import re
    import textwrap

    lines = textwrap.dedent(text).strip().splitlines()
    return [re.sub(r"\s{2,}\((.*)\)\s*$", r"  # \1", line) for line in lines if line.strip()]


def _module_doc(name):
    """The first paragraph after the title of the subcommand module's docstring (its example command lines)."""
    import importlib

    with _as_command_line():
        module = importlib.import_module(f"keras_bert.cli.{name.replace('-', '_')}")  # bias-check: bias_check
    doc = (module.__doc__ or "").strip().split("\n\n")
    return doc[1] if len(doc) > 1 else ""


def page():
    """The markdown of docs/reference/cli.md."""
    parser, main = build_parser()
    commands, helps = subcommands(parser)
    out = [
        "# Command line reference",
        "",
        "Every subcommand of `keras-bert` (also `python -m keras_bert`) with every option, its help and its default, "
        "generated from the command's own argument parser when the site is built "
        "(`docs/gen/cli_reference.py` reads `keras_bert.cli.main.build_parser()`; the training jobs' options come "
        "from their option dataclasses, `keras_bert/jobs/*_options.py`). "
        "The guide [The command line](../guides/command-line.md) shows them at work; "
        "`keras-bert <command> --help` prints the same in a terminal.",
        "",
        "An option left out is not passed to the job at all, so the default shown is the job function's own: "
        "the Python keyword of the same name (with `_` for `-`) has the same default and the same valid range. "
        "A value out of range is refused while the arguments are parsed, before any data, Keras or TensorFlow "
        "loads. User errors end with exit status 2 and a one-line reason (`--debug` shows the traceback "
        "instead); Ctrl-C ends with 130, and for a training job names the last checkpoint and the command that "
        "resumes from it.",
        "",
        "```text",
        _usage(parser),
        "```",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    for name in commands:
        out.append(f"| [`{name}`](#{name}) | {_escape(helps.get(name, ''))} |")
    out.append("")
    top = [a for a in parser._actions if a.option_strings and not isinstance(a, argparse._HelpAction)]
    out += ["Options of `keras-bert` itself, before the command:", "", "| option | what it does |", "|---|---|"]
    out += [f"| {_invocation(a, parser)} | {_escape(_help_text(a, main))} |" for a in top]
    out.append("")

    for name, sub in commands.items():
        summary = _escape(helps.get(name, ""))
        out += [f"## `{name}` {{#{name}}}", "", summary[:1].upper() + summary[1:] + ".", ""]
        example = _module_doc(name)
        if example:
            out += ["```bash", *_example_lines(example), "```", ""]
        out += ["Usage:", "", "```text", _usage(sub), "```", ""]
        for group in sub._action_groups:
            actions = [a for a in group._group_actions if not isinstance(a, argparse._HelpAction)]
            if not actions:
                continue
            title = {"positional arguments": "Arguments", "options": "Options"}.get(group.title, group.title)
            out += [f"**{_escape(title)}**", ""]
            if group.description:
                out += [_escape(group.description), ""]
            out += _group_table(actions, sub, main)
            out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(page())
elif __name__ == "<run_path>":  # run by mkdocs-gen-files (runpy.run_path) during the build; an import writes nothing
    import mkdocs_gen_files

    with mkdocs_gen_files.open("reference/cli.md", "w") as f:
        f.write(page())
    mkdocs_gen_files.set_edit_path("reference/cli.md", "gen/cli_reference.py")
