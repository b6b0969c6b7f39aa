"""The package's shape: no import cycles, late imports say why, one definition of each constant.

These read the source with :mod:`ast` (nothing is imported), so a function-local import that
would close a cycle is found as surely as a top-level one.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "autograder"
# Per-notebook modules each bind R to their own solution module (``R = lazy(A)``): same text, different values.
SAME_TEXT_ON_PURPOSE = {"R"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that ``name`` imports anywhere in its file (top level or in a function)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:  # `from . import engine` imports the module autograder.grade.engine
                found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base)
    return {m for m in found if m in known and m != name}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle_hidden_in_a_function(tmp_path):
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
    late = tmp_path / "late.py"
    late.write_text("def f():\n    from . import other\n")
    assert imports_of("pkg.late", late, {"pkg.late", "pkg.other"}) == {"pkg.other"}


def test_no_import_cycle_in_the_package():
    found = modules()
    graph = {name: imports_of(name, path, set(found)) for name, path in found.items()}
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"


def late_imports(path: Path) -> list[tuple[int, str, bool]]:
    """(line, text, has a reason) for every import inside a function of ``path``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = {}
    for node in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    line, above = lines[sub.lineno - 1], lines[sub.lineno - 2].strip()
                    found[sub.lineno] = (line.strip(), "#" in line or "#" in above)  # the reason on the line or above it
    return [(n, text, ok) for n, (text, ok) in sorted(found.items())]


@pytest.mark.parametrize("name", sorted(modules()))
def test_an_import_inside_a_function_says_why(name):
    bare = [f"line {n}: {text}" for n, text, ok in late_imports(modules()[name]) if not ok]
    assert not bare, (f"{name} imports inside a function without a comment saying why (move it to the top, "
                      "or say why it must be late): " + "; ".join(bare))


def test_each_constant_is_defined_once():
    seen = defaultdict(set)
    for name, path in modules().items():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id.isupper() and target.id not in SAME_TEXT_ON_PURPOSE:
                        seen[target.id, ast.unparse(node.value)].add(name)
    twice = {f"{const} = {value[:40]}": sorted(where) for (const, value), where in seen.items() if len(where) > 1}
    assert not twice, f"the same constant is defined in several modules (import it from one): {twice}"
