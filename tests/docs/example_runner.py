"""Runs documentation examples (docs/examples/*.py and *.sh) one after another in this process.

    python tests/docs/example_runner.py PLAN.json RESULTS.json

Why one process for many examples: each example imports keras, TensorFlow and
keras_bert (5-10 s on the 2-core test machine before it does anything), so a
batch of examples in one child process pays that once. Each example still runs
as a reader runs it: a Python file as `__main__` (`runpy.run_path`), a shell
file's `keras-bert ...` commands through the command line's own `main()`, each
in the batch's working folder (the data files the pages name are placed there
by the test). Between examples the environment, the working folder, Keras'
session and the dtype policy are put back.

PLAN.json: {"work": folder, "examples": [{"name", "path", "kind": "python" | "shell",
"env": {...}, "replace": [[old, new], ...]}]}. RESULTS.json gets, per name,
{"ok", "error", "seconds", "stdout", "commands"}; the runner itself exits 0.
"""

import contextlib
import io
import json
import os
import re
import runpy
import shlex
import subprocess
import sys
import time
import traceback


def shell_commands(text):
    """The commands of a shell file: comments dropped, backslash continuations joined, one string each."""
    commands, current = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        # An inline comment after a command (`keras-bert ... # why`) is not part of it.
        code = re.split(r"\s+#\s", stripped, maxsplit=1)[0] if "#" in stripped else stripped
        if code.endswith("\\"):
            current += code[:-1] + " "
            continue
        commands.append((current + code).strip())
        current = ""
    if current:
        commands.append(current.strip())
    return commands


def run_shell(path, replace, log):
    from keras_bert.cli.main import main

    ran = []
    with open(path, encoding="utf-8") as f:
        commands = shell_commands(f.read())
    for command in commands:
        for old, new in replace:
            command = command.replace(old, new)
        ran.append(command)
        print(f"$ {command}", file=log, flush=True)
        argv = shlex.split(command)
        if argv[0] == "keras-bert":
            try:
                status = main(argv[1:])
            except SystemExit as exit_:
                status = exit_.code
        else:
            completed = subprocess.run(command, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       text=True)
            log.write(completed.stdout)
            status = completed.returncode
        if status not in (0, None):
            raise RuntimeError(f"`{command}` exited with status {status}")
    return ran


def reset_keras():
    import keras

    keras.backend.clear_session()
    keras.config.set_dtype_policy("float32")


def run_example(example, work):
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), list(sys.argv)
    stdout = io.StringIO()
    result = {"ok": False, "error": None, "commands": []}
    started = time.time()
    try:
        os.environ.update(example.get("env", {}))
        os.chdir(work)
        sys.argv = [example["path"]]
        with contextlib.redirect_stdout(stdout):
            if example["kind"] == "python":
                runpy.run_path(example["path"], run_name="__main__")
            else:
                result["commands"] = run_shell(example["path"], example.get("replace", []), stdout)
        result["ok"] = True
    except BaseException:  # noqa: BLE001  (an example's SystemExit or error is its result, not the runner's)
        result["error"] = traceback.format_exc()
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        reset_keras()
    result["seconds"] = round(time.time() - started, 1)
    result["stdout"] = stdout.getvalue()
    return result


def main(plan_path, results_path):
    with open(plan_path, encoding="utf-8") as f:
        plan = json.load(f)
    # Keras takes its backend when it is first imported: here, from this pass's KERAS_BACKEND, so that an
    # example setting another one (as a reader's script would, first thing) cannot switch the whole batch.
    import keras  # noqa: F401
    results = {}
    for example in plan["examples"]:
        results[example["name"]] = run_example(example, plan["work"])
        print(f"{example['name']}: {'ok' if results[example['name']]['ok'] else 'FAILED'} "
              f"in {results[example['name']]['seconds']} s", file=sys.stderr, flush=True)
        with open(results_path, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
