import os
import sys
from pathlib import Path

import pytest

# Plots in set-up cells must not try to open a window when notebooks run in-process.
os.environ.setdefault("MPLBACKEND", "Agg")
# nbgrader shells out to alembic and jupyter: the interpreter's own bin must come first on PATH.
_bin = str(Path(sys.executable).parent)
if not os.environ.get("PATH", "").startswith(_bin):
    os.environ["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")

from autograder import paths  # noqa: E402

ASSIGNMENTS = paths.assignments()


def assignment_params():
    """One pytest param per reference notebook, carrying its nbNN marker."""
    return [pytest.param(a, marks=getattr(pytest.mark, f"nb{a[:2]}"), id=a) for a in ASSIGNMENTS]
