"""The grader's verdict: a student's evidence against the reference's, in the grader's own process.

Neither side's values are trusted to compare themselves: the outcomes are decoded
(:mod:`autograder.checks.evidence`) and compared by the check's own cases
(:mod:`autograder.checks.compare`), rebuilt here from the registry with the run's seed.
"""
from __future__ import annotations

from dataclasses import dataclass

from .compare import CheckFailure, NotAttempted
from .evidence import Outcome
from .registry import REGISTRY, Prediction, checks_module


@dataclass(frozen=True)
class Verdict:
    """The grader's decision on one check call; ``attempted`` is False when the answer is still the stub."""

    ok: bool
    message: str
    attempted: bool = True
    mistake: str = ""  # the known mistake the answer was recognised as, when it was
    prediction: Prediction | None = None  # a question's recorded answer (ok is then about its form only)


def verdict(evidence: dict, reference: dict, *, seed: int | None = None) -> Verdict:
    """The grader's verdict on one check call: the student's evidence against the reference's.

    ``seed`` is the run seed both runs used (their hidden inputs follow it). Runs in the grader's
    process; fails closed on anything missing or malformed.
    """
    try:
        check_id = reference["check"]
        assignment, name, suite = check_id.split(":")
        if evidence.get("check") != check_id:
            return Verdict(False, f"expected results of {check_id}, found {evidence.get('check')!r}")
        check = REGISTRY.get(f"{assignment}:{name}")
        if check is None:
            checks_module(assignment)
            check = REGISTRY[f"{assignment}:{name}"]
        cases = check.cases(suite == "hidden", seed)
        got = [Outcome.from_json(o) for o in evidence["outcomes"]]
        want = [Outcome.from_json(o) for o in reference["outcomes"]]
        if not (len(got) == len(want) == len(cases)):
            return Verdict(False, f"expected {len(cases)} results, found {len(got)}")
        for case, g, w in zip(cases, got, want):
            case.compare(g, w, case)
        prediction = check.recorded(got, want)
    except NotAttempted as failure:
        return Verdict(False, str(failure), attempted=False)
    except CheckFailure as failure:
        return Verdict(False, str(failure), mistake=failure.mistake)
    except Exception as exc:  # malformed evidence never earns points
        return Verdict(False, f"unreadable results ({type(exc).__name__}: {exc})")
    if prediction is not None:
        return Verdict(True, f"{name}: prediction recorded ({'right' if prediction.right else 'wrong'})",
                       prediction=prediction)
    return Verdict(True, f"{name}: {len(cases)} checks passed")


def judge(evidence: dict, reference: dict, *, seed: int | None = None) -> tuple[bool, str]:
    """:func:`verdict` as ``(ok, message)``."""
    v = verdict(evidence, reference, seed=seed)
    return v.ok, v.message
