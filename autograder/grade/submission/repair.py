"""Put back what Jupyter's own commands do to an answer cell, before anything runs (issue 47).

A learner changes a cell's type with one key (M, R), splits a cell inside a function (Ctrl+Shift+-),
deletes a cell, or strips its metadata with another tool. Nothing of the answer is lost by the first
two, so both ``grade`` (:func:`.sanitize.plan`) and ``validate`` (the local run in a students' image)
undo them the same way, here, and say so in words the learner can act on:

* an answer cell (nbgrader ``solution``) or a test cell turned into markdown or raw runs as code again;
* the consecutive parts of a split answer cell (Jupyter copies the grade id onto each part, or a part has
  no nbgrader metadata at all) are joined when a part does not compile alone, or starts inside a block, and
  the whole does: a split inside a function;
* an exercise whose answer cell is nowhere (deleted, merged into another cell, its metadata removed) is
  named, with how to restore it; its tests still run, and pass if the code is defined elsewhere.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import nbformat
from nbformat import NotebookNode

from ...nbio import exercise_of, grade_id, nbgrader_meta

RESTORE = ("restore it from the released notebook: download the assignment again (Assignment List, or the course "
           "page) and copy that cell into yours, in the same place")


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


def _indented(source: str) -> bool:
    """Whether a cell's first line of code starts indented: the inside of a block, cut from its head by a split
    (the kernel, like IPython, runs such a cell dedented, so it may compile alone and still not be the answer)."""
    first = next((line for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
    return first[:1] in (" ", "\t")


def _continues(source: str) -> bool:
    """Whether a plain code cell right after an answer looks like the rest of it, split off (Split Cell gives
    the second part no metadata, or another tool dropped it): it starts indented, or does not run alone."""
    return _indented(source) or not _compiles(source)


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
                   f"metadata removed): {RESTORE}, then put your answer in it")
            out.missing[gid] = why
            out.notes.append(("missing cell", why))
    return out


def _joined(cells: list[NotebookNode], exercises: set[str], notes: list[tuple[str, str]]) -> list[NotebookNode]:
    """Consecutive code cells carrying one answer's grade id, and plain code cells right after them that read as
    the rest of it (:func:`_continues`: a part whose metadata was lost), joined when that is what makes them run
    (a split inside a function or a loop); a copy of a whole cell (Duplicate) compiles alone and is left as it is."""
    out: list[NotebookNode] = []
    i = 0
    while i < len(cells):
        cell, gid = cells[i], grade_id(cells[i])
        j = i + 1
        while (gid in exercises and j < len(cells) and grade_id(cells[j]) == gid
               and cells[j].get("cell_type") == "code" == cell.get("cell_type")):
            j += 1
        marked = j  # the parts that kept the grade id; a part after them may have lost the cell's metadata
        while (gid in exercises and j < len(cells) and cells[j].get("cell_type") == "code" == cell.get("cell_type")
               and not nbgrader_meta(cells[j]) and _continues(cells[j].source)):
            j += 1
        for end in dict.fromkeys((j, marked)):  # with the unmarked parts first, then without them
            parts = cells[i:end]
            if len(parts) < 2:
                continue
            whole = "".join(p.source if p.source.endswith("\n") else p.source + "\n" for p in parts[:-1])
            whole += parts[-1].source  # the cell as it was before the split, to the character
            if (not all(_compiles(p.source) for p in parts) or any(_indented(p.source) for p in parts[1:])) \
                    and _compiles(whole):
                cell = copy.deepcopy(parts[0])
                cell.source = whole
                lost = f" ({end - marked} of them without its nbgrader metadata)" if end > marked else ""
                notes.append(("cell split", f"the answer cell with grade id {gid} was split into {len(parts)} "
                              f"cells{lost} that do not run alone; they were joined to run. Merge them back "
                              "(select them, press Shift+M) so the answer runs in your notebook too"))
                out.append(cell)
                i = end
                break
        else:
            out.extend(cells[i:marked])
            i = marked
    return out


# --------------------------------------------------------------------------- validate, without the course's source

@dataclass
class Local:
    """What ``validate`` runs in a students' image (no solutions/): the learner's cells put back as ``grade``
    would put them, as far as the notebook itself tells, and the visible tests it cannot run here."""

    cells: list[NotebookNode]
    notes: list[tuple[str, str]]
    cannot_run: list[str]  # visible test cells missing from the notebook: ``grade`` restores and runs them


def local_cells(cells: list[NotebookNode]) -> Local:
    """The learner's ``cells`` made to run as ``grade`` runs them: answers and tests turned into text run as
    code, a split answer joined, a copied test cell left out, a test moved above its answer put back after it.
    The course names each answer's tests ``test_<answer>`` and ``test_<answer>_hidden``: a missing one is
    named (its text is only in the course's source, so it cannot run here)."""
    def is_test(cell: NotebookNode) -> bool:
        meta = nbgrader_meta(cell)
        return bool(meta.get("grade")) and not meta.get("solution") and bool(meta.get("grade_id"))

    answers = [grade_id(c) for c in cells  # code answers; a written one (solution and grade: read by a person) has no tests
               if nbgrader_meta(c).get("solution") and not nbgrader_meta(c).get("grade") and grade_id(c)]
    named = [exercise_of(grade_id(c)) for c in cells if is_test(c)]
    fixed = repair(cells, list(dict.fromkeys(answers + named)), test_cells=True)
    notes, kept, seen = list(fixed.notes), [], set()
    for cell in fixed.cells:
        gid = grade_id(cell)
        if is_test(cell) and gid in seen:
            notes.append(("tampered", f"test cell {gid}: a copy of this test cell was left out, as grading does"))
            continue
        seen.add(gid)
        kept.append(cell)
    kept = _tests_after_answers(kept, is_test, notes)
    tests = {grade_id(c) for c in kept if is_test(c)}
    present = [g for g in dict.fromkeys(answers) if g not in fixed.missing]
    cannot = [f"test_{g}" for g in present if f"test_{g}" not in tests]
    for gid in cannot:
        notes.append(("tampered", f"test cell {gid} is not in your notebook (deleted, or its nbgrader metadata "
                      f"removed): grading puts it back and runs it; to run it here too, {RESTORE}"))
    return Local(kept, notes, cannot)


def _tests_after_answers(cells: list[NotebookNode], is_test, notes: list[tuple[str, str]]) -> list[NotebookNode]:
    """A test cell standing above its answer cell moved to just after that answer (and its tests already there)."""
    out = list(cells)
    answer_at = {grade_id(c): i for i, c in reversed(list(enumerate(out))) if nbgrader_meta(c).get("solution")}
    early = [c for i, c in enumerate(out) if is_test(c) and answer_at.get(exercise_of(grade_id(c)), -1) > i]
    for cell in early:
        out.remove(cell)
        answer = exercise_of(grade_id(cell))
        at = next(i for i, c in enumerate(out) if grade_id(c) == answer and nbgrader_meta(c).get("solution")) + 1
        while at < len(out) and is_test(out[at]) and exercise_of(grade_id(out[at])) == answer:
            at += 1
        out.insert(at, cell)
        notes.append(("tampered", f"test cell {grade_id(cell)}: moved above its exercise {answer}; put back after it"))
    return out
