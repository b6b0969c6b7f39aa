"""Does item analysis find the test that misleads, leave the good ones alone, and say so honestly when it cannot judge?

No notebook runs: a synthetic class of result records, as ``grade`` saves them, where each student has a skill
and passes a test when their skill clears its bar, and one hidden test is built to mislead: the weakest students
pass it and the strongest fail it.
"""
from __future__ import annotations

import csv
import math
import random
import re
import statistics
from html.parser import HTMLParser

import pytest

from autograder.grade.output import classreport, items, report
from autograder.grade.output.items import ItemStats, item_analysis
from autograder.grade.submission.results import SubmissionResult

A = "04_softmax_and_probability"
BARS = {"test_softmax": 0.2, "test_softmax_hidden": 0.35, "test_cross_entropy": 0.5,
        "test_cross_entropy_hidden": 0.65, "test_kl_divergence": 0.8}  # grade_id -> the skill that passes it
MISLEADING = "test_kl_divergence_hidden"  # passed by the students below this skill, failed by those above
MISLEADING_BELOW = 0.5


def result(student: str, statuses: dict[str, str], assignment: str = A, problems: list | None = None,
           points: dict[str, float] | None = None) -> SubmissionResult:
    """A saved result: each test's status, its full points (1 unless ``points`` says) when passed, else 0."""
    points = points or {}
    return SubmissionResult.from_json({
        "student_id": student, "assignment_id": assignment, "problems": problems or [], "code": {},
        "scores": [{"grade_id": gid, "points": points.get(gid, 1.0) if status == "passed" else 0.0,
                    "max_points": points.get(gid, 1.0), "status": status, "message": "", "mistake": ""}
                   for gid, status in statuses.items()]})


def synthetic_class(n: int = 40, seed: int = 3) -> list[SubmissionResult]:
    """``n`` students of evenly spread skill; each passes a test when skill + noise clears its bar, except the
    misleading test, passed when skill is below MISLEADING_BELOW (with the same noise)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        skill = (i + 0.5) / n
        statuses = {gid: "passed" if skill + rng.gauss(0, 0.08) > bar else "failed" for gid, bar in BARS.items()}
        statuses[MISLEADING] = "passed" if skill + rng.gauss(0, 0.08) < MISLEADING_BELOW else "failed"
        out.append(result(f"student{i:02d}", statuses))
    return out


def by_test(found: tuple[ItemStats, ...]) -> dict[tuple[str, str], ItemStats]:
    return {(i.assignment_id, i.grade_id): i for i in found}


@pytest.fixture(scope="module")
def analysed() -> dict[tuple[str, str], ItemStats]:
    return by_test(item_analysis(synthetic_class()))


def test_the_misleading_hidden_test_is_flagged_negative(analysed):
    """Is the test the weakest students pass flagged negative, with the reading that says what to check?"""
    item = analysed[A, MISLEADING]
    assert item.flagged and item.verdict == "negative", item
    assert item.reading == items.NEGATIVE_READING
    assert item.discrimination < -0.3 and item.upper_lower < -0.5, item


def test_the_good_tests_are_not_flagged(analysed):
    """Is every test that the stronger students pass more often left unflagged, with a positive index?"""
    for gid in BARS:
        item = analysed[A, gid]
        assert not item.flagged and item.verdict == "discriminates", item
        assert item.discrimination > 0.3 and item.upper_lower > 0.3, item


def test_difficulty_is_the_share_that_passed(analysed):
    classmates = synthetic_class()
    for gid in [*BARS, MISLEADING]:
        passed = sum(t.status == "passed" for r in classmates for t in r.tests if t.grade_id == gid)
        assert (analysed[A, gid].passed, analysed[A, gid].students) == (passed, 40)
        assert analysed[A, gid].difficulty == passed / 40


def test_discrimination_leaves_the_test_out_of_the_total(analysed):
    """Is r the correlation with the score on the *other* tests, as statistics.correlation computes it?"""
    classmates = synthetic_class()
    for gid in [*BARS, MISLEADING]:
        passed = [float(next(t for t in r.tests if t.grade_id == gid).status == "passed") for r in classmates]
        rest = [sum(t.points for t in r.tests if t.grade_id != gid) for r in classmates]
        assert analysed[A, gid].discrimination == pytest.approx(statistics.correlation(passed, rest), abs=1e-12)


def unrelated_class() -> list[SubmissionResult]:
    """Six students; ``test_x`` is passed by one student at each score 1, 2 and 3 on the other tests and failed by
    another at each: it says nothing about the rest. Counted in the total, it would correlate with it (r = 0.5)."""
    out = []
    for i, (rest, passes) in enumerate([(1, True), (2, True), (3, True), (1, False), (2, False), (3, False)]):
        statuses = {gid: "passed" if k < rest else "failed" for k, gid in enumerate(("test_a", "test_b", "test_c"))}
        out.append(result(f"s{i}", {**statuses, "test_x": "passed" if passes else "failed"}))
    return out


def test_a_test_unrelated_to_the_rest_reads_near_zero():
    """Is a test passed alike at every score elsewhere read as near zero (r = 0 and index 0, by hand)?"""
    item = by_test(item_analysis(unrelated_class()))[A, "test_x"]
    assert item.verdict == "near zero" and item.flagged and item.reading == items.NEAR_ZERO_READING
    # by hand: the passers' mean on the other tests (2) equals the failers' (2), so r = 0; the 27% groups
    # (2 of 6) are the two students at 3 and the two at 1, one of each passing: 1/2 - 1/2 = 0
    assert item.discrimination == pytest.approx(0.0, abs=1e-12) and item.upper_lower == pytest.approx(0.0)


def class_with_correlation(r: float) -> list[SubmissionResult]:
    """Eight students whose ``test_x`` correlates with their score on the other test by exactly ``r``."""
    # passing (1, 1, 0, 0) against a rest of (r, r, -r, -r) + (s, -s, s, -s): the second part is uncorrelated
    # with passing and makes the rest's spread such that the correlation is r; shifted by 2 to be points
    s = math.sqrt(1 - r * r)
    rests = [(True, r + s), (True, r - s), (False, -r + s), (False, -r - s)] * 2
    return [result(f"s{i}", {"test_x": "passed" if p else "failed", "test_rest": "passed"},
                   points={"test_rest": 2 + rest}) for i, (p, rest) in enumerate(rests)]


@pytest.mark.parametrize("r, verdict", [(0.0999, "near zero"), (-0.0999, "near zero"), (-0.1001, "negative"),
                                        (0.1001, "discriminates"), (-0.9, "negative"), (0.9, "discriminates")])
def test_the_threshold_for_near_zero_is_one_tenth(r, verdict):
    """Is |r| below 0.1 near zero, r at or below -0.1 negative, and r from 0.1 up not flagged?"""
    assert items.NEAR_ZERO == 0.1
    item = by_test(item_analysis(class_with_correlation(r)))[A, "test_x"]
    assert item.discrimination == pytest.approx(r, abs=1e-6)
    assert item.verdict == verdict and item.flagged == (verdict != "discriminates")


def test_the_upper_lower_groups_do_not_depend_on_names():
    """With ties at the 27% cut, do tied students count in equal part, whatever their names' order?"""
    rests = [0, 1, 1, 1, 1, 2, 2, 3, 3, 3]  # ten students: groups of 3; four tie at 1 for the bottom group's 2 seats
    passes = [False, True, True, False, False, True, False, True, True, False]

    def named(order):
        return [result(f"s{order(i)}", {"test_x": "passed" if p else "failed",
                                        **{g: "passed" if k < rest else "failed"
                                           for k, g in enumerate(("test_a", "test_b", "test_c"))}})
                for i, (rest, p) in enumerate(zip(rests, passes))]

    forward = by_test(item_analysis(named(lambda i: f"{i:02d}")))[A, "test_x"]
    backward = by_test(item_analysis(named(lambda i: f"{99 - i:02d}")))[A, "test_x"]
    assert forward.upper_lower == pytest.approx(backward.upper_lower, abs=1e-12)
    assert forward.discrimination == pytest.approx(backward.discrimination, abs=1e-12)  # summed in another order
    # bottom 3: the student at 0 (failed) and 2/4 of each tied at 1 (2 of 4 passed): (0 + 2 * 2/4) / 3 = 1/3;
    # top 3: the three at 3 (2 passed): 2/3
    assert forward.upper_lower == pytest.approx(2 / 3 - 1 / 3)


@pytest.mark.parametrize("case, statuses, want", [
    ("everyone passed", ["passed"] * 8, "every student passed it"),
    ("nobody passed", ["failed"] * 8, "no student passed it"),
    ("too few students", ["passed", "failed", "passed", "failed"], "4 student(s) took it, 5 are needed"),
])
def test_a_test_without_spread_is_not_judged(case, statuses, want):
    """Everyone passed, nobody passed, or too few students: no number, no NaN, and a reading that says why."""
    finals = [result(f"s{i}", {"test_x": s, "test_a": "passed" if i % 2 else "failed",
                               "test_b": "passed" if i % 3 else "failed"}) for i, s in enumerate(statuses)]
    item = by_test(item_analysis(finals))[A, "test_x"]
    assert item.verdict == "not enough spread" and not item.flagged, case
    assert item.discrimination is None and item.upper_lower is None
    assert item.reading == f"not enough spread to judge: {want}"
    row = report.item_rows([item])[0]
    assert row[5:7] == ("", "") and not any("nan" in cell.lower() for cell in row)


def test_an_assignment_of_one_test_is_not_judged():
    """One test: the score on the other tests is 0 for everyone, so there is nothing to correlate with."""
    finals = [result(f"s{i}", {"test_x": "passed" if i % 2 else "failed"}) for i in range(10)]
    item = by_test(item_analysis(finals))[A, "test_x"]
    assert item.verdict == "not enough spread" and item.discrimination is None
    assert item.reading.endswith("every student scored the same on the other tests")


def test_blank_and_ungradable_submissions_are_left_out(analysed):
    """A blank notebook or one that could not be graded fails every test alike: does it stay out of the counts?"""
    blank = result("blank", {gid: "not attempted" for gid in [*BARS, MISLEADING]})
    broken = result("broken", {gid: "missing" for gid in [*BARS, MISLEADING]},
                    problems=[{"problem": "not valid JSON", "detail": "line 1", "fatal": True}])
    nothing = result("nothing", {}, problems=[{"problem": "missing notebook", "detail": "", "fatal": True}])
    found = by_test(item_analysis([*synthetic_class(), blank, broken, nothing]))
    assert found == analysed


def test_an_extreme_test_says_why_it_cannot_tell_students_apart():
    """A test nearly all pass and whose r is near zero: does the reading say that is what limits it?"""
    rests = list(range(20))
    finals = [result(f"s{i:02d}", {"test_x": "failed" if i == 10 else "passed",
                                   **{f"test_{k}": "passed" if k < rest else "failed" for k in range(19)}})
              for i, rest in enumerate(rests)]
    item = by_test(item_analysis(finals))[A, "test_x"]
    assert item.verdict == "near zero" and "nearly all pass it" in item.reading, item


class ItemTable(HTMLParser):
    """The item analysis table of report.html: its caption, column headers and each row's data attributes."""

    def __init__(self, text: str):
        super().__init__()
        self.rows: dict[tuple[str, str], dict[str, str]] = {}
        self.columns: list[str] = []
        self.caption = ""
        self._in = ""
        self._in_items = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("class") == "items":
            self._in_items = True
        if not self._in_items:
            return
        if tag == "tr" and "data-item" in a:
            self.rows[a["data-item-assignment"], a["data-item"]] = a
        if tag == "th" and a.get("scope") == "col":
            self._in = "col"
            self.columns.append("")
        if tag == "caption":
            self._in = "caption"

    def handle_endtag(self, tag):
        if tag in ("th", "caption"):
            self._in = ""
        if tag == "table":
            self._in_items = False

    def handle_data(self, data):
        if self._in == "col":
            self.columns[-1] += data
        elif self._in == "caption":
            self.caption += data


def test_the_report_and_items_csv_say_the_same(tmp_path):
    """Does report.html show each test's numbers as items.csv has them, with named columns and a caption?"""
    report.write_outputs(tmp_path, synthetic_class())
    with open(tmp_path / "items.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == report.ITEMS and len(rows) == len(BARS) + 1
    text = (tmp_path / "report.html").read_text(encoding="utf-8")
    table = ItemTable(text)
    assert table.columns == ["assignment", "test", "difficulty (passed)", "discrimination (r)",
                             "upper–lower 27% index", "reading"]
    assert "items.csv" in table.caption
    for row in rows:
        shown = table.rows[row["assignment_id"], row["grade_id"]]
        assert (shown["data-passed"], shown["data-students"], shown["data-verdict"]) == (
            row["passed"], row["students"], row["verdict"])
        assert float(shown["data-discrimination"]) == pytest.approx(float(row["discrimination"]), abs=1e-3)
        assert float(shown["data-upper-lower"]) == pytest.approx(float(row["upper_lower"]), abs=1e-3)
    flagged = [r for r in rows if r["verdict"] in ("negative", "near zero")]
    assert [r["grade_id"] for r in flagged] == [MISLEADING] and flagged[0]["reading"] == items.NEGATIVE_READING
    assert "Negative:</span> " + items.NEGATIVE_READING in text and not re.search(r"\bnan\b", text, re.I)


def test_a_class_too_small_to_judge_writes_no_number(tmp_path):
    """Three students: every row of items.csv and the report says why, and no cell holds nan."""
    report.write_outputs(tmp_path, synthetic_class()[::15])
    with open(tmp_path / "items.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(r["verdict"] == "not enough spread" and r["discrimination"] == "" for r in rows)
    text = classreport.page(synthetic_class()[::15])
    assert "not enough spread to judge: 3 student(s) took it, 5 are needed" in text
    assert not re.search(r"\bnan\b", text, re.I) and not [v for r in rows for v in r.values() if v.lower() == "nan"]
