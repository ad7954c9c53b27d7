"""The documentation site builds with `mkdocs build --strict`: no warning at all.

A warning is a broken link or anchor, a page missing from the nav or a nav entry without its page, a snippet
(`--8<--`) whose file or section is gone, an API entry (`::: keras_bert...`) that no longer resolves, a
docstring whose Args name a parameter the signature does not have, a generator in docs/gen/ that fails. The
build runs the generators (CLI reference, jobs, results and notebook pages) and renders every docstring, as
`make docs` does, into a temporary folder. Measured: 7-20 s on the 2-core development machine.
"""

import os
import re
import subprocess
import sys
import time

import pytest

from harness import REPO_ROOT

BUILD_TIMEOUT_SECONDS = 300
# MkDocs prints "WARNING -  ..." (and "ERROR -  ..."); a warning's text can go on over the next lines, up to
# the next log line.
LOG_LINE = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+-\s")


def build_warnings(output):
    """The WARNING and ERROR messages in MkDocs' output, each with its continuation lines."""
    messages, current = [], None
    for line in output.splitlines():
        match = LOG_LINE.match(line)
        if match:
            current = [line] if match.group(1) in ("WARNING", "ERROR", "CRITICAL") else None
            if current is not None:
                messages.append(current)
        elif current is not None and line.strip() and not line.startswith("Aborted with"):
            current.append(line)
    return ["\n".join(message) for message in messages]


@pytest.mark.only_backend("jax", reason="the site build reads the sources and runs no model; once is enough")
def test_site_builds_strict_without_warnings(tmp_path):
    env = dict(os.environ, DISABLE_MKDOCS_2_WARNING="true", NO_MKDOCS_2_WARNING="1", NO_COLOR="1",
               TF_CPP_MIN_LOG_LEVEL="3")
    start = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=BUILD_TIMEOUT_SECONDS)
    seconds = time.perf_counter() - start
    print(f"mkdocs build --strict: {seconds:.1f} s")
    warnings = build_warnings(completed.stdout)
    assert not warnings, f"{len(warnings)} warning(s) in the docs build:\n" + "\n".join(warnings)
    assert completed.returncode == 0, f"mkdocs build failed (exit {completed.returncode}):\n{completed.stdout[-4000:]}"
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").exists()
