"""README.md: short (issue 43: at most 250 lines), the two commands first, and its tour the tested one.

The README shows the five-minute tour as a copy of sections of docs/examples/tour.py, which the suite runs
(tests/docs/test_examples.py); this test keeps the copy identical, so it cannot drift from code that works.
"""

import re

import pytest

from harness import REPO_ROOT

README = REPO_ROOT / "README.md"
TOUR = REPO_ROOT / "docs" / "examples" / "tour.py"
MAX_LINES = 250


def snippet_sections(path):
    """{name: text} of the `# --8<-- [start:name]` ... `# --8<-- [end:name]` sections of a file."""
    text = path.read_text(encoding="utf-8")
    return {m.group(1): m.group(2).strip("\n") for m in re.finditer(
        r"# --8<-- \[start:(\w+)\]\n(.*?)# --8<-- \[end:\1\]", text, re.DOTALL)}


@pytest.mark.only_backend("jax", reason="reads text files; once is enough")
def test_readme_is_short_and_starts_with_the_two_commands():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines (at most {MAX_LINES}): move text to docs/"
    head = "\n".join(lines[:8])
    assert head.index("make demo") < head.index("make test")


@pytest.mark.only_backend("jax", reason="reads text files; once is enough")
def test_readme_tour_is_the_tested_tour():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert blocks, "README.md shows no Python tour"
    sections = snippet_sections(TOUR)
    shown = [name for name in sections if sections[name] in blocks[0]]
    assert shown, "the README's tour shows no section of docs/examples/tour.py"
    expected = "\n\n".join(sections[name] for name in shown)
    assert blocks[0].strip("\n") == expected, (
        f"README.md's tour is not sections {shown} of docs/examples/tour.py as they are now: copy them again")
