"""Bug hunts: exercises whose student version shows code that runs and is wrong, not a stub.

A bug hunt is a solution cell (nbgrader's ``solution: true``) whose solution region is followed at
once by a *bug region*, the same lines as the learner will see them, commented out so the reference
notebook still runs its fix. Between the cell's nbgrader solution markers (BEGIN SOLUTION, END
SOLUTION, each on a comment line starting with three hashes; not written out here, so that this module,
which students have installed, never holds them) stands the fix; right after the END line comes::

    def mean_of(values):
        \"\"\"The mean of a non-empty list of numbers.\"\"\"
        # (the BEGIN SOLUTION marker line)
        return sum(values) / len(values)
        # (the END SOLUTION marker line)
        ### BEGIN BUG
        # return sum(values) / (len(values) - 1)
        ### END BUG

Every line of a bug region is the region's own indentation, then ``# `` and the code (or just ``#``
for a blank line). Releasing works as for any exercise: nbgrader's ``ClearSolutions`` puts the stub
where the solution was, then :class:`ShowBugs` (which must run after it) puts the uncommented bug in
the stub's place and drops the markers. The student sees::

    def mean_of(values):
        \"\"\"The mean of a non-empty list of numbers.\"\"\"
        return sum(values) / (len(values) - 1)

tools/build_solution.py's docstring shows a whole cell, markers and all.

Both ways of releasing run :class:`ShowBugs` right after ``ClearSolutions``:
``python -m autograder release`` (:func:`autograder.release.generate_steps`) and stock
``nbgrader generate_assignment`` (``c.GenerateAssignment.preprocessors`` in nbgrader_config.py), so
they give the same student notebook, and the gradebook's checksums are those of the buggy cell.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

BEGIN = "### BEGIN BUG"
END = "### END BUG"
STUB_LINES = ("# YOUR CODE HERE", "raise NotImplementedError()")  # nbgrader's code stub, as release.STUB


class BugRegionError(ValueError):
    """A bug region written so it cannot be released; the message says what to change."""


@dataclass(frozen=True)
class BugRegion:
    """Where one bug region sits in a cell's lines, and the code it shows the learner."""

    begin: int  # index of the BEGIN line
    end: int  # index of the END line
    code: list[str]  # the uncommented lines, indented as the region


def is_bug_hunt(source: str) -> bool:
    """Does a cell's source hold a bug region?"""
    return BEGIN in source or END in source


def bug_regions(lines: list[str]) -> list[BugRegion]:
    """Every bug region of a cell's ``lines``, checked: closed, not nested, each line a comment."""
    regions, start = [], None
    for i, line in enumerate(lines):
        if BEGIN in line:
            if start is not None:
                raise BugRegionError(f"line {i + 1}: a bug region opens inside another; close it with `{END}` first")
            start = i
        elif END in line:
            if start is None:
                raise BugRegionError(f"line {i + 1}: `{END}` without a `{BEGIN}` above it")
            regions.append(BugRegion(start, i, _uncomment(lines, start, i)))
            start = None
    if start is not None:
        raise BugRegionError(f"line {start + 1}: the bug region is never closed; end it with `{END}`")
    return regions


def _uncomment(lines: list[str], begin: int, end: int) -> list[str]:
    indent = re.match(r"\s*", lines[begin]).group(0)
    code = []
    for n, line in enumerate(lines[begin + 1:end], start=begin + 2):
        if line.rstrip() == indent + "#":
            code.append("")
        elif line.startswith(indent + "# "):
            code.append(indent + line[len(indent) + 2:])
        else:
            raise BugRegionError(f"line {n}: every line of a bug region is `{indent}# ` and the code the learner "
                                 f"sees (commented out so the reference runs its fix), got {line!r}")
    return code


def show_bugs(source: str) -> str:
    """A solution cell's source after nbgrader's ClearSolutions -> what the learner sees.

    Each bug region must follow the stub ClearSolutions left where the solution was; the stub and the
    region become the uncommented bug. A cell without a bug region is returned unchanged.
    """
    if not is_bug_hunt(source):
        return source
    lines = source.split("\n")
    out, last = [], 0
    for region in bug_regions(lines):
        stub_at = region.begin - len(STUB_LINES)
        stub = [line.strip() for line in lines[max(stub_at, 0):region.begin]]
        if stub_at < last or tuple(stub) != STUB_LINES:
            raise BugRegionError(f"line {region.begin + 1}: a bug region must come right after the END SOLUTION line, "
                                 "so the bug takes the place of the solution in the student's cell")
        out += lines[last:stub_at] + region.code
        last = region.end + 1
    return "\n".join(out + lines[last:])


class ShowBugs(NbGraderPreprocessor):
    """nbgrader preprocessor: a bug hunt's student cell shows the bug; run it right after ClearSolutions."""

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int) -> tuple[NotebookNode, dict]:
        if cell.cell_type == "code" and is_bug_hunt(cell.source):
            try:
                cell.source = show_bugs(cell.source)
            except BugRegionError as exc:
                raise BugRegionError(f"cell {index} ({cell.get('id', '?')}): {exc}") from None
        return cell, resources
