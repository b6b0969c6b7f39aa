"""The learner's feedback page: one section per exercise, what happened, and what to try next.

Built from a result as the gradebook has it (:meth:`.results.SubmissionResult.with_gradebook`): a person's
score changes and comments show where they apply, and a late penalty is said. Hidden tests stay hidden: their status
and points show, never their inputs, expected values or source (a failure message can carry those).

The page is titled by the notebook's own heading, and its only links are in-page anchors (``#ex-softmax``): a
learner often opens it in JupyterLab's HTML viewer, a sandboxed frame where a link to another file leads
nowhere useful, so a file the page mentions is named as text.
"""
from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass

from ... import paths
from ...checks.questions import is_question
from ...nbio import NotebookError, grade_id, notebook_title, read_notebook
from ..submission import manual
from ..submission.results import Exercise, SubmissionResult, GradedTest, untouched

STYLE = """body{font-family:system-ui,sans-serif;max-width:50rem;margin:2rem auto;padding:0 1rem;color:#222;line-height:1.45}
section{border:1px solid #ddd;border-radius:.4rem;padding:.6rem 1rem;margin:1rem 0}
h2{font-size:1.1rem;margin:.2rem 0}.badge{font-weight:600;padding:0 .4rem;border-radius:.3rem}
.passed{color:#005a3c}.failed,.error,.missing{color:#a03000}.timeout{color:#7a4b00}.not-attempted{color:#555}
.tampered,.manual{color:#0a4f8a}.recorded,.right{color:#005a3c}.wrong{color:#a03000}pre{background:#f6f6f6;padding:.6rem;overflow-x:auto;font-size:.88em}
.msg{font-family:ui-monospace,monospace;font-size:.9em;white-space:pre-wrap}.note{background:#fff8e1;padding:.4rem .6rem}
table{border-collapse:collapse}td,th{padding:.2rem .6rem .2rem 0;text-align:left}
.summary{border-left:4px solid #a03000;padding:.2rem .8rem;margin:1rem 0}.summary.full{border-color:#005a3c}
details.passed-list>summary{cursor:pointer;font-weight:600;padding:.3rem 0}.cause{font-weight:600}
h1,h2,p,li{overflow-wrap:anywhere}table{max-width:100%}td,th{overflow-wrap:anywhere}p,li{max-width:75ch}"""

NEXT = {
    "passed": "",
    "not attempted": "Write the function where it says <code># YOUR CODE HERE</code>, then run the check cell below it.",
    "failed": "Read the message, fix the function, and run its check cell again; "
              "<code>python -m autograder validate NOTEBOOK</code> runs every check before you submit.",
    # the visible check passes here, so re-running it proves nothing: the learner needs cases of their own
    "hidden failed": "Your function passes the check in the notebook, so running that cell again will not show "
                     "the problem. Try it on inputs of your own: other shapes and sizes, a single row, ties, "
                     "very large or very small values, and compare with what you work out by hand.",
    "syntax": "Fix the line named above (Python stops reading the whole cell at the first syntax error), "
              "run the cell, then run its check cell.",
    "timeout": "Your code ran past the time limit: look for a loop that never ends, or work that grows too fast "
               "(a Python loop over every element of a large array).",
    "error": "The check could not finish: your code raised an error or stopped the notebook. "
             "Run the cell yourself and read the error.",
    "missing": "This test did not run: a cell above it may have stopped the notebook.",
    "tampered": "A test cell was changed in your notebook; it was graded from the original. Leave test cells as "
                "they are.",
}
# a status as the learner reads it (the CSVs keep the code)
SHOWN = {"timeout": "timed out", "missing": "did not run", "manual": manual.WAITING}


def shown(status: str) -> str:
    return SHOWN.get(status, status)


@functools.cache
def assignment_title(assignment: str) -> str:
    """The notebook's human title ("04 · Softmax and probability"), from the course's solution; the assignment
    id when there is no such notebook or heading."""
    try:
        return notebook_title(read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")) or assignment
    except NotebookError:
        return assignment


@functools.cache
def mark_schemes(assignment: str) -> dict[str, str]:
    """grade id -> the mark scheme of each written answer of the course's solution ({} when there is none)."""
    try:
        nb = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    except NotebookError:
        return {}
    return {grade_id(c): manual.mark_scheme(c.source) for c in nb.cells if manual.is_manual_cell(c)}


def manual_status(ex: Exercise) -> str:
    """A written answer's status as the learner reads it: waiting for a person, scored, or not written."""
    if ex.status != "manual":
        return shown(ex.status)
    return manual.WAITING if ex.waiting else "scored by your instructor"


def manual_section(ex: Exercise, result: SubmissionResult, advice: bool = True) -> str:
    """A written answer (the bug hunt's "why"): the learner's words, the score a person gave or that one is awaited,
    their comment, and the course's mark scheme."""
    e = html.escape
    got, of = ex.points
    label = manual_status(ex)
    css = "manual" if ex.status == "manual" else ex.status.replace(" ", "-")
    body = [f'<h2 id="ex-{e(ex.name)}">{e(ex.name)} <span class="badge {e(css)}">{e(label)}</span> '
            + (f"<span>{e(_num(of))} point(s), waiting for a person</span></h2>" if ex.waiting else
               f"<span>{e(_num(got))} / {e(_num(of))} points</span></h2>")]
    answer = result.answers.get(ex.name, "")
    if ex.status == "manual":
        body.append("<p>Your written answer (" + ("your instructor reads it and gives its points" if ex.waiting else
                                                  "read and scored by your instructor") + "):</p>")
        body.append(code_box(answer, f"Your answer: {ex.name}"))
    elif ex.status == "not attempted" and advice:  # an untouched notebook gets one message, not one per answer
        body.append("<p><b>What to try next:</b> Write your answer in the cell under the bug hunt's check, where it "
                    "says <code>YOUR ANSWER HERE</code>: what was wrong, and the symptom that gave it away.</p>")
    elif ex.tests and ex.tests[0].message:
        body.append(f'<p class="msg">{e(without_ids(ex.tests[0].message))}</p>')
    if result.comments.get(ex.name):
        body.append(f'<p class="note"><b>Your instructor:</b> {e(result.comments[ex.name])}</p>')
    scheme = mark_schemes(result.assignment_id).get(ex.name, "")
    if scheme:
        body.append(f"<details><summary>The course's mark scheme</summary>{code_box(scheme, f'Mark scheme: {ex.name}')}"
                    "</details>")
    return f'<section aria-label="{e(ex.name)}" data-manual="{e(label)}">{"".join(body)}</section>'


def stopped_note(ex: Exercise) -> str:
    """Where a timed-out exercise's code was when it was stopped: the line of the learner's cell that was running,
    from the first of its tests whose interrupted traceback names one; "" when none does."""
    t = next((t for t in ex.tests if t.status == "timeout" and t.stopped), None)
    if t is None:
        return ""
    e, at = html.escape, t.stopped
    where = f"line {at.line} of your <code>{e(at.cell)}</code> cell" if at.cell else e(at.where())
    return (f'<p class="stopped" data-line="{at.line}"><b>Where it was stopped:</b> {where}'
            + (f", in <code>{e(at.function)}</code>" if at.function else "") + ", this line was running:</p>"
            f"{code_box(f'{at.line} | {at.code}', f'The line running in {ex.name}')}")


def code_box(code: str, label: str) -> str:
    """Code in a box that scrolls sideways on a narrow screen: a named region a keyboard can focus, and so scroll."""
    e = html.escape
    return f'<pre tabindex="0" role="region" aria-label="{e(label)}"><code>{e(code)}</code></pre>'


def failure_message(ex: Exercise) -> str:
    """The first visible failure's message (a named mistake), once; hidden ones never."""
    for t in ex.tests:
        if t.status != "passed" and not t.hidden and t.message:
            return t.message
    if any(t.status == "failed" for t in ex.tests):
        return ("Your answer passes the visible check but not the hidden tests, which use other inputs "
                "(other shapes, sizes, edge cases). Their inputs stay hidden; test your function on a few "
                "cases of your own.")
    return ""


@dataclass(frozen=True)
class CompileError:
    """A learner's cell that Python could not read, so nothing in it ran: the root cause of every
    NameError further down that names what it should have defined."""
    exercise: str
    kind: str  # "SyntaxError", "IndentationError" or "TabError"
    line: int  # 1-based, within the cell
    text: str  # the offending line, stripped
    reason: str  # Python's own words ("invalid syntax", "'(' was never closed")

    def describe(self) -> str:
        where = f"line {self.line} of your {self.exercise} cell"
        return (f"{self.kind} on {where}: {self.reason}" + (f"\n    {self.text}" if self.text else "")
                + f"\nThe cell never ran, so {self.exercise} was never defined: every check that uses it fails "
                  "with a NameError until this line is fixed.")


def compile_error(exercise: str, code: str) -> CompileError | None:
    """Why the learner's cell could not be compiled, or None when it compiles.

    The saved result keeps the learner's code of every unfinished exercise (see ``grade_one``); compiling it
    again here is deterministic and gives what the run saw, once IPython's own rewriting (``%magic``, ``!cmd``)
    has been applied as it was in the notebook."""
    try:
        compile(code, f"<{exercise}>", "exec")
        return None  # plain Python reads it, so IPython would too (the cheap answer for almost every cell)
    except (SyntaxError, ValueError, OverflowError):
        pass
    try:
        source = _ipython_rewriter()(code)
    except Exception:  # IPython missing or unable to rewrite it: plain Python decides
        source = code
    try:
        compile(source, f"<{exercise}>", "exec")
    except SyntaxError as exc:
        lines = code.splitlines()
        line = exc.lineno or 0
        text = lines[line - 1].strip() if 0 < line <= len(lines) else (exc.text or "").strip()
        return CompileError(exercise, type(exc).__name__, line, text, exc.msg or "invalid syntax")
    except (ValueError, OverflowError):  # null bytes, a literal too large: not a syntax error a learner can read
        return None
    return None


@functools.cache
def _ipython_rewriter():
    """IPython's cell rewriting (magics, shell escapes), built once: a class report compiles many cells."""
    # late: only a page with unfinished code pays for importing IPython
    from IPython.core.inputtransformer2 import TransformerManager
    return TransformerManager().transform_cell


def compile_errors(result: SubmissionResult) -> dict[str, CompileError]:
    """Exercise -> why its cell did not compile, for every unfinished exercise whose code was kept."""
    found = {}
    for exercise, code in sorted(result.code.items()):
        error = compile_error(exercise, code) if isinstance(code, str) else None
        if error:
            found[exercise] = error
    return found


NAME_ERROR = re.compile(r"NameError: name '(\w+)' is not defined")


def root_cause(ex: Exercise, broken: dict[str, CompileError]) -> str:
    """What really went wrong in ``ex``: its own cell's compile error, or another cell's that left a name
    undefined; "" when neither (the check's own message stands)."""
    if ex.name in broken:
        return broken[ex.name].describe()
    for t in ex.tests:
        m = NAME_ERROR.search(t.message or "")
        if m and m.group(1) in broken:
            return (f"{m.group(1)} is not defined because its cell did not compile: "
                    + broken[m.group(1)].describe().split("\n")[0])
    return ""


def next_step(ex: Exercise, cause: str, broken: dict[str, CompileError] | None = None) -> str:
    """The advice under an exercise, chosen from what really happened."""
    if cause and ex.name in (broken or {}):
        return NEXT["syntax"]
    if cause:  # another cell's syntax error: that cell is the one to fix
        other = cause.split(" is not defined", 1)[0]
        return (f"Fix the syntax error in your <code>{html.escape(other)}</code> cell first and run it; then run "
                "this exercise's check cell again.")
    root = ex.traced_to
    if root:  # it calls an exercise that fails its own check: that one first (said even for a hidden test)
        return (f"Your <code>{html.escape(root)}</code> fails its own check: fix it first, and this one may pass "
                "as it is.")
    if ex.hidden_only and ex.status == "failed":
        return NEXT["hidden failed"]
    return NEXT.get(ex.status, "")


def cause_word(ex: Exercise, cause: str) -> str:
    """A few words for the summary: why these points were lost."""
    if ex.manual:
        return manual_status(ex)
    if cause:
        return "SyntaxError" if "SyntaxError" in cause.split(":")[0] or "did not compile" in cause else "error"
    if ex.traced_to:
        return f"caused by {ex.traced_to}"
    if ex.hidden_only and ex.status == "failed":
        return "failed hidden tests"
    return shown(ex.status)


def lost_summary(exs: tuple[Exercise, ...], broken: dict[str, CompileError], score: float,
                 max_score: float) -> str:
    """The page's first block: where the points went, largest loss first."""
    e = html.escape
    lost = [(of - got, ex) for ex in exs for got, of in [ex.points] if got < of and not ex.waiting]
    waiting = sum(ex.points[1] for ex in exs if ex.waiting)
    pending = (f'<p class="note" data-waiting="{_num(waiting)}">{e(_num(waiting))} point(s) wait for your instructor '
               "to read your written answer(s); they are not lost.</p>" if waiting else "")
    if not lost and all(ex.passed or ex.waiting for ex in exs):
        if pending:
            return f'<div class="summary full"><p>Every check passed. Nothing to fix.</p>{pending}</div>'
        return '<div class="summary full"><p>Every exercise passed. Nothing to fix.</p></div>'
    if not lost:  # full points, yet an exercise did not pass (a test cell changed, graded from the original)
        return (f'<div class="summary"><p>No points lost; the exercises below say what else was noticed.</p>'
                f"{pending}</div>")
    rows = "".join(
        f'<li><a href="#ex-{e(ex.name)}">{e(ex.name)}</a>: {e(_num(n))} point(s) lost '
        f'<span class="cause">({e(cause_word(ex, root_cause(ex, broken)))})</span></li>'
        for n, ex in sorted(lost, key=lambda p: -p[0]))
    return (f'<div class="summary" aria-label="Points lost"><p><b>{e(_num(max_score - score - waiting))} of '
            f"{e(_num(max_score))} points lost</b>, in {len(lost)} exercise(s):</p><ul>{rows}</ul>{pending}</div>")


TEST_ID = re.compile(r"\b(?:test cell )?test_(\w+?)(_hidden)?\b")


BOTH_TESTS = re.compile(r"\btest cells test_(\w+?), test_\1_hidden\b")  # an exercise's two tests, as one problem


def without_ids(text: str) -> str:
    """``text`` with the grader's test ids (``test_softmax_hidden``) said in words a learner knows."""
    text = BOTH_TESTS.sub(lambda m: f"the check and the hidden tests of {m.group(1)}", text)
    return TEST_ID.sub(lambda m: f"the {'hidden tests' if m.group(2) else 'check'} of {m.group(1)}", text)


UNTOUCHED = ("Nothing was filled in: did you submit the right file? Every exercise still holds its "
             "<code># YOUR CODE HERE</code> stub. If you worked in another copy of the notebook, hand that one in.")


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
    p = ex.prediction
    if p is None:
        return ""
    e = html.escape
    verdict = ('<b class="right">right</b>.' if p.right else
               '<b class="wrong">wrong</b>.' + (f" {e(p.why)}" if p.why else ""))
    return (f'<p class="prediction" data-right="{str(bool(p.right)).lower()}">Your prediction '
            f'<code>{e(p.answer)}</code> was {verdict}'
            + (f' Your reason: <q class="reason">{e(p.reason)}</q>' if p.reason else "")
            + " Its points are for answering before the reveal, right or wrong.</p>")


def _num(x: float) -> str:
    return f"{x:g}"


def test_row(t: GradedTest, question: bool = False) -> str:
    """One test as the learner reads it: visible check or hidden tests, points, status (never its grade id);
    a prediction's test that earned its points reads "recorded"."""
    e = html.escape
    return (f'<tr><td>{"hidden tests" if t.hidden else "visible check"}</td>'
            f'<td>{e(_num(t.points))} / {e(_num(t.max_points))}</td>'
            f'<td class="{e(prediction_class(t.status, question))}">{e(prediction_status(t.status, question))}</td>'
            + (f'<td>changed by your instructor (automatic score {e(_num(t.auto_points))})</td>'
               if t.overridden else "<td></td>") + "</tr>")


def section(ex: Exercise, result: SubmissionResult, broken: dict[str, CompileError], advice: bool = True) -> str:
    """One exercise: its status and points, the root cause or the check's message, and what to try next."""
    e = html.escape
    if ex.manual:
        return manual_section(ex, result, advice)
    code, comments = result.code, result.comments
    got, of = ex.points
    status = ex.status
    cause = root_cause(ex, broken) if status != "passed" else ""
    message = cause or (failure_message(ex) if status != "passed" else "")
    question = is_question(result.assignment_id, ex.name)
    label = "syntax error" if ex.name in broken else prediction_status(status, question)
    body = [f'<h2 id="ex-{e(ex.name)}">{e(ex.name)} <span class="badge {e(prediction_class(status, question))}">{e(label)}</span> '
            f'<span>{e(_num(got))} / {e(_num(of))} points</span></h2>',
            f'<table>{"".join(test_row(t, question) for t in ex.tests)}</table>']
    if question:
        body.append(prediction_note(ex))
    if message and status != "not attempted":
        body.append(f'<p class="msg">{e(without_ids(message))}</p>')
    if status == "timeout":
        body.append(stopped_note(ex))
    step = next_step(ex, cause, broken) if advice else ""
    if step:
        body.append(f"<p><b>What to try next:</b> {step}</p>")
    if comments.get(ex.name):
        body.append(f'<p class="note"><b>Your instructor:</b> {e(comments[ex.name])}</p>')
    if status not in ("passed", "not attempted") and code.get(ex.name):
        body.append(f"<details open><summary>Your code</summary>{code_box(code[ex.name], f'Your code: {ex.name}')}"
                    "</details>")
    return f'<section aria-label="{e(ex.name)}">{"".join(body)}</section>'


def sections(result: SubmissionResult) -> str:
    """Unfinished exercises open, in notebook order; passed ones folded together below them; an untouched
    notebook gets one message instead of a section per stub."""
    exs = result.exercises
    broken = compile_errors(result)
    if untouched(exs):
        folded = "".join(section(ex, result, broken, advice=False) for ex in exs)  # the one message says it
        return (f'<p class="note" data-untouched="yes">{UNTOUCHED}</p><details class="passed-list"><summary>'
                f"{len(exs)} exercise(s), none attempted</summary>{folded}</details>")
    open_ = "".join(section(ex, result, broken) for ex in exs if ex.status != "passed")
    passed = [ex for ex in exs if ex.status == "passed"]
    questions = {ex.name for ex in passed if is_question(result.assignment_id, ex.name)}
    said = [f"{len(names)} {what}: {', '.join(names)}" for what, names in (
        ("exercise(s) passed", [ex.name for ex in passed if ex.name not in questions]),
        ("prediction(s) recorded", [ex.name for ex in passed if ex.name in questions])) if names]
    folded = (f'<details class="passed-list"><summary>{html.escape("; ".join(said))}</summary>'
              + "".join(section(ex, result, broken) for ex in passed) + "</details>") if passed else ""
    return open_ + folded


def page(result: SubmissionResult) -> str:
    """The whole HTML page for one learner and one assignment (``result`` as the gradebook has it)."""
    e = html.escape
    problems = "".join(f"<li><b>{e(SHOWN.get(p.problem, p.problem))}</b>: {e(without_ids(p.detail))}</li>"
                       for p in result.problems)
    late = ""
    if result.seconds_late:
        late = (f'<p class="note">Submitted {e(_duration(result.seconds_late))} after the due date'
                + (f'; late penalty: {e(_num(result.late_penalty))} points.' if result.late_penalty
                   else ".") + "</p>")
    submitted = f" Submitted {e(result.submitted_at)}." if result.submitted_at else ""
    waiting = sum(t.max_points for t in result.tests if t.waiting)
    if waiting:
        submitted = (f" {e(_num(waiting))} of them {'waits' if waiting == 1 else 'wait'} for your instructor to read "
                     "your written answer." + submitted)
    score, max_score = result.score, result.max_score
    exs = result.exercises
    summary = lost_summary(exs, compile_errors(result), score, max_score) if exs and not untouched(exs) else ""
    title = assignment_title(result.assignment_id)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(title)}: feedback for {e(result.student_id)}</title>
<style>{STYLE}</style></head>
<body><main>
<h1>{e(title)}</h1>
<p>Student: {e(result.student_id)}. Score: <b>{e(_num(score))} of {e(_num(max_score))}</b> points.{submitted}</p>
{late}
{summary}
{f"<h2>Problems with this submission</h2><ul>{problems}</ul>" if problems else ""}
{sections(result)}
</main></body></html>
"""


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
