"""The registry of checks: each notebook's checks by name, and how a test cell runs one.

A notebook's test cell reads ``check.softmax(softmax)``: ``check`` is its checks module
(:func:`checks_module`), ``softmax`` a :class:`Check` registered there by :func:`exercise`.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable

import numpy as np

from . import causes
from .compare import Case, CheckFailure, CheckUnavailable
from .evidence import Outcome, capture, emit, mode, seed_for


@dataclass
class Check:
    """A named list of cases for one exercise; called from a notebook's test cell."""

    assignment: str
    name: str
    build: Callable[[bool, np.random.Generator], list[Case]]
    success: str = ""
    # A prediction earns its points for its form, so it is never the cause of another exercise's failure.
    traceable = True

    def check_id(self, hidden: bool) -> str:
        return f"{self.assignment}:{self.name}:{'hidden' if hidden else 'visible'}"

    def cases(self, hidden: bool, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(seed_for(self.check_id(hidden), seed))
        return self.build(hidden, rng)

    def __call__(self, obj: Any, *, hidden: bool = False) -> None:
        __tracebackhide__ = True
        cases = self.cases(hidden)
        outcomes = [capture(lambda c=c: c.call(obj)) for c in cases]
        if mode() == "evidence":
            emit({"check": self.check_id(hidden), "outcomes": [o.to_json() for o in outcomes]})
            print(f"{self.name}: {len(cases)} results recorded for grading.")
            return
        if not callable(obj):
            raise CheckFailure(f"`{self.name}` is not a function or class here (it is {type(obj).__name__}).")
        for case, got in zip(cases, outcomes):
            if "PieceNotReady" in got.raised:  # an earlier notebook's piece it calls is not ready: that says it all
                raise CheckFailure(got.message)
            want = capture(case.want)
            if "ReferenceUnavailable" in want.raised:
                raise CheckUnavailable(f"{case.label}: this check compares with the reference solution, which "
                                       "is not installed here. It runs when your work is graded.")
            try:
                case.compare(got, want, case)
            except CheckFailure as failure:
                cause = self.failing_callee(obj)
                if cause is None:
                    raise
                raise CheckFailure(f"{causes.cause_sentence(*cause)}\n{failure}",
                                   failure.mistake or causes.mistake_of(cause[0])) from None
        print(self.passed_line(len(cases), hidden))

    def failing_callee(self, obj: Any) -> tuple[str, str] | None:
        """(name, the first line of its check's message) of an exercise of this notebook that ``obj`` calls
        and that fails its own visible check (the first such name in sorted order); None when there is none.
        Quiet: it only compares."""
        for name, value in sorted(causes.names_used(obj).items()):
            callee = REGISTRY.get(f"{self.assignment}:{name}")  # an exercise's name is its check's name
            if name == self.name or callee is None or not callable(value) or not callee.traceable:
                continue
            _, failure = callee.compare_visible(value)
            if failure is not None:
                text = str(failure).strip()
                return name, text.splitlines()[0] if text else type(failure).__name__
        return None

    def compare_visible(self, obj: Any) -> tuple[int, CheckFailure | None]:
        """``obj`` on this check's visible cases that need no course solution (the cases a learner's check
        cell can judge anywhere): (how many were compared, the first failure or None). Quiet; any other error
        a learner's object raises in a comparison propagates."""
        compared = 0
        for case in self.cases(False):
            want = capture(case.want)
            if "ReferenceUnavailable" in want.raised:
                continue
            try:
                case.compare(capture(lambda c=case: c.call(obj)), want, case)
            except CheckFailure as failure:
                return compared, failure
            compared += 1
        return compared, None

    def passed_line(self, n: int, hidden: bool) -> str:
        """What a passing call prints (a question says "recorded" instead: its point is for the form)."""
        return (f"✔ {self.name}: {n} {'hidden ' if hidden else ''}check{'s' if n != 1 else ''} passed."
                + (f" {self.success}" if self.success else ""))

    def recorded(self, got: list[Outcome], want: list[Outcome]) -> "Prediction | None":
        """What the grader records beside a passing verdict: a question's :class:`Prediction`, else None."""
        return None


REGISTRY: dict[str, Check] = {}


def exercise(assignment: str, success: str = "") -> Callable:
    """Register ``build(hidden, rng) -> list[Case]`` as the check named after it: that name must be its
    exercise's grade_id, which :meth:`Check.failing_callee` and others rely on (:mod:`.toolkit`, rule 2)."""

    def register(build: Callable) -> Check:
        check = Check(assignment, build.__name__, build, success)
        REGISTRY[check.check_id(False).rsplit(":", 1)[0]] = check
        return check

    return register


def checks_module(assignment: str) -> ModuleType:
    """The checks of ``assignment`` (``autograder.checks.nbNN`` for ``NN_name``), imported; importing
    registers its checks."""
    return importlib.import_module(f"{__package__}.nb{assignment[:2]}")


@dataclass(frozen=True)
class Prediction:
    """A learner's prediction as the grader records it: what they answered and whether it was right.

    Recorded, never scored: a question's points are for a well-formed answer (completion credit), and this
    record feeds the feedback page and the class report. Saved in a result as ``to_json()``.
    """

    answer: str  # the answer as the learner wrote it, formatted for a person (equal answers format equally)
    right: bool
    why: str = ""  # for a wrong answer: the known mistake it matches, else the question's general explanation
    reason: str = ""  # the learner's own one-line reason, shown back, never graded ("" when none was given)

    def to_json(self) -> dict:
        saved = {"answer": self.answer, "right": self.right, "why": self.why}
        return {**saved, "reason": self.reason} if self.reason else saved  # results saved before reasons still read

    @classmethod
    def from_json(cls, data: dict) -> "Prediction":
        return cls(answer=str(data["answer"]), right=bool(data["right"]), why=str(data.get("why", "")),
                   reason=str(data.get("reason", "")))
