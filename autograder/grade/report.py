"""What a grading run leaves behind: saved results, the CSVs, feedback pages and the terminal lines.

Every file is written atomically (a temporary file and a rename). The CSVs and the feedback are
rebuilt from the saved results, so they always agree with them.
"""
from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ..nbio import exercise_of, write_atomic
from . import classreport, feedback
from .costs import CLASS, timed
from .engine import not_isolated

if TYPE_CHECKING:
    from .costs import Costs
    from .gradebook import Recorded

SCORES = ("student_id", "assignment_id", "grade_id", "points", "max_points", "status", "auto_points", "overridden",
          "comment")
GRADES = ("student_id", "assignment_id", "score", "max_score", "auto_score", "overridden", "submitted_at",
          "seconds_late", "late_penalty")
PROBLEMS = ("student_id", "assignment_id", "problem", "detail")
LMS = "lms.csv"  # one row per student, one column per assignment: what an LMS gradebook imports


# --------------------------------------------------------------------------- saved results

def result_path(out: Path, student_id: str, assignment_id: str) -> Path:
    return out / "results" / student_id / f"{assignment_id}.json"


def save_result(out: Path, result: dict) -> None:
    write_atomic(result_path(out, result["student_id"], result["assignment_id"]),
                 json.dumps(result, indent=1, sort_keys=True) + "\n")


def load_result(out: Path, student_id: str, assignment_id: str) -> dict | None:
    path = result_path(out, student_id, assignment_id)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def read_results(out: Path) -> list[dict]:
    """Every saved result, sorted by student and assignment."""
    results = []
    for path in sorted((out / "results").glob("*/*.json")):
        data = load_result(out, path.parent.name, path.stem)
        if data is not None:
            results.append(data)
    return sorted(results, key=lambda r: (r["student_id"], r["assignment_id"]))


# --------------------------------------------------------------------------- CSVs and feedback

def _csv(rows: list[tuple], header: tuple[str, ...]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def _num(x: float) -> str:
    return f"{x:g}"


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what Excel, LibreOffice and Sheets read as a formula


def spreadsheet_safe(cell: str) -> str:
    """``cell`` as a spreadsheet shows it and never runs it: text that would start a formula (a student id
    like ``=HYPERLINK(...)``) gets a leading apostrophe, the spreadsheets' own mark for "this is text"
    (OWASP's advice for CSV injection). Numbers, negative ones included, are left as they are."""
    if not cell.startswith(FORMULA_STARTS):
        return cell
    try:
        float(cell)
        return cell
    except ValueError:
        return "'" + cell


def final(result: dict, recorded: "Recorded | None") -> dict:
    """The result as the gradebook has it: a person's scores and comments, lateness and its penalty.

    Adds to a copy of the result: per test ``points`` (what counts), ``auto_points`` and ``overridden``;
    ``comments`` per exercise; ``score``, ``auto_score``, ``submitted_at``, ``seconds_late``, ``late_penalty``.
    """
    r = json.loads(json.dumps(result))
    scores = r.get("scores", [])
    rec = recorded
    for t in scores:
        t["auto_points"] = t["points"]
        t["overridden"] = bool(rec and t["grade_id"] in rec.overridden)
        if rec and t["grade_id"] in rec.scores:
            t["points"] = rec.scores[t["grade_id"]]
    r["comments"] = dict(rec.comments) if rec else {}
    r["auto_score"] = sum(t["auto_points"] for t in scores)
    r["late_penalty"] = rec.late_penalty if rec else 0.0
    r["score"] = max(0.0, sum(t["points"] for t in scores) - r["late_penalty"])
    r["max_score"] = sum(t["max_points"] for t in scores)
    r["submitted_at"] = (rec.submitted_at if rec else "") or r.get("submitted_at", "")
    r["seconds_late"] = rec.seconds_late if rec else 0.0
    return r


def write_outputs(out: Path, results: list[dict], recorded: "dict | None" = None, *,
                  costs: "Costs | None" = None) -> None:
    """The CSVs, the LMS export and every feedback page, from the saved results and the gradebook's record.
    ``costs`` (with ``--profile``) gets what the pages and the CSVs cost."""
    recorded = recorded or {}
    csvs = time.thread_time()
    scores, grades, problems = [], [], []
    lms: dict[str, dict[str, float]] = {}
    for result in results:
        r = final(result, recorded.get((result["student_id"], result["assignment_id"])))
        s, a = r["student_id"], r["assignment_id"]
        commented = set()  # an exercise's comment goes on its first test row only, not on each of them
        for t in r.get("scores", []):
            exercise = exercise_of(t["grade_id"])
            comment = "" if exercise in commented else r["comments"].get(exercise, "")
            commented.add(exercise)
            scores.append((s, a, t["grade_id"], _num(t["points"]), _num(t["max_points"]), t["status"],
                           _num(t["auto_points"]), "yes" if t["overridden"] else "", comment))
        if r.get("scores"):
            overridden = any(t["overridden"] for t in r["scores"])  # "yes" as in scores.csv
            grades.append((s, a, _num(r["score"]), _num(r["max_score"]), _num(r["auto_score"]),
                           "yes" if overridden else "", r["submitted_at"], _num(r["seconds_late"]),
                           _num(r["late_penalty"])))
            lms.setdefault(s, {})[a] = r["score"]
        for p in r.get("problems", []):
            problems.append((s, a, p["problem"], p["detail"]))
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
    rows = [(spreadsheet_safe(s), *(_num(per[a]) if a in per else "" for a in columns), _num(sum(per.values())))
            for s, per in sorted(lms.items())]
    write_atomic(out / LMS, _csv(rows, ("student_id", *(spreadsheet_safe(a) for a in columns), "total")))
    if costs is not None:
        costs.add(CLASS, {"results": time.thread_time() - csvs})
    with timed(costs, "report"):
        classreport.write_report(out, [final(r, recorded.get((r["student_id"], r["assignment_id"]))) for r in results])


def write_feedback(out: Path, result: dict) -> None:
    """The learner's page (``result`` as :func:`final` gives it)."""
    write_atomic(out / "feedback" / result["student_id"] / f"{result['assignment_id']}.html", feedback.page(result))


# --------------------------------------------------------------------------- terminal

class Progress:
    """``grading 12/40  2.3/s  about 12 s left`` on one line of stderr, redrawn in place on a terminal."""

    def __init__(self, stream: TextIO, enabled: bool = True, every: float = 5.0):
        self.stream, self.enabled, self.every = stream, enabled, every
        self.total = self.done = 0
        self.started = self.last = 0.0
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.drawn = False

    def start(self, total: int) -> None:
        self.total, self.done, self.started, self.last = total, 0, time.monotonic(), 0.0
        self._draw(force=True)

    def advance(self) -> None:
        self.done += 1
        self._draw(force=self.done == self.total)

    def _draw(self, force: bool = False) -> None:
        if not self.enabled or not self.total:
            return
        now = time.monotonic()
        if not force and not self.tty and now - self.last < self.every:
            return
        self.last = now
        elapsed = now - self.started
        rate = self.done / elapsed if elapsed > 0 and self.done else 0.0
        left = f"about {(self.total - self.done) / rate:.0f} s left" if rate else "starting"
        line = f"grading {self.done}/{self.total} submissions  {rate:.2f}/s  {left}"
        if self.tty:
            self.stream.write("\r" + line.ljust(70))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.enabled and self.tty and self.drawn:
            self.stream.write("\n")
            self.stream.flush()


def pass_rates(results: list[dict]) -> list[tuple[str, str, int, int]]:
    """(assignment, exercise, submissions passing every test of it, submissions), hardest first."""
    counts: dict[tuple[str, str], list[int]] = {}
    for r in results:
        per_ex: dict[str, bool] = {}
        for t in r.get("scores", []):
            ex = exercise_of(t["grade_id"])
            per_ex[ex] = per_ex.get(ex, True) and t["points"] >= t["max_points"]
        for ex, ok in per_ex.items():
            c = counts.setdefault((r["assignment_id"], ex), [0, 0])
            c[0] += ok
            c[1] += 1
    rows = [(a, ex, p, n) for (a, ex), (p, n) in counts.items()]
    return sorted(rows, key=lambda row: (row[2] / row[3], row[0], row[1]))


def summary(results: list[dict], *, graded: int, reused: int, failed: int, seconds: float, out: Path,
            isolation: list[str], jobs: int) -> str:
    lines = [f"{len(results)} submissions: {len(results) - failed} graded, {failed} could not be graded"
             f" ({graded} graded now, {reused} unchanged since the last run) in {seconds:.1f} s on {jobs} worker(s)."]
    rates = pass_rates(results)
    if rates:
        lines.append("Pass rate per exercise (hardest first):")
        for a, ex, p, n in rates:
            lines.append(f"  {p / n:6.0%}  {a}  {ex}  ({p}/{n})")
    if isolation:
        lines.append("Isolation in force: " + " | ".join(isolation))
        gaps = sorted({g for i in isolation for g in not_isolated(i)})
        if gaps:
            lines.append("NOT isolated on this machine: " + "; ".join(gaps) + ". Run `python -m autograder doctor` "
                         "for why and what would give more (bubblewrap, user namespaces, or grading as root).")
    if failed:
        lines.append(f"See {out / 'problems.csv'} for the {failed} submission(s) that could not be graded.")
    lines.append(f"Results in {out}")
    return "\n".join(lines)
