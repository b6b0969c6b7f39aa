"""The autograded copy of a submission, as nbgrader's ``autograde`` would leave it for formgrader.

``autograded/<student>/<assignment>/<assignment>.ipynb`` holds the notebook as it ran: the student's
cells with their outputs, and every graded test cell restored from the source with the grader's
verdict as its output (a passing line, or the check's message as an error), so that a reviewer in
formgrader sees why a test failed and ``nbgrader generate_feedback`` can render it. Test cells carry
the text the student was given: hidden tests stay hidden, in formgrader and in released feedback.
"""
from __future__ import annotations

import copy

import nbformat
from nbformat import NotebookNode
from nbformat.corpus.words import generate_corpus_id as random_cell_id

from ...checks.core import EVIDENCE_MIME
from ...nbio import grade_id, is_solution_cell
from ...engine import RunResult
from .judge import TestScore
from .sanitize import Plan, SourceTest

MAX_OUTPUT_CHARS = 200_000  # per cell: a reviewer's page, not an archive of a flood


def autograded_notebook(student: NotebookNode, plan: Plan, run: RunResult, tests: list[SourceTest],
                        scores: list[TestScore], solution_ids: set[str]) -> NotebookNode:
    """The submission as it ran (see the module's docstring); ``solution_ids`` are the source's solution cells."""
    by_gid = {t.grade_id: t for t in tests}
    verdicts = {s.grade_id: s for s in scores}
    cells_run = {c.index: c for c in run.cells}
    nb = nbformat.v4.new_notebook(metadata=copy.deepcopy(student.get("metadata", {})))
    position = 0
    for kind, what in plan.items:
        if kind == "markdown":
            nb.cells.append(copy.deepcopy(what))
            continue
        ran = cells_run.get(position)
        if kind == "test":
            test = by_gid[what]
            cell = NotebookNode(id=test.cell_id or random_cell_id(), cell_type="code", source=test.released,
                                metadata=NotebookNode(nbgrader=nbformat.from_dict(copy.deepcopy(test.released_meta))),
                                execution_count=None, outputs=_verdict(verdicts.get(test.grade_id)))
        else:
            cell = copy.deepcopy(what)
            if is_solution_cell(cell) and grade_id(cell) not in solution_ids:
                cell.metadata.pop("nbgrader", None)  # a grade id nbgrader's gradebook has never seen
            elif not is_solution_cell(cell):
                cell.metadata.pop("nbgrader", None)
            # a left-out cell says so, or its missing output would read as a cell that failed silently
            cell.outputs = [_stream("stdout", LEFT_OUT)] if position in plan.left_out else _outputs(
                ran.outputs if ran else [])
        cell.execution_count = (position + 1 if ran is not None and ran.status != "skipped"
                                and position not in plan.left_out else None)
        nb.cells.append(cell)
        position += 1
    return nb


LEFT_OUT = ("not run when graded: a demonstration of the course's that no exercise or test reads from "
            "(it runs as usual in JupyterLab)\n")


def _verdict(score: TestScore | None) -> list[NotebookNode]:
    if score is None:
        return []
    if score.status == "passed" and score.prediction is not None:  # points for the form: recorded, not passed
        p = score.prediction
        said = "right" if p.right else "wrong" + (f". {p.why}" if p.why else "")
        return [_stream("stdout", f"recorded: your prediction {p.answer}, {said}\n")]
    if score.status == "passed":
        return [_stream("stdout", f"passed: {score.message}\n")]
    return [NotebookNode(output_type="error", ename=f"Test {score.status}", evalue=score.message,
                         traceback=[f"{score.status}: {score.message}"])]


# Cells and outputs are built as plain nodes: nbformat's new_code_cell and new_output check each one against
# the schema as they are made (its slow path, jsonschema), and the whole notebook is checked once anyway
# when it is written (nbformat.writes).
def _stream(name: str, text: str) -> NotebookNode:
    return NotebookNode(output_type="stream", name=name, text=text)


def _outputs(outputs: list[dict]) -> list[NotebookNode]:
    """The cell's outputs without the grader's evidence records, cut to a size a browser can show."""
    kept, size = [], 0
    for out in outputs:
        if not isinstance(out, dict):
            continue
        out = copy.deepcopy(out)
        if out.get("output_type") in ("display_data", "execute_result"):
            out.get("data", {}).pop(EVIDENCE_MIME, None)
            if not out.get("data"):
                continue
            out.setdefault("metadata", {})
            if out["output_type"] == "execute_result":
                out.setdefault("execution_count", None)
        size += len(str(out))
        if size > MAX_OUTPUT_CHARS:
            kept.append(_stream("stderr", "[output cut for review]\n"))
            break
        kept.append(nbformat.from_dict(out))
    return kept
