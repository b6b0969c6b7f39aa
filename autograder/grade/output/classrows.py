"""The class report's students: one row per submission, with what went wrong in its run (the errors no
check could judge, grouped by cause), for :mod:`.classreport`.
"""
from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from .feedback import NAME_ERROR, compile_errors
from ..submission.results import SubmissionResult, GradedTest, untouched

e = html.escape


def _num(x: float) -> str:
    return f"{x:g}"


def feedback_link(student: str, assignment: str) -> str:
    return f'<a href="feedback/{quote(student)}/{quote(assignment)}.html">{e(student)}</a>'


# --------------------------------------------------------------------------- students and their errors

@dataclass(frozen=True)
class Trouble:
    """Why some of one submission's exercises got no verdict on the learner's answer, said once with every
    exercise it cost (a loop met by three tests is one time-out, a cell that did not compile one SyntaxError)."""
    kind: str  # short and fixed, to group by: "SyntaxError", "timed out", "TypeError", "did not run" ...
    detail: str  # for a person: where and why ("line 1 of the expectation cell: expected ':'")
    exercises: tuple[str, ...]  # the exercises it cost, in notebook order

    def describe(self) -> str:
        return f"{self.kind}" + (f" ({self.detail})" if self.detail else "") + f": {', '.join(self.exercises)}"


EXCEPTION = re.compile(r"\b([A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit))\b(?::[ \t]*([^\n]*))?")


def unverdicted(r: SubmissionResult, broken: dict) -> list[tuple[GradedTest, str]]:
    """The first test of each exercise that ended without a verdict on the learner's answer (it errored, timed
    out, never ran, or failed on a name that a cell which did not compile should have defined), with the exercise
    whose cell did not compile and so caused it ("" when none did). ``broken``: :func:`.feedback.compile_errors`."""
    found: list[tuple[GradedTest, str]] = []
    seen: set[str] = set()
    for t in r.tests:
        ex = t.exercise
        if ex in seen or t.status in ("passed", "not attempted", "manual"):  # manual: a person reads it
            continue
        undefined = NAME_ERROR.search(t.message or "")
        root = ex if ex in broken else undefined.group(1) if undefined and undefined.group(1) in broken else ""
        if t.status == "failed" and not root:
            continue  # a wrong answer: the known mistakes name it
        seen.add(ex)
        found.append((t, root))
    return found


def troubles(r: SubmissionResult, broken: dict | None = None) -> tuple[Trouble, ...]:
    """Every reason ``r``'s exercises got no verdict, each once with the exercises it cost, in notebook order: a
    cell that did not compile (with the exercises its NameError stopped), an error, a time-out (with the line
    that was running, when known), tests that did not run. A changed test cell is a problem of its own
    (problems.csv), and an ungradable submission's tests all "did not run", which its problems say."""
    if r.ungradable or all(t.status in ("passed", "not attempted") for t in r.tests):
        return ()
    broken = compile_errors(r) if broken is None else broken
    grouped: dict[tuple[str, str], list[str]] = {}
    for t, root in unverdicted(r, broken):
        if root:
            b = broken[root]
            kind, detail = b.kind, f"line {b.line} of the {root} cell: {b.reason}"
        elif t.status == "timeout":
            at = t.stopped
            cell = f"the {at.cell} cell" if at and at.cell else "a cell that is not an exercise"
            kind, detail = "timed out", (f"line {at.line} of {cell} was running: {at.code}" if at else t.message)
        elif t.status == "missing":
            kind, detail = "did not run", (t.message or "").removeprefix("not run: ")
        elif t.status == "error":
            m = EXCEPTION.search(t.message or "")
            kind, detail = (m.group(1), (m.group(2) or "").strip()) if m else ("error", (t.message or "").strip())
        else:
            continue  # a changed test cell: its problem says so
        grouped.setdefault((kind, detail[:200]), []).append(t.exercise)
    return tuple(Trouble(kind, detail, tuple(exs)) for (kind, detail), exs in grouped.items())


@dataclass(frozen=True)
class StudentRow:
    """One submission as the student table shows it (numbers as in grades.csv)."""
    student: str
    assignment: str
    score: float | None  # None: no row in grades.csv (could not be graded)
    max_score: float | None
    status: str  # "graded", "blank", "zero points" or "could not be graded"
    seconds: float  # grading time
    problems: tuple[str, ...]  # each "kind: detail" as problems.csv has it (a test's time-out is a trouble)
    autograded: str  # the autograded notebook's URL relative to the report, "" when there is none
    troubles: tuple[Trouble, ...] = ()  # exercises that errored, timed out or did not run, each cause once

    @property
    def flag(self) -> str:
        """Why it is worth a look before anything else ("" when it is not): nothing was handed in, nothing earned
        a point, it could not be graded, or some of it errored, timed out or did not run."""
        if self.status != "graded":
            return self.status
        return "errored or timed out" if self.troubles else ""

    @property
    def flagged(self) -> bool:
        return bool(self.flag)


def autograded_link(out: Path | None, autograded: Path | None, student: str, assignment: str) -> str:
    """The URL of a submission's autograded notebook relative to ``out`` (where the report is), "" when it is not
    there. ``autograded`` is the folder it was written to: ``out/autograded`` by default, the course's own
    ``autograded/`` when grading a course folder (``../autograded/...`` from ``submitted-graded/``)."""
    if out is None:
        return ""
    folder = autograded if autograded is not None else out / "autograded"
    path = folder / student / assignment / f"{assignment}.ipynb"
    if not path.is_file():
        return ""
    try:
        rel = os.path.relpath(path, out)
    except ValueError:  # another drive (Windows): only an absolute URL reaches it
        return path.resolve().as_uri()
    return quote(Path(rel).as_posix())


def student_row(r: SubmissionResult, out: Path | None = None, autograded: Path | None = None) -> StudentRow:
    """The table row of one result (as the gradebook has it); ``out`` (where the report goes) and ``autograded``
    (where the autograded notebooks are, ``out/autograded`` by default) find its autograded notebook."""
    tests = r.tests
    if r.ungradable:
        status = "could not be graded"
    elif untouched(r.exercises):
        status = "blank"
    elif r.score <= 0:
        status = "zero points"
    else:
        status = "graded"
    s, a = r.key
    found = troubles(r)
    # an exercise's timed-out test cells are one problem ("test cells test_x, test_x_hidden: ..."); the
    # troubles say it too, with the line that was running, so the row keeps only the troubles' words
    problems = tuple(f"{p.problem}: {p.detail}" for p in r.problems
                     if not (found and p.problem == "timeout" and p.detail.startswith("test cell")))
    return StudentRow(s, a, r.score if tests else None, r.max_score if tests else None, status,
                      float(r.seconds or 0.0), problems, autograded_link(out, autograded, s, a), found)


def student_rows(finals: list[SubmissionResult], out: Path | None = None,
                 autograded: Path | None = None) -> list[StudentRow]:
    """Every submission, by assignment and student."""
    return [student_row(r, out, autograded) for r in sorted(finals, key=lambda r: (r.assignment_id, r.student_id))]


def trouble_items(row: StudentRow) -> str:
    """A row's troubles as list items, each cause once with the exercises it cost."""
    return "".join(f'<li data-trouble="{e(t.kind)}"><b>{e(t.kind)}</b>' + (f" ({e(t.detail)})" if t.detail else "")
                   + ": " + ", ".join(f"<code>{e(x)}</code>" for x in t.exercises) + "</li>" for t in row.troubles)


STUDENT_COLUMNS = ("student", "score", "status", "time", "autograded")


def students_table(rows: list[StudentRow]) -> str:
    """Every student of one assignment: score, status, grading time and the two links, and under the row, in a
    block as wide as the table, what went wrong (so it reads on a phone, where the table's cells stack)."""
    body = []
    for row in rows:
        score = (f"{_num(row.score)} of {_num(row.max_score)}" if row.score is not None else "–")
        notebook = (f'<a href="{row.autograded}">notebook</a>' if row.autograded
                    else '<span class="muted">none</span>')
        status = f'<span class="flag">{e(row.status)}</span>' if row.status != "graded" else e(row.status)
        cells = (feedback_link(row.student, row.assignment), score, status, f"{row.seconds:.1f} s", notebook)
        main = "".join(f'<td data-label="{label}"' + (' class="num"' if label in ("score", "time") else "")
                       + f">{cell}</td>" for label, cell in zip(STUDENT_COLUMNS, cells))
        said = trouble_items(row) + "".join(f"<li>{e(p)}</li>" for p in row.problems)
        under = (f'<tr class="row-problems"><td colspan="{len(STUDENT_COLUMNS)}" data-problems="{e(row.student)}">'
                 f'<ul class="row-problems">{said}</ul></td></tr>' if said else "")
        body.append(f'<tbody><tr data-row="{e(row.student)}" data-status="{e(row.status)}">{main}</tr>{under}</tbody>')
    head = "".join(f'<th scope="col">{label}</th>' for label in STUDENT_COLUMNS)
    return ('<p class="muted">Each name opens the feedback page; "notebook" is the autograded notebook, the '
            "submission as it ran with each test's verdict. Under a student's row: the exercises that raised an "
            "error, timed out or did not run, each cause once, and every problem from problems.csv.</p>"
            f'<table class="students"><thead><tr>{head}</tr></thead>' + "".join(body) + "</table>")


def flagged(rows: list[StudentRow]) -> str:
    """The submissions to look at first, at the top of the report: blank, zero points, not gradable, or with an
    exercise that raised an error, timed out or did not run (each cause said once, with its exercises)."""
    worth = [r for r in rows if r.flagged]
    if not worth:
        return ""
    items = "".join(f'<li data-flag="{e(r.flag)}">{feedback_link(r.student, r.assignment)} '
                    f'({e(r.assignment)}): <span class="flag">{e(r.flag)}</span>'
                    + (f'<ul class="troubles">{trouble_items(r)}</ul>' if r.troubles else "") + "</li>" for r in worth)
    return (f'<section class="note" aria-label="Look at these first"><h2 style="border:0;margin:0;padding:0">'
            f"Look at these first: {len(worth)}</h2><p>Blank notebooks (often the wrong file handed in), "
            "submissions that earned no point, those that could not be graded, and those where an exercise raised "
            f"an error, timed out or did not run (with the cause).</p><ul>{items}</ul></section>")


def cause_of(t: GradedTest, broken: dict) -> str:
    """Why a test errored, in a word a teacher groups by: the exception's name, "timed out", "did not run"."""
    status = t.status
    if status == "timeout":
        return "timed out"
    if status == "missing":
        return "did not run"
    if status == "tampered":
        return "test cell changed"
    message = t.message or ""
    name = message.split(":", 1)[0].strip()
    undefined = NAME_ERROR.search(message)
    if undefined and undefined.group(1) in broken:
        return f"{broken[undefined.group(1)].kind} (in the {undefined.group(1)} cell, so NameError)"
    return name if name.isidentifier() else "error"


def error_causes(finals: list[SubmissionResult]) -> dict[tuple[str, str], dict[str, set[str]]]:
    """(assignment, exercise) -> cause -> students, for tests that errored, timed out or did not run; a student
    counts once per exercise, under the first such test's cause (its own SyntaxError before anything else)."""
    found: dict[tuple[str, str], dict[str, set[str]]] = {}
    for r in finals:
        if all(t.status in ("passed", "not attempted") for t in r.tests):
            continue  # nothing went wrong: no need to compile the learner's code
        broken = compile_errors(r)
        for t, root in unverdicted(r, broken):
            ex = t.exercise
            if root == ex:
                cause = f"{broken[ex].kind} (line {broken[ex].line})"
            elif root:  # the NameError a cell that did not compile left behind
                cause = f"{broken[root].kind} (in the {root} cell, so NameError)"
            else:
                cause = cause_of(t, broken)
            found.setdefault((r.assignment_id, ex), {}).setdefault(cause, set()).add(r.student_id)
    return found
