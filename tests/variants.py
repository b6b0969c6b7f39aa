"""Known-wrong implementations made from the reference solution by one named edit.

A wrong answer retyped in full drifts from the solution it was copied from and hides which line is the
mistake. ``variant`` takes the solution cell of ``solutions/<assignment>.ipynb`` as it is and makes one edit,
which must apply exactly once: an edit that no longer matches (the solution changed) stops the tests at
collection, naming the variant, instead of quietly testing the solution itself.

The result is source for a :class:`tests.harness.Mistake`; the harness defines it in a copy of the notebook's
namespace, in place of the solution, as for every other mistake.
"""
from __future__ import annotations

import ast
from functools import lru_cache

from autograder import paths
from autograder.nbio import grade_id, is_solution_cell, read_notebook


class VariantError(ValueError):
    """An edit that does not make exactly one change to the solution."""


@lru_cache(maxsize=None)
def _solutions(assignment: str) -> dict[str, str]:
    nb = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    return {grade_id(c): c.source for c in nb.cells if c.cell_type == "code" and is_solution_cell(c)}


def solution_source(assignment: str, exercise: str) -> str:
    """The source of ``exercise``'s solution cell in the reference notebook, as written there."""
    sources = _solutions(assignment)
    if exercise not in sources:
        raise VariantError(f"{assignment} has no solution cell {exercise!r}; it has {sorted(sources)}")
    return sources[exercise]


def variant(assignment: str, exercise: str, *, replace: tuple[str, str], name: str) -> str:
    """The solution of ``exercise`` with the one occurrence of ``replace[0]`` replaced by ``replace[1]``.

    ``name`` says what the edit does, for the error raised when ``replace[0]`` occurs in the solution
    no time or more than once, or the edit changes nothing: each would test something other than the named
    mistake. The result still defines ``exercise`` and compiles.
    """
    old, new = replace
    where = f"variant {name!r} of {assignment}:{exercise}"
    if not old or old == new:
        raise VariantError(f"{where}: the edit {old!r} -> {new!r} changes nothing")
    source = solution_source(assignment, exercise)
    count = source.count(old)
    if count != 1:
        raise VariantError(f"{where}: {old!r} occurs {count} times in the solution, not once; make it longer "
                           f"to pick one place, or match the solution as it is now:\n{source}")
    edited = source.replace(old, new, 1)
    try:
        compile(edited, f"<{where}>", "exec")  # defined later, in the notebook's namespace, by the harness
        tree = ast.parse(edited)
    except SyntaxError as exc:
        raise VariantError(f"{where}: the edited solution is not Python ({exc.msg}, line {exc.lineno}):\n"
                           f"{edited}") from None
    defined = {node.name for node in tree.body
               if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    if exercise not in defined:
        raise VariantError(f"{where}: the edited solution no longer defines {exercise}:\n{edited}")
    return edited
