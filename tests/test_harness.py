"""The test harness's own rules: one marker system, every backend skip says why, helpers out of conftest.py.

Read from the source (ast) of every file under tests/, so a rule broken in a
test that is skipped on this backend is still caught.
"""

import ast
import tomllib

import pytest

from harness import FIXTURE_VOCABULARY_SIZE, REPO_ROOT, tiny_backbone

TESTS = REPO_ROOT / "tests"
BACKENDS = {"tensorflow", "jax", "torch"}
MARKERS = {"only_backend", "not_backend"}
# The marker system that only_backend/not_backend replaced (a marker plus a skipif of its own).
OLD_MARKERS = {"tensorflow_only", "jax_only", "torch_only"}
# Run as child processes, where the harness is not importable: they keep a tiny backbone of their own.
CHILD_SCRIPTS = {"distribution_worker.py"}

# Reads the tests' source (ast), so one pass sees every file whatever it skips; torch's pass is the shortest.
pytestmark = pytest.mark.only_backend("torch", reason="reads source files; nothing here depends on the backend")


def python_files():
    return sorted(path for path in TESTS.rglob("*.py") if "fixtures" not in path.relative_to(TESTS).parts)


def trees():
    return [(path.relative_to(REPO_ROOT), ast.parse(path.read_text(encoding="utf-8"))) for path in python_files()]


def where(path, node):
    return f"{path}:{node.lineno}"


def test_no_old_backend_markers_and_no_backend_skipif():
    found = []
    for path, tree in trees():
        for node in ast.walk(tree):
            name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "name", getattr(node, "id", None))
            if name in OLD_MARKERS:
                found.append(f"{where(path, node)}: {name}")
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "skipif":
                if "backend" in ast.unparse(node):
                    found.append(f"{where(path, node)}: skipif on the backend (use only_backend/not_backend)")
    assert found == [], "\n".join(found)


def test_every_backend_marker_names_a_backend_and_gives_a_reason():
    checked, found = 0, []
    for path, tree in trees():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) in MARKERS):
                continue
            checked += 1
            args, reason = node.args, {k.arg: k.value for k in node.keywords}.get("reason")
            if len(args) != 1 or (isinstance(args[0], ast.Constant) and args[0].value not in BACKENDS):
                found.append(f"{where(path, node)}: the backend must be one of {sorted(BACKENDS)}")
            if reason is None or (isinstance(reason, ast.Constant) and not str(reason.value).strip()):
                found.append(f"{where(path, node)}: {node.func.attr} without reason=")
    assert found == [], "\n".join(found)
    assert checked > 20  # the scan sees the suite's markers (a broken scan would find nothing)


def test_pyproject_declares_only_the_current_markers():
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = {line.split(":")[0].split("(")[0] for line in config["tool"]["pytest"]["ini_options"]["markers"]}
    assert MARKERS <= declared and not declared & OLD_MARKERS, declared


def test_conftest_holds_hooks_and_fixtures_only_and_nothing_imports_it():
    conftest = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    for node in conftest.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith(("pytest_", "_")):
            decorators = [ast.unparse(d) for d in node.decorator_list]
            assert any(d.startswith("pytest.fixture") for d in decorators), f"conftest.py:{node.lineno}: {node.name}"
    imports = [
        where(path, node)
        for path, tree in trees()
        for node in ast.walk(tree)
        if (isinstance(node, ast.ImportFrom) and node.module == "conftest")
        or (isinstance(node, ast.Import) and any(alias.name == "conftest" for alias in node.names))
    ]
    assert imports == [], f"import these from harness.py instead: {imports}"


def test_one_tiny_backbone_factory():
    """Test files build their backbones with harness.tiny_backbone, not with a factory of their own."""
    found = [
        where(path, node)
        for path, tree in trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef) and "backbone" in node.name and "tiny" in node.name
        and not node.name.startswith("test_") and path.name not in {"harness.py", *CHILD_SCRIPTS}
    ]
    assert found == [], found
    backbone = tiny_backbone()
    assert (backbone.num_layers, backbone.hidden_dim, backbone.dropout) == (2, 16, 0.0)
    assert tiny_backbone(hidden_dim=8).intermediate_dim == 16
    vocab = (TESTS / "fixtures" / "tasks" / "vocab.txt").read_text(encoding="utf-8").splitlines()
    assert backbone.vocabulary_size == FIXTURE_VOCABULARY_SIZE == len(vocab)


@pytest.mark.parametrize(
    "rule", [test_no_old_backend_markers_and_no_backend_skipif, test_every_backend_marker_names_a_backend_and_gives_a_reason]
)
def test_the_marker_rules_can_fail(rule, monkeypatch, tmp_path):
    """Each rule, pointed at a file that breaks it, fails."""
    bad = tmp_path / "tests" / "test_bad.py"
    bad.parent.mkdir()
    bad.write_text(
        "import pytest\n"
        "@pytest.mark.tensorflow_only\n"
        "@pytest.mark.skipif(keras.backend.backend() != 'jax', reason='x')\n"
        "def test_a(): pass\n"
        + "@pytest.mark.only_backend('jax')\ndef test_b(): pass\n" * 21
    )
    monkeypatch.setitem(globals(), "TESTS", bad.parent)
    monkeypatch.setitem(globals(), "REPO_ROOT", tmp_path)
    with pytest.raises(AssertionError):
        rule()
