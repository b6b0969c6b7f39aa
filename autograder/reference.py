"""The reference solutions as importable modules: one source of truth for every reuse.

``import_notebook("09_attention")`` runs the set-up and solution cells of
``solutions/09_attention.ipynb`` and returns them as a module, so notebook 10
reuses notebook 09's ``MultiHeadAttention`` and the checks compare against the
very code that the tests prove equal to PyTorch, never a second copy of it.
"""
from __future__ import annotations

import sys
import types
from functools import lru_cache

from . import paths
from .nbio import is_solution_cell, read_notebook


IMPORTED_TAGS = {"setup", "library"}  # besides solution cells, the cells another notebook may import


class ReferenceUnavailable(RuntimeError):
    """The reference solutions are not on this machine (for example inside the grading sandbox)."""


def _runnable(source: str) -> str:
    # IPython magics and shell escapes are for the notebook, not for a module.
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


@lru_cache(maxsize=None)
def import_notebook(assignment: str) -> types.ModuleType:
    """The definitions of ``solutions/<assignment>.ipynb``: its solution cells and cells tagged setup or library."""
    path = paths.solutions_dir() / f"{assignment}.ipynb"
    if not path.exists():
        raise ReferenceUnavailable(f"the reference solution {path.name} is not available here")
    nb = read_notebook(path)
    name = f"autograder.reference.nb{assignment[:2]}"
    module = types.ModuleType(name, f"Definitions from solutions/{path.name}")
    module.__file__ = str(path)
    sys.modules[name] = module
    for cell in nb.cells:
        if cell.cell_type == "code" and (IMPORTED_TAGS & set(cell.metadata.get("tags", [])) or is_solution_cell(cell)):
            exec(compile(_runnable(cell.source), f"<{path.name}>", "exec"), module.__dict__)
    return module


def ref(assignment: str, name: str):
    """One definition from a reference notebook, looked up when first needed."""
    return getattr(import_notebook(assignment), name)


def lazy(assignment: str):
    """``R`` for a checks module: ``R("name")`` calls the reference's function, looked up only when a
    verdict needs it (checks are built where the reference solutions are absent, in the grader's sandbox)."""
    def R(name: str):
        return lambda *args, **kwargs: ref(assignment, name)(*args, **kwargs)
    return R
