"""The learner's feedback page: one section per exercise, what happened, and what to try next.

Built from a result as the gradebook has it (:func:`.report.final`): a person's score changes and
comments show where they apply, and a late penalty is said. Hidden tests stay hidden: their status
and points show, never their inputs, expected values or source (a failure message can carry those).
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

from ..checks.questions import is_question
from ..nbio import exercise_of
from .judge import exercise_status

STYLE = """body{font-family:system-ui,sans-serif;max-width:50rem;margin:2rem auto;padding:0 1rem;color:#222;line-height:1.45}
section{border:1px solid #ddd;border-radius:.4rem;padding:.6rem 1rem;margin:1rem 0}
h2{font-size:1.1rem;margin:.2rem 0}.badge{font-weight:600;padding:0 .4rem;border-radius:.3rem}
.passed{color:#005a3c}.failed,.error,.missing{color:#a03000}.timeout{color:#7a4b00}.not-attempted{color:#555}
.tampered{color:#0a4f8a}.recorded,.right{color:#005a3c}.wrong{color:#a03000}pre{background:#f6f6f6;padding:.6rem;overflow-x:auto;font-size:.88em}
.msg{font-family:ui-monospace,monospace;font-size:.9em;white-space:pre-wrap}.note{background:#fff8e1;padding:.4rem .6rem}
table{border-collapse:collapse}.gid{color:#555;font-size:.85em;font-family:ui-monospace,monospace}td,th{padding:.2rem .6rem .2rem 0;text-align:left}"""

NEXT = {
    "passed": "",
    "not attempted": "Write the function where it says <code># YOUR CODE HERE</code>, then run the check cell below it.",
    "failed": "Read the message, fix the function, and run its check cell again; "
              "<code>python -m autograder validate NOTEBOOK</code> runs every check before you submit.",
    "timeout": "Your code ran past the time limit: look for a loop that never ends, or work that grows too fast "
               "(a Python loop over every element of a large array).",
    "error": "The check could not finish: your code raised an error or stopped the notebook. "
             "Run the cell yourself and read the error.",
    "missing": "This test did not run: a cell above it may have stopped the notebook.",
    "tampered": "A test cell was changed in your notebook; it was graded from the original. Leave test cells as "
                "they are.",
}
SHOWN = {"timeout": "timed out", "missing": "did not run"}  # a status as the learner reads it (the CSVs keep the code)


def shown(status: str) -> str:
    return SHOWN.get(status, status)


@dataclass
class Exercise:
    name: str
    tests: list[dict] = field(default_factory=list)

    @property
    def status(self) -> str:
        return exercise_status(t["status"] for t in self.tests)

    @property
    def points(self) -> tuple[float, float]:
        return sum(t["points"] for t in self.tests), sum(t["max_points"] for t in self.tests)

    def message(self) -> str:
        """The first visible failure's message (a named mistake), once; hidden ones never."""
        for t in self.tests:
            if t["status"] not in ("passed",) and not is_hidden(t["grade_id"]) and t.get("message"):
                return t["message"]
        if any(t["status"] == "failed" for t in self.tests):
            return ("Your answer passes the visible check but not the hidden tests, which use other inputs "
                    "(other shapes, sizes, edge cases). Their inputs stay hidden; test your function on a few "
                    "cases of your own.")
        return ""


def is_hidden(grade_id: str) -> bool:
    return grade_id.endswith("_hidden")


def exercises(result: dict) -> list[Exercise]:
    out: dict[str, Exercise] = {}
    for t in result.get("scores", []):
        out.setdefault(exercise_of(t["grade_id"]), Exercise(exercise_of(t["grade_id"]))).tests.append(t)
    return list(out.values())


# ------------------------------------------------------------------------- predictions
# A prediction's points are for a well-formed answer, so its test is "recorded", never "passed"; whether
# the answer was right is said apart, with the reason when it was not.

def prediction_status(status: str, question: bool) -> str:
    """A status as the learner reads it: a question's passing test was recorded, not passed."""
    return "recorded" if question and status == "passed" else shown(status)


def prediction_class(status: str, question: bool) -> str:
    """The CSS class of a status; a question's passing test gets its own, so no "passed" shows even in the markup."""
    return "recorded" if question and status == "passed" else status.replace(" ", "-")


def prediction_note(ex: Exercise) -> str:
    """One paragraph: the learner's recorded prediction, right or wrong, and why; "" when none was recorded."""
    p = next((t["prediction"] for t in ex.tests if t.get("prediction")), None)
    if p is None:
        return ""
    e = html.escape
    verdict = ('<b class="right">right</b>.' if p["right"] else
               '<b class="wrong">wrong</b>.' + (f" {e(p.get('why', ''))}" if p.get("why") else ""))
    return (f'<p class="prediction" data-right="{str(bool(p["right"])).lower()}">Your prediction '
            f'<code>{e(p["answer"])}</code> was {verdict} Its points are for answering before the reveal, '
            "right or wrong.</p>")


def _num(x: float) -> str:
    return f"{x:g}"


def page(result: dict) -> str:
    """The whole HTML page for one learner and one assignment (``result`` as :func:`.report.final` gives it)."""
    e = html.escape
    code = result.get("code", {})
    comments = result.get("comments", {})
    sections = []
    for ex in exercises(result):
        got, of = ex.points
        status = ex.status
        question = is_question(result["assignment_id"], ex.name)
        rows = "".join(
            f'<tr><td>{"hidden test" if is_hidden(t["grade_id"]) else "visible check"} '
            f'<span class="gid">{e(t["grade_id"])}</span></td>'
            f'<td>{e(_num(t["points"]))} / {e(_num(t["max_points"]))}</td>'
            f'<td class="{e(prediction_class(t["status"], question))}">{e(prediction_status(t["status"], question))}</td>'
            + (f'<td>changed by your instructor (automatic score {e(_num(t["auto_points"]))})</td>'
               if t.get("overridden") else "<td></td>") + "</tr>"
            for t in ex.tests)
        message = ex.message() if status != "passed" else ""
        body = [f'<h2>{e(ex.name)} <span class="badge {e(prediction_class(status, question))}">'
                f'{e(prediction_status(status, question))}</span> '
                f'<span>{e(_num(got))} / {e(_num(of))} points</span></h2>', f"<table>{rows}</table>"]
        if question:
            body.append(prediction_note(ex))
        if message and status != "not attempted":
            body.append(f'<p class="msg">{e(message)}</p>')
        if NEXT.get(status):
            body.append(f"<p><b>What to try next:</b> {NEXT[status]}</p>")
        if comments.get(ex.name):
            body.append(f'<p class="note"><b>Your instructor:</b> {e(comments[ex.name])}</p>')
        if status not in ("passed", "not attempted") and code.get(ex.name):
            body.append(f"<details open><summary>Your code</summary><pre><code>{e(code[ex.name])}</code></pre>"
                        "</details>")
        sections.append(f'<section aria-label="{e(ex.name)}">{"".join(body)}</section>')
    problems = "".join(f"<li><b>{e(p['problem'])}</b>: {e(p['detail'])}</li>" for p in result.get("problems", []))
    late = ""
    if result.get("seconds_late"):
        late = (f'<p class="note">Submitted {e(_duration(result["seconds_late"]))} after the due date'
                + (f'; late penalty: {e(_num(result["late_penalty"]))} points.' if result.get("late_penalty")
                   else ".") + "</p>")
    submitted = f" Submitted {e(result['submitted_at'])}." if result.get("submitted_at") else ""
    score = result.get("score", sum(t["points"] for t in result.get("scores", [])))
    max_score = result.get("max_score", sum(t["max_points"] for t in result.get("scores", [])))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{e(result["assignment_id"])}: feedback for {e(result["student_id"])}</title>
<style>{STYLE}</style></head>
<body>
<h1>{e(result["assignment_id"])}</h1>
<p>Student: {e(result["student_id"])}. Score: <b>{e(_num(score))} of {e(_num(max_score))}</b> points.{submitted}</p>
{late}
{f"<h2>Problems with this submission</h2><ul>{problems}</ul>" if problems else ""}
{"".join(sections)}
</body></html>
"""


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
