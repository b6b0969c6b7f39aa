"""Does what an instructor and a learner read after a class breaks name every student and every cause?

The class of issue 25 (tests/broken_class.py) is graded once by the real grade command; each test reads
one promise of docs/report-and-site.md off report.html or a feedback page. The feedback rules that need
a result no real run gives (a failure only the hidden tests found) are checked on records built here.
"""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from autograder.grade.output import classreport, feedback
from autograder.grade.submission.results import SubmissionResult
from tests import broken_class, builders
from tests.broken_class import A, LOOP_EXERCISE, STUDENTS, SYNTAX_EXERCISE

pytestmark = [pytest.mark.grading, pytest.mark.slow, pytest.mark.xdist_group(broken_class.GROUP)]


class Text(HTMLParser):
    """A page's visible text (no tags, no style), with the data attributes of its rows and list items."""

    def __init__(self, page: str):
        super().__init__()
        self.parts: list[str] = []
        self.rows: dict[str, str] = {}  # student -> status, from the students table
        self.flags: list[str] = []  # data-flag of each "look at these first" item
        self.causes: dict[str, dict[str, int]] = {}  # exercise -> cause -> count
        self._skip = False
        self._exercise = ""
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self._skip = tag in ("style", "script")
        if "data-row" in a:
            self.rows[a["data-row"]] = a["data-status"]
        if "data-flag" in a:
            self.flags.append(a["data-flag"])
        if tag == "h4" and "data-exercise" in a:
            self._exercise = a["data-exercise"]
        if "data-cause" in a:
            self.causes.setdefault(self._exercise, {})[a["data-cause"]] = int(a["data-count"])

    def handle_endtag(self, tag):
        self._skip = False

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.parts).split())


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return broken_class.graded(tmp_path_factory.mktemp("broken_class"))


def feedback_text(graded, student: str) -> tuple[str, str]:
    page = (graded.out / "feedback" / student / f"{A}.html").read_text(encoding="utf-8")
    return page, Text(page).text


def test_the_class_graded_as_its_students_were_written(graded):
    """The class is what the other tests assume: right ones full, the blank one at zero, the broken one timed out."""
    full = builders.full_marks(A)  # every test's points; the written why waits for a person (0 until then)
    assert graded.grade("right_1", A)[1] == full + builders.written_points(A)
    assert [graded.total(s, A) for s in ("right_1", "right_2", "right_3")] == [full] * 3
    assert graded.total("blank", A) == 0
    assert all(0 < graded.total(s, A) < full for s in STUDENTS if s.startswith(("global_max", "log_softmax")))
    statuses = {gid: status for gid, (_, status) in graded.scores("syntax_and_loop", A).items()}
    assert statuses[f"test_{LOOP_EXERCISE}"] == "timeout" and statuses[f"test_{SYNTAX_EXERCISE}"] == "error"


def test_report_names_every_student_with_status_and_links(graded):
    page = (graded.out / "report.html").read_text(encoding="utf-8")
    seen = Text(page)
    assert set(seen.rows) == set(STUDENTS), "the students table must name every student"
    assert seen.rows["blank"] == "blank" and seen.rows["right_1"] == "graded"
    for student in STUDENTS:
        assert f'href="feedback/{student}/{A}.html"' in page
        assert f'href="autograded/{student}/{A}/{A}.ipynb"' in page, f"{student}: no link to the autograded notebook"
        assert (graded.out / "autograded" / student / A / f"{A}.ipynb").is_file()
    assert seen.flags == ["blank", "errored or timed out"], "the blank one and the broken one are flagged at the top"
    assert page.index('data-flag="blank"') < page.index('data-assignment='), "the flags come first"


def test_the_syntax_error_and_the_time_out_are_in_the_row_and_at_the_top_once_each(graded):
    """The broken student's row and their item under "Look at these first" say the SyntaxError and the time-out
    with their cause, each once, however many tests they cost."""
    page = (graded.out / "report.html").read_text(encoding="utf-8")
    flag = re.search(r'<li data-flag="errored or timed out">.*?</ul></li>', page, re.S).group(0)
    under = re.search(r'data-problems="syntax_and_loop">.*?</td>', page, re.S).group(0)
    for where in (flag, under):
        text = Text(where).text
        assert text.count("SyntaxError") == 1 and f"line 1 of the {SYNTAX_EXERCISE} cell" in text, text
        assert text.count("timed out (") == 1 and f"of the {LOOP_EXERCISE} cell was running" in text, text


def test_report_groups_errors_and_time_outs_by_cause_under_each_exercise(graded):
    causes = Text((graded.out / "report.html").read_text(encoding="utf-8")).causes
    assert causes[SYNTAX_EXERCISE] == {"SyntaxError (line 1)": 1}, causes
    assert causes[LOOP_EXERCISE] == {"timed out": 1}, causes
    # variance calls expectation: its failure is the same SyntaxError, not a mistake nobody recognised
    assert causes["variance"] == {f"SyntaxError (in the {SYNTAX_EXERCISE} cell, so NameError)": 1}, causes


def test_the_full_score_bin_is_apart_from_90_to_99(graded):
    page = (graded.out / "report.html").read_text(encoding="utf-8")
    bins = [int(n) for n in re.findall(r'data-bin="\d+" data-count="(\d+)"', page)]
    full = graded.grade("right_1", A)[1]
    want = [0] * classreport.BINS
    for student in STUDENTS:
        want[classreport.score_bin(graded.total(student, A), full)] += 1
    # every test right is full marks only once a person has given the written why its point; until then 90-99%
    right = classreport.score_bin(builders.full_marks(A), full)
    # the three right ones are in it; a known mistake may cost under a tenth of 04's points and share it with them
    rights = [classreport.score_bin(graded.total(s, A), full) for s, kind in STUDENTS.items() if kind == "right"]
    assert bins == want and rights == [right] * 3 and bins[right] >= 3 and right == (classreport.BINS - 1 if not builders.written_points(A)
                                                          else classreport.BINS - 2), bins
    assert ">100%<" in page and "90–99%" in page


def test_feedback_names_the_syntax_error_not_the_name_error_it_caused(graded):
    page, text = feedback_text(graded, "syntax_and_loop")
    assert f"SyntaxError on line 1 of your {SYNTAX_EXERCISE} cell" in text, text[:3000]
    assert "NameError: name 'expectation' is not defined" not in text
    assert "timed out" in text
    # the engine's interrupt, read back from its traceback: the learner's line that was running
    stopped = re.search(r'<p class="stopped".*?</pre>', page, re.S).group(0)
    assert f"of your <code>{LOOP_EXERCISE}</code> cell" in stopped, stopped
    assert re.search(r"[34] \| (while True:|time\.sleep\(0\.05\))</code>", stopped), stopped


def test_feedback_opens_with_the_points_lost_and_folds_what_passed(graded):
    page, text = feedback_text(graded, "global_max_1")
    summary = page.index('class="summary"')
    first_section = page.index("<section")
    assert summary < first_section and "points lost" in text
    folded = page.index('class="passed-list"')
    assert all(page.index(f'id="ex-{ex}"') < folded for ex in ("softmax",)), "an unfinished exercise is folded"
    assert "<details open>" not in page[folded:page.index("</details>", folded)]


def test_an_untouched_notebook_gets_one_message(graded):
    _, text = feedback_text(graded, "blank")
    assert text.count("Nothing was filled in: did you submit the right file?") == 1
    assert "What to try next" not in text, "one message, not one per stub"


def test_no_feedback_page_shows_an_internal_test_id_and_every_one_has_a_viewport(graded):
    for student in STUDENTS:
        page, text = feedback_text(graded, student)
        assert not re.search(r"\btest_\w+", text), (student, re.findall(r"\btest_\w+", text)[:3])
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page, student


# --------------------------------------------------------------------------- records a real run rarely gives

def result(*tests: tuple[str, str], code: dict | None = None) -> SubmissionResult:
    scores = [{"grade_id": gid, "points": 1.0 if status == "passed" else 0.0, "max_points": 1.0, "status": status,
               "message": message} for gid, status, message in ((g, s, f"{s} message") for g, s in tests)]
    return SubmissionResult.from_json({"student_id": "s", "assignment_id": A, "scores": scores, "problems": [],
                                  "code": code or {}})


def test_a_failure_only_hidden_tests_found_never_says_run_the_check_again():
    hidden_only = feedback.page(result(("test_softmax", "passed"), ("test_softmax_hidden", "failed")))
    assert "run its check cell again" not in hidden_only and "inputs of your own" in hidden_only
    visible = feedback.page(result(("test_softmax", "failed"), ("test_softmax_hidden", "failed")))
    assert "run its check cell again" in visible, "the guard: a visible failure does say it"


def test_compile_errors_are_found_with_their_line_and_magics_are_not_syntax_errors():
    broken = feedback.compile_error("softmax", "import numpy as np\n\ndef softmax(z:\n    return z\n")
    assert broken is not None and broken.kind == "SyntaxError" and broken.line == 3, broken
    assert feedback.compile_error("softmax", "%time x = 1\n!ls\ndef softmax(z):\n    return z\n") is None
    indent = feedback.compile_error("softmax", "def softmax(z):\nreturn z\n")
    assert indent is not None and indent.kind == "IndentationError" and indent.line == 2


def test_student_rows_are_typed_and_flag_blank_zero_and_ungradable():
    rows = classreport.student_rows([
        result(("test_softmax", "not attempted")),
        result(("test_softmax", "failed")),
        result(("test_softmax", "passed")),
        SubmissionResult.from_json({"student_id": "t", "assignment_id": A, "scores": [], "code": {},
                               "problems": [{"problem": "not valid JSON", "detail": "x", "fatal": True}]}),
    ])
    assert [r.status for r in rows] == ["blank", "zero points", "graded", "could not be graded"]
    assert [r.flagged for r in rows] == [True, True, False, True]
    with pytest.raises(AttributeError):
        rows[0].status = "graded"  # a frozen record
