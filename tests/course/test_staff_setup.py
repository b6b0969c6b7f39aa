"""Does the staff setup of docs/grading.md hold with real Unix users? An instructor and a TA share a
course through a group with setgid; the TA grades and saves in the gradebook as formgrader does, the
instructor grades again over the TA's files; two students can list or read nothing of the course and
cannot touch each other's submission.

Needs root (it creates the users) and a Python every user can read; tools/test-as-instructor.sh runs it
with the ordinary user's own installation."""
from __future__ import annotations

import grp
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from autograder import paths
from tests.builders import A, FULL, blank_notebook, right_notebook, write_submission
from tests.course.unix import ensure_user, python_every_user_can_run, remove_users_made_by_this_run

pytestmark = [pytest.mark.nbgrader, pytest.mark.slow, pytest.mark.xdist_group("staff_setup")]
GROUP, INSTRUCTOR, TA, STUDENTS = "ag_staff", "ag_instructor", "ag_ta", ("ag_pupil1", "ag_pupil2")
DOC = paths.root() / "docs" / "grading.md"
# docs/grading.md's commands, as written there (course-staff, ta1 and COURSE stand for this test's names)
SETUP = ["sudo groupadd course-staff",
         "sudo usermod -aG course-staff ta1",
         "sudo chgrp -R course-staff COURSE",
         "sudo chmod -R g+rwX,o-rwx COURSE",
         "sudo find COURSE -type d -exec chmod g+s {} +"]
STAFF_UMASK = "umask 007"


@pytest.fixture(scope="module")
def python() -> str:
    return python_every_user_can_run()


def as_user(user: str, script: str, *, cwd: Path, python: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``script`` in a login-less shell of ``user``, with only the variables a fresh session has."""
    base = {"HOME": "/tmp", "PATH": f"{Path(python).parent}:/usr/bin:/bin", "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    return subprocess.run(["runuser", "-u", user, "--", "env", "-i", *(f"{k}={v}" for k, v in base.items()),
                           "sh", "-c", script], cwd=str(cwd), capture_output=True, text=True, timeout=900)


def test_the_docs_hold_the_commands_this_test_runs():
    text = DOC.read_text(encoding="utf-8")
    for line in SETUP:
        assert line in text, line
    assert STAFF_UMASK in text


@pytest.fixture(scope="module")
def staff(python):
    for user in (INSTRUCTOR, TA, *STUDENTS):
        ensure_user(user)
    base = Path(tempfile.mkdtemp(prefix="ag-staff-"))
    os.chmod(base, 0o755)  # as /home is: everyone passes through
    course = base / "course"
    course.mkdir()
    for name in ("solutions", "source"):  # the course's own copy: what students must not read
        shutil.copytree(paths.root() / name, course / name, symlinks=True)
    shutil.copy(paths.root() / "nbgrader_config.py", course)
    write_submission(course / "submitted", STUDENTS[0], right_notebook())
    write_submission(course / "submitted", STUDENTS[1], blank_notebook())
    for p in [course, *course.rglob("*")]:  # made with Debian's defaults; collect leaves 0777 folders
        os.chmod(p, 0o777 if p.is_dir() and "submitted" in p.parts else 0o755 if p.is_dir() else 0o644)
    subprocess.run(["chown", "-R", f"{INSTRUCTOR}:", str(course)], check=True)
    try:
        grp.getgrnam(GROUP)
        steps = SETUP[1:]
    except KeyError:
        steps = SETUP
    for user in (TA, INSTRUCTOR):
        for line in steps:
            if "usermod" in line or line == SETUP[0] and user == TA:
                cmd = line.replace("sudo ", "").replace("course-staff", GROUP).replace("ta1", user)
            elif user == TA:
                cmd = line.replace("sudo ", "").replace("course-staff", GROUP).replace("COURSE", str(course))
            else:
                continue
            subprocess.run(cmd, shell=True, check=True)
    env = {"AUTOGRADER_ROOT": str(course)}
    grade = f"{STAFF_UMASK} && python -m autograder grade submitted --jobs 2 --timeout 30"
    by_ta = as_user(TA, grade, cwd=course, python=python, env=env)
    formgrader = as_user(INSTRUCTOR, (
        f"{STAFF_UMASK} && python -c \"from nbgrader.api import Gradebook\n"
        f"with Gradebook('sqlite:///{course}/gradebook.db', 'transformer-math') as gb:\n"
        f"    gb.find_comment('encode', '{A}', '{A}', '{STUDENTS[1]}').manual_comment = 'Start with encode.'\n"
        f"    gb.db.commit()\""), cwd=course, python=python, env=env)
    by_instructor = as_user(INSTRUCTOR, grade + " --force", cwd=course, python=python, env=env)
    ta_saves = as_user(TA, (
        f"{STAFF_UMASK} && python -c \"from nbgrader.api import Gradebook\n"
        f"with Gradebook('sqlite:///{course}/gradebook.db', 'transformer-math') as gb:\n"
        f"    gb.find_grade('test_encode', '{A}', '{A}', '{STUDENTS[1]}').manual_score = 1.0\n"
        f"    gb.db.commit()\""), cwd=course, python=python, env=env)
    yield {"course": course, "python": python, "by_ta": by_ta, "formgrader": formgrader,
           "by_instructor": by_instructor, "ta_saves": ta_saves}
    shutil.rmtree(base, ignore_errors=True)
    remove_users_made_by_this_run(INSTRUCTOR, TA, *STUDENTS, groups=(GROUP,))


def test_a_ta_in_the_group_grades_the_class(staff):
    by_ta = staff["by_ta"]
    assert by_ta.returncode == 0, by_ta.stdout[-2000:] + by_ta.stderr[-3000:]
    rows = (staff["course"] / "submitted-graded" / "grades.csv").read_text()
    assert re.search(rf"^{STUDENTS[0]},{A},{FULL:g},", rows, re.M), rows
    assert "warning:" not in by_ta.stdout, by_ta.stdout  # the course is closed: nothing to warn about


def test_the_instructor_and_the_ta_both_save_in_the_gradebook_and_grade_over_each_other(staff):
    for step in ("formgrader", "by_instructor", "ta_saves"):
        proc = staff[step]
        assert proc.returncode == 0, f"{step}: {proc.stdout[-2000:]}{proc.stderr[-3000:]}"
    db = staff["course"] / "gradebook.db"
    assert db.stat().st_gid == grp.getgrnam(GROUP).gr_gid and db.stat().st_mode & 0o060 == 0o060


def test_a_student_can_list_or_read_nothing_of_the_course(staff):
    course = staff["course"]
    secrets = [course / "solutions" / f"{A}.ipynb", course / "source" / A / f"{A}.ipynb", course / "gradebook.db",
               course / "submitted-graded" / "grades.csv", course / "submitted-graded" / "lms.csv",
               course / "autograded" / STUDENTS[1] / A / f"{A}.ipynb",
               course / "feedback" / STUDENTS[1] / A / f"{A}.html",
               course / "submitted-graded" / "feedback" / STUDENTS[1] / f"{A}.html",
               course / "submitted" / STUDENTS[1] / A / f"{A}.ipynb"]
    assert all(p.exists() for p in secrets), [p for p in secrets if not p.exists()]
    for student in STUDENTS:
        listed = as_user(student, f"ls {course}", cwd=Path("/"), python=staff["python"])
        assert listed.returncode != 0
        for path in secrets:
            read = as_user(student, f"cat '{path}'", cwd=Path("/"), python=staff["python"])
            assert read.returncode != 0 and "Permission denied" in read.stderr, (student, path, read.stdout[:200])
    wrote = as_user(STUDENTS[0], f"echo x > '{course / 'submitted' / STUDENTS[1] / A / 'evil.txt'}'",
                    cwd=Path("/"), python=staff["python"])
    assert wrote.returncode != 0
