"""Item analysis: for each test of an assignment, how hard it was and whether passing it goes with doing well.

Classical test theory's two numbers per item, computed from what ``scores.csv`` holds:

- **difficulty**: the share of the class that passed the test (its status ``passed``, which is its full points);
- **discrimination**: the point-biserial correlation between passing the test and the student's score on the
  *other* tests of the assignment (the corrected item-total correlation: the test is left out of the total, so
  it cannot correlate with itself), and beside it the upper-lower index: the share that passed among the 27%
  with the highest score on the other tests, less the share among the 27% with the lowest (Kelley, 1939).

A good test is passed more often by students who do well elsewhere: its discrimination is positive. One whose
discrimination is near zero says little about the rest; a negative one is passed more often by the weaker
students, which usually means the test or the text that explains it is wrong. Both are flagged, with a line
saying what to check. When the numbers cannot be computed honestly (too few students, everyone or nobody
passed, everyone scored the same elsewhere) the record says so and carries no number, never a NaN.

Written answers that a person grades (the bug hunts' "why", status ``manual``) are not items here: the grader
gives them no verdict.

Both numbers read the grader's verdicts (``status`` and ``auto_points``), not a person's overrides: they judge
the tests, and a person's override is often a correction of the very test being judged. Submissions that could
not be graded and blank ones (nothing attempted, most often the wrong file) are left out: they fail every test
alike and would make every test look discriminating.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Literal

from ..submission.results import SubmissionResult, untouched

MIN_STUDENTS = 5  # below this a correlation is noise; the report says "not enough spread to judge"
# |r| below 0.1: passing the test explains under 1% of the variance of the rest of the score (r**2 < 0.01), the
# lower edge of Cohen's "small" correlation. Stricter than the usual rule of thumb for keeping an exam item
# (0.2), because a class is small: chance alone moves r by about 1/sqrt(n - 1), 0.19 for 30 students. A test
# flagged here is worth reading; one just above it is not proven good.
NEAR_ZERO = 0.1
EXTREME = 0.9  # a test passed (or failed) by more than this share can hardly correlate with anything
UPPER_LOWER_SHARE = 0.27  # Kelley's 27%: the groups that best balance their size against their distance

Verdict = Literal["discriminates", "near zero", "negative", "not enough spread"]

NEGATIVE_READING = "strong students fail this more than weak ones: check the test or the text"
NEAR_ZERO_READING = "passing it says little about the rest: check what it measures"
GOOD_READING = "passing it goes with a higher score on the other tests"


@dataclass(frozen=True, kw_only=True)
class ItemStats:
    """One test of one assignment across the class: how many took and passed it, and what that says."""

    assignment_id: str
    grade_id: str
    students: int  # graded, non-blank submissions that hold this test
    passed: int  # of them, those whose test passed (full points)
    discrimination: float | None  # corrected item-total point-biserial r in [-1, 1]; None: not enough spread
    upper_lower: float | None  # share passed in the top 27% on the other tests less the bottom 27%'s; None likewise
    verdict: Verdict
    reading: str  # one line for the instructor: what the numbers say and what to check

    @property
    def difficulty(self) -> float | None:
        """The share of the class that passed it (1.0: everyone); None when nobody took it."""
        return self.passed / self.students if self.students else None

    @property
    def flagged(self) -> bool:
        """Worth reading again: passing it goes with the rest of the score hardly at all, or the wrong way."""
        return self.verdict in ("near zero", "negative")


def item_analysis(finals: Iterable[SubmissionResult]) -> tuple[ItemStats, ...]:
    """Per assignment (in id order) and test (in notebook order): difficulty and discrimination, flagged and read.

    ``finals`` are the class's results (as the gradebook has them or as saved: only the grader's verdicts are
    read). A submission counts when a test of it ran and it is not blank."""
    # (assignment, grade_id) -> [(passed, score on the other tests)], in the order tests first appear
    taken: dict[tuple[str, str], list[tuple[bool, float]]] = {}
    for r in sorted(finals, key=lambda r: (r.assignment_id, r.student_id)):
        if r.ungradable or untouched(r.exercises):
            continue
        total = r.auto_score
        for t in r.tests:
            if t.manual:  # a written answer: a person scores it, there is no verdict of the grader's to judge
                continue
            # rounded so that float sums in another order do not make equal scores look different
            rest = round(total - t.auto_points, 9)
            taken.setdefault((r.assignment_id, t.grade_id), []).append((t.status == "passed", rest))
    return tuple(_stats(a, gid, pairs) for (a, gid), pairs in taken.items())


def _stats(assignment: str, grade_id: str, pairs: list[tuple[bool, float]]) -> ItemStats:
    n, passed = len(pairs), sum(p for p, _ in pairs)
    spread = _no_spread(n, passed, {rest for _, rest in pairs})
    r = None if spread else _correlation([float(p) for p, _ in pairs], [rest for _, rest in pairs])
    if r is None:
        return ItemStats(assignment_id=assignment, grade_id=grade_id, students=n, passed=passed,
                         discrimination=None, upper_lower=None, verdict="not enough spread",
                         reading=f"not enough spread to judge: {spread or 'the numbers do not vary'}")
    upper_lower = _upper_lower(pairs)
    if r <= -NEAR_ZERO:
        verdict, reading = "negative", NEGATIVE_READING
    elif r < NEAR_ZERO:
        verdict, reading = "near zero", NEAR_ZERO_READING
        if passed >= EXTREME * n or passed <= (1 - EXTREME) * n:
            reading += f" (when {'nearly all' if passed >= EXTREME * n else 'hardly anyone'} pass it, "
            reading += "no test can say much)"
    else:
        verdict, reading = "discriminates", GOOD_READING
    return ItemStats(assignment_id=assignment, grade_id=grade_id, students=n, passed=passed, discrimination=r,
                     upper_lower=upper_lower, verdict=verdict, reading=reading)


def _no_spread(n: int, passed: int, rests: set[float]) -> str:
    """Why the test's numbers cannot be judged, "" when they can."""
    if n < MIN_STUDENTS:
        return f"{n} student(s) took it, {MIN_STUDENTS} are needed"
    if passed == n:
        return "every student passed it"
    if not passed:
        return "no student passed it"
    if len(rests) < 2:
        return "every student scored the same on the other tests"
    return ""


def _correlation(x: list[float], y: list[float]) -> float | None:
    """Pearson's r (with ``x`` 0 or 1, the point-biserial correlation); None when either does not vary."""
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx <= 0 or syy <= 0:
        return None
    r = sxy / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, r)) if math.isfinite(r) else None


def _upper_lower(pairs: list[tuple[bool, float]]) -> float:
    """The share passed among the top 27% on the other tests, less the share among the bottom 27%."""
    k = max(1, int(UPPER_LOWER_SHARE * len(pairs) + 0.5))
    lowest_first = sorted(pairs, key=lambda p: p[1])
    return _share_passed(lowest_first[::-1], k) - _share_passed(lowest_first, k)


def _share_passed(ordered: list[tuple[bool, float]], k: int) -> float:
    """The share passed among the first ``k`` of ``ordered``; students tied with the k-th count in equal part,
    so that who is in a group never depends on the order of their names."""
    cut = ordered[k - 1][1]
    first = next(i for i, (_, rest) in enumerate(ordered) if rest == cut)
    last = first + sum(1 for _, rest in ordered[first:] if rest == cut)
    tied = ordered[first:last]
    weight = (k - first) / len(tied)
    return (sum(p for p, _ in ordered[:first]) + weight * sum(p for p, _ in tied)) / k
