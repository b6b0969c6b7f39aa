"""Each cell's time limit, from the course's own timings.

A class's references already run once (the solution notebook, in evidence mode, on the grading machine and
under its load), and every cell of that run is timed. A submission's cell that the course also runs gets a
limit scaled from the course's own time for it: ``max(floor, factor x seconds)``, and never above the cap,
stock nbgrader's 30 s (``--timeout``). So a loop in an exercise whose test takes the course 0.05 s is
stopped after ``floor`` seconds, not 30, while a learner's correct code may be ``factor`` times slower than
the course's whole cell, checks included, or take up to ``floor`` seconds, before it is cut.

Which cells are "the course's": a test cell (by grade id; it always runs as the source has it), an exercise
cell (by grade id: the learner's version of the course's cell), and a given cell the learner left exactly as
released (by its text). A cell the learner added, or a given cell they changed, has no course time: it
gets the cap, as under stock nbgrader.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from nbformat import NotebookNode

from ...nbio import grade_id, is_solution_cell, is_test_cell


@dataclass(frozen=True)
class TimePolicy:
    """How a cell's limit follows from the course's time for it (``grade --timeout-floor/--timeout-factor``)."""

    floor: float = 2.0  # seconds: every cell may take this long, however fast the course's version is
    # times the course's own seconds for the cell (its checks included). A test cell runs in evidence mode and
    # takes milliseconds, so the floor bounds what a loop costs and the factor costs a loop nothing there. Where
    # the learner's function is most of the cell (04's sampling calls it thousands of times), a softmax written
    # with Python loops is 50 times slower than the course's (measured), so a cell the course runs in 0.3 s or
    # more keeps stock's 30 s.
    factor: float = 100.0

    def limit(self, course_seconds: float, cap: float) -> float:
        """The limit of a cell the course runs in ``course_seconds``: at least the floor, at most ``cap``."""
        return min(cap, max(self.floor, self.factor * course_seconds))

    def to_json(self) -> dict:
        return {"floor": self.floor, "factor": self.factor}

    @classmethod
    def from_json(cls, data: dict | None) -> "TimePolicy | None":
        return None if data is None else cls(floor=float(data["floor"]), factor=float(data["factor"]))


def _given_key(source: str) -> str:
    return "given:" + hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def cell_key(cell: NotebookNode) -> str:
    """What names a code cell across the solution and a submission (see the module's docstring)."""
    if is_test_cell(cell):
        return "test:" + grade_id(cell)
    if is_solution_cell(cell):
        return "exercise:" + grade_id(cell)
    return _given_key(cell.source)


def reference_seconds(source: NotebookNode, seconds: list[float]) -> dict[str, float]:
    """The solution's code cells, in order, against their run's ``seconds``: key -> seconds (a key met twice,
    as two identical given cells, keeps the longer)."""
    cells = [c for c in source.cells if c.cell_type == "code"]
    if len(cells) != len(seconds):
        raise ValueError(f"{len(seconds)} timings for {len(cells)} code cells")
    timed: dict[str, float] = {}
    for cell, s in zip(cells, seconds):
        key = cell_key(cell)
        timed[key] = round(max(timed.get(key, 0.0), float(s)), 4)
    return timed


def plan_keys(items: list[tuple[str, object]]) -> list[str]:
    """The key of each source a submission's plan runs, in order (its items: ("code", cell), ("test", grade_id)
    or ("markdown", cell), which does not run)."""
    return ["test:" + str(what) if kind == "test" else cell_key(what) for kind, what in items if kind != "markdown"]


def cell_limits(keys: list[str], course: dict[str, float], policy: TimePolicy, cap: float) -> dict[int, float]:
    """Position -> limit, for the positions whose key the course timed; the others keep ``cap``."""
    return {i: policy.limit(course[k], cap) for i, k in enumerate(keys) if k in course}
