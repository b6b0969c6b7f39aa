"""Does stock `nbgrader autograde` give each reference solution full marks and each released notebook zero?"""
import shutil
import subprocess

import pytest
from nbgrader.api import Gradebook

from autograder import paths
from tests.conftest import assignment_params

pytestmark = [pytest.mark.slow, pytest.mark.nbgrader]


def nbgrader(course, *args):
    r = subprocess.run(["nbgrader", *args], cwd=course, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"nbgrader {' '.join(args)} failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    return r


@pytest.mark.parametrize("assignment", assignment_params())
def test_solution_full_marks_and_blank_zero_under_stock_nbgrader(assignment, tmp_path):
    course = tmp_path / "course"
    (course / "source" / assignment).mkdir(parents=True)
    shutil.copy(paths.solutions_dir() / f"{assignment}.ipynb", course / "source" / assignment)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.course_id = 'transformer-math'\n"
        "c.ExecutePreprocessor.timeout = 300\n")
    nbgrader(course, "generate_assignment", assignment, "--force", "--create")
    for student, source in (("reference", paths.solutions_dir()), ("blank", paths.notebooks_dir())):
        folder = course / "submitted" / student / assignment
        folder.mkdir(parents=True)
        shutil.copy(source / f"{assignment}.ipynb", folder)
    nbgrader(course, "autograde", assignment, "--create", "--force")
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        full = gb.find_submission(assignment, "reference")
        blank = gb.find_submission(assignment, "blank")
        assert full.max_score > 0
        assert full.score == full.max_score, {g.name: g.score for n in full.notebooks for g in n.grades}
        assert blank.score == 0, {g.name: g.score for n in blank.notebooks for g in n.grades if g.score}
