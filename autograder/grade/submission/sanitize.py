"""Build the cells to execute: the student's code with every graded test cell taken from the source.

nbgrader's ``OverwriteCells`` restores test cells by ``grade_id`` but trusts the student's
notebook for which test cells exist and where. Here the source decides: each graded test cell of
``solutions/<assignment>.ipynb`` runs exactly once, with the source's text (hidden tests
included), points and metadata, after its exercise's solution cell. Student cells that claim to
be test cells (by ``grade_id`` or by cell id) are dropped; a test cell that was edited, deleted,
duplicated or moved is put back and reported. The student's file is never touched.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from nbformat import NotebookNode

from ...nbio import grade_id, is_solution_cell, is_test_cell, nbgrader_meta
from . import rematch
from .needed import needed
from .repair import repair

COMPARED_META = ("grade", "solution", "locked", "points", "grade_id", "task")  # what decides scoring


@dataclass
class SourceTest:
    grade_id: str
    cell_id: str | None
    source: str  # the text that runs (hidden tests included)
    released: str  # the text the student was given (hidden tests cleared)
    released_meta: dict
    points: float
    anchor: str | None  # grade_id of the solution cell before it in the source
    # the anchor's answer cell as the student was given it (its stub, or a bug hunt's code) and its metadata:
    # what a notebook that lost nbgrader's metadata is matched to (:mod:`.rematch`)
    anchor_released: str = ""
    anchor_meta: dict = field(default_factory=dict)
    # the manually graded answers (a bug hunt's written "why") that follow it in the release before the next code
    # cell that is graded: (grade id, released text, metadata, how many cells after this test), for the same match
    answers_after: tuple[tuple[str, str, dict, int], ...] = ()


@dataclass
class Plan:
    """What runs: ``sources`` in order; ``tests[i]`` is the grade_id of the test cell at position i."""

    sources: list[str]
    tests: dict[int, str]
    tampered: dict[str, str] = field(default_factory=dict)  # grade_id -> what changed
    notes: list[tuple[str, str]] = field(default_factory=list)  # (problem, detail) for problems.csv
    # the notebook as it ran, for the autograded copy: ("markdown", cell), ("code", cell) or ("test", grade_id);
    # the code and test items are ``sources`` in order
    items: list[tuple[str, object]] = field(default_factory=list)
    # positions of ``sources`` left out of the run (their source is ""): demonstrations no test or exercise
    # needs (:mod:`.needed`); empty when every cell runs
    left_out: set[int] = field(default_factory=set)
    # exercise whose answer cell is nowhere in the notebook -> what the learner reads on each of its failed tests
    missing: dict[str, str] = field(default_factory=dict)

    def leave_out_demonstrations(self, exercises: set[int]) -> None:
        """Blank the code cells that neither a test cell, nor an exercise cell at ``exercises``, nor a cell they
        need reads from: grading runs only what decides a score (nothing, when :func:`.needed.needed`
        cannot follow the notebook)."""
        run = needed(self.sources, set(self.tests) | exercises)
        if run is None:
            return
        self.left_out = set(range(len(self.sources))) - run
        for i in self.left_out:
            self.sources[i] = ""


def source_tests(source: NotebookNode, released: NotebookNode) -> list[SourceTest]:
    """The graded test cells of the source, in order, with what the student was given for each."""
    given = {grade_id(c): c for c in released.cells if is_test_cell(c)}
    stubs = {grade_id(c): c for c in released.cells if is_solution_cell(c)}
    tests, anchor = [], None
    for cell in source.cells:
        if is_solution_cell(cell):
            anchor = grade_id(cell)
        elif is_test_cell(cell):
            gid = grade_id(cell)
            rel = given.get(gid, cell)
            stub = stubs.get(anchor)
            tests.append(SourceTest(gid, cell.get("id"), cell.source, rel.source, dict(nbgrader_meta(rel)),
                                    float(nbgrader_meta(cell).get("points", 0)), anchor,
                                    stub.source if stub is not None else "",
                                    dict(nbgrader_meta(stub)) if stub is not None else {},
                                    _answers_after(released.cells, rel)))
    return tests


def _answers_after(cells: list[NotebookNode], test: NotebookNode) -> tuple[tuple[str, str, dict, int], ...]:
    """The released written answers (graded, not code) after ``test`` and before the next graded code cell."""
    at = next((i for i, c in enumerate(cells) if c is test), None)
    found = []
    for i in range(at + 1 if at is not None else len(cells), len(cells)):
        cell, meta = cells[i], nbgrader_meta(cells[i])
        if cell.cell_type == "code" and (meta.get("grade") or meta.get("solution")):
            break
        if meta.get("grade") and meta.get("solution") and meta.get("grade_id"):
            found.append((meta["grade_id"], cell.source, dict(meta), i - at))
    return tuple(found)


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _changes(cell: NotebookNode, test: SourceTest) -> list[str]:
    changes = []
    if cell.cell_type != "code":
        changes.append(f"turned into a {cell.cell_type} cell")
    if _norm(cell.source) != _norm(test.released):
        changes.append("its code was edited")
    meta = nbgrader_meta(cell)
    for key in COMPARED_META:
        want, got = test.released_meta.get(key), meta.get(key)
        if key == "points" and want is not None:
            try:
                same = float(got) == float(want)
            except (TypeError, ValueError):
                same = False
        else:
            same = got == want
        if not same:
            changes.append(f"metadata {key} changed from {want!r} to {got!r}")
    return changes


def plan(student: NotebookNode, tests: list[SourceTest], given: frozenset[str] = frozenset()) -> Plan:
    """What runs of ``student``: its own cells with the source's test cells put back. A code cell whose source
    is in ``given`` (the course's set-up and demonstration cells, as released) is left out when nothing that
    decides a score needs it; every cell the learner wrote or changed runs. A notebook whose every cell lost its
    nbgrader metadata gets the release's back, on ``student``'s cells in memory (:mod:`.rematch`), so what reads
    them after (the autograded notebook, the written answers) sees the cells as nbgrader would."""
    by_gid = {t.grade_id: t for t in tests}
    by_cell_id = {t.cell_id: t for t in tests if t.cell_id}
    order = {t.grade_id: i for i, t in enumerate(tests)}
    result = Plan([], {})
    # a save that dropped nbgrader's metadata (Colab, an old editor): the cells matched to the release by their text
    if (restored := rematch.restore(student.cells, tests)) is not None:
        result.notes.append(restored)
    # Jupyter's own edits undone first (a type changed, a split): they lose nothing of the answer
    repaired = repair(list(student.cells), list(dict.fromkeys(t.anchor for t in tests if t.anchor)))
    result.notes.extend(repaired.notes)
    result.missing = repaired.missing

    def flag(gid: str, what: str) -> None:
        result.tampered[gid] = f"{result.tampered[gid]}; {what}" if gid in result.tampered else what

    # 1. Walk the student's cells: keep their code, leave a slot where each test cell first appears.
    items: list[tuple[str, object]] = []  # ("code", cell) or ("test", grade_id)
    seen: set[str] = set()
    solutions_seen: set[str] = set()
    for cell in repaired.cells:
        gid = grade_id(cell)
        test = by_gid.get(gid) if gid in by_gid else _by_id(cell, by_cell_id)
        if test is None and is_test_cell(cell):
            result.notes.append(("tampered", f"a graded cell {gid!r} that is not in the source was removed"))
            continue
        if test is None:
            if cell.cell_type == "code":
                items.append(("code", cell))
                if is_solution_cell(cell):
                    solutions_seen.add(gid)
            elif cell.cell_type == "markdown":
                items.append(("markdown", cell))
            continue
        if test.grade_id in seen:
            flag(test.grade_id, "a copy of this test cell was removed")
            continue
        seen.add(test.grade_id)
        for change in _changes(cell, test):
            flag(test.grade_id, change)
        if test.anchor is not None and test.anchor not in solutions_seen and _has_solution(repaired.cells, test.anchor):
            flag(test.grade_id, f"moved above its exercise {test.anchor}; put back after it")
            continue
        if any(kind == "test" and order[g] > order[test.grade_id] for kind, g in items):
            flag(test.grade_id, "moved out of order; put back in the source's order")
            continue
        items.append(("test", test.grade_id))

    # 2. Put back every test cell that has no slot, after the previous test of its exercise or its solution.
    placed = {g for kind, g in items if kind == "test"}
    for test in tests:
        if test.grade_id in placed:
            continue
        if test.grade_id not in seen:
            flag(test.grade_id, "deleted; restored from the source")
        at = _insertion_point(items, test, tests, placed)
        items.insert(at, ("test", test.grade_id))
        placed.add(test.grade_id)

    for kind, what in items:
        if kind == "test":
            result.tests[len(result.sources)] = what
            result.sources.append(by_gid[what].source)
        elif kind == "code":
            result.sources.append(what.source)
    result.items = items
    ran = [(kind, what) for kind, what in items if kind != "markdown"]  # one per source, in order
    result.leave_out_demonstrations({i for i, (kind, what) in enumerate(ran) if kind == "code" and (
        is_solution_cell(what) or what.source not in given)})
    for gid, what in result.tampered.items():
        result.notes.append(("tampered", f"test cell {gid}: {what}"))
    return result


def _by_id(cell: NotebookNode, by_cell_id: dict[str, SourceTest]) -> SourceTest | None:
    """The source's test cell of the same cell id, which ``cell`` (whose grade id, if any, the source does not
    know) still is when it claims to be graded (its grade id was changed), or holds the test's text (its nbgrader
    metadata was removed). An answer cell never is, nor a learner's own cell that only shares the id (ids
    repeated by another tool, or a release that renumbered them): that is the learner's code, and runs."""
    test = by_cell_id.get(cell.get("id"))
    meta = nbgrader_meta(cell)
    if test is None or meta.get("solution"):
        return None
    if meta.get("grade") or _norm(cell.get("source", "")) == _norm(test.released):
        return test
    return None


def _has_solution(cells: list[NotebookNode], gid: str) -> bool:
    return any(is_solution_cell(c) and grade_id(c) == gid for c in cells)


def _insertion_point(items: list, test: SourceTest, tests: list[SourceTest], placed: set[str]) -> int:
    group = [t for t in tests if t.anchor == test.anchor]
    before = [t.grade_id for t in group[:group.index(test)] if t.grade_id in placed]
    for i, (kind, what) in enumerate(items):
        if kind == "test" and before and what == before[-1]:
            return i + 1
    if not before and test.anchor is not None:
        for i, (kind, what) in enumerate(items):
            if kind == "code" and is_solution_cell(what) and grade_id(what) == test.anchor:
                return i + 1
    # No solution cell to follow (deleted, or a test before any exercise): run it last, when the most is defined.
    return len(items)


def reference_plan(source: NotebookNode) -> Plan:
    """The source itself, run as it stands: its code cells, its test cells."""
    result = Plan([], {})
    exercises = set()
    for cell in source.cells:
        if cell.cell_type != "code":
            continue
        if is_test_cell(cell):
            result.tests[len(result.sources)] = grade_id(cell)
        elif is_solution_cell(cell):
            exercises.add(len(result.sources))
        result.sources.append(cell.source)
    result.leave_out_demonstrations(exercises)
    return result
