"""``find_similar``: read a class, fingerprint every answer, and name the pairs that share exercises beyond chance.

Each assignment is read and compared on its own (in parallel, one process a core), since answers are compared
exercise by exercise; the pairs' counts are then added up across the assignments.
"""
from __future__ import annotations

import multiprocessing
import os
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from .answers import Answer, Exercise, course_exercises, read_answers
from .compare import ALIKE, MIN_TOKENS, SUPPORT, Alike, alike_pairs, chance_of_at_least
from .fingerprints import Fingerprints, fingerprint, normalised_tokens, shared_spans
from ..grade.output.alike import ExerciseTally, Pair, SharedExercise, Similarity, Unread

MIN_EXERCISES = 3  # a pair is listed when it shares at least this many exercises


class SimilarityUsageError(ValueError):
    """A mistyped folder or option: the message says what was wrong and what to do."""


@dataclass
class _Outcome:
    """One assignment's part, as a worker hands it back."""
    tallies: list[ExerciseTally] = field(default_factory=list)
    alike: dict[tuple[str, str], list[Alike]] = field(default_factory=dict)  # (assignment, grade id) -> pairs
    answered: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    students: set[str] = field(default_factory=set)
    unread: list[Unread] = field(default_factory=list)


def answer_fingerprints(answer: Answer, exercise: Exercise) -> Fingerprints:
    """The answer as compared: given lines out, names, comments and layout normalised, winnowed."""
    return fingerprint(normalised_tokens(answer.code, given=exercise.given))


def _compare_assignment(submissions: Path, assignment: str, students: tuple[str, ...]) -> _Outcome:
    exercises = {ex.grade_id: ex for ex in course_exercises(assignment)}
    answers, unread = read_answers(submissions, assignment, set(exercises), students=students)
    out = _Outcome(unread=unread, students={a.student for a in answers})
    per: dict[str, dict[str, frozenset[int]]] = defaultdict(dict)
    short: Counter[str] = Counter()
    seen: dict[tuple[str, str], Fingerprints] = {}  # identical answers (a blank stub, the same code) once
    for answer in answers:
        key = (answer.grade_id, answer.code)
        fp = seen.get(key) or seen.setdefault(key, answer_fingerprints(answer, exercises[answer.grade_id]))
        if fp.size >= MIN_TOKENS:
            per[answer.grade_id][answer.student] = fp.hashes
        elif fp.size:
            short[answer.grade_id] += 1
    for gid in exercises:
        found, here = alike_pairs(per[gid], at=SUPPORT) if len(per[gid]) > 1 else ([], set())
        out.tallies.append(ExerciseTally(assignment, gid, len(per[gid]) - len(here), short[gid],
                                         sum(1 for p in found if p.score >= ALIKE), too_short_here=len(here)))
        out.alike[assignment, gid] = found
        out.answered[assignment, gid] = set(per[gid]) - here
    return out


def find_similar(submissions: Path, *, assignments: tuple[str, ...] = (), students: tuple[str, ...] = (),
                 min_exercises: int = MIN_EXERCISES, jobs: int | None = None) -> Similarity:
    """Every pair of students of ``submissions`` (nbgrader's layout) alike on ``min_exercises`` or more exercises."""
    started = time.perf_counter()
    if not submissions.is_dir():
        raise SimilarityUsageError(f"{submissions}: no such folder (expected SUBMISSIONS/<student>/<assignment>/)")
    known = paths.assignments()
    unknown = [a for a in assignments if a not in known]
    if unknown:
        raise SimilarityUsageError(f"not an assignment of this course: {', '.join(unknown)} "
                                   f"(expected one of: {', '.join(known)})")
    if min_exercises < 1:
        raise SimilarityUsageError("--min-exercises must be at least 1")
    wanted = [a for a in (assignments or known)
              if any((s / a).is_dir() for s in submissions.iterdir() if not s.name.startswith((".", "_")))]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(wanted)))
    if jobs == 1:
        parts = [_compare_assignment(submissions, a, students) for a in wanted]
    else:  # fork: the workers need nothing but this module, already imported
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
            parts = list(pool.map(_compare_assignment, [submissions] * len(wanted), wanted,
                                  [students] * len(wanted)))
    return _add_up(parts, min_exercises, time.perf_counter() - started)


def _add_up(parts: list[_Outcome], min_exercises: int, seconds: float) -> Similarity:
    tallies = {(t.assignment, t.grade_id): t for part in parts for t in part.tallies}
    answered = {k: v for part in parts for k, v in part.answered.items()}
    shared: dict[tuple[str, str], list[SharedExercise]] = defaultdict(list)
    for part in parts:
        for (assignment, gid), found in part.alike.items():
            for pair in found:
                shared[pair.a, pair.b].append(SharedExercise(assignment, gid, round(pair.score, 1)))
    pairs = []
    for (a, b), exercises in shared.items():
        # alike on min_exercises, or on all but one and the last at SUPPORT (compare's docstring says why)
        alike = sum(1 for s in exercises if s.score >= ALIKE)
        if len(exercises) < min_exercises or alike < max(1, min_exercises - 1):
            continue
        both = [k for k, who in answered.items() if a in who and b in who]
        expected = sum(tallies[k].chance for k in both)  # the chance of each: of being alike, at ALIKE
        pairs.append(Pair(a, b, tuple(exercises), len(both), round(expected, 4), chance_of_at_least(alike, expected)))
    pairs.sort(key=lambda p: (-len(p.shared), p.chance, p.a, p.b))
    students = set().union(*(part.students for part in parts)) if parts else set()
    return Similarity(len(students), min_exercises, tuple(pairs), tuple(tallies.values()),
                      tuple(u for part in parts for u in part.unread), round(seconds, 2))


@dataclass(frozen=True)
class SideBySide:
    """One shared exercise of a pair, as its page shows it: both answers and the character spans they share."""
    assignment: str
    grade_id: str
    score: float
    code_a: str
    code_b: str
    spans_a: tuple[tuple[int, int], ...]
    spans_b: tuple[tuple[int, int], ...]


def side_by_side(submissions: Path, pair: Pair) -> list[SideBySide]:
    """The pair's shared exercises with both answers and their shared parts, read again from the submissions."""
    views = []
    for assignment in dict.fromkeys(s.assignment for s in pair.shared):
        exercises = {ex.grade_id: ex for ex in course_exercises(assignment)}
        answers, _ = read_answers(submissions, assignment, set(exercises), students=(pair.a, pair.b))
        code = {(a.student, a.grade_id): a for a in answers}
        for s in (s for s in pair.shared if s.assignment == assignment):
            fa = answer_fingerprints(code[pair.a, s.grade_id], exercises[s.grade_id])
            fb = answer_fingerprints(code[pair.b, s.grade_id], exercises[s.grade_id])
            common = fa.hashes & fb.hashes
            views.append(SideBySide(assignment, s.grade_id, s.score, code[pair.a, s.grade_id].code,
                                    code[pair.b, s.grade_id].code, tuple(shared_spans(fa, common)),
                                    tuple(shared_spans(fb, common))))
    return views
