"""Manually graded answers: the written "why" under each bug hunt, read and scored by a person in formgrader.

In the source an answer is an nbgrader *manually graded answer*: a markdown cell whose nbgrader metadata says
``solution: true`` and ``grade: true``, with its points and a grade id ``why_<bug hunt>`` (:data:`PREFIX`). Its
whole text is one solution region: the model answer and the mark scheme between nbgrader's BEGIN SOLUTION and
END SOLUTION delimiter lines (not spelt out here: the students' wheel must hold no such line). nbgrader's
ClearSolutions releases it as ``YOUR ANSWER HERE``.

The grader counts it as nbgrader does (``nbgrader.utils.determine_grade``):

- left as released, or emptied: status ``not attempted``, 0 points, and an automatic score of 0 in the gradebook
  (nbgrader gives a cell left as released 0 too; an emptied one it leaves to a person, who can only give 0);
- written: status ``manual``, no automatic score (``auto_score`` None, so ``needs_manual_grade`` in the
  gradebook), 0 points until a person gives a score in formgrader; its points count in the maximum;
- the cell is nowhere in the notebook: status ``missing``, 0 points, with how to restore it.

A person's score is the gradebook's (:meth:`.results.SubmissionResult.with_gradebook`), as for any cell. The
answer is never run, never compared with anything, and never "tampered": it is the learner's to write.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from nbformat import NotebookNode

from ...nbio import grade_id, nbgrader_meta
from .judge import TestScore
from .repair import RESTORE

PREFIX = "why_"  # every manually graded answer's grade id starts so; a test cell's starts with test_
TEXT_STUB = "YOUR ANSWER HERE"  # nbgrader's ClearSolutions.text_stub, what the learner is given
BEGIN, END = "BEGIN SOLUTION", "END SOLUTION"
WAITING = "waiting for a person"  # the status "manual" as the learner and the report read it while no score is given
READ = "read by your instructor"  # what validate says of a written answer


def is_manual_id(gid: str | None) -> bool:
    """A manually graded answer's grade id (``why_split_heads``), never a test's (``test_...``)."""
    return bool(gid) and gid.startswith(PREFIX)


def is_manual_cell(cell: NotebookNode) -> bool:
    """nbgrader's manually graded answer: a solution cell that is also a grade cell (of any type, so that one the
    learner turned into code is still their answer)."""
    meta = nbgrader_meta(cell)
    return bool(meta.get("solution")) and bool(meta.get("grade")) and is_manual_id(meta.get("grade_id"))


@dataclass(frozen=True)
class SourceAnswer:
    """One manually graded answer of the source: its grade id and points, what the learner was given, and the
    mark scheme (the solution region's text) shown to the person who grades it and, with the feedback, the learner."""

    grade_id: str
    points: float
    released: str
    mark_scheme: str
    meta: dict  # the released cell's nbgrader metadata, put back on the learner's cell in the autograded notebook


def mark_scheme(source: str) -> str:
    """The text between the solution markers of a source answer cell (the whole text when it has none)."""
    lines = source.split("\n")
    begin = next((i for i, line in enumerate(lines) if BEGIN in line), None)
    end = next((i for i, line in enumerate(lines) if END in line), None)
    if begin is None or end is None or end < begin:
        return source.strip()
    return "\n".join(lines[begin + 1:end]).strip()


def source_answers(source: NotebookNode, released: NotebookNode) -> list[SourceAnswer]:
    """The manually graded answers of the source, in notebook order, with what the learner was given for each."""
    given = {grade_id(c): c for c in released.cells if is_manual_cell(c)}
    found = []
    for cell in source.cells:
        if not is_manual_cell(cell):
            continue
        gid = grade_id(cell)
        rel = given.get(gid)
        found.append(SourceAnswer(gid, float(nbgrader_meta(cell).get("points", 0)),
                                  rel.source if rel is not None else TEXT_STUB, mark_scheme(cell.source),
                                  dict(nbgrader_meta(rel if rel is not None else cell))))
    return found


def _words(text: str) -> str:
    return " ".join(text.split())


def written(text: str, released: str) -> str:
    """The learner's own words in an answer cell: "" when it is as released, or holds nothing but the stub."""
    if _words(text) == _words(released):
        return ""
    own = text.replace(TEXT_STUB, "")
    for line in released.splitlines():  # the course's own lines (a prompt kept in the cell) are not the answer
        if line.strip() and line.strip() != TEXT_STUB:
            own = own.replace(line, "")
    return text.strip() if own.strip() else ""


def answer_cells(cells: list[NotebookNode], gid: str) -> list[NotebookNode]:
    return [c for c in cells if grade_id(c) == gid and nbgrader_meta(c).get("solution")]


def score_answers(cells: list[NotebookNode], answers: list[SourceAnswer]) -> tuple[list[TestScore], dict[str, str]]:
    """One score per source answer (see the module's docstring), and grade id -> the learner's written answer."""
    scores, texts = [], {}
    for answer in answers:
        found = answer_cells(cells, answer.grade_id)
        if not found:
            scores.append(TestScore(answer.grade_id, 0.0, answer.points, "missing",
                                    f"the answer cell with grade id {answer.grade_id} was deleted (or its nbgrader "
                                    f"metadata removed): {RESTORE}, then write your answer in it"))
            continue
        text = "\n\n".join(filter(None, (written(c.get("source", ""), answer.released) for c in found)))
        if not text:
            scores.append(TestScore(answer.grade_id, 0.0, answer.points, "not attempted",
                                    "no answer written: a person reads this answer and gives its points"))
            continue
        texts[answer.grade_id] = text
        scores.append(TestScore(answer.grade_id, 0.0, answer.points, "manual",
                                f"written answer, {WAITING}: its points are given in formgrader"))
    return scores, texts


def as_text(cells: list[NotebookNode]) -> list[tuple[str, str]]:
    """Answer cells the learner turned into code or raw made markdown again, in place (nbgrader's OverwriteCells
    restores the type too): a written answer is read, never run. Returns the (problem, detail) rows that say so."""
    notes = []
    for i, cell in enumerate(cells):
        if is_manual_cell(cell) and cell.get("cell_type") != "markdown":
            text = NotebookNode(id=cell.get("id") or grade_id(cell).replace("_", "-"), cell_type="markdown",
                                metadata=cell.get("metadata", NotebookNode()), source=cell.get("source", ""))
            notes.append(("cell type changed", f"the answer cell with grade id {grade_id(cell)} was turned into a "
                          f"{cell.get('cell_type')} cell; it was read as your written answer, not run. Turn it back "
                          "into a Markdown cell (select it, press Esc then M)"))
            cells[i] = text
    return notes


def in_source_order(scores: list[TestScore], source: NotebookNode) -> list[TestScore]:
    """``scores`` in the order of their cells in the source (tests and answers interleaved as the notebook has them)."""
    order = {grade_id(c): i for i, c in enumerate(source.cells) if grade_id(c)}
    return sorted(scores, key=lambda s: order.get(s.grade_id, len(order)))


MARK_SCHEME_ID = re.compile(r"[^A-Za-z0-9-]")


def mark_scheme_cell(answer: SourceAnswer) -> NotebookNode:
    """A markdown cell for the autograded notebook, right under the learner's answer: the course's mark scheme, for
    the person grading in formgrader (and the learner, in nbgrader's own feedback)."""
    cell_id = MARK_SCHEME_ID.sub("-", f"{answer.grade_id}-mark-scheme")[:64]
    quoted = "\n".join(f"> {line}" if line.strip() else ">" for line in answer.mark_scheme.splitlines())
    return NotebookNode(id=cell_id, cell_type="markdown", metadata=NotebookNode(),
                        source=f"**Mark scheme for `{answer.grade_id}`** (the course's; not part of the answer "
                               f"above, worth {answer.points:g} point{'s' * (answer.points != 1)}):\n\n{quoted}")


def with_mark_schemes(nb: NotebookNode, answers: list[SourceAnswer]) -> NotebookNode:
    """The autograded notebook with each answer cell's nbgrader metadata as released (formgrader grades the cell by
    it, as nbgrader's OverwriteCells restores it) and the mark scheme right under it."""
    by_id = {a.grade_id: a for a in answers}
    out = []
    for cell in nb.cells:
        out.append(cell)
        answer = by_id.pop(grade_id(cell), None) if nbgrader_meta(cell).get("solution") else None
        if answer is None:
            continue
        cell.metadata["nbgrader"] = NotebookNode(dict(answer.meta))
        if cell.cell_type == "code":  # turned into code by the learner: its outputs, if any, are not the answer
            cell.outputs, cell.execution_count = [], None
        out.append(mark_scheme_cell(answer))
    nb.cells = out
    return nb
