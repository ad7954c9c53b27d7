"""The package's shape: no import cycles between its parts, layers/ standing alone, short files.

A "part" is a subpackage of keras_bert (layers, models, jobs, ...) or a top-level
module (optimizers, tasks, ...). Every import counts, function-level ones
included: hiding an import inside a function does not remove the dependency.
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "keras_bert"
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 120

# Reads the package's source (ast): one pass runs it; torch's is the shortest pass of the suite.
pytestmark = pytest.mark.only_backend("torch", reason="reads source files; nothing here depends on the backend")


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        parts = list(relative.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path, ast.parse(path.read_text(encoding="utf-8"))


def _part(module):
    """keras_bert.models.bert_backbone -> "models"; keras_bert.task_registry -> "tasks"; keras_bert -> None."""
    pieces = module.split(".")
    return pieces[1] if len(pieces) > 1 else None


def _imported_modules(tree, module):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import
                base = module.split(".")[: len(module.split(".")) - node.level + 1]
                yield ".".join(base + ([node.module] if node.module else []))
            elif node.module:
                yield node.module
                # `from keras_bert import models` imports the part `models`.
                if node.module == "keras_bert":
                    yield from (f"keras_bert.{alias.name}" for alias in node.names)


def part_graph():
    """{part: {parts it imports}} over every import in keras_bert/ (the package root excluded)."""
    graph = {}
    for module, _, tree in _modules():
        source = _part(module)
        if source is None:
            continue
        targets = graph.setdefault(source, set())
        for imported in _imported_modules(tree, module):
            if imported.startswith("keras_bert."):
                target = _part(imported)
                if target not in (None, source):
                    targets.add(target)
    return graph


def find_cycles(graph):
    """Strongly connected components with more than one part (Tarjan), each sorted."""
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_find_cycles_sees_a_cycle_and_only_a_cycle():
    # The checker itself must be able to fail.
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_parts():
    graph = part_graph()
    cycles = find_cycles(graph)
    details = [{part: sorted(graph[part] & set(cycle)) for part in cycle} for cycle in cycles]
    assert not cycles, f"import cycles between parts of keras_bert: {details}"


def test_layers_import_nothing_else_of_the_package():
    assert part_graph().get("layers", set()) == set()


def test_function_level_imports_say_why():
    """An import inside a function defers a heavy optional dependency; a comment beside it says which."""
    unexplained = []
    for module, path, tree in _modules():
        lines = path.read_text(encoding="utf-8").splitlines()
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    here, above = lines[node.lineno - 1], lines[node.lineno - 2]
                    if "#" not in here and not above.strip().startswith("#"):
                        unexplained.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {here.strip()}")
    assert not unexplained, "function-level imports without a reason:\n" + "\n".join(sorted(set(unexplained)))


@pytest.mark.parametrize("limit_kind", ["file", "function"])
def test_files_and_functions_are_short(limit_kind):
    too_long = []
    for _, path, tree in _modules():
        name = path.relative_to(PACKAGE.parent)
        if limit_kind == "file":
            lines = len(path.read_text(encoding="utf-8").splitlines())
            if lines > MAX_FILE_LINES:
                too_long.append(f"{name}: {lines} lines")
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    assert not too_long, f"over {MAX_FILE_LINES} lines per file / {MAX_FUNCTION_LINES} per function: {too_long}"
