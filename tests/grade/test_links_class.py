"""Can a submission folder's symbolic links read anything? A class graded through the real ``grade`` command,
with a link of each kind and students with hostile names: no byte of a link's target may reach the
autograded notebook, an output, a result record or a feedback page, and each link is named in problems.csv."""
from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

from autograder import paths
from autograder.grade.output.report import spreadsheet_original, spreadsheet_safe

pytestmark = [pytest.mark.grading, pytest.mark.xdist_group("links_class")]
A = "01_tokens_and_ids"
SECRET = "INSTRUCTOR-ONLY-5b2e7d"
HONEST = "honest-data-a61f0"
# a cell that prints every file its folder holds, and the link names: what a hostile student would write
READ_ALL = """import os
for top, dirs, names in os.walk('.', followlinks=True):
    for name in sorted(names):
        try:
            print(name, open(os.path.join(top, name), errors='replace').read()[:4000])
        except Exception as exc:
            print(name, type(exc).__name__)
for name in ('shadow', 'notes.txt', 'solution.txt', 'home/secret.txt', 'sub/deep.txt'):
    try:
        print(name, open(name, errors='replace').read()[:4000])
    except Exception as exc:
        print(name, type(exc).__name__)
"""
HOSTILE = ["=HYPERLINK(A1,\"click\")", "-rf", "名前 with space", "'; DROP TABLE student;--", "+cmd|calc"]


def solution_only_line() -> str:
    """A line of the solution's code that the released notebook does not hold."""
    released = (paths.notebooks_dir() / f"{A}.ipynb").read_text()
    for line in (paths.solutions_dir() / f"{A}.ipynb").read_text().splitlines():
        text = line.strip().strip('",').strip()
        if len(text) > 25 and text not in released and "SOLUTION" not in text:
            return text
    raise AssertionError("no solution-only line found")


@pytest.fixture(scope="module")
def linked(tmp_path_factory, g):
    base = tmp_path_factory.mktemp("links")
    root = base / "submitted"
    home = base / "home" / "instructor"
    home.mkdir(parents=True)
    secret = home / "secret.txt"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    nb = g.blank_notebook()
    g.add_cell(nb, READ_ALL)
    folder = g.write_submission(root, "linker", nb).parent
    (folder / "data.txt").write_text(HONEST)
    os.symlink("/etc/shadow" if os.path.exists("/etc/shadow") else secret, folder / "shadow")
    os.symlink(secret, folder / "notes.txt")
    os.symlink(os.path.relpath(paths.solutions_dir() / f"{A}.ipynb", folder), folder / "solution.txt")
    os.symlink(home, folder / "home")
    (folder / "sub").mkdir()
    os.symlink(secret, folder / "sub" / "deep.txt")
    # the notebook itself a link to the solution: it would earn full marks if it were followed
    (root / "solution_link" / A).mkdir(parents=True)
    os.symlink(paths.solutions_dir() / f"{A}.ipynb", root / "solution_link" / A / f"{A}.ipynb")
    for name in HOSTILE:
        g.write_submission(root, name, g.right_notebook())
    graded = g.run_grade(root, "--jobs", "2", "--timeout", "20")
    print(graded.proc.stdout, graded.proc.stderr[-3000:])
    graded.secrets = [SECRET, solution_only_line()]
    if os.path.exists("/etc/shadow") and os.access("/etc/shadow", os.R_OK):
        graded.secrets.append(Path("/etc/shadow").read_text().splitlines()[0])
    return graded


def everything_written(graded) -> dict[str, str]:
    """Every file under --out, as text: results, CSVs, feedback, autograded notebooks, evidence; but the
    hostile-named students' own files, whose right answers hold the solution's code honestly."""
    return {str(p.relative_to(graded.out)): p.read_bytes().decode("utf-8", "replace")
            for p in graded.out.rglob("*")
            if p.is_file() and not set(p.relative_to(graded.out).parts) & set(HOSTILE)}


def test_the_reading_cell_ran_and_saw_the_honest_file(linked):
    """The control: the hostile cell did run and print what it could read, so silence below means refused."""
    autograded = (linked.out / "autograded" / "linker" / A / f"{A}.ipynb").read_text()
    assert HONEST in autograded


def test_no_byte_of_any_link_target_reaches_anything_grade_wrote(linked):
    written = everything_written(linked)
    assert any(name.startswith("feedback/linker") for name in written)
    assert any(name.startswith("results/linker") for name in written)
    for secret in linked.secrets:
        leaks = [name for name, text in written.items() if secret in text]
        assert not leaks, f"{secret[:20]!r} leaked into {leaks}"


def test_each_skipped_link_is_named_in_problems_csv(linked):
    details = " | ".join(d for p, d in linked.problems("linker") if p == "file skipped")
    for name in ("shadow", "notes.txt", "solution.txt", "home", "sub/deep.txt"):
        assert f"{name}: a symbolic link" in details, name
    assert "data.txt" not in details


def test_a_notebook_that_is_a_link_to_the_solution_earns_nothing(linked):
    assert linked.total("solution_link") == 0
    assert linked.problems("solution_link")[0][0] == "link skipped"


def test_the_autograded_copy_holds_only_regular_files(linked):
    folder = linked.out / "autograded" / "linker" / A
    names = {str(p.relative_to(folder)) for p in folder.rglob("*")}
    assert names == {f"{A}.ipynb", "data.txt"}  # sub/ held only a link
    assert not any(p.is_symlink() for p in folder.rglob("*"))


def test_hostile_student_names_are_graded_and_recorded_verbatim(linked, g):
    assert linked.proc.returncode == 1, linked.proc.stderr[-2000:]  # the linked notebook could not be graded
    for name in HOSTILE:
        assert linked.total(spreadsheet_safe(name)) == g.FULL, name  # grades.csv guards ids that start a formula
        assert (linked.out / "feedback" / name / f"{A}.html").is_file()
    with open(linked.out / "grades.csv", newline="", encoding="utf-8") as fh:
        assert set(HOSTILE) <= {spreadsheet_original(row["student_id"]) for row in csv.DictReader(fh)}
