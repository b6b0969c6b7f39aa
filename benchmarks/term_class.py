"""benchmarks/term.py's synthetic term: which student hands in what, and the notebooks themselves.

Per hundred submissions of a notebook, 70 are right, 16 partly wrong (one or two exercises hold a known mistake of
tests/checks/test_nbNN.py), 8 half done (the later half of the exercises left as released) and 4 blank. Per
hundred submissions of the term, taken from the right ones and spread over the notebooks in turn, 3 are right but
slow (tests/slow_answers.py: loops where the course vectorises, float64, recomputation), 1 loops (a busy ``while``
in its last exercise that is not a prediction question) and 1 crashes its process (``os._exit`` in its middle
one); a term has at least one of each (while it has right ones left to take). The right code is written in four ways (:data:`STYLES`), and each
student's first answer names them, so no two submissions are the same file. The notebooks are built from
tests/builders.py by composition.
"""
from __future__ import annotations

import contextlib
import io
import math
import random
import tokenize
from pathlib import Path

from tests.builders import (SOLUTION_MARKER, add_cell, blank_notebook, mistake_for, one_of, solutions, solve,
                            write_submission)

PER_HUNDRED = {"right": 70, "wrong": 16, "partial": 8, "blank": 4}  # of a notebook's submissions
PER_TERM = {"slow": 3, "looping": 1, "crashing": 1}  # of the term's submissions, at least one each
TROUBLE = ("looping", "crashing")  # graded in runs of their own, so that profile.json counts them apart
KINDS = (*PER_HUNDRED, *PER_TERM)
STYLES = ("as given", "typed without markers", "without comments", "with prints and a scratch cell")


def allocate(n: int, weights: dict[str, int], at_least_one: bool = False) -> dict[str, int]:
    """``n`` split in proportion to ``weights`` (largest remainder, ties in the weights' order); with
    ``at_least_one`` every kind gets one when ``n`` is at least the number of kinds, taken from the largest."""
    if n < 0:
        raise ValueError(f"cannot allocate {n} submissions")
    total = sum(weights.values())
    exact = {k: n * w / total for k, w in weights.items()}
    counts = {k: int(math.floor(v)) for k, v in exact.items()}
    order = sorted(weights, key=lambda k: (-(exact[k] - counts[k]), list(weights).index(k)))
    for k in order[:n - sum(counts.values())]:
        counts[k] += 1
    if at_least_one and n >= len(weights):
        for k in weights:
            if counts[k] == 0:
                counts[max(counts, key=counts.get)] -= 1
                counts[k] = 1
    return counts


def per_term_order(submissions: int) -> list[str]:
    """The :data:`PER_TERM` kinds, ``ceil(submissions x rate / 100)`` of each, interleaved (one of each kind in
    turn while it has some left), so that each kind spreads over the notebooks."""
    left = {k: math.ceil(submissions * rate / 100) for k, rate in PER_TERM.items()}
    order = []
    while any(left.values()):
        for k in PER_TERM:
            if left[k]:
                order.append(k)
                left[k] -= 1
    return order


def term_kinds(students: list[str], assignments: list[str]) -> dict[tuple[str, str], str]:
    """(student, assignment) -> kind. Each notebook gets the per-hundred mix (shuffled, the same for any run);
    the slow, looping and crashing submissions (:func:`per_term_order`) replace right ones, each on the next
    notebook in turn that has a right one left."""
    if not students or not assignments:
        raise ValueError("a term needs at least one student and one notebook")
    kinds: dict[tuple[str, str], str] = {}
    rights: dict[str, list[str]] = {}
    for a in assignments:
        counts = allocate(len(students), PER_HUNDRED, at_least_one=True)
        mix = [k for k, c in counts.items() for _ in range(c)]
        random.Random(a).shuffle(mix)
        for s, k in zip(students, mix):
            kinds[s, a] = k
        rights[a] = [s for s in students if kinds[s, a] == "right"]
    turn = 0
    for kind in per_term_order(len(students) * len(assignments)):
        for _ in range(len(assignments)):  # the next notebook with a right submission left
            a = assignments[turn % len(assignments)]
            turn += 1
            if rights[a]:
                kinds[rights[a].pop(), a] = kind
                break
    return kinds


def strip_comments(source: str) -> str:
    """``source`` without its comments (a line that held only a comment goes); unchanged when it does not
    tokenize (a magic, say)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return source
    cut = {t.start[0] - 1: t.start[1] for t in tokens if t.type == tokenize.COMMENT}
    out = []
    for i, line in enumerate(source.splitlines(keepends=True)):
        if i in cut:
            kept = line[:cut[i]].rstrip()
            if not kept:
                continue
            line = kept + "\n"
        out.append(line)
    return "".join(out)


def restyle(source: str, style: int, exercise: str) -> str:
    """A right answer as one of :data:`STYLES` writes it."""
    if style == 0:
        return source
    typed = "".join(line for line in source.splitlines(keepends=True) if not SOLUTION_MARKER.match(line))
    if style == 1:
        return typed
    if style == 2:
        return strip_comments(typed)
    return typed.rstrip("\n") + f"\n\nprint({exercise + ' written'!r})\n"


def looping(exercise: str) -> str:
    return (f"def {exercise}(*args, **kwargs):\n    result = None\n    while result is None:  # never set\n"
            "        pass\n    return result\n")


def crashing(exercise: str) -> str:
    return (f"def {exercise}(*args, **kwargs):\n    import os\n"
            "    os._exit(70)  # the process dies, as a crash in C code\n")


def slow_notebook(assignment: str):
    """tests/slow_answers.py's notebook of ``assignment``: every exercise answered right, and slowly."""
    try:  # late: the corpus is the tests', and a term without slow submissions should not need it
        from tests.slow_answers import slow_notebook as slow
    except ImportError as exc:
        raise SystemExit(f"benchmarks/term.py: the term's slow submissions come from tests/slow_answers.py, which "
                         f"cannot be imported ({exc}); restore it, or see its history in git") from exc
    return slow(assignment)


def term_notebook(kind: str, assignment: str, student: str, index: int):
    """The notebook ``student`` (the ``index``-th) of ``kind`` hands in for ``assignment``."""
    from autograder.checks.questions import is_question  # late: imports the course's checks
    from autograder.nbio import grade_id, is_solution_cell

    one_of(kind, KINDS, "a term's submission")
    answers = solutions(assignment)
    exercises = list(answers)
    style = index % len(STYLES)
    answered = exercises if kind != "partial" else exercises[:(len(exercises) + 1) // 2]
    if kind == "slow":
        nb = slow_notebook(assignment)
        first = next((c for c in nb.cells if is_solution_cell(c)), None)
        if first is not None:
            first.source = f"# {student}'s answers\n" + first.source
        return nb
    nb = blank_notebook(assignment)
    if kind == "blank":
        return nb
    first = True
    for cell in nb.cells:
        if is_solution_cell(cell) and grade_id(cell) in answered:
            source = restyle(answers[grade_id(cell)], style, grade_id(cell))
            cell.source = (f"# {student}'s answers\n" if first else "") + source
            first = False
    if style == 3:
        add_cell(nb, "scratch = [n * n for n in range(5)]  # trying things out\nscratch\n")
    if kind == "wrong":
        exercise, source = mistake_for(assignment, index)
        solve(nb, exercise, source)
        if index % 2:  # every other one makes a second mistake, elsewhere
            other, source = mistake_for(assignment, index + 7)
            if other != exercise:
                solve(nb, other, source)
    functions = [e for e in exercises if not is_question(assignment, e)] or exercises
    if kind == "looping":
        solve(nb, functions[-1], looping(functions[-1]))
    elif kind == "crashing":
        solve(nb, functions[len(functions) // 2], crashing(functions[len(functions) // 2]))
    return nb


def build_term(root: Path, aside: Path, students: list[str], assignments: list[str]) -> dict[tuple[str, str], str]:
    """Every student's notebooks in nbgrader's layout: under ``root``, but the looping and crashing ones under
    ``aside/KIND`` (each is graded in a run of its own); returns (student, assignment) -> kind."""
    kinds = term_kinds(students, assignments)
    # the known mistakes come from tests/checks/test_nbNN.py, whose imports print the pieces they take
    with contextlib.redirect_stdout(io.StringIO()):
        for i, s in enumerate(students):
            for a in assignments:
                kind = kinds[s, a]
                write_submission(aside / kind if kind in TROUBLE else root, s, term_notebook(kind, a, s, i), a)
    return kinds
