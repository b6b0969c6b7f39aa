"""Can other users of the grading machine read what ``grade`` writes, or the course? Nothing it writes
is open to them but the feedback pages ``release_feedback`` hands out, and ``doctor`` and every
``grade`` summary name what is still open, with the command that closes it. Mode bits only here;
tests/course/test_staff_setup.py proves the same with real Unix users."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from autograder import paths
from autograder.grade.classrun.doctor import exposures
from autograder.grade.classrun.pipeline import private_files

pytestmark = pytest.mark.grading
A = "01_tokens_and_ids"


@pytest.fixture
def open_place():
    """A folder every user can pass through, as /home/instructor is on Debian (pytest's tmp is 0700)."""
    base = Path(tempfile.mkdtemp(prefix="ag-open-"))
    os.chmod(base, 0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.mark.parametrize("shared, group_bits", [(False, None), (True, 0o060)])
def test_while_grading_new_files_are_closed_to_others_and_the_umask_comes_back(tmp_path, shared, group_bits):
    before = os.umask(0o022)
    try:
        with private_files(shared=shared):
            (tmp_path / "f").write_text("x")
            (tmp_path / "d").mkdir()
        assert os.umask(0o022) == 0o022  # restored
    finally:
        os.umask(before)
    assert mode(tmp_path / "f") & 0o007 == 0 and mode(tmp_path / "d") & 0o007 == 0
    if shared:  # a staff group shares the course: the TA can replace what the instructor wrote
        assert mode(tmp_path / "f") & 0o070 == group_bits and mode(tmp_path / "d") & 0o070 == 0o070
    else:
        assert mode(tmp_path / "f") == 0o640 and mode(tmp_path / "d") == 0o750


def course_as_debian_leaves_it(base: Path) -> dict[str, Path]:
    """A course folder at 0755 with umask 022 and submitted/ as nbgrader collect leaves it (0777)."""
    course = base / "course"
    for rel in ("solutions", "source/" + A, "autograded/alice/" + A, "submitted/alice/" + A, "out"):
        (course / rel).mkdir(parents=True)
    for rel in ("solutions/x.ipynb", "source/x.ipynb", "gradebook.db", "out/grades.csv"):
        (course / rel).write_text("secret")
    for p in [course, *course.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    for p in (course / "submitted" / "alice", course / "submitted" / "alice" / A):
        os.chmod(p, 0o777)
    return {"course": course, "solutions": course / "solutions", "gradebook": course / "gradebook.db",
            "submitted": course / "submitted", "outputs": (course / "out",)}


def test_each_open_thing_is_named_with_a_command_that_closes_it(open_place):
    where = course_as_debian_leaves_it(open_place)
    found = exposures(**where)
    named = {e.what: e for e in found}
    assert set(named) == {"the course folder", "the solutions (answers and hidden tests)",
                          "the nbgrader source (answers and hidden tests)", "the gradebook",
                          "the graded notebooks", "the grading output", "the submissions"}
    assert "change" in named["the submissions"].how and "alice" in str(named["the submissions"].path)
    for e in found:
        assert str(e).endswith(f"Fix: {e.fix}")
        subprocess.run(e.fix, shell=True, check=True)
    assert exposures(**where) == []
    assert mode(where["course"]) & 0o001, "the course folder stays passable: a virtualenv inside must stay usable"


def test_a_course_closed_as_docs_grading_md_says_needs_no_warning(open_place):
    where = course_as_debian_leaves_it(open_place)
    subprocess.run(["chmod", "-R", "o-rwx", str(where["course"])], check=True)
    assert exposures(**where) == []


def test_nothing_is_named_where_other_users_cannot_pass(tmp_path):
    """pytest's tmp folder is 0700: whatever the modes inside, nobody else reaches them."""
    where = course_as_debian_leaves_it(tmp_path)
    os.chmod(tmp_path, 0o700)
    assert exposures(**where) == []


@pytest.fixture(scope="module")
def course_run(g):
    """A small class graded in an nbgrader course folder laid out as Debian leaves it (0755, umask 022)."""
    base = Path(tempfile.mkdtemp(prefix="ag-private-"))
    os.chmod(base, 0o755)
    course = base / "course"
    course.mkdir()
    shutil.copy(paths.root() / "nbgrader_config.py", course)
    g.write_submission(course / "submitted", "alice", g.right_notebook())
    g.write_submission(course / "submitted", "bob", g.blank_notebook())
    (course / "submitted" / "alice" / A / "timestamp.txt").write_text("2026-01-01 10:00:00.000000 UTC")
    for p in [course, *course.rglob("*")]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    os.chmod(course / "submitted" / "bob" / A, 0o777)  # as nbgrader collect leaves it
    old = os.umask(0o022)
    try:
        graded = g.run_grade(course / "submitted", "--jobs", "2", "--timeout", "20", out=course / "graded")
    finally:
        os.umask(old)
    print(graded.proc.stdout, graded.proc.stderr[-3000:])
    yield course, graded
    shutil.rmtree(base, ignore_errors=True)


def test_nothing_grade_writes_is_open_to_other_users_but_the_pages_release_feedback_hands_out(course_run):
    course, graded = course_run
    assert graded.proc.returncode == 0, graded.proc.stderr[-3000:]
    written = [p for p in course.rglob("*") if "submitted" not in p.relative_to(course).parts
               and p.name != "nbgrader_config.py" and "__pycache__" not in p.parts]
    pages = [p for p in written if p.relative_to(course).parts[0] == "feedback" and p.suffix == ".html"]
    assert pages and all(mode(p) == 0o644 for p in pages), [(p, oct(mode(p))) for p in pages]
    for p in written:
        if p not in pages:
            assert mode(p) & 0o007 == 0, f"{p.relative_to(course)} is {oct(mode(p))}"
    assert (course / "gradebook.db") in written and (course / "graded" / "grades.csv") in written
    assert (course / "autograded" / "alice" / A / f"{A}.ipynb") in written


def test_the_report_links_the_course_s_own_autograded_notebooks(course_run):
    """In a course folder the autograded notebooks go to the course's autograded/, beside the report's folder:
    report.html links each there, not to a copy in its own folder that does not exist."""
    course, graded = course_run
    report = (course / "graded" / "report.html").read_text(encoding="utf-8")
    for student in ("alice", "bob"):
        href = f"../autograded/{student}/{A}/{A}.ipynb"
        assert f'href="{href}"' in report and (course / "graded" / href).resolve().is_file(), student


def test_the_summary_warns_about_what_is_still_open_with_the_fix(course_run):
    course, graded = course_run
    warnings = [line for line in graded.proc.stdout.splitlines() if line.startswith("warning: ")]
    text = "\n".join(warnings)
    assert f"the course folder ({course}): other users can list or change it. Fix: chmod o-rw {course}" in text
    assert f"chmod -R o-rwx {course / 'submitted'}" in text and "the submissions" in text
    assert "the graded notebooks" not in text and "the grading output" not in text  # grade closed its own


def test_a_one_student_regrade_s_summary_counts_add_up(course_run, g):
    course, _ = course_run
    again = g.run_grade(course / "submitted", "--student", "alice", "--force", "--timeout", "20", out=course / "graded")
    assert again.proc.returncode == 0, again.proc.stderr[-2000:]
    assert "2 submissions: 2 graded, 0 could not be graded (1 graded now, 1 unchanged since the last run)" in \
        again.proc.stdout, again.proc.stdout
