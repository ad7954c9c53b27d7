"""Every documentation example runs, and prints what its page says it prints.

The guides show no code of their own: each Python block is included (pymdownx.snippets) from a file in
docs/examples/, each shell block from a .sh file there. This test runs every such file as a reader would, in a
folder holding small real files under the names the pages use (tests/docs/example_data.py), with the Hugging
Face cache pointed at a local one (no network). Lines annotated `# → text` on the page are checked against
what the example printed, in order: `text` must appear in an output line (`text ...` with a trailing ellipsis:
an output line must start with `text`).

The examples of one backend's pass run in one child process (tests/docs/example_runner.py), which imports
keras, TensorFlow and keras_bert once for all of them. Which pass runs which example: example_settings.py.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import keras
import pytest

from example_data import hub_cache, place_example_data
from example_settings import SETTINGS, settings_for
from harness import REPO_ROOT

EXAMPLES = REPO_ROOT / "docs" / "examples"
EXAMPLE_FILES = sorted(p.name for p in EXAMPLES.iterdir() if p.suffix in (".py", ".sh"))
BATCH_TIMEOUT_SECONDS = 900
ANNOTATION = re.compile(r"#\s*→\s*(.+?)\s*$")


def annotations(path):
    """The `# → text` annotations of an example file, in order."""
    return [m.group(1) for line in path.read_text(encoding="utf-8").splitlines() if (m := ANNOTATION.search(line))]


def unmatched_annotations(expected, stdout):
    """The first annotation that the output does not show after the previous one's line, or None."""
    lines = stdout.splitlines()
    position = 0
    for text in expected:
        prefix = text[:-3].rstrip() if text.endswith("...") else None
        for index in range(position, len(lines)):
            line = lines[index].strip()
            if (line.startswith(prefix) if prefix is not None else text in line):
                position = index + 1
                break
        else:
            return text
    return None


@pytest.fixture(scope="module")
def pass_results(tmp_path_factory):
    """Runs this pass's examples in one child process; {name: {"ok", "error", "stdout", ...}}."""
    backend = keras.backend.backend()
    names = [name for name in EXAMPLE_FILES if settings_for(name)[0] == backend]
    if not names:
        return {}
    root = tmp_path_factory.mktemp("docs-examples")
    work = place_example_data(root / "work")
    cache = hub_cache(root / "hub")
    plan = {"work": str(work), "examples": []}
    for name in names:
        _, _, env, replace = settings_for(name)
        plan["examples"].append({"name": name, "path": str(EXAMPLES / name),
                                 "kind": "python" if name.endswith(".py") else "shell",
                                 "env": env, "replace": replace})
    (root / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
    env = dict(os.environ, KERAS_BACKEND=backend, HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(cache),
               TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    completed = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("example_runner.py")), str(root / "plan.json"),
         str(root / "results.json")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=BATCH_TIMEOUT_SECONDS)
    results_file = root / "results.json"
    results = json.loads(results_file.read_text(encoding="utf-8")) if results_file.exists() else {}
    for name in names:  # an example the runner never reached (it crashed): its log is the reason
        results.setdefault(name, {"ok": False, "error": f"the runner stopped before it:\n{completed.stdout[-4000:]}",
                                  "stdout": ""})
    return results


def _param(name):
    backend, reason, _, _ = settings_for(name)
    return pytest.param(name, id=name, marks=pytest.mark.only_backend(backend, reason=reason))


@pytest.mark.parametrize("name", [_param(name) for name in EXAMPLE_FILES])
def test_example_runs_and_prints_what_its_page_says(name, pass_results):
    result = pass_results[name]
    assert result["ok"], f"docs/examples/{name} failed:\n{result['error']}\n--- its output:\n{result['stdout'][-3000:]}"
    missing = unmatched_annotations(annotations(EXAMPLES / name), result["stdout"])
    assert missing is None, (f"docs/examples/{name} says it prints `{missing}` (in this order), but printed:\n"
                             f"{result['stdout'][-3000:]}")


def test_every_settings_entry_names_an_example():
    assert not set(SETTINGS) - set(EXAMPLE_FILES), sorted(set(SETTINGS) - set(EXAMPLE_FILES))


def test_every_example_is_shown_on_a_page():
    pages = "\n".join(p.read_text(encoding="utf-8") for p in (REPO_ROOT / "docs").rglob("*.md"))
    unshown = [name for name in EXAMPLE_FILES if f"docs/examples/{name}" not in pages]
    assert not unshown, f"examples no page includes: {unshown}"


def test_annotations_are_checked_in_order():
    assert unmatched_annotations(["(1, 5, 384)", "positive ..."], "x (1, 5, 384)\npositive 0.93\n") is None
    assert unmatched_annotations(["positive ...", "(1, 5, 384)"], "(1, 5, 384)\npositive 0.93\n") == "(1, 5, 384)"
    assert unmatched_annotations(["6"], "5\n") == "6"
