"""Does the course run as an nbgrader course, end to end, with real Unix users?

An instructor and two students, each a Unix user, share an exchange folder (mode 1777) as on a
JupyterHub server. The instructor generates and releases notebook 01 with stock nbgrader; the
students fetch it and submit (one on time with a wrong ``encode``, one after the due date); the
instructor collects and grades with ``python -m autograder grade submitted``, changes a score and
adds a comment through nbgrader's own API (what formgrader does), grades again, renders and releases
feedback with stock nbgrader; the students fetch their feedback. Then one student resubmits a
changed notebook: the person's grade of the old version is dropped, and said.

Needs root (it creates the users) and a Python every user can read; tools/test-as-instructor.sh
runs it with the ordinary user's own installation.
"""
from __future__ import annotations

import csv
import datetime
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from autograder import paths
from tests.builders import A, FULL, WRONG_ENCODE, fill_in, read_rows, solve
from tests.course.unix import ensure_user, python_every_user_can_run, remove_users_made_by_this_run

pytestmark = [pytest.mark.nbgrader, pytest.mark.slow, pytest.mark.xdist_group("exchange")]
COURSE_ID = "transformer-math"
TEACHER, ON_TIME, LATE = "ag_teacher", "ag_student1", "ag_student2"


@pytest.fixture(scope="module")
def python() -> str:
    return python_every_user_can_run()


class Users:
    def __init__(self, python: str, exchange: Path):
        self.python, self.exchange = python, exchange
        self.bin = str(Path(python).parent)

    def run(self, user: str, *cmd: str, cwd: Path | None = None, check: bool = True,
            env: dict | None = None) -> subprocess.CompletedProcess:
        home = Path(pwd.getpwnam(user).pw_dir)
        base = {"HOME": str(home), "PATH": f"{self.bin}:/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                "NBGRADER_EXCHANGE": str(self.exchange), "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
        proc = subprocess.run(["runuser", "-u", user, "--", "env", "-i", *(f"{k}={v}" for k, v in base.items()),
                               *cmd], cwd=str(cwd or home), capture_output=True, text=True, timeout=900)
        if check and proc.returncode != 0:
            raise AssertionError(f"{user}: {' '.join(cmd)} exited {proc.returncode}\n{proc.stdout[-3000:]}\n"
                                 f"{proc.stderr[-3000:]}")
        return proc

    def nbgrader(self, user: str, *args: str, cwd: Path | None = None, **kw) -> subprocess.CompletedProcess:
        return self.run(user, self.python, "-m", "nbgrader", *args, cwd=cwd, **kw)

    def student(self, user: str, *args: str) -> subprocess.CompletedProcess:
        return self.nbgrader(user, *args, "--course", COURSE_ID, f"--Exchange.root={self.exchange}")


def do_homework(fetched: Path, *, wrong_encode: bool) -> None:
    """The student's work: the reference answers typed into the fetched notebook."""
    nb = fill_in(nbformat.read(fetched, as_version=4), A)
    nbformat.write(solve(nb, "encode", WRONG_ENCODE) if wrong_encode else nb, fetched)


@pytest.fixture(scope="module")
def course(python):
    exchange_base = Path(tempfile.mkdtemp(prefix="ag-exchange-"))
    os.chmod(exchange_base, 0o755)
    exchange = exchange_base / "exchange"
    exchange.mkdir()
    os.chmod(exchange, 0o1777)  # nbgrader's documented exchange: everyone writes, nobody deletes others' files
    users = Users(python, exchange)
    homes = {u: ensure_user(u) for u in (TEACHER, ON_TIME, LATE)}
    root = homes[TEACHER] / "course"
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir()
    for name in ("solutions", "notebooks", "source"):
        shutil.copytree(paths.root() / name, root / name, symlinks=True)
    shutil.copy(paths.root() / "nbgrader_config.py", root)
    for u in (ON_TIME, LATE):
        shutil.rmtree(homes[u] / A, ignore_errors=True)
    subprocess.run(["chown", "-R", f"{TEACHER}:", str(root)], check=True)
    yield users, root, homes
    shutil.rmtree(exchange_base, ignore_errors=True)
    remove_users_made_by_this_run(TEACHER, ON_TIME, LATE)  # with their homes, and the course in the teacher's


@pytest.fixture(scope="module")
def workflow(course):
    """The whole term, once; each test reads what it left behind."""
    users, root, homes = course
    started = time.monotonic()
    env = {"AUTOGRADER_LATE_PENALTY": "zero"}
    users.nbgrader(TEACHER, "generate_assignment", A, "--force", cwd=root)
    users.nbgrader(TEACHER, "release_assignment", A, cwd=root)

    users.student(ON_TIME, "fetch_assignment", A)
    do_homework(homes[ON_TIME] / A / f"{A}.ipynb", wrong_encode=True)
    users.student(ON_TIME, "submit", A)
    time.sleep(1.1)
    due = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    users.nbgrader(TEACHER, "db", "assignment", "add", A, f"--duedate={due}", cwd=root)
    time.sleep(1.1)
    users.student(LATE, "fetch_assignment", A)
    do_homework(homes[LATE] / A / f"{A}.ipynb", wrong_encode=False)
    users.student(LATE, "submit", A)

    users.nbgrader(TEACHER, "collect", A, cwd=root)
    first = users.run(TEACHER, users.python, "-m", "autograder", "grade", "submitted", "--jobs", "2",
                      cwd=root, env=env)
    before = {name: (root / "submitted-graded" / name).read_text() for name in ("grades.csv", "scores.csv")}

    # what a person does in formgrader, through nbgrader's own API
    users.run(TEACHER, users.python, "-c", (
        "from nbgrader.api import Gradebook\n"
        f"with Gradebook('sqlite:///{root}/gradebook.db', '{COURSE_ID}') as gb:\n"
        f"    gb.find_grade('test_encode', '{A}', '{A}', '{ON_TIME}').manual_score = 1.0\n"
        f"    gb.find_comment('encode', '{A}', '{A}', '{ON_TIME}').manual_comment = 'Off by one: ids start at 0.'\n"
        "    gb.db.commit()\n"), cwd=root)
    second = users.run(TEACHER, users.python, "-m", "autograder", "grade", "submitted", cwd=root, env=env)
    after = {name: (root / "submitted-graded" / name).read_text() for name in ("grades.csv", "scores.csv", "lms.csv")}

    stock = users.nbgrader(TEACHER, "generate_feedback", A, "--force", cwd=root)
    users.run(TEACHER, users.python, "-m", "autograder", "grade", "submitted", cwd=root, env=env)  # ours again
    users.nbgrader(TEACHER, "release_feedback", A, cwd=root)
    fetched = {u: users.student(u, "fetch_feedback", A) for u in (ON_TIME, LATE)}
    pages = {u: sorted((homes[u] / A / "feedback").rglob("*.html")) for u in (ON_TIME, LATE)}
    exported = users.nbgrader(TEACHER, "export", "--to", "export.csv", cwd=root)
    seconds = time.monotonic() - started

    # a resubmission of changed work after the person's grade
    do_homework(homes[ON_TIME] / A / f"{A}.ipynb", wrong_encode=False)
    users.student(ON_TIME, "submit", A)
    users.nbgrader(TEACHER, "collect", A, "--update", cwd=root)
    third = users.run(TEACHER, users.python, "-m", "autograder", "grade", "submitted", cwd=root, env=env)
    print(f"release -> feedback fetched: {seconds:.1f} s")
    return {"root": root, "first": first, "second": second, "third": third, "before": before, "after": after,
            "stock": stock, "fetched": fetched, "pages": pages, "exported": exported, "seconds": seconds,
            "homes": homes}


def grade_row(text_or_path, student: str) -> dict:
    data = text_or_path.splitlines() if isinstance(text_or_path, str) else None
    table = list(csv.DictReader(data)) if data is not None else read_rows(text_or_path)
    return next(r for r in table if r["student_id"] == student)


def test_stock_commands_release_collect_and_grade_into_the_course(workflow):
    root = workflow["root"]
    assert (root / "release" / A / f"{A}.ipynb").exists()
    for student in (ON_TIME, LATE):
        assert (root / "submitted" / student / A / "timestamp.txt").exists()
        assert (root / "autograded" / student / A / f"{A}.ipynb").exists(), "formgrader and generate_feedback read these"
        # the report in submitted-graded/ links the course's own autograded notebook, not a missing copy of it
        report = (root / "submitted-graded" / "report.html").read_text()
        assert f'href="../autograded/{student}/{A}/{A}.ipynb"' in report
    assert "Isolation in force" in workflow["first"].stdout


def test_the_late_submission_gets_nbgrader_s_penalty_and_times_come_from_timestamp_txt(workflow):
    late = grade_row(workflow["before"]["grades.csv"], LATE)
    on_time = grade_row(workflow["before"]["grades.csv"], ON_TIME)
    assert float(late["seconds_late"]) > 0 and float(late["late_penalty"]) == FULL and float(late["score"]) == 0
    assert float(on_time["seconds_late"]) == 0 and float(on_time["late_penalty"]) == 0
    stamp = (workflow["root"] / "submitted" / LATE / A / "timestamp.txt").read_text().strip()
    assert late["submitted_at"].startswith(stamp[:19].replace(" ", "T")), (late, stamp)


def test_a_person_s_score_and_comment_are_the_record_in_every_csv_and_the_feedback(workflow):
    before = grade_row(workflow["before"]["grades.csv"], ON_TIME)
    after = grade_row(workflow["after"]["grades.csv"], ON_TIME)
    assert float(after["score"]) == float(before["score"]) + 1, (before, after)
    assert after["overridden"] == "yes"  # as in scores.csv
    encode = next(r for r in csv.DictReader(workflow["after"]["scores.csv"].splitlines())
                  if r["student_id"] == ON_TIME and r["grade_id"] == "test_encode")
    assert encode["points"] == "1" and encode["auto_points"] == "0" and encode["overridden"] == "yes"
    assert encode["comment"] == "Off by one: ids start at 0."
    lms = list(csv.DictReader(workflow["after"]["lms.csv"].splitlines()))
    assert float(next(r for r in lms if r["student_id"] == ON_TIME)[A]) == float(after["score"])
    exported = read_rows(workflow["root"] / "export.csv")
    assert float(next(r for r in exported if r["student_id"] == ON_TIME)["score"]) == float(after["score"])
    assert float(next(r for r in exported if r["student_id"] == LATE)["score"]) == 0.0


def test_students_fetch_their_released_feedback(workflow):
    assert "Generating feedback" in workflow["stock"].stderr or workflow["stock"].returncode == 0
    for student, pages in workflow["pages"].items():
        assert pages, f"{student} fetched no feedback:\n{workflow['fetched'][student].stderr[-2000:]}"
        text = pages[-1].read_text(encoding="utf-8")
        assert "hidden=True" not in text and "BEGIN HIDDEN TESTS" not in text
    on_time = workflow["pages"][ON_TIME][-1].read_text(encoding="utf-8")
    assert "Off by one: ids start at 0." in on_time and "changed by your instructor" in on_time
    late = workflow["pages"][LATE][-1].read_text(encoding="utf-8")
    assert "after the due date" in late and "late penalty" in late


def test_a_changed_resubmission_drops_the_person_s_grade_and_says_so(workflow):
    root = workflow["root"]
    problems = read_rows(root / "submitted-graded" / "problems.csv")
    assert any(r["student_id"] == ON_TIME and r["problem"] == "manual grade dropped" for r in problems), problems
    row = grade_row(root / "submitted-graded" / "grades.csv", ON_TIME)
    assert row["overridden"] == "" and float(row["auto_score"]) == FULL
    # resubmitted after the due date: the new time counts, and so does the penalty
    before = grade_row(workflow["after"]["grades.csv"], ON_TIME)
    assert row["submitted_at"] > before["submitted_at"] and float(row["seconds_late"]) > 0
    assert float(row["late_penalty"]) == FULL and float(row["score"]) == 0


def test_grade_leaves_files_course_staff_can_read(workflow):
    root = workflow["root"]
    notebooks, pages = sorted((root / "autograded").rglob("*.ipynb")), sorted((root / "feedback").rglob("*.html"))
    assert notebooks and pages, f"nothing to check: autograded notebooks {notebooks}, feedback pages {pages}"
    for path in [root / "submitted-graded" / "grades.csv", *notebooks, *pages]:
        assert path.stat().st_mode & 0o044, f"{path} is not readable by the group and others"
