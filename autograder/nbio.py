"""Reading notebooks and their nbgrader metadata, with errors a person can act on."""
from __future__ import annotations

import json
import os
import re
import tempfile
import warnings
from pathlib import Path
from typing import Iterator

import nbformat
from nbformat import NotebookNode

ANSI = re.compile(r"\x1b\[[0-9;]*m")  # terminal colours in tracebacks, stripped before a person reads them


class NotebookError(ValueError):
    """A file that cannot be used as a notebook; the message says why."""


def read_notebook(path: str | Path) -> NotebookNode:
    """Read any nbformat-4-compatible notebook (older versions are upgraded)."""
    path = Path(path)
    if not path.exists():
        raise NotebookError(f"{path}: no such file")
    if path.is_dir():
        raise NotebookError(f"{path}: is a folder, expected a .ipynb file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise NotebookError(f"{path}: not a text file (a notebook is JSON in UTF-8)") from None
    return parse_notebook(text, str(path))


def parse_notebook(text: str, name: str = "notebook") -> NotebookNode:
    """The notebook in ``text``, upgraded to nbformat 4; :class:`NotebookError` says what is wrong with it.

    A UTF-8 byte-order mark (Windows editors write one) is read past, and cell ids that are missing or
    repeated are made unique by nbformat, without its warnings: nothing of the learner's work is lost by either."""
    text = text.removeprefix("\ufeff")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"{name}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); the file was "
                            "cut off or edited outside Jupyter: open it in Jupyter and use File > Revert Notebook to "
                            "Checkpoint, or fix that line in a text editor, then hand it in again") from None
    if not isinstance(data, dict) or "cells" not in data and "worksheets" not in data:
        raise NotebookError(f"{name}: JSON, but not a Jupyter notebook (no 'cells')")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # MissingIDFieldWarning, DuplicateCellId: repaired, not the reader's business
            nb = nbformat.reads(text, as_version=4)
    except Exception as exc:
        raise NotebookError(f"{name}: not a readable notebook ({type(exc).__name__}: {exc})") from None
    for cell in nb.cells:
        if cell.get("cell_type") not in ("code", "markdown", "raw") or not isinstance(cell.get("source", ""), str):
            raise NotebookError(f"{name}: a cell is malformed (type {cell.get('cell_type')!r})")
    return nb


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file and a rename, so a reader never sees half a file."""
    write_atomic_bytes(path, text.encode("utf-8"))


def write_atomic_bytes(path: Path, data: bytes) -> None:
    """:func:`write_atomic` for bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file 0600; what we keep is readable as the process umask says (course staff,
        # and nbgrader's release_feedback handing pages to students, must be able to read it)
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def nbgrader_meta(cell: NotebookNode) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def grade_id(cell: NotebookNode) -> str | None:
    return nbgrader_meta(cell).get("grade_id")


def is_solution_cell(cell: NotebookNode) -> bool:
    return bool(nbgrader_meta(cell).get("solution")) and cell.cell_type == "code"


def is_test_cell(cell: NotebookNode) -> bool:
    meta = nbgrader_meta(cell)
    return bool(meta.get("grade")) and not meta.get("solution") and cell.cell_type == "code"


def test_cells(nb: NotebookNode) -> Iterator[NotebookNode]:
    return (c for c in nb.cells if is_test_cell(c))


def exercise_of(test_id: str) -> str:
    """The exercise a test cell belongs to: ``test_softmax_hidden`` -> ``softmax``."""
    name = test_id.removeprefix("test_")
    for suffix in ("_hidden", "_visible"):
        name = name.removesuffix(suffix)
    return name


def points_per_test(nb: NotebookNode) -> dict[str, float]:
    """Points of each graded test cell, by grade_id, in notebook order."""
    return {grade_id(c): float(nbgrader_meta(c).get("points", 0)) for c in test_cells(nb)}


def notebook_title(nb: NotebookNode) -> str:
    """The notebook's human title: its first markdown heading (``# 04 · Softmax and probability``); "" if none."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            m = re.search(r"^#\s+(.+)$", cell.source, re.M)
            if m:
                return m.group(1).strip()
    return ""


def exercise_points(nb: NotebookNode) -> dict[str, float]:
    """Points of each exercise (its visible and hidden test cells together), in notebook order."""
    out: dict[str, float] = {}
    for gid, points in points_per_test(nb).items():
        out[exercise_of(gid)] = out.get(exercise_of(gid), 0.0) + points
    return out
