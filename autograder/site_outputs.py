"""Which outputs of a given cell may travel from the reference run to a learner's page on the course's site.

The page is the learner's before they have written anything, so it may show only what does not depend on their
work. :func:`given_outputs` decides it cell by cell: a given cell that does not read the learner's work
(:func:`.learner_work.learners_cells`) shows what it printed or drew in the reference run stored in
``solutions/``, less what a static page cannot show (:func:`shown_output`); a given cell that draws a figure with
an exercise's function shows that figure alone, marked with the course's functions that drew it
(:func:`drawn_figures`, :data:`DRAWN`, captioned by :func:`drawn_caption`); everything else shows nothing. Only
outputs travel, never a line of the solution's code. :mod:`autograder.website` renders what this module kept.
"""
from __future__ import annotations

import copy
import html

import nbformat

from . import learner_work
from .checks.causes import parsed
from .checks.core import EVIDENCE_MIME
from .checks.questions import is_question
from .learner_work import learners_cells
from .nbio import grade_id, is_solution_cell

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"  # needs a live kernel; the page has none
IMAGE_MIMES = ("image/png", "image/jpeg")

# A set-up line that says whose earlier pieces a notebook runs on: on the site it would say "the course's", the
# course's business, never the learner's (the set-up cell's outputs are dropped; this is the guard behind that).
NOT_THE_LEARNERS = "the course's solutions"


DRAWN = "site_drawn_with"  # an image output's metadata key: the exercises whose course versions drew it
OWN_PIECES = "use_pieces"  # the set-up's hand-out of the earlier notebooks' pieces (the course's, in its run)


def drawn_with(student, solution, assignment: str = "") -> dict[int, list[str]]:
    """Position -> the names of the learner's work that code cell reads, directly or through what it computed from
    them (:func:`.learner_work.depends_on`, one name at a time in notebook order), for every given cell that reads
    any. A figure such a cell drew in the reference run was drawn with the course's versions of exactly these."""
    names = learner_work.exercise_names(student, assignment)
    names |= learner_work.exercise_names(solution, assignment) if solution is not None else set()
    trees = {i: parsed(c.source) for i, c in enumerate(student.cells)
             if c.cell_type == "code" and not is_solution_cell(c) and not grade_id(c)}
    imported = learner_work.imported_names(t for t in trees.values() if t is not None)
    found: dict[int, list[str]] = {}
    for name in sorted(names):
        tainted = {name}
        for i, tree in trees.items():
            if tree is not None and learner_work.depends_on(tree, tainted, imported):
                found.setdefault(i, []).append(name)
    return found


def drawn_figures(ran, names: list[str], assignment: str) -> list:
    """The images ``ran`` (a cell of the reference run) drew, each marked with the exercises it was drawn with, or
    [] when any of them is a prediction's answer (a figure of it would be the answer) or the cell drew none. Only
    the images travel: a printed line under the cell would be the course's result, never the learner's."""
    if any(is_question(assignment, name) for name in names):
        return []
    figures = []
    for output in ran.get("outputs", []):
        data = {k: v for k, v in output.get("data", {}).items() if k in IMAGE_MIMES}
        if output.get("output_type") in ("display_data", "execute_result") and data:
            figures.append(nbformat.from_dict({"output_type": "display_data", "data": data,
                                               "metadata": {**copy.deepcopy(output.get("metadata", {})),
                                                            DRAWN: list(names)}}))
    return figures


def drawn_caption(names: list[str]) -> str:
    """The caption under a figure the course's code drew in place of the learner's (HTML)."""
    own = [n for n in names if n != OWN_PIECES]
    listed = [f"<code>{html.escape(n)}</code>" for n in own]
    listed += ["the earlier notebooks' pieces"] if OWN_PIECES in names or not own else []
    said = listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " and " + listed[-1]
    return (f"Drawn with the course's own {said}, not with your work: in the notebook this cell draws it with "
            f"{'yours' if len(own) == len(listed) == 1 else 'your code'}.")


def given_outputs(student, solution, assignment: str = "") -> int:
    """Decide, cell by cell, what ``student``'s page shows under each code cell, and give each given cell that
    keeps its outputs the ones it had in the reference run (``solution`` with its stored outputs); returns how
    many cells show some.

    The page is the learner's before they have written anything, so an output shows only where it does not
    depend on their work (:func:`.learner_work.learners_cells`): never under an exercise or a check, never
    under a cell that calls an exercise's function or uses what one returned, never the set-up cell's lines on
    whose earlier pieces the notebook runs, nothing under a cell whose code cannot be read. One exception:
    a given cell that draws a figure with an exercise's function (04's temperature plot calls the learner's
    softmax) shows the figures the reference run drew, and only those, each captioned with the course's code
    that drew it (:func:`drawn_figures`, :data:`DRAWN`); never one drawn from a prediction's answer. A kept cell
    is matched by id and must hold the same source in both, so an output always belongs to the code above it;
    only outputs travel, never the solution's code. The grader's evidence records and widgets (which need a
    running kernel) are left out."""
    reference = {c.get("id"): c for c in solution.cells if c.cell_type == "code"}
    theirs = learners_cells(student, assignment, solution)
    drawn = drawn_with(student, solution, assignment)
    filled = 0
    for i, cell in enumerate(student.cells):
        if cell.cell_type != "code":
            continue
        ran = reference.get(cell.get("id"))
        if ran is None or ran.source != cell.source or is_solution_cell(ran) or grade_id(ran):
            cell.outputs, cell.execution_count = [], None
            continue
        if i in theirs:  # the learner's work: at most the figures the course's code drew, said so
            cell.outputs = drawn_figures(ran, drawn[i], assignment) if drawn.get(i) else []
            cell.execution_count = ran.get("execution_count") if cell.outputs else None
            filled += bool(cell.outputs)
            continue
        outputs = [o for o in (shown_output(o) for o in ran.get("outputs", [])) if o is not None]
        if any(NOT_THE_LEARNERS in "".join(o.get("text", "")) for o in outputs):
            outputs = []
        cell.outputs, cell.execution_count = outputs, ran.get("execution_count") if outputs else None
        filled += bool(outputs)
    return filled


def shown_output(output):
    """``output`` as a static page can show it, or None (evidence records, widgets, errors)."""
    if output.get("output_type") == "error":
        return None
    if output.get("output_type") in ("display_data", "execute_result"):
        data = {k: v for k, v in output.get("data", {}).items() if k != EVIDENCE_MIME}
        if WIDGET_MIME in data or not data:
            return None
        output = copy.deepcopy(output)
        output["data"] = data
    return output
