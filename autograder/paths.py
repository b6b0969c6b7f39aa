"""Where the course lives: the repository root, its solutions and its student notebooks."""
from __future__ import annotations

import os
import re
from pathlib import Path

ASSIGNMENT_RE = re.compile(r"^\d\d_[a-z0-9_]+$")


def root() -> Path:
    """The course repository (``AUTOGRADER_ROOT`` overrides the installed checkout)."""
    env = os.environ.get("AUTOGRADER_ROOT")
    return Path(env).resolve() if env else Path(__file__).resolve().parent.parent


def solutions_dir() -> Path:
    return root() / "solutions"


def notebooks_dir() -> Path:
    return root() / "notebooks"


def assignments() -> list[str]:
    """Assignment ids (notebook stems) of every reference solution, in course order."""
    return sorted(p.stem for p in solutions_dir().glob("*.ipynb") if ASSIGNMENT_RE.match(p.stem))
