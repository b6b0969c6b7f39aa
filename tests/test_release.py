"""Are the student notebooks exactly what nbgrader makes of the solutions, and nothing more?"""
import shutil

import pytest

from autograder import paths
from autograder.nbio import grade_id, is_solution_cell, is_test_cell, read_notebook
from autograder.release import HEADER_ID, release, student_notebook
from tests.conftest import assignment_params


def test_release_check_finds_every_student_notebook_up_to_date():
    result = release(check=True)
    assert not result.stale, f"out of date, run `python -m autograder release`: {result.stale}"
    assert len(result.unchanged) == len(paths.assignments()) > 0


@pytest.mark.parametrize("assignment", assignment_params())
def test_student_notebook_has_stubs_no_outputs_no_hidden_tests(assignment):
    nb = read_notebook(paths.notebooks_dir() / f"{assignment}.ipynb")
    solution = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    assert nb.cells[0].id == HEADER_ID and f"solutions/{assignment}.ipynb" in nb.cells[0].source
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")
    text = "\n".join(c.source for c in nb.cells)
    assert "### BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
    stubs = [c for c in nb.cells if is_solution_cell(c)]
    assert stubs and all("raise NotImplementedError()" in c.source for c in stubs)
    # the same graded cells, in the same order, with the same points
    ids = lambda book: [(grade_id(c), c.metadata.nbgrader.get("points")) for c in book.cells if is_test_cell(c) or is_solution_cell(c)]
    assert ids(nb) == ids(solution)


def test_release_check_names_a_stale_notebook_and_changes_nothing(tmp_path, monkeypatch, capsys):
    root = tmp_path / "course"
    shutil.copytree(paths.solutions_dir(), root / "solutions")
    shutil.copytree(paths.notebooks_dir(), root / "notebooks")
    monkeypatch.setenv("AUTOGRADER_ROOT", str(root))
    target = root / "notebooks" / f"{paths.assignments()[0]}.ipynb"
    target.write_text(target.read_text().replace("Your exercise notebook", "Edited by hand"))
    before = target.read_text()
    from autograder.cli import main

    assert main(["release", "--check"]) == 1
    assert target.name in capsys.readouterr().err
    assert target.read_text() == before
    assert main(["release"]) == 0
    assert main(["release", "--check"]) == 0


def test_student_notebook_is_a_pure_function_of_the_solution():
    """Made now, from the solution alone, it is the notebook an earlier `release` wrote to notebooks/,
    and the solution it was given is left as it was."""
    import nbformat

    a = paths.assignments()[0]
    source = paths.solutions_dir() / f"{a}.ipynb"
    nb = read_notebook(source)
    before = nbformat.writes(nb)
    made = nbformat.writes(student_notebook(nb, source.name)) + "\n"
    assert nbformat.writes(nb) == before, "student_notebook changed the solution it was given"
    assert made == (paths.notebooks_dir() / f"{a}.ipynb").read_text(encoding="utf-8")
