"""Put back what Jupyter's own commands do to an answer cell, before anything runs (issue 47).

A learner changes a cell's type with one key (M, R), splits a cell inside a function (Ctrl+Shift+-),
deletes a cell, or strips its metadata with another tool. Nothing of the answer is lost by the first
two, so both ``grade`` (:func:`.sanitize.plan`) and ``validate`` (the local run in a students' image)
undo them the same way, here, and say so in words the learner can act on:

* an answer cell (nbgrader ``solution``) or a test cell turned into markdown or raw runs as code again;
* the consecutive parts of a split answer cell (Jupyter copies the grade id onto each part) are joined
  when a part does not compile alone and the whole does: a split inside a function;
* an exercise whose answer cell is nowhere (deleted, merged into another cell, its metadata removed) is
  named, with how to restore it; its tests still run, and pass if the code is defined elsewhere.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import nbformat
from nbformat import NotebookNode

from ...nbio import grade_id, nbgrader_meta

RESTORE = ("restore it from the released notebook: download the assignment again (Assignment List, or the course "
           "page) and copy that cell into your notebook, in the same place, then put your answer in it")


@dataclass
class Repaired:
    """The learner's cells with Jupyter's type changes and splits undone, and what was done, for the learner."""

    cells: list[NotebookNode]
    notes: list[tuple[str, str]] = field(default_factory=list)  # (problem, detail), as problems.csv rows
    missing: dict[str, str] = field(default_factory=dict)  # exercise whose answer cell is nowhere -> why, for its tests


def _graded(cell: NotebookNode) -> bool:
    meta = nbgrader_meta(cell)
    return bool(meta.get("solution") or meta.get("grade")) and bool(meta.get("grade_id"))


def _compiles(source: str) -> bool:
    """Whether a cell's text is valid IPython (magics and ``!`` lines too), as the kernel would parse it."""
    from IPython.core.inputtransformer2 import TransformerManager  # only when a split is suspected

    try:
        compile(TransformerManager().transform_cell(source), "<cell>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def _as_code(cell: NotebookNode) -> NotebookNode:
    code = nbformat.v4.new_code_cell(cell.source, metadata=copy.deepcopy(cell.get("metadata", {})))
    if cell.get("id"):
        code.id = cell.id
    return code


def repair(cells: list[NotebookNode], exercises: list[str], *, test_cells: bool = False) -> Repaired:
    """``cells`` as they should run, given the course's ``exercises`` (the grade ids of its answer cells, in
    order; ``validate`` without the course's source passes those the notebook itself names). Test cells
    turned into text are made code again only with ``test_cells``: ``grade`` runs the source's own test
    cells instead (and names the change as tampering), ``validate`` in a students' image has only these."""
    out = Repaired([])
    wanted = set(exercises)
    for cell in cells:
        gid = grade_id(cell)
        is_test = bool(nbgrader_meta(cell).get("grade")) and not nbgrader_meta(cell).get("solution")
        if cell.get("cell_type") in ("markdown", "raw") and _graded(cell) and (gid in wanted or test_cells and is_test):
            what = "answer" if gid in wanted else "test"
            out.notes.append(("cell type changed", f"the {what} cell with grade id {gid} was turned into a "
                              f"{cell.cell_type} cell; it ran as code. Turn it back into a Code cell (select it, "
                              "press Esc then Y) so it also runs in your notebook"))
            cell = _as_code(cell)
        out.cells.append(cell)
    out.cells = _joined(out.cells, wanted, out.notes)
    present = {grade_id(c) for c in out.cells}
    for gid in exercises:
        if gid not in present:
            why = (f"the cell with grade id {gid} was deleted (or merged into another cell, or its nbgrader "
                   f"metadata removed): {RESTORE}")
            out.missing[gid] = why
            out.notes.append(("missing cell", f"{why}. Its tests ran at the end of the notebook"))
    return out


def _joined(cells: list[NotebookNode], exercises: set[str], notes: list[tuple[str, str]]) -> list[NotebookNode]:
    """Consecutive code cells carrying one answer's grade id, joined when that is what makes them run (a split
    inside a function or a loop); a copy of a whole cell (Duplicate) compiles alone and is left as it is."""
    out: list[NotebookNode] = []
    i = 0
    while i < len(cells):
        cell, gid = cells[i], grade_id(cells[i])
        j = i + 1
        while (gid in exercises and j < len(cells) and grade_id(cells[j]) == gid
               and cells[j].get("cell_type") == "code" == cell.get("cell_type")):
            j += 1
        parts = cells[i:j]
        if len(parts) > 1:
            whole = "\n".join(p.source.rstrip("\n") for p in parts) + "\n"
            if not all(_compiles(p.source) for p in parts) and _compiles(whole):
                cell = copy.deepcopy(parts[0])
                cell.source = whole
                notes.append(("cell split", f"the answer cell with grade id {gid} was split into {len(parts)} "
                              "cells that do not run alone; they were joined to run. Merge them back (select "
                              "them, press Shift+M) so the answer runs in your notebook too"))
                out.append(cell)
                i = j
                continue
        out.extend(parts)
        i = j
    return out
