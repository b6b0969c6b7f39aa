"""What a grading run leaves behind: saved results, the CSVs, feedback pages and the terminal lines.

Every file is written atomically (a temporary file and a rename). The CSVs and the feedback are
rebuilt from the saved results, so they always agree with them. Every cell of every CSV goes through one
guard, :func:`spreadsheet_safe`, so that no spreadsheet runs one as a formula.
"""
from __future__ import annotations

import csv
import io
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

from ...nbio import write_atomic
from . import classreport, feedback
from .. import UsageError
from .costs import CLASS, timed
from .items import ItemStats, item_analysis
from ..submission.results import SubmissionResult

if TYPE_CHECKING:
    from .costs import Costs

SCORES = ("student_id", "assignment_id", "grade_id", "points", "max_points", "status", "auto_points", "overridden",
          "comment")
GRADES = ("student_id", "assignment_id", "score", "max_score", "auto_score", "overridden", "submitted_at",
          "seconds_late", "late_penalty", "needs_manual_grade")
PROBLEMS = ("student_id", "assignment_id", "problem", "detail")
ITEMS = ("assignment_id", "grade_id", "students", "passed", "difficulty", "discrimination", "upper_lower", "verdict",
         "reading")  # one row per test of each assignment: .items.ItemStats
LMS = "lms.csv"  # one row per student, one column per assignment: what an LMS gradebook imports


# --------------------------------------------------------------------------- saved results

def result_path(out: Path, student_id: str, assignment_id: str) -> Path:
    return out / "results" / student_id / f"{assignment_id}.json"


def save_result(out: Path, result: SubmissionResult) -> None:
    write_atomic(result_path(out, result.student_id, result.assignment_id),
                 json.dumps(result.to_json(), indent=1, sort_keys=True) + "\n")


def load_result(out: Path, student_id: str, assignment_id: str) -> SubmissionResult | None:
    """The saved result, or None when there is none or it cannot be read (it is graded again)."""
    path = result_path(out, student_id, assignment_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return SubmissionResult.from_json(data) if "student_id" in data else None  # every version saved one
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def read_results(out: Path) -> list[SubmissionResult]:
    """Every saved result, sorted by student and assignment."""
    results = []
    for path in sorted((out / "results").glob("*/*.json")):
        data = load_result(out, path.parent.name, path.stem)
        if data is not None:
            results.append(data)
    return sorted(results, key=lambda r: r.key)


# --------------------------------------------------------------------------- run.json

RUN = "run.json"


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """``run.json``: the seed every saved result in ``--out`` was graded with, and what confined the
    student code of the last run that graded any (see docs/grading.md)."""

    seed: int
    isolation: tuple[str, ...] = ()  # one line per kind of confinement in force
    not_isolated: tuple[str, ...] = ()  # what the student code could still reach

    def to_json(self) -> dict:
        if not self.isolation:
            return {"seed": self.seed}
        return {"seed": self.seed, "isolation": list(self.isolation), "not_isolated": list(self.not_isolated)}


class RunFileError(UsageError):
    """``run.json`` exists but cannot be read: grading on would draw a new seed and grade the class again."""


def read_run(out: Path) -> RunRecord | None:
    """What ``out/run.json`` says; None when there is none. Raises :class:`RunFileError` when it cannot be read,
    saying what is wrong and what to do, and leaves the file as it is."""
    path = out / RUN
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "seed" not in data:
            raise ValueError("no seed in it")
        isolation, gaps = data.get("isolation", []), data.get("not_isolated", [])
        if not (isinstance(isolation, list) and isinstance(gaps, list)):
            raise ValueError("its isolation is not a list")
        return RunRecord(seed=int(data["seed"]), isolation=tuple(map(str, isolation)),
                         not_isolated=tuple(map(str, gaps)))
    except (OSError, ValueError, TypeError) as exc:
        raise RunFileError(
            f"{path} cannot be read ({exc}). It holds the seed the saved results in {out} were graded with, so "
            "grading on would draw a new seed and grade the whole class again. Move it aside to do that, or pass "
            "--seed N (the seed it held, to keep the saved results) or --force (a new seed, everything graded "
            "again).") from exc


def write_run(out: Path, record: RunRecord) -> None:
    """The one writer of ``out/run.json``."""
    write_atomic(out / RUN, json.dumps(record.to_json(), indent=1) + "\n")


# --------------------------------------------------------------------------- CSVs and feedback

def _csv(rows: Iterable[Sequence[str]], header: Sequence[str]) -> str:
    """A CSV file's text, every cell (the header's too) through :func:`spreadsheet_safe`: each CSV ``grade``
    writes is opened in a spreadsheet by someone, and a student id, a comment or a problem's detail is text a
    student can choose."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([spreadsheet_safe(c) for c in header])
    w.writerows([spreadsheet_safe(c) for c in row] for row in rows)
    return buf.getvalue()


def _num(x: float) -> str:
    return f"{x:g}"


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what Excel, LibreOffice and Sheets read as a formula
GUARD = "'"  # the spreadsheets' own mark for "this is text"
NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")  # a plain number, as _num writes one


def spreadsheet_safe(cell: str) -> str:
    """``cell`` as a spreadsheet shows it and never runs it: text that would start a formula (a student id
    like ``=HYPERLINK(...)``) gets a leading apostrophe, the spreadsheets' own mark for "this is text"
    (OWASP's advice for CSV injection). Plain numbers, negative ones included, are left as they are. Text that
    already starts with an apostrophe gets one more, so that removing one leading apostrophe wherever there is
    one (:func:`spreadsheet_original`) gives every cell back exactly."""
    if cell.startswith(GUARD) or cell.startswith(FORMULA_STARTS) and not NUMBER.fullmatch(cell):
        return GUARD + cell
    return cell


def spreadsheet_original(cell: str) -> str:
    """What :func:`spreadsheet_safe` was given: ``cell`` without one leading apostrophe (to join a CSV's student
    ids with an LMS's, see docs/grading.md)."""
    return cell.removeprefix(GUARD)


def _share(x: float | None) -> str:
    """A share or a correlation for items.csv: three decimals, "" when there is none (never "nan")."""
    return "" if x is None else f"{round(x, 3) or 0.0:.3f}"


def item_rows(items: Iterable[ItemStats]) -> list[tuple[str, ...]]:
    """items.csv's rows (columns :data:`ITEMS`)."""
    return [(i.assignment_id, i.grade_id, str(i.students), str(i.passed), _share(i.difficulty),
             _share(i.discrimination), _share(i.upper_lower), i.verdict, i.reading) for i in items]


def write_outputs(out: Path, results: list[SubmissionResult], recorded: "dict | None" = None, *,
                  costs: "Costs | None" = None, autograded: Path | None = None) -> list[SubmissionResult]:
    """The CSVs (the LMS export and the item analysis among them), every feedback page and the class report,
    from the saved results and the gradebook's record ((student, assignment) -> :class:`~.gradebook.Recorded`);
    returns the results as the gradebook has them (:meth:`.SubmissionResult.with_gradebook`). ``costs`` (with
    ``--profile``) gets what the pages and the CSVs cost; ``autograded`` is where the autograded notebooks are
    (a course's ``autograded/``), for the report's links, when not in ``out/autograded``."""
    recorded = recorded or {}
    csvs = time.thread_time()
    scores, grades, problems = [], [], []
    lms: dict[str, dict[str, float]] = {}
    finals = [result.with_gradebook(recorded.get(result.key)) for result in results]
    for r in finals:
        s, a = r.key
        commented = set()  # an exercise's comment goes on its first test row only, not on each of them
        for t in r.tests:
            comment = "" if t.exercise in commented else r.comments.get(t.exercise, "")
            commented.add(t.exercise)
            scores.append((s, a, t.grade_id, _num(t.points), _num(t.max_points), t.status,
                           "" if t.status == "manual" else _num(t.auto_points),  # a written answer has none
                           "yes" if t.overridden else "", comment))
        if r.tests:
            grades.append((s, a, _num(r.score), _num(r.max_score), _num(r.auto_score),
                           "yes" if r.overridden else "", r.submitted_at, _num(r.seconds_late),
                           _num(r.late_penalty), "yes" if r.needs_manual_grade else ""))  # "yes" as overridden
            lms.setdefault(s, {})[a] = r.score
        for p in r.problems:
            problems.append((s, a, p.problem, p.detail))
        page = time.thread_time()
        write_feedback(out, r)
        if costs is not None:
            spent = time.thread_time() - page
            costs.add(a, {"feedback": spent})
            csvs += spent  # not the CSVs' time
    write_atomic(out / "scores.csv", _csv(scores, SCORES))
    write_atomic(out / "grades.csv", _csv(grades, GRADES))
    write_atomic(out / "problems.csv", _csv(problems, PROBLEMS))
    columns = sorted({a for per in lms.values() for a in per})
    rows = [(s, *(_num(per[a]) if a in per else "" for a in columns), _num(sum(per.values())))
            for s, per in sorted(lms.items())]
    write_atomic(out / LMS, _csv(rows, ("student_id", *columns, "total")))
    items = item_analysis(finals)
    write_atomic(out / "items.csv", _csv(item_rows(items), ITEMS))
    if costs is not None:
        costs.add(CLASS, {"results": time.thread_time() - csvs})
    with timed(costs, "report"):
        classreport.write_report(out, finals, items, autograded=autograded)
    return finals


def write_feedback(out: Path, result: SubmissionResult) -> None:
    """The learner's page (``result`` as the gradebook has it)."""
    write_atomic(out / "feedback" / result.student_id / f"{result.assignment_id}.html", feedback.page(result))


def pass_rates(results: list[SubmissionResult]) -> list[tuple[str, str, int, int]]:
    """(assignment, exercise, submissions that passed it, submissions), hardest first."""
    counts: dict[tuple[str, str], list[int]] = {}
    for r in results:
        for ex in r.exercises:
            if ex.manual:  # a written answer is read by a person: it has no pass rate (the summary counts them apart)
                continue
            c = counts.setdefault((r.assignment_id, ex.name), [0, 0])
            c[0] += ex.passed
            c[1] += 1
    rows = [(a, ex, p, n) for (a, ex), (p, n) in counts.items()]
    return sorted(rows, key=lambda row: (row[2] / row[3], row[0], row[1]))


def summary(results: list[SubmissionResult], *, graded: int, reused: int, failed: int, seconds: float, out: Path,
            isolation: list[str], not_isolated: list[str], jobs: int) -> str:
    lines = [f"{len(results)} submissions: {len(results) - failed} graded, {failed} could not be graded"
             f" ({graded} graded now, {reused} unchanged since the last run) in {seconds:.1f} s on {jobs} worker(s)."]
    rates = pass_rates(results)
    if rates:
        lines.append("Pass rate per exercise (hardest first):")
        for a, ex, p, n in rates:
            lines.append(f"  {p / n:6.0%}  {a}  {ex}  ({p}/{n})")
    waiting = sum(t.waiting for r in results for t in r.tests)
    if waiting:
        lines.append(f"Written answers waiting for a person: {waiting} (grade them in formgrader, then run `grade` "
                     "again to put the scores in the CSVs and feedback pages).")
    if isolation:
        lines.append("Isolation in force: " + " | ".join(isolation))
        if not_isolated:
            lines.append("NOT isolated on this machine: " + "; ".join(not_isolated) + ". Run `python -m autograder doctor` "
                         "for why and what would give more (bubblewrap, user namespaces, or grading as root).")
    if failed:
        lines.append(f"See {out / 'problems.csv'} for the {failed} submission(s) that could not be graded.")
    lines.append(f"Results in {out}")
    return "\n".join(lines)
