"""Does report.html say what the CSVs say, and does it name and count the mistakes the class really made?

The fast tests build a made-up class of 100 results (tests/builders.py: failures with known mistakes,
overrides, late penalties, ungradable submissions) through ``report.write_outputs`` and read the numbers
back from the page's data attributes. The slow one grades a generated class with the real
``python -m autograder grade``: students given a known-wrong implementation from tests/checks/test_nb04.py
must be counted, named and linked under that mistake, and nobody else.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from html.parser import HTMLParser
from pathlib import Path

import pytest

from autograder.grade.output import classreport, report
from autograder.grade.submission.results import SubmissionResult
from autograder.grade.submission.manual import is_manual_id
from autograder.nbio import exercise_of
from tests import builders, class04

# one worker runs this module, so its module-scoped fixture is built once (loadgroup splits modules otherwise)
pytestmark = pytest.mark.xdist_group(class04.GROUP)  # with test_lost_points_explained.py: one class of 04


class Report(HTMLParser):
    """The numbers report.html carries in data attributes, per assignment."""

    def __init__(self, text: str):
        super().__init__()
        self.assignment = self.exercise = ""
        self.rates: dict[tuple[str, str], dict[str, int]] = {}  # (assignment, exercise) -> visible/hidden counts
        self.bins: dict[str, list[int]] = defaultdict(list)
        self.mistakes: dict[tuple[str, str], dict[str, tuple[int, set[str]]]] = defaultdict(dict)
        self.ungraded: dict[str, int] = {}
        self.changed: dict[tuple[str, str], float] = {}
        self._li: tuple[str, int, set[str]] | None = None
        self.links: list[str] = []
        self.items: dict[tuple[str, str], dict[str, str]] = {}  # (assignment, grade_id) -> the row's data
        self.written: dict[tuple[str, str], tuple[int, int]] = {}  # (assignment, answer) -> (waiting, scored)
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "data-assignment" in a:
            self.assignment = a["data-assignment"]
        if tag == "tr" and "data-exercise" in a:
            self.exercise = a["data-exercise"]
            self.rates[self.assignment, self.exercise] = {}
        if tag == "h4" and "data-exercise" in a:
            self.exercise = a["data-exercise"]
        if tag == "tr" and "data-written-answer" in a:  # a written answer's row: counts of waiting and scored
            self.exercise = a["data-written-answer"]
        if "data-waiting" in a and "data-scored" in a:
            self.written[self.assignment, self.exercise] = (int(a["data-waiting"]), int(a["data-scored"]))
        for kind in ("visible", "hidden"):
            if f"data-{kind}-passed" in a:
                self.rates[self.assignment, self.exercise][kind] = int(a[f"data-{kind}-passed"])
                self.rates[self.assignment, self.exercise][f"{kind}_of"] = int(a[f"data-{kind}-of"])
        if "data-bin" in a:
            self.bins[self.assignment].append(int(a["data-count"]))
        if tag == "li" and "data-mistake" in a:
            self._li = (a["data-mistake"], int(a["data-count"]), set())
        if tag == "a" and a.get("href", "").startswith("feedback/"):
            self.links.append(a["href"])
            if self._li:
                self._li[2].add(a["href"].split("/")[1])
        if "data-ungraded" in a:
            self.ungraded[self.assignment] = int(a["data-ungraded"])
        if tag == "tr" and "data-score" in a:
            self.changed[a["data-student"], self.assignment] = float(a["data-score"])
        if tag == "tr" and "data-item" in a:
            self.items[a["data-item-assignment"], a["data-item"]] = a

    def handle_endtag(self, tag):
        if tag == "li" and self._li:
            text, count, students = self._li
            self.mistakes[self.assignment, self.exercise][text] = (count, students)
            self._li = None


def csv_pass_counts(scores: list[dict]) -> dict[tuple[str, str], dict[str, int]]:
    """From scores.csv: per exercise, submissions passing all visible / all hidden tests, and how many had them."""
    per: dict[tuple[str, str, str], dict[str, bool]] = defaultdict(dict)  # (a, ex, student) -> kind -> all passed
    for r in scores:
        if is_manual_id(r["grade_id"]):  # a written answer a person scores: no pass rate (its own counts)
            continue
        kind = "hidden" if r["grade_id"].endswith("_hidden") else "visible"
        key = (r["assignment_id"], exercise_of(r["grade_id"]), r["student_id"])
        per[key][kind] = per[key].get(kind, True) and r["status"] == "passed"
    out: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for (a, ex, _), kinds in per.items():
        for kind, ok in kinds.items():
            out[a, ex][kind] += ok
            out[a, ex][f"{kind}_of"] += 1
    return {k: dict(v) for k, v in out.items()}


def csv_item_counts(scores: list[dict]) -> dict[tuple[str, str], tuple[int, int]]:
    """From scores.csv: per test, (submissions that passed it, submissions counted), leaving out blank submissions
    (every test not attempted) and those that could not be graded (every test missing)."""
    per: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in scores:
        per[r["student_id"], r["assignment_id"]].append(r)
    out: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for (_, a), rows in per.items():
        if {r["status"] for r in rows} in ({"not attempted"}, {"missing"}):
            continue
        for r in rows:
            if is_manual_id(r["grade_id"]):  # not an item: the grader gives it no verdict
                continue
            out[a, r["grade_id"]][0] += r["status"] == "passed"
            out[a, r["grade_id"]][1] += 1
    return {k: tuple(v) for k, v in out.items()}


def assert_report_matches_csvs(out: Path) -> Report:
    page = Report((out / "report.html").read_text(encoding="utf-8"))
    scores, grades, problems, items = (builders.read_rows(out / f"{name}.csv")
                                       for name in ("scores", "grades", "problems", "items"))
    assert page.rates == csv_pass_counts(scores), "pass rates per exercise differ from scores.csv"
    written: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # a person's: waiting, scored
    for r in scores:
        if r["status"] == "manual":
            written[r["assignment_id"], r["grade_id"]][r["overridden"] == "yes"] += 1
    assert {k: v for k, v in page.written.items() if any(v)} == {k: tuple(v) for k, v in written.items()}, \
        "written answers waiting for a person differ from scores.csv"
    counts = {(i["assignment_id"], i["grade_id"]): (int(i["passed"]), int(i["students"])) for i in items}
    assert counts == csv_item_counts(scores), "items.csv's difficulty differs from scores.csv"
    assert {k: (int(v["data-passed"]), int(v["data-students"])) for k, v in page.items.items()} == counts, (
        "the report's item analysis differs from items.csv")
    for a in {g["assignment_id"] for g in grades}:
        mine = [g for g in grades if g["assignment_id"] == a]
        # ten bins of 10 points, and full marks alone in an eleventh (100% is not "90-99%")
        want = Counter(10 if float(g["score"]) >= float(g["max_score"]) else
                       min(9, int(float(g["score"]) / float(g["max_score"]) * 10)) for g in mine)
        assert page.bins[a] == [want.get(i, 0) for i in range(11)], f"{a}: histogram differs from grades.csv"
    # problems.csv does not say which problems were fatal: the ungradable are at least those with no row in
    # grades.csv and at most those with a problem.
    graded = {(g["student_id"], g["assignment_id"]) for g in grades}
    with_problem = {(p["student_id"], p["assignment_id"]) for p in problems}
    at_least, at_most = Counter(a for _, a in with_problem - graded), Counter(a for _, a in with_problem)
    for a in set(at_most) | set(page.ungraded):
        assert at_least[a] <= page.ungraded.get(a, 0) <= at_most[a], f"{a}: ungradable count disagrees with the CSVs"
    changed = {(g["student_id"], g["assignment_id"]): float(g["score"]) for g in grades
               if float(g["late_penalty"] or 0) or float(g["score"]) != float(g["auto_score"])}
    assert page.changed == changed, "the scores shown as changed differ from grades.csv"
    for href in page.links:
        assert (out / href).is_file(), f"report.html links to {href}, which does not exist"
    return page


# --------------------------------------------------------------------------- fast: a made-up class

@pytest.fixture(scope="module")
def made_up(tmp_path_factory) -> tuple[Path, list[SubmissionResult]]:
    results, recorded = builders.made_up_class(100, seed=7)
    out = tmp_path_factory.mktemp("made-up")
    return out, report.write_outputs(out, results, recorded)


def test_report_numbers_equal_the_csvs(made_up):
    """Do pass rates, histograms, ungradable submissions and changed scores in report.html equal the CSVs?"""
    out, _ = made_up
    page = assert_report_matches_csvs(out)
    assert page.changed and page.ungraded, "the made-up class should have overrides, penalties and ungradables"


def test_every_failing_student_is_counted_once_per_exercise(made_up):
    """Does each exercise's list of mistakes account for exactly the students who failed it, each once?"""
    out, finals = made_up
    page = Report((out / "report.html").read_text(encoding="utf-8"))
    for r in finals:
        for ex in {t.exercise for t in r.tests if t.status == "failed"}:
            entries = [text for text, (_, who) in page.mistakes[r.assignment_id, ex].items()
                       if r.student_id in who]
            assert len(entries) == 1, f"{r.student_id} is listed {len(entries)} times under {ex}: {entries}"
    for (a, ex), entries in page.mistakes.items():
        for text, (count, who) in entries.items():
            assert count == len(who), f"{a} {ex} {text!r}: says {count}, links {len(who)} students"


def test_report_escapes_and_loads_nothing_from_elsewhere():
    """Is a student id or a mistake with markup shown as text, and does the page fetch nothing from a host?"""
    result = {"student_id": "<b>eve</b>", "assignment_id": "04_softmax_and_probability", "problems": [],
              "scores": [{"grade_id": "softmax", "points": 0, "max_points": 1, "status": "failed",
                          "message": "m", "mistake": "<script>alert(1)</script>"}]}
    text = classreport.page([SubmissionResult.from_json(result)])
    assert "<script>alert" not in text and "&lt;script&gt;" in text and "&lt;b&gt;eve" in text
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", text), "the report links a remote resource"
    assert "<script" not in text and "@import" not in text


def test_report_lists_ungradable_submissions_with_why():
    result = {"student_id": "mallory", "assignment_id": "01_tokens_and_ids", "scores": [],
              "problems": [{"problem": "not valid JSON", "detail": "line 1 column 1", "fatal": True}]}
    text = classreport.page([SubmissionResult.from_json(result)])
    assert "Could not be graded: 1" in text and "not valid JSON" in text and "line 1 column 1" in text
    assert 'href="feedback/mallory/01_tokens_and_ids.html"' in text


# --------------------------------------------------------------------------- fast: a broken class of 04, as records

NB04 = builders.NB04


class Rows(HTMLParser):
    """The students table and "Look at these first": each student's status, the text under their row, the flags."""

    def __init__(self, text: str):
        super().__init__()
        self.status: dict[str, str] = {}
        self.under: dict[str, str] = {}  # student -> the text of the block under their row
        self.flags: dict[str, str] = {}  # student -> data-flag
        self.flag_text: dict[str, str] = {}  # student -> the text of their item under "Look at these first"
        self.autograded: dict[str, str] = {}  # student -> href of their "notebook" link
        self._in: tuple[dict, str, int] | None = None  # (where the text goes, student, depth)
        self._row = self._flag = ""
        self._depth = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in ("br", "wbr", "meta"):
            self._depth += 1
        if "data-row" in a:
            self._row = a["data-row"]
            self.status[self._row] = a["data-status"]
        if tag == "a" and a.get("href", "").endswith(".ipynb") and self._row:
            self.autograded[self._row] = a["href"]
        if "data-problems" in a:
            self._in = (self.under, a["data-problems"], self._depth)
            self.under[a["data-problems"]] = ""
        if "data-flag" in a:
            self._in = (self.flag_text, "", self._depth)
            self._flag = a["data-flag"]

    def handle_endtag(self, tag):
        if self._in and self._depth == self._in[2]:
            self._in = None
        if tag == "tr" and not self._in:
            self._row = ""
        self._depth -= 1

    def handle_data(self, data):
        if not self._in:
            return
        where, student, depth = self._in
        if where is self.flag_text and not student:  # the first text of a flag item is its student's name
            self._in = (where, data.strip(), depth)
            self.flags[data.strip()] = self._flag
            where[data.strip()] = ""
            return
        where[student] += data


def test_a_syntax_error_an_error_and_a_time_out_are_in_the_row_and_at_the_top():
    """Is each cause in the student's row and under "Look at these first", said once with its exercises?"""
    seen = Rows(classreport.page(builders.broken_04_records()))
    assert seen.flags == {"blank": "blank", "syntax_error": "errored or timed out",
                          "endless_loop": "errored or timed out"}, seen.flags
    for where in (seen.under, seen.flag_text):
        syntax = " ".join(where["syntax_error"].split())
        assert syntax.count("SyntaxError") == 1 and "line 1 of the expectation cell" in syntax, syntax
        assert "expectation, variance" in syntax, "the exercise the NameError stopped is named with its cause"
        loop = " ".join(where["endless_loop"].split())
        assert loop.count("timed out (") == 1, f"one time-out, not one per test: {loop}"
        assert "line 3 of the greedy_token cell was running: while True:" in loop, loop
        assert "greedy_token, sample_token" in loop and "did not run (time budget spent" in loop, loop
    assert "interrupted after 6 s" not in seen.under["endless_loop"], "the per-test time-out problems are folded in"
    assert "passes_all" not in seen.under and "no_max_subtraction" not in seen.under, "nothing went wrong there"


def test_troubles_group_by_cause_and_name_the_exception():
    """Is an error grouped under its exception's name with its message, after a cause sentence too?"""
    r = SubmissionResult.from_json({"student_id": "s", "assignment_id": NB04, "problems": [], "code": {}, "scores": [
        {"grade_id": "test_softmax", "points": 0, "max_points": 1, "status": "error",
         "message": "Your exp fails its own check: fix it first. TypeError: unsupported operand"},
        {"grade_id": "test_softmax_hidden", "points": 0, "max_points": 1, "status": "error", "message": "TypeError: x"},
        {"grade_id": "test_entropy", "points": 0, "max_points": 1, "status": "error",
         "message": "TypeError: unsupported operand"},
        {"grade_id": "test_greedy_token", "points": 0, "max_points": 1, "status": "timeout",
         "message": "interrupted after 6 s"},
        {"grade_id": "test_bayes_posterior", "points": 0, "max_points": 1, "status": "failed", "message": "wrong"}]})
    assert [t.describe() for t in classreport.troubles(r)] == [
        "TypeError (unsupported operand): softmax, entropy",
        "timed out (interrupted after 6 s): greedy_token"], "a wrong answer is no trouble; each exercise once"


def test_autograded_notebooks_are_linked_in_both_workflows(tmp_path):
    """Does the report link the autograded notebook in --out/autograded/ and in a course's own autograded/?"""
    finals = builders.broken_04_records()
    for s in ("passes_all", "blank"):  # nbgrader's course layout: autograded/ beside submitted-graded/
        path = tmp_path / "course" / "autograded" / s / NB04 / f"{NB04}.ipynb"
        path.parent.mkdir(parents=True)
        path.write_text("{}")
    out = tmp_path / "course" / "submitted-graded"
    out.mkdir()
    course = Rows(classreport.page(finals, out, autograded=tmp_path / "course" / "autograded"))
    assert course.autograded == {s: f"../autograded/{s}/{NB04}/{NB04}.ipynb" for s in ("passes_all", "blank")}
    assert all((out / href).resolve().is_file() for href in course.autograded.values())
    assert Rows(classreport.page(finals, out)).autograded == {}, "none in out/autograded: none linked"

    alone = tmp_path / "graded"  # a run without a course keeps them in --out
    path = alone / "autograded" / "syntax_error" / NB04 / f"{NB04}.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text("{}")
    linked = Rows(classreport.page(finals, alone)).autograded
    assert linked == {"syntax_error": f"autograded/syntax_error/{NB04}/{NB04}.ipynb"}


def test_a_row_s_problems_are_a_block_under_it_and_the_table_stacks_on_a_phone():
    """Are a row's problems a full-width block under it (not a last column pushed off a phone's screen), and do the
    table's cells stack under the phone breakpoint, each with its label?"""
    text = classreport.page(builders.broken_04_records())
    row = re.search(r'<tr data-row="endless_loop".*?</tr>\s*(<tr class="row-problems">.*?</tr>)', text, re.S)
    assert row and f'colspan="{len(classreport.STUDENT_COLUMNS)}"' in row.group(1), "the problems are not under the row"
    header = re.search(r'<table class="students"><thead>(.*?)</thead>', text, re.S).group(1)
    assert "problems" not in header, "a problems column comes back, off-screen on a phone"
    phone = re.search(r"@media \(max-width:40rem\)\{(.*)\}", classreport.STYLE, re.S).group(1)
    assert ".students,.students tbody,.students tr,.students td{display:block}" in phone
    assert "content:attr(data-label)" in phone and 'data-label="score"' in text


# --------------------------------------------------------------------------- slow: a really graded class

A, GIVEN = class04.A, class04.GIVEN  # the class is shared with tests/grade/test_lost_points_explained.py


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return class04.graded(tmp_path_factory.mktemp("class04"))


@pytest.mark.slow
@pytest.mark.grading
def test_mistake_counts_equal_the_students_given_each_mistake(graded):
    """Graded for real: is each known-wrong implementation named, counted and linked for exactly its students?
    (The class's right ones and damaged ones, tests/class04.py, are given no known mistake.)"""
    given = {key: builders.known_mistake(A, *key) for key in GIVEN}
    page = assert_report_matches_csvs(graded.out)
    assert page.ungraded == {A: 1}
    for key, students in GIVEN.items():
        m = given[key]
        entries = page.mistakes[A, m.exercise]
        named = {text: (count, who) for text, (count, who) in entries.items() if m.expect.lower() in text.lower()}
        assert len(named) == 1, f"{m.label}: expected one entry naming {m.expect!r} under {m.exercise}: {entries}"
        count, who = next(iter(named.values()))
        assert (count, who) == (len(students), set(students)), (
            f"{m.label}: the report counts {count} ({sorted(who)}), {len(students)} were given it ({students})")
    others = {who for (a, ex), entries in page.mistakes.items() for _, (_, ws) in entries.items() for who in ws}
    assert others == {s for students in GIVEN.values() for s in students}, "a student without a mistake is listed"
    text = (graded.out / "report.html").read_text(encoding="utf-8")
    n = len(class04.EVERYONE)  # the unreadable one too, as the report counts the class
    assert f">{len(GIVEN['softmax', 'global_max'])} of {n}</span>" in text, "the count is not written as 'k of n graded'"
