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
from keras_bert.task_registry import CLI_NAMES, TASKS

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "keras_bert"
COMMANDS = ("vocab", "pretrain", "finetune", "distill", "convert", "export", "predict", "embed", "bias-check",
            "explain")
# The demos are scripts that use keras_bert as any user does, with their own argparse.
SCRIPTS = ("examples",)


# What a command that has not parsed its arguments yet must not import: with them `--help` took 8.2-13.2 s.
HEAVY_MODULES = frozenset({"keras", "tensorflow", "torch", "jax", "tf_keras"})


def _command_with_imports(module, *args):
    """`python -X importtime -m module args`: (the CompletedProcess, the top-level modules it imported)."""
    env = {**os.environ, "PYTHONPATH": str(PACKAGE.parent), "TF_CPP_MIN_LOG_LEVEL": "3"}
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", module, *args], capture_output=True, text=True, env=env, timeout=300
    )
    # importtime lines: "import time: self | cumulative | <indent>name"
    imported = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in result.stderr.splitlines()
                if line.startswith("import time:") and line.count("|") == 2}
    return result, imported


@pytest.mark.only_backend("torch", reason="`--help` parses no model: the same on every backend")
@pytest.mark.parametrize("module", ["keras_bert", "keras_bert.cli"])
def test_help_lists_every_subcommand_without_loading_keras(module):
    result, imported = _command_with_imports(module, "--help")
    assert result.returncode == 0, result.stderr
    assert "{" + ",".join(COMMANDS) + "}" in result.stdout
    for command in COMMANDS:
        assert f"\n    {command} " in result.stdout, f"{command} has no help line:\n{result.stdout}"
    assert "argparse" in imported  # the import list was read: the next assertion is not vacuous
    assert not imported & HEAVY_MODULES, sorted(imported & HEAVY_MODULES)


@pytest.mark.only_backend("torch", reason="`--help` parses no model: the same on every backend")
def test_each_subcommand_help_and_argument_errors_end_before_keras_loads(tmp_path):
    for command in COMMANDS:
        result, imported = _command_with_imports("keras_bert", command, "--help")
        assert result.returncode == 0 and f"usage: keras-bert {command}" in result.stdout, result.stderr[-2000:]
        assert "argparse" in imported and not imported & HEAVY_MODULES, (command, sorted(imported & HEAVY_MODULES))
    result, imported = _command_with_imports("keras_bert", "finetune", "--task", "nope")
    assert result.returncode == 2 and "invalid choice: 'nope'" in result.stderr
    assert not imported & HEAVY_MODULES, sorted(imported & HEAVY_MODULES)
    # So does a missing input file (`cli.preflight`).
    result, imported = _command_with_imports("keras_bert", "predict", "no-such-model.keras", "a text")
    assert result.returncode == 2 and "no-such-model.keras: no such file" in result.stderr
    assert not imported & HEAVY_MODULES, sorted(imported & HEAVY_MODULES)
    # A command whose arguments parse and whose files exist does load them (the checks above can see them).
    model = tmp_path / "broken.keras"
    model.write_bytes(b"not a zip archive")
    result, imported = _command_with_imports("keras_bert", "predict", str(model), "a text")
    assert result.returncode == 2 and "not a .keras file" in result.stderr
    assert "tensorflow" in imported


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
