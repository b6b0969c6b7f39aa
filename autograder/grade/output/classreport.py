"""The instructor's class report, ``report.html`` beside the CSVs: what the class scored and which mistakes it made.

Built from the same records as the CSVs (:class:`.results.SubmissionResult` as the gradebook has it: a person's
scores, lateness and its penalty), so its numbers are theirs: a test passed when its status in ``scores.csv`` is
``passed``, an exercise when :attr:`.results.Exercise.status` says so; a submission's score is its ``score`` in
``grades.csv``. One self-contained page: no script, no font and no picture from anywhere
else, so it opens offline and can be mailed. Plots are HTML/CSS bars in Okabe-Ito colours, each with its
numbers written out beside it. Its last section judges the tests themselves (:mod:`.items`, also ``items.csv``).
"""
from __future__ import annotations

import html
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from ...nbio import write_atomic
from .alike import SIMILARITY_STYLE, load as load_similarity, section as similarity_section
from .classrows import (STUDENT_COLUMNS, StudentRow, Trouble, _num, e, error_causes, feedback_link, flagged,  # noqa: F401
                        student_rows, students_table, troubles)
from .items import NEAR_ZERO, ItemStats, item_analysis
from ..submission.results import Exercise, SubmissionResult, GradedTest

# Okabe & Ito (2008), a palette readers with every common colour-vision deficiency tell apart.
BLUE, ORANGE, SKY, GREEN, VERMILION, GREY = "#0072B2", "#E69F00", "#56B4E9", "#009E73", "#D55E00", "#999999"
BINS = 11  # ten bins of 10 percentage points and one for a full score: 100% is not "90-99%"

STYLE = f"""body{{font-family:system-ui,sans-serif;max-width:62rem;margin:2rem auto;padding:0 1rem;color:#222;
line-height:1.45}}h2{{border-top:2px solid #ddd;padding-top:1rem;margin-top:2.5rem}}h3{{margin-top:1.6rem}}
table{{border-collapse:collapse;margin:.4rem 0}}th,td{{padding:.2rem .7rem .2rem 0;text-align:left;
vertical-align:top}}th{{border-bottom:1px solid #bbb}}td.num{{text-align:right;font-variant-numeric:tabular-nums}}
.hist{{display:flex;align-items:flex-end;gap:4px;height:10rem;border-bottom:1px solid #555;max-width:36rem;
padding-top:1.2rem}}.col{{flex:1;display:flex;flex-direction:column;justify-content:flex-end;align-items:center;
height:100%}}.col .bar{{width:100%;background:{BLUE}}}.col .n{{font-size:.8em}}
.axis{{display:flex;gap:4px;max-width:36rem;font-size:.75em;color:#444}}.axis span{{flex:1;text-align:center}}
.rate{{display:inline-block;width:8rem;height:.8rem;background:#eee;margin-right:.4rem;vertical-align:middle}}
.rate span{{display:block;height:100%}}.visible{{background:{BLUE}}}.hidden{{background:{ORANGE}}}
.key{{display:inline-block;width:.8rem;height:.8rem;vertical-align:middle}}
caption{{text-align:left;caption-side:top}}figcaption{{font-size:.9em;color:#333;margin-top:.3rem}}.muted{{color:#555}}
ul.mistakes li{{margin:.3rem 0}}.count{{font-weight:600}}.who{{font-size:.9em}}
nav ul{{columns:2}}.note{{background:#fff8e1;padding:.4rem .6rem}}
.scroll{{overflow-x:auto;max-width:100%}}h1,h2,h3,h4,code{{overflow-wrap:anywhere}}main>p,section>p,li{{max-width:75ch}}.flag{{color:#a03000;font-weight:600}}ul.causes li{{margin:.3rem 0}}
.students td,.students th{{white-space:nowrap}}.students tr.row-problems td{{white-space:normal;padding-top:0}}
ul.row-problems,ul.troubles{{margin:0 0 .4rem;padding-left:1.2rem;overflow-wrap:anywhere}}
.items tbody th{{font-weight:normal;border:0}}.items td.num{{white-space:nowrap}}.items td.reading{{min-width:12rem}}
.students td[data-label]::before{{color:#555}}
@media (max-width:40rem){{body{{margin:1rem auto;font-size:15px}}.rate{{width:3.5rem}}nav ul{{columns:1}}
th,td{{padding-right:.4rem}}.axis{{font-size:.6em}}
.students thead{{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}}
.students,.students tbody,.students tr,.students td{{display:block}}.students tbody{{border-top:1px solid #ddd;
padding:.3rem 0}}.students td{{white-space:normal;text-align:left;padding:.05rem 0;overflow-wrap:anywhere}}
.students td[data-label]::before{{content:attr(data-label) ": "}}}}"""


@dataclass
class ExerciseTally:
    """One exercise of one assignment across the class."""
    name: str
    visible: list[bool] = field(default_factory=list)  # per submission with a visible check: did all pass?
    hidden: list[bool] = field(default_factory=list)
    not_attempted: int = 0
    failed: set[str] = field(default_factory=set)  # students who failed a test of it
    manual: bool = False  # a written answer a person grades (the bug hunt's "why"): never passed nor failed here
    waiting: int = 0  # written answers no person has scored yet
    scored: int = 0  # written answers a person has scored
    mistakes: dict[str, set[str]] = field(default_factory=dict)  # mistake text -> students

    def unnamed(self) -> set[str]:
        """Students who failed it with no known mistake recognised."""
        named = set().union(*self.mistakes.values()) if self.mistakes else set()
        return self.failed - named


@dataclass
class Assignment:
    name: str
    scores: list[tuple[str, float, float]] = field(default_factory=list)  # (student, score, max_score) per grades.csv row
    exercises: dict[str, ExerciseTally] = field(default_factory=dict)
    ungraded: list[tuple[str, list]] = field(default_factory=list)  # (student, its fatal problems)
    changed: list[SubmissionResult] = field(default_factory=list)  # results whose score a person or a penalty changed
    predictions: dict[str, "Predictions"] = field(default_factory=dict)  # question -> what the class predicted

    @property
    def graded(self) -> int:
        """Submissions with a row in grades.csv: the denominator of every rate and count."""
        return len(self.scores)

    @property
    def scored_ungraded(self) -> int:
        """Ungradable submissions that still have a (zero) row in grades.csv."""
        scored = {s for s, _, _ in self.scores}
        return sum(s in scored for s, _ in self.ungraded)


def changed_tests(r: SubmissionResult) -> list[GradedTest]:
    """The tests whose points a person changed."""
    return [t for t in r.tests if t.overridden and t.points != t.auto_points]


def summarise(finals: list[SubmissionResult]) -> dict[str, Assignment]:
    """Per assignment: scores, per-exercise pass counts and mistakes, ungraded submissions, changed scores."""
    out: dict[str, Assignment] = {}
    for r in sorted(finals, key=lambda r: (r.assignment_id, r.student_id)):
        a = out.setdefault(r.assignment_id, Assignment(r.assignment_id))
        student = r.student_id
        fatal = [p for p in r.problems if p.fatal]
        if fatal or not r.tests:
            a.ungraded.append((student, fatal))
        if not r.tests:
            continue
        # An ungradable submission with tests listed (all "missing") stays in: grades.csv gives it 0, and the
        # report counts what the CSVs and the LMS export count.
        a.scores.append((student, r.score, r.max_score))
        if r.late_penalty or changed_tests(r):
            a.changed.append(r)
        exercises = r.exercises
        tally_predictions(a, exercises)
        for ex in exercises:
            tally = a.exercises.setdefault(ex.name, ExerciseTally(ex.name))
            if ex.manual:  # read by a person: counted as waiting or scored, never as passed or failed
                tally.manual = True
                tally.waiting += ex.waiting
                tally.scored += ex.status == "manual" and not ex.waiting
                tally.not_attempted += ex.status == "not attempted"
                continue
            visible, hidden = ex.visible, ex.hidden
            if visible:
                tally.visible.append(Exercise(name=ex.name, tests=visible).passed)
            if hidden:
                tally.hidden.append(Exercise(name=ex.name, tests=hidden).passed)
            if ex.status == "not attempted":
                tally.not_attempted += 1
            if any(t.status == "failed" for t in ex.tests):
                tally.failed.add(student)
            # One mistake per student and exercise, the visible check's first: a hidden test names the same
            # mistake in words of its own inputs ("the sum over the 7 positions"), which would count it twice.
            named = [t.mistake for t in visible + hidden if t.status == "failed" and t.mistake]
            if named:
                tally.mistakes.setdefault(named[0], set()).add(student)
    return out


# --------------------------------------------------------------------------- predictions

@dataclass
class Predictions:
    """What the class predicted for one question, before the reveal: one answer per student."""
    name: str
    right: int = 0
    wrong: Counter = field(default_factory=Counter)  # answer as written -> students who gave it
    why: dict[str, str] = field(default_factory=dict)  # wrong answer -> why it is wrong

    @property
    def answered(self) -> int:
        return self.right + sum(self.wrong.values())

    def most_common_wrong(self) -> tuple[str, int] | None:
        """The wrong answer most students gave, ties broken by the answer's text; None when nobody was wrong."""
        if not self.wrong:
            return None
        return min(self.wrong.items(), key=lambda kv: (-kv[1], kv[0]))


def tally_predictions(a: Assignment, exercises: tuple[Exercise, ...]) -> None:
    """Count one student's recorded predictions (the first test of each question that holds one)."""
    for ex in exercises:
        p = ex.prediction
        if p is None:
            continue
        tally = a.predictions.setdefault(ex.name, Predictions(ex.name))
        if p.right:
            tally.right += 1
        else:
            tally.wrong[p.answer] += 1
            tally.why.setdefault(p.answer, p.why)


def prediction_table(a: Assignment) -> str:
    """Per question, the share of the class that predicted right and the most common wrong answer."""
    if not a.predictions:
        return ""
    rows = []
    for q in a.predictions.values():
        common = q.most_common_wrong()
        wrong = (f'<td data-wrong-answer="{e(common[0])}" data-wrong-count="{common[1]}"><code>{e(common[0])}</code> '
                 f'({common[1]} of {a.graded})' + (f'<br><span class="muted">{e(q.why[common[0]])}</span>'
                                                  if q.why.get(common[0]) else "") + "</td>"
                 if common else '<td class="muted">none</td>')
        rows.append(f'<tr data-question="{e(q.name)}"><td>{e(q.name)}</td>'
                    f'<td data-right="{q.right}" data-of="{a.graded}">{q.right} of {a.graded} '
                    f'({_pct(q.right, a.graded)})</td><td class="num">{q.answered}</td>{wrong}</tr>')
    return ("<h3>What the class predicted</h3>"
            '<p class="muted">Each prediction earns its points for being answered; here is whether it was right. '
            "The share is of every graded submission (one not answered counts as not right); the most common "
            "wrong answer is what the class believed before it ran the cell.</p>"
            "<table><tr><th>question</th><th>predicted right</th><th>answered</th>"
            f"<th>most common wrong answer</th></tr>{''.join(rows)}</table>")


# --------------------------------------------------------------------------- HTML

def _pct(k: int, n: int) -> str:
    return f"{k / n:.0%}" if n else "–"


def score_bin(score: float, of: float) -> int:
    """0 for 0-9% ... 9 for 90-99%, 10 for a full score only."""
    if not of or score <= 0:
        return 0
    if score >= of:
        return BINS - 1
    return min(BINS - 2, int(score / of * 10))


def histogram(a: Assignment) -> str:
    """Scores in bins of 10 percentage points, as CSS columns, with the counts written on them."""
    counts = [0] * BINS
    for _, score, of in a.scores:
        counts[score_bin(score, of)] += 1
    tallest = max(counts) or 1
    labels = [f"{10 * i}–{10 * i + 9}%" for i in range(BINS - 1)] + ["100%"]
    cols = "".join(
        f'<div class="col" title="{e(label)}: {n}" data-bin="{i}" data-count="{n}"><span class="n">{n or ""}</span>'
        f'<div class="bar" style="height:{100 * n / tallest:.1f}%"></div></div>'
        for i, (label, n) in enumerate(zip(labels, counts)))
    axis = "".join(f"<span>{e(label.split('–')[0].rstrip('%'))}%</span>" for label in labels)
    median = statistics.median([score / of if of else 0.0 for _, score, of in a.scores] or [0.0])
    words = "; ".join(f"{label}: {n}" for label, n in zip(labels, counts) if n)
    return (f'<figure data-histogram="{e(a.name)}"><div class="hist" role="img" aria-label="Histogram of scores. '
            f'{e(words)}">{cols}</div><div class="axis" aria-hidden="true">{axis}</div>'
            f"<figcaption>Scores of {a.graded} submission(s) as a percentage of the maximum, after overrides "
            f"and late penalties (as in grades.csv); median {median:.0%}. Submissions per bin: {e(words) or 'none'}."
            "</figcaption></figure>")


def _rate(k: int, n: int, kind: str) -> str:
    if not n:
        return '<td class="muted">none</td>'
    return (f'<td data-{kind}-passed="{k}" data-{kind}-of="{n}"><span class="rate" aria-hidden="true">'
            f'<span class="{kind}" style="width:{100 * k / n:.1f}%"></span></span>{k} of {n} ({_pct(k, n)})</td>')


def _manual_cells(ex: ExerciseTally) -> str:
    """A written answer's row: how many wait for a person and how many a person scored, never a pass rate."""
    return (f'<td colspan="2" data-waiting="{ex.waiting}" data-scored="{ex.scored}">written answer, read by a '
            f"person: {ex.waiting} waiting for a person, {ex.scored} scored in formgrader</td>")


def pass_rates(a: Assignment) -> str:
    rows = "".join(
        f'<tr data-{"written-answer" if ex.manual else "exercise"}="{e(ex.name)}"><td>{e(ex.name)}</td>'
        + (_manual_cells(ex) if ex.manual else
           _rate(sum(ex.visible), len(ex.visible), "visible") + _rate(sum(ex.hidden), len(ex.hidden), "hidden"))
        + f'<td class="num">{ex.not_attempted}</td></tr>'
        for ex in a.exercises.values())
    return ("<table><caption class=\"muted\">Submissions passing every test of the exercise, "
            f'<span class="key visible"></span> visible check and <span class="key hidden"></span> hidden tests '
            "apart; a hidden test uses inputs the learner never saw.</caption>"
            "<tr><th>exercise</th><th>visible check passed</th><th>hidden tests passed</th>"
            f"<th>not attempted</th></tr>{rows}</table>")


def mistakes(a: Assignment, causes: dict | None = None) -> str:
    causes = causes or {}
    items = []
    for ex in a.exercises.values():
        errors = causes_list(a, ex.name, causes)
        if not ex.failed and not errors:
            continue
        lines = []
        for text, students in sorted(ex.mistakes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            who = ", ".join(feedback_link(s, a.name) for s in sorted(students))
            lines.append(f'<li data-mistake="{e(text)}" data-count="{len(students)}"><span class="count">'
                         f"{len(students)} of {a.graded}</span>: {e(text)}<br><span class=\"who\">{who}</span></li>")
        unnamed = ex.unnamed() - {s for who in causes.get((a.name, ex.name), {}).values() for s in who}
        if unnamed:
            who = ", ".join(feedback_link(s, a.name) for s in sorted(unnamed))
            lines.append(f'<li data-mistake="" data-count="{len(unnamed)}"><span class="count">{len(unnamed)} of '
                         f'{a.graded}</span>: <span class="muted">failed with no known mistake recognised '
                         f'(read their code)</span><br><span class="who">{who}</span></li>')
        errored = len({s for who in causes.get((a.name, ex.name), {}).values() for s in who})
        head = f"{len(ex.failed)} of {a.graded} failed" + (f", {errored} errored, timed out or did not run"
                                                           if errored else "")
        items.append(f'<h4 data-exercise="{e(ex.name)}">{e(ex.name)}: {head}</h4>'
                     + (f'<ul class="mistakes">{"".join(lines)}</ul>' if lines else "") + errors)
    if not items:
        return "<p>No exercise was failed.</p>"
    return "".join(items)


def ungraded(a: Assignment) -> str:
    if not a.ungraded:
        return ""
    rows = "".join(
        f"<tr><td>{feedback_link(s, a.name)}</td><td>"
        + ("<br>".join(f"<b>{e(p.problem)}</b>: {e(p.detail)}" for p in problems) or "no test ran")
        + "</td></tr>" for s, problems in a.ungraded)
    return (f'<h3>Could not be graded: {len(a.ungraded)}</h3><table data-ungraded="{len(a.ungraded)}">'
            f"<tr><th>student</th><th>why</th></tr>{rows}</table>")


def changed(a: Assignment) -> str:
    if not a.changed:
        return ""
    rows = []
    for r in a.changed:
        overrides = "<br>".join(f"{e(t.grade_id)}: {_num(t.auto_points)} → {_num(t.points)}"
                                for t in changed_tests(r))
        late = f"−{_num(r.late_penalty)} ({r.seconds_late / 3600:.1f} h late)" if r.late_penalty else ""
        rows.append(f'<tr data-student="{e(r.student_id)}" data-score="{_num(r.score)}"><td>{feedback_link(r.student_id, a.name)}</td>'
                    f'<td class="num">{_num(r.auto_score)}</td><td>{overrides}</td><td>{late}</td>'
                    f'<td class="num"><b>{_num(r.score)}</b> of {_num(r.max_score)}</td></tr>')
    return ("<h3>Scores changed by a person or a late penalty</h3><table><tr><th>student</th><th>automatic</th>"
            "<th>overridden tests</th><th>late penalty</th><th>score</th></tr>" + "".join(rows) + "</table>")


def causes_list(a: "Assignment", exercise: str, causes: dict[tuple[str, str], dict[str, set[str]]]) -> str:
    """Under one exercise: who errored, timed out or never ran it, grouped by cause, most common first."""
    per = causes.get((a.name, exercise), {})
    if not per:
        return ""
    lines = [f'<li data-cause="{e(cause)}" data-count="{len(who)}"><span class="count">{len(who)} of {a.graded}'
             f'</span>: {e(cause)}<br><span class="who">'
             + ", ".join(feedback_link(s, a.name) for s in sorted(who)) + "</span></li>"
             for cause, who in sorted(per.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
    return f'<ul class="causes">{"".join(lines)}</ul>'


def assignment_section(a: Assignment, rows: list[StudentRow] | None = None, causes: dict | None = None) -> str:
    parts = [f'<section id="{e(a.name)}" data-assignment="{e(a.name)}"><h2>{e(a.name)}</h2>',
             f"<p>{a.graded + len(a.ungraded) - a.scored_ungraded} submission(s)"
             + (f"; {len(a.ungraded)} could not be graded (listed below"
                + (", and counted with 0 points like grades.csv does" if a.scored_ungraded else "") + ")"
                if a.ungraded else "") + ".</p>"]
    if rows:
        parts += [f"<h3>Students: {len(rows)}</h3>", students_table(rows)]
    if a.scores:
        parts += ["<h3>Scores</h3>", histogram(a), "<h3>Pass rate per exercise</h3>", pass_rates(a),
                  "<h3>Mistakes the class made</h3>",
                  '<p class="muted">Per exercise, each known mistake a failed check recognised, with the students '
                  "who made it (a link opens the learner's feedback page). A student counts once per exercise, "
                  "under the mistake their visible check named, else their hidden tests'. Below them, the "
                  "students whose code raised an error, timed out or never reached the test, grouped by cause.</p>",
                  mistakes(a, causes), prediction_table(a)]
    parts += [changed(a), ungraded(a), "</section>"]
    return "".join(parts)


# --------------------------------------------------------------------------- item analysis

def _signed(x: float | None) -> str:
    """Two decimals with a true minus sign (read aloud as "minus"); "none" when there is no number."""
    if x is None:
        return '<span class="muted">none</span>'
    return f"{round(x, 2) or 0.0:.2f}".replace("-", "\u2212")  # never "-0.00"


def _breakable(name: str) -> str:
    """``name`` escaped, free to wrap after each underscore: a long test id must not widen the table on a phone."""
    return "_<wbr>".join(e(part) for part in name.split("_"))


def item_row(item: ItemStats) -> str:
    """One test's row: its numbers in data attributes as items.csv has them, and in words."""
    data = (f'data-item="{e(item.grade_id)}" data-item-assignment="{e(item.assignment_id)}" '
            f'data-passed="{item.passed}" data-students="{item.students}" data-verdict="{e(item.verdict)}"'
            + "".join(f' data-{name}="{value:.3f}"' for name, value in (
                ("discrimination", item.discrimination), ("upper-lower", item.upper_lower)) if value is not None))
    reading = e(item.reading)
    if item.flagged:
        reading = f'<span class="flag">{e(item.verdict.capitalize())}:</span> {reading}'
    elif item.verdict == "not enough spread":
        reading = f'<span class="muted">{reading}</span>'
    return (f"<tr {data}><td>{_breakable(item.assignment_id)}</td>"
            f'<th scope="row"><code>{_breakable(item.grade_id)}</code></th>'
            f'<td class="num">{item.passed} of {item.students} ({_pct(item.passed, item.students)})</td>'
            f'<td class="num">{_signed(item.discrimination)}</td><td class="num">{_signed(item.upper_lower)}</td>'
            f'<td class="reading">{reading}</td></tr>')


def item_section(items: tuple[ItemStats, ...]) -> str:
    """Difficulty and discrimination of every test, flagged tests named first (the rows are also items.csv)."""
    if not items:
        return ""
    flagged_ = [i for i in items if i.flagged]
    named = ", ".join(f"<code>{e(i.grade_id)}</code> ({e(i.assignment_id)}, {e(i.verdict)})" for i in flagged_)
    head = (f"<p><b>{len(flagged_)} test(s) flagged</b>: {named}.</p>" if flagged_
            else "<p>No test is flagged.</p>")
    return (f'<section id="item-analysis" data-items="{len(items)}" data-flagged="{len(flagged_)}">'
            "<h2>Item analysis: which tests tell students apart</h2>"
            '<p class="muted">Counted over the submissions that were graded and not blank, from the grader\'s '
            "verdicts (a person's override is not counted here). <b>Difficulty</b> is the share that passed the "
            "test. <b>Discrimination</b> is the correlation between passing it and the score on the assignment's "
            "other tests, from &minus;1 to 1: positive when students who do well elsewhere pass it more often. "
            "The <b>upper&ndash;lower index</b> is the share that passed among the 27% with the highest score on "
            "the other tests less the share among the 27% with the lowest. A test is flagged when its "
            f"discrimination is below {NEAR_ZERO:g}, near zero or negative; in a class of 30, chance alone moves "
            "it by about 0.2, so a flag is a reason to read the test again, not a verdict.</p>"
            + head +
            '<table class="items"><caption>Difficulty and discrimination of each test, in notebook order '
            "(also in items.csv)</caption><thead><tr><th scope=\"col\">assignment</th>"
            '<th scope="col">test</th><th scope="col">difficulty (passed)</th>'
            '<th scope="col">discrimination (r)</th><th scope="col">upper&ndash;lower 27% index</th>'
            '<th scope="col">reading</th></tr></thead><tbody>'
            + "".join(item_row(i) for i in items) + "</tbody></table></section>")


def scrolling_tables(body: str) -> str:
    """Each table in a box of its own that scrolls sideways, so a wide one never widens the page on a phone. The box
    is a region a keyboard can focus (and so scroll), named after the headings above it, which tells the regions
    apart in a screen reader's list ("04_softmax_and_probability: Students: 10")."""
    parts, at, headings, names = [], 0, {}, Counter()
    for m in re.finditer(r"<h([23])\b[^>]*>(.*?)</h\1>|<table\b|</table>", body, re.S):
        parts.append(body[at:m.start()])
        at = m.end()
        if m.group(1):  # a heading: the name of the tables below it, until the next one
            text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", m.group(2))).split())
            headings = {"2": {"2": text}, "3": {**headings, "3": text}}[m.group(1)]
            parts.append(m.group(0))
        elif m.group(0) == "</table>":
            parts.append("</table></div>")
        else:
            name = ": ".join(headings.get(level, "") for level in "23" if headings.get(level)) or "Table"
            names[name] += 1
            name += f" ({names[name]})" if names[name] > 1 else ""
            parts.append(f'<div class="scroll" tabindex="0" role="region" aria-label="{e(name)}"><table')
    return "".join(parts) + body[at:]


def page(finals: list[SubmissionResult], out: Path | None = None, items: tuple[ItemStats, ...] | None = None, *,
         autograded: Path | None = None) -> str:
    """The whole report for ``finals`` (results as the gradebook has them); ``out`` is where it is written, to
    link the autograded notebooks found in ``autograded`` (default ``out/autograded``; a course's own
    ``autograded/`` folder when grading a course); ``items`` is :func:`.items.item_analysis` of ``finals`` when
    the caller has it already."""
    assignments = summarise(finals)
    items = item_analysis(finals) if items is None else items
    rows = student_rows(finals, out, autograded)
    causes = error_causes(finals)
    toc = "".join(f'<li><a href="#{quote(a.name)}">{e(a.name)}</a>: {a.graded + len(a.ungraded) - a.scored_ungraded}'
                  + (f", {len(a.ungraded)} could not be graded" if a.ungraded else "") + "</li>"
                  for a in assignments.values())
    if items:
        toc += (f'<li><a href="#item-analysis">Item analysis</a>: {sum(i.flagged for i in items)} of '
                f"{len(items)} test(s) flagged</li>")
    # what `python -m autograder similarity` saved beside the report, when it has run on this class
    similar = load_similarity(out) if out is not None else None
    if similar is not None:
        toc += f'<li><a href="#similarity">Answers that look alike</a>: {len(similar.pairs)} pair(s)</li>'
    students = len({r.student_id for r in finals})
    body = "".join(assignment_section(a, [r for r in rows if r.assignment == a.name], causes)
                   for a in assignments.values()) or "<p>No submissions yet.</p>"
    body = scrolling_tables(body + item_section(items) + (similarity_section(similar) if similar else ""))
    return f"""<!DOCTYPE html>
<!-- Generated by `python -m autograder grade` from results/; rebuilt on every run: do not edit. -->
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Class report</title><style>{STYLE}{SIMILARITY_STYLE if similar else ""}</style></head>
<body><main>
<h1>Class report</h1>
<p>{len(finals)} submission(s) from {students} student(s). The numbers are those of <code>scores.csv</code> and
<code>grades.csv</code> in this folder; each student's name opens their feedback page.</p>
{flagged(rows)}
<nav aria-label="Assignments"><ul>{toc}</ul></nav>
{body}
</main></body></html>
"""


def write_report(out: Path, finals: list[SubmissionResult], items: tuple[ItemStats, ...] | None = None, *,
                 autograded: Path | None = None) -> None:
    """``out/report.html`` from every result as the gradebook has it (``items``: their item analysis, if made;
    ``autograded``: where the autograded notebooks are, when not in ``out/autograded``)."""
    write_atomic(out / "report.html", page(finals, out, items, autograded=autograded))
