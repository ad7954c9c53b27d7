"""The command line as a package: every subcommand reachable, argparse and UserError kept inside cli/.

`keras_bert/cli/` is the only part of the package that parses arguments or
raises `UserError`; library code raises ValueError / OSError, which the CLI
reports the same way. These checks read the source (ast), so they run on any backend.
"""

import ast
import os
import pathlib
import subprocess
import sys

import pytest

from keras_bert.cli import build_parser
from keras_bert.tasks import CLI_NAMES, TASKS

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "keras_bert"
COMMANDS = ("vocab", "pretrain", "finetune", "distill", "convert", "export", "predict", "embed")
# The demos are scripts that use keras_bert as any user does, with their own argparse.
SCRIPTS = ("examples",)


@pytest.mark.only_backend("torch", reason="`--help` parses no model: the same on every backend, and a child "
                          "process start costs 10-15 s (torch's pass of the suite is the shortest)")
@pytest.mark.parametrize("module", ["keras_bert", "keras_bert.cli"])
def test_help_lists_every_subcommand(module):
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent), "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run(
        [sys.executable, "-m", module, "--help"], capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "{" + ",".join(COMMANDS) + "}" in result.stdout
    for command in COMMANDS:
        assert f"\n    {command} " in result.stdout, f"{command} has no help line:\n{result.stdout}"


def cli_only_violations(source, where):
    """`["where:line: what"]` for each argparse import or UserError use in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(alias.name == "argparse" for alias in node.names):
            found.append(f"{where}:{node.lineno}: imports argparse")
        elif isinstance(node, ast.ImportFrom) and node.module == "argparse":
            found.append(f"{where}:{node.lineno}: imports from argparse")
        elif isinstance(node, ast.ImportFrom) and any(alias.name == "UserError" for alias in node.names):
            found.append(f"{where}:{node.lineno}: imports UserError")
        elif isinstance(node, (ast.Name, ast.Attribute)) and getattr(node, "id", getattr(node, "attr", None)) == "UserError":
            found.append(f"{where}:{node.lineno}: uses UserError")
    return found


def test_the_checker_sees_argparse_and_user_errors():
    assert cli_only_violations("import argparse\n", "a") == ["a:1: imports argparse"]
    assert cli_only_violations("from argparse import ArgumentParser\n", "a") == ["a:1: imports from argparse"]
    assert cli_only_violations("from keras_bert.cli.errors import UserError\n", "a") == ["a:1: imports UserError"]
    assert cli_only_violations("def f(cli):\n    raise cli.UserError('x')\n", "a") == ["a:2: uses UserError"]
    assert cli_only_violations("def f():\n    raise ValueError('argparse UserError')\n", "a") == []


def test_only_cli_parses_arguments_or_raises_user_errors():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        part = path.relative_to(PACKAGE).parts[0]
        if part in ("cli", *SCRIPTS):
            continue
        found += cli_only_violations(path.read_text(encoding="utf-8"), path.relative_to(PACKAGE.parent))
    assert not found, "argparse and UserError belong in keras_bert/cli/:\n" + "\n".join(found)


FINETUNE = ["finetune", "--init", "tiny", "--train", "train.tsv", "--out", "runs/x"]


@pytest.mark.parametrize("task", sorted(TASKS))
def test_finetune_accepts_the_registry_names_as_the_cli_words(task):
    cli_word = TASKS[task].cli_name
    by_name = build_parser().parse_args([*FINETUNE, "--task", task])
    by_word = build_parser().parse_args([*FINETUNE, "--task", cli_word])
    assert vars(by_name) == vars(by_word)
    assert by_name.task == cli_word


def test_finetune_task_choices_are_the_registry_cli_words(capsys):
    parser = build_parser()
    finetune = parser._subparsers._group_actions[0].choices["finetune"]
    (task,) = [action for action in finetune._actions if action.dest == "task"]
    assert list(task.choices) == list(CLI_NAMES)
    with pytest.raises(SystemExit) as exit:
        parser.parse_args([*FINETUNE, "--task", "summarize"])
    assert exit.value.code == 2
    assert "invalid choice: 'summarize'" in capsys.readouterr().err
