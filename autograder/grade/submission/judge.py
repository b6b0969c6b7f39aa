"""Score each graded test cell from evidence, in the grader's process, failing closed.

A test cell earns its points only when the student's run of it emitted evidence payloads that
match the reference run's payloads one to one and :func:`autograder.checks.core.judge` accepts
every pair. Anything missing, extra or malformed earns nothing.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from ...checks import causes, core
from ...nbio import ANSI, exercise_of, grade_id, is_solution_cell
from ...engine import RunResult
from .interrupted import StoppedAt, stopped_at
from .sanitize import Plan, SourceTest

# a test's, as saved; "manual": a written answer a person scores in formgrader (.manual), never a verdict of ours
Status = Literal["passed", "failed", "not attempted", "error", "timeout", "missing", "tampered", "manual"]
WORST_FIRST = ("failed", "error", "timeout", "missing", "tampered", "manual", "not attempted", "passed")


def exercise_status(statuses) -> Status:
    """An exercise's status from its tests' statuses: passed when all passed, not attempted when
    nothing was tried (some may pass on a stub), else the worst of them (a failed check first)."""
    found = set(statuses)
    if found == {"passed"}:
        return "passed"
    if "not attempted" in found and found <= {"not attempted", "passed"}:
        return "not attempted"
    return next((s for s in WORST_FIRST if s in found), "failed")


class ReferenceRunError(RuntimeError):
    """The solution notebook itself does not pass its tests: nothing can be graded against it."""


@dataclass
class TestScore:
    """One graded test cell's score, as saved in ``results/<student>/<assignment>.json`` under ``scores``.

    A prediction question's test also carries ``prediction``: the learner's answer and whether it was
    right (``{"answer": "(80, 80)", "right": false, "why": "..."}``, see :class:`~..checks.core.Prediction`).
    It is recorded, never scored: the test's points are for a well-formed answer. The key is left out
    for every other test, and results saved before it existed read with ``prediction = None``.
    A test that timed out also carries ``stopped``, the learner's line that was running when it was stopped
    (:class:`~.interrupted.StoppedAt`), when the interrupted traceback names one; left out otherwise.
    """

    grade_id: str
    points: float
    max_points: float
    status: Status
    message: str = ""
    mistake: str = ""  # the known mistake a failed check recognised (for the class report), else ""
    prediction: core.Prediction | None = None  # a question's recorded answer, right or wrong
    stopped: StoppedAt | None = None  # a timed-out test: the learner's line that was running when it was stopped

    def to_json(self) -> dict:
        data = asdict(self)
        data.pop("prediction")
        data.pop("stopped")
        if self.prediction is not None:
            data["prediction"] = self.prediction.to_json()
        if self.stopped is not None:
            data["stopped"] = self.stopped.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict) -> "TestScore":
        prediction, stopped = data.get("prediction"), data.get("stopped")
        return cls(**{**data, "prediction": core.Prediction.from_json(prediction) if prediction else None,
                      "stopped": StoppedAt.from_json(stopped) if stopped else None})


def evidence_of(outputs: list[dict]) -> list:
    """Every evidence payload a cell displayed, in order (malformed ones included, to fail on)."""
    found = []
    for out in outputs:
        if isinstance(out, dict) and out.get("output_type") in ("display_data", "execute_result"):
            data = out.get("data") or {}
            if isinstance(data, dict) and core.EVIDENCE_MIME in data:
                found.append(data[core.EVIDENCE_MIME])
    return found


def _error(outputs: list[dict]) -> str:
    for out in outputs:
        if isinstance(out, dict) and out.get("output_type") == "error":
            return ANSI.sub("", f"{out.get('ename', 'Error')}: {out.get('evalue', '')}").strip()[:500]
    return "the cell raised an error"


def _first_failure(run: RunResult) -> str:
    """Where the run first went wrong (often a set-up cell, long before the test cell that noticed)."""
    problems = "".join(f"; {p}" for p in run.problems)
    for cell in run.cells:
        failed = cell.status not in ("ok",) or any(isinstance(o, dict) and o.get("output_type") == "error"
                                                   for o in cell.outputs)
        if failed:
            what = cell.detail or _error(cell.outputs)
            return f"; the first cell that failed is cell {cell.index} ({cell.status}: {what}){problems}"
    return problems


def reference_evidence(run: RunResult, plan: Plan, *, seed: int) -> dict[str, list]:
    """The reference's payloads per test cell, after proving the reference passes its own tests."""
    by_index = {c.index: c for c in run.cells}
    reference: dict[str, list] = {}
    for index, gid in plan.tests.items():
        cell = by_index.get(index)
        if cell is None or cell.status != "ok":
            detail = f"{cell.status}: {cell.detail or _error(cell.outputs)}" if cell else "did not run"
            raise ReferenceRunError(f"the solution's test cell {gid} did not pass ({detail})" + _first_failure(run))
        payloads = evidence_of(cell.outputs)
        if not payloads:
            raise ReferenceRunError(f"the solution's test cell {gid} recorded no evidence; it cannot be graded safely")
        for payload in payloads:
            ok, message = core.judge(payload, payload, seed=seed)
            if not ok:
                raise ReferenceRunError(f"the solution's test cell {gid} does not pass against itself: {message}")
        reference[gid] = payloads
    return reference


def score(run: RunResult, plan: Plan, tests: list[SourceTest], reference: dict[str, list], *,
          seed: int) -> list[TestScore]:
    """One score per graded test cell of the source, in source order."""
    by_index = {c.index: c for c in run.cells}
    position = {gid: i for i, gid in plan.tests.items()}
    scores, learners = [], None
    for test in tests:
        cell = by_index.get(position.get(test.grade_id, -1))
        s = _score_one(cell, test, reference.get(test.grade_id), seed)
        if s.status == "timeout" and cell is not None:  # where its interrupt found the learner's code
            learners = learner_cells(plan) if learners is None else learners
            s.stopped = stopped_at(cell.outputs, learners)
        if test.anchor in plan.missing and s.status != "passed":  # say first why the exercise could not run
            s.message = f"{plan.missing[test.anchor]}. {s.message}".strip()
        if test.grade_id in plan.tampered:
            s.message = f"test cell changed ({plan.tampered[test.grade_id]}); graded from the original. {s.message}"
            s.status = "tampered"
        scores.append(s)
    return scores


def learner_cells(plan: Plan) -> dict[int, tuple[str, str]]:
    """Position -> (the exercise whose cell it is, or "", the source that ran) of every cell of ``plan`` that is
    not a test cell: the cells a traceback may name to the learner."""
    cells, position = {}, 0
    for kind, what in plan.items:
        if kind == "markdown":
            continue
        if kind == "code":
            cells[position] = ((grade_id(what) or "") if is_solution_cell(what) else "", plan.sources[position])
        position += 1
    return cells


def trace_causes(scores: list[TestScore], sources: dict[str, str]) -> None:
    """Say first, in each failed test's message, when its exercise calls another exercise of the same
    notebook that failed too (``sources``: grade_id -> the learner's solution cell); a failure without a
    known mistake counts as ``caused by <name>`` in the class report. Earlier notebooks' pieces are the
    course's under grading, so only this notebook's exercises can be the cause."""
    failing = ("failed", "error", "timeout")
    failed = {exercise_of(s.grade_id) for s in scores if s.status in failing}
    direct: dict[str, str] = {}  # exercise -> the failing exercise it calls
    for name in sorted(failed & set(sources)):
        cause = causes.failed_callee(causes.names_in_source(sources[name]), failed, name)
        if cause is not None:
            direct[name] = cause
    for s in scores:
        name = exercise_of(s.grade_id)
        if s.status not in failing or name not in direct:
            continue
        chain = [direct[name]]  # follow it to the first exercise that fails of itself (softmax, not the
        while chain[-1] in direct and direct[chain[-1]] not in chain + [name]:  # softmax_temperature calling it)
            chain.append(direct[chain[-1]])
        root = chain[-1]
        s.message = f"{causes.cause_sentence(root, through=tuple(chain[:-1]))} {s.message}"
        s.mistake = s.mistake or causes.mistake_of(root)


def _score_one(cell, test: SourceTest, reference: list | None, seed: int) -> TestScore:
    def result(status: str, message: str, earned: bool = False) -> TestScore:
        return TestScore(test.grade_id, test.points if earned else 0.0, test.points, status, message)

    if reference is None:
        return result("missing", "no reference evidence for this test")
    if cell is None or cell.status == "skipped":
        return result("missing", (cell.detail if cell else "") or "this test did not run")
    if cell.status == "timeout":
        return result("timeout", cell.detail or "the test was interrupted: it ran too long (an infinite loop?)")
    if cell.status == "crashed":
        return result("error", cell.detail or "the kernel died while running this test")
    if cell.status != "ok" or any(isinstance(o, dict) and o.get("output_type") == "error" for o in cell.outputs):
        return result("error", _error(cell.outputs))
    got = evidence_of(cell.outputs)
    if len(got) != len(reference):
        return result("failed", f"expected {len(reference)} check result(s), found {len(got)}")
    messages, verdicts = [], []
    for student, want in zip(got, reference):
        v = core.verdict(student if isinstance(student, dict) else {}, want, seed=seed)
        verdicts.append(v)
        if not v.ok:
            failed = result("failed" if v.attempted else "not attempted", v.message)
            failed.mistake = v.mistake
            return failed
        messages.append(v.message)
    passed = result("passed", "; ".join(messages), earned=True)
    passed.prediction = next((v.prediction for v in verdicts if v.prediction), None)
    return passed
