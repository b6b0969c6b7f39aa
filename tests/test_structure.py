"""The package's shape: no import cycles, late imports say why, one definition of each constant.

These read the source with :mod:`ast` (nothing is imported), so a function-local import that
would close a cycle is found as surely as a top-level one.
"""
from __future__ import annotations

import ast
import subprocess
import sys
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
            for alias in node.names:  # `from . import engine` imports the module autograder.engine
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


CHECKS = "autograder.checks"


def notebook_of(name: str) -> str | None:
    """``nbNN`` for a notebook's checks module (``autograder.checks.nb05`` or ``autograder.checks.nb10.gpt2``)."""
    parts = name.split(".")
    return parts[2] if name.startswith(CHECKS + ".nb") and len(parts) > 2 else None


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Imports that break the checks' layers (autograder.checks.toolkit, rule 1): a notebook's checks module
    importing another notebook's, or the toolkit or a reference model (``checks.models``) importing any."""
    bad = []
    for name, targets in sorted(graph.items()):
        shared = name == CHECKS + ".toolkit" or name.startswith(CHECKS + ".models")
        for target in sorted(targets):
            theirs = notebook_of(target)
            if theirs and (shared or notebook_of(name) not in (None, theirs)):
                bad.append(f"{name} imports {target}")
    return bad


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Imports from the checks package of a module outside it that imports the checks back, however far on (a
    cycle between the folders, as autograder.pieces, which judges a learner's pieces by their checks, made)."""
    def reaches_checks(start: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node.startswith(CHECKS):
                return True
            if node not in seen:
                seen.add(node)
                todo += graph.get(node, ())
        return False

    return [f"{name} imports {target}" for name, targets in sorted(graph.items()) if name.startswith(CHECKS + ".")
            for target in sorted(targets) if not target.startswith(CHECKS) and reaches_checks(target)]


def test_the_layer_finders_find_a_notebook_importing_another_and_an_import_upward():
    graph = {"autograder.checks.nb08": set(), "autograder.checks.nb09": {"autograder.checks.nb08"},
             "autograder.checks.nb10.layers": {"autograder.checks.nb10.common", "autograder.checks.toolkit"},
             "autograder.checks.models.gpt2": {"autograder.checks.nb09"},
             "autograder.checks.toolkit": {"autograder.checks.nb10"},
             "autograder.checks.models.torch_gpt": {"autograder.pieces", "autograder.reference"},
             "autograder.pieces": {"autograder.checks.core"}, "autograder.reference": {"autograder.paths"}}
    assert layer_violations(graph) == ["autograder.checks.models.gpt2 imports autograder.checks.nb09",
                                       "autograder.checks.nb09 imports autograder.checks.nb08",
                                       "autograder.checks.toolkit imports autograder.checks.nb10"]
    assert upward_imports(graph) == ["autograder.checks.models.torch_gpt imports autograder.pieces"]


def test_no_notebooks_checks_import_another_notebooks():
    found = modules()
    graph = {name: imports_of(name, path, set(found)) for name, path in found.items()}
    assert not layer_violations(graph), ("move what they share to autograder/checks/toolkit.py (helpers) or "
                                         "autograder/checks/models/ (reference models): "
                                         + "; ".join(layer_violations(graph)))


def test_the_checks_import_nothing_that_imports_them_back():
    found = modules()
    graph = {name: imports_of(name, path, set(found)) for name, path in found.items()}
    assert not upward_imports(graph), "; ".join(upward_imports(graph))


def rooms(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The package's rooms (``autograder.grade``, ``autograder.similarity``, ``autograder.paths``: the second part
    of a module's name) and which rooms each imports from: a cycle here is an import that runs up a floor, even
    where no module imports its own importer back (the class report once read the similarity check's records,
    and the check imports the grader)."""
    room = lambda name: ".".join(name.split(".")[:2])  # noqa: E731
    found: dict[str, set[str]] = defaultdict(set)
    for name, targets in graph.items():
        found[room(name)] |= {room(t) for t in targets if room(t) != room(name)}
    for targets in list(found.values()):
        for target in targets:
            found.setdefault(target, set())
    return dict(found)


def test_the_room_finder_finds_an_import_up_a_floor_without_a_module_cycle():
    graph = {"autograder.grade.output.classreport": {"autograder.similarity.records"},
             "autograder.similarity.records": set(),
             "autograder.similarity.run": {"autograder.grade.submission.discover", "autograder.paths"},
             "autograder.grade.submission.discover": set(), "autograder.paths": set()}
    assert find_cycle(graph) is None
    assert find_cycle(rooms(graph)) == ["autograder.grade", "autograder.similarity", "autograder.grade"]
    graph["autograder.grade.output.classreport"] = {"autograder.grade.output.alike"}
    assert find_cycle(rooms(graph)) is None


def test_no_room_of_the_package_imports_a_room_that_imports_it():
    found = modules()
    graph = rooms({name: imports_of(name, path, set(found)) for name, path in found.items()})
    cycle = find_cycle(graph)
    assert cycle is None, (f"an import runs up a floor: {' -> '.join(cycle)} (move what the lower room needs "
                           "into it, or into a room below both)")


# --------------------------------------------------------------------------- the engine is a generic cell runner

ENGINE = "autograder.engine"
MAX_LINES = 600


def engine_modules(found: dict[str, Path]) -> list[str]:
    return [name for name in found if name == ENGINE or name.startswith(ENGINE + ".")]


# What of the package the engine may import: the package itself (its location, for the sandbox), where the course
# lives and the notebook reader; nothing of the checks or the grader.
ENGINE_MAY_IMPORT = {"autograder", "autograder.paths", "autograder.nbio"}


def reaches_outside_the_engine(name: str, imported: set[str]) -> list[str]:
    """What of the package outside the engine (the checks, the grader, ...) an engine module imports."""
    return sorted(m for m in imported if (m == "autograder" or m.startswith("autograder."))
                  and m not in ENGINE_MAY_IMPORT and not (m == ENGINE or m.startswith(ENGINE + ".")))


def test_the_engine_check_finds_an_import_of_the_checks_or_the_grader(tmp_path):
    assert reaches_outside_the_engine(ENGINE + ".x", {"autograder.checks.core", ENGINE + ".frames"}) == [
        "autograder.checks.core"]
    assert reaches_outside_the_engine(ENGINE + ".x", {"autograder.grade.output.costs", "autograder.paths"}) == [
        "autograder.grade.output.costs"]


def test_no_engine_module_imports_the_checks_or_the_rest_of_the_grader():
    found = modules()
    known = set(found) | {"autograder.checks"}
    bad = {name: reaches_outside_the_engine(name, imports_of(name, found[name], known))
           for name in engine_modules(found)}
    bad = {name: out for name, out in bad.items() if out}
    assert not bad, f"the engine knows nothing of the checks or the grader (pass what it needs in RunRequest): {bad}"


def test_no_module_is_longer_than_600_lines():
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by job): {long}"


IMPORT_STARTS_NOTHING = """
import atexit, os, threading
def children():
    found = set()
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as f:
            found |= set(f.read().split())
    return found
before = (atexit._ncallbacks(), threading.active_count(), children())
from {module} import Limits
Limits()
after = (atexit._ncallbacks(), threading.active_count(), children())
print(before == after, before, after)
"""


def import_starts_nothing(module: str) -> str:
    proc = subprocess.run([sys.executable, "-c", IMPORT_STARTS_NOTHING.replace("{module}", module)], capture_output=True,
                          text=True, cwd=PACKAGE.parent, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads Linux's /proc")
def test_importing_the_engines_limits_registers_no_exit_hook_and_starts_no_thread_or_process():
    out = import_starts_nothing(ENGINE)
    assert out.startswith("True"), f"importing {ENGINE}'s Limits started something (atexit hooks, threads, " \
                                   f"children before and after): {out}"
