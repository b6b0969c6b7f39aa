"""The reference solutions as importable modules: one source of truth for every reuse.

``import_notebook("09_attention")`` runs the set-up and solution cells of
``solutions/09_attention.ipynb`` and returns them as a module, so notebook 10
reuses notebook 09's ``MultiHeadAttention`` and the checks compare against the
very code that the tests prove equal to PyTorch, never a second copy of it.

:func:`load_cells` is the one way a notebook becomes a module, for the course's
solutions here and for a learner's saved notebook in :mod:`autograder.pieces`.
"""
from __future__ import annotations

import sys
import types
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from . import paths
from .nbio import is_solution_cell, read_notebook


IMPORTED_TAGS = {"setup", "library"}  # besides solution cells, the cells another notebook may import

# While a notebook's cells run as a module, whose notebook it is: "reference" for the course's solutions, or
# the record :mod:`autograder.pieces` passes for a learner's. That notebook's own set-up cell asks for its
# earlier pieces, and must get the course's inside a reference (the reference never depends on a learner).
_IMPORTING: ContextVar[Any] = ContextVar("autograder_importing", default=None)
REFERENCE = "reference"


class ReferenceUnavailable(RuntimeError):
    """The reference solutions are not on this machine (for example inside the grading sandbox)."""


def _runnable(source: str) -> str:
    # IPython magics and shell escapes are for the notebook, not for a module.
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())


def importing() -> Any:
    """Whose notebook's cells are running as a module right now: ``REFERENCE``, a learner's record, or None
    (a notebook's own kernel, at top level)."""
    return _IMPORTING.get()


@contextmanager
def _importing(whose: Any) -> Iterator[None]:
    token = _IMPORTING.set(whose)
    try:
        yield
    finally:
        _IMPORTING.reset(token)


def load_cells(path: Path, name: str, whose: Any) -> types.ModuleType:
    """The set-up, library and solution cells of the notebook at ``path``, run as the module ``name``
    (registered in ``sys.modules``, so dataclasses and pickling find it). No other cell runs: a notebook's
    demos and checks are for its own kernel. ``whose`` is what :func:`importing` answers meanwhile."""
    nb = read_notebook(path)
    module = types.ModuleType(name, f"Definitions from {path.name}")
    module.__file__ = str(path)
    sys.modules[name] = module
    with _importing(whose):
        for cell in nb.cells:
            if cell.cell_type == "code" and (IMPORTED_TAGS & set(cell.metadata.get("tags", []))
                                             or is_solution_cell(cell)):
                exec(compile(_runnable(cell.source), f"<{path.name}>", "exec"), module.__dict__)
    return module


def available(assignment: str) -> bool:
    """Are the course's solutions of ``assignment`` on this machine?"""
    return (paths.solutions_dir() / f"{assignment}.ipynb").exists()


@lru_cache(maxsize=None)
def import_notebook(assignment: str) -> types.ModuleType:
    """The definitions of ``solutions/<assignment>.ipynb``: its solution cells and cells tagged setup or library."""
    path = paths.solutions_dir() / f"{assignment}.ipynb"
    if not path.exists():
        raise ReferenceUnavailable(f"the reference solution {path.name} is not available here")
    return load_cells(path, f"autograder.reference.nb{assignment[:2]}", REFERENCE)


def ref(assignment: str, name: str):
    """One definition from a reference notebook, looked up when first needed."""
    return getattr(import_notebook(assignment), name)


def lazy(assignment: str):
    """``R`` for a checks module: ``R("name")`` calls the reference's function, looked up only when a
    verdict needs it (checks are built where the reference solutions are absent, in the grader's sandbox)."""
    def R(name: str):
        return lambda *args, **kwargs: ref(assignment, name)(*args, **kwargs)
    return R
