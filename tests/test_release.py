"""Are the student notebooks exactly what nbgrader makes of the solutions, and nothing more?"""
import re
import shutil

import pytest

from autograder import paths
from autograder.bug_hunt import is_bug_hunt
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
    hunts = {grade_id(c) for c in solution.cells if is_solution_cell(c) and is_bug_hunt(c.source)}
    assert stubs and all("raise NotImplementedError()" in c.source for c in stubs if grade_id(c) not in hunts)
    # a bug hunt shows its bug: no stub, no marker of ours
    assert all("NotImplementedError" not in c.source and "BUG" not in c.source for c in stubs if grade_id(c) in hunts)
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


# ------------------------------------------------------------------ bug hunts (autograder/bug_hunt.py)
BUG_HUNT = '''def double(x):
    """x -> 2 x."""
    y = x
    ### BEGIN SOLUTION
    return y + y
    ### END SOLUTION
    ### BEGIN BUG
    #
    # return y * y
    ### END BUG'''


def bug_hunt_notebook():
    import nbformat

    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "language": "python",
                                                           "display_name": "Python 3"}})
    meta = {"nbgrader": {"solution": True, "grade": False, "locked": False, "task": False,
                         "grade_id": "double", "schema_version": 3}}
    nb.cells = [nbformat.v4.new_markdown_cell("Find the bug."),
                nbformat.v4.new_code_cell(BUG_HUNT, metadata=meta, id="double"),
                nbformat.v4.new_code_cell("def other():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION",
                                          metadata={"nbgrader": {**meta["nbgrader"], "grade_id": "other"}}, id="other")]
    return nb


def test_a_bug_hunt_shows_the_learner_the_bug_in_place_of_the_solution():
    nb = student_notebook(bug_hunt_notebook(), "bug.ipynb")
    hunt, other = nb.cells[2], nb.cells[3]
    assert hunt.source == 'def double(x):\n    """x -> 2 x."""\n    y = x\n\n    return y * y'
    assert "raise NotImplementedError()" in other.source  # an ordinary exercise keeps its stub
    ns: dict = {}
    exec(hunt.source, ns)
    assert ns["double"](3) == 9  # it runs, and is wrong: the learner's to fix


def test_stock_nbgrader_with_the_course_config_releases_a_bug_hunt_as_we_do():
    """nbgrader_config.py's GenerateAssignment steps, run as nbgrader runs them (all but SaveCells, which
    needs a gradebook and changes no cell), give the cells `python -m autograder release` gives."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.preprocessors import SaveCells
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(paths.root())).load_config()
    steps = GenerateAssignment(config=config).preprocessors
    assert SaveCells in steps
    nb, resources = bug_hunt_notebook(), {}
    for step in steps:
        if step is not SaveCells:
            nb, resources = step(config=config).preprocess(nb, resources)
    ours = student_notebook(bug_hunt_notebook(), "bug.ipynb")
    assert [c.source for c in nb.cells] == [c.source for c in ours.cells[1:]]
    assert [c.metadata.get("nbgrader") for c in nb.cells] == [c.metadata.get("nbgrader") for c in ours.cells[1:]]


@pytest.mark.parametrize("source, problem", [
    ("    ### BEGIN BUG\n    # x = 1\n", "never closed"),
    ("    ### END BUG\n", "without a `### BEGIN BUG`"),
    ("    ### BEGIN BUG\n    ### BEGIN BUG\n", "opens inside another"),
    ("    ### BEGIN BUG\n    x = 1\n    ### END BUG", "every line of a bug region"),
    ("    y = 1\n    ### BEGIN BUG\n    # x = 1\n    ### END BUG", "right after the END SOLUTION line"),
])
def test_a_bug_region_that_cannot_be_released_says_what_to_change(source, problem):
    from autograder.bug_hunt import BugRegionError, show_bugs

    stubbed = "def f():\n    # YOUR CODE HERE\n    raise NotImplementedError()\n" if "right after" not in problem else "def f():\n"
    with pytest.raises(BugRegionError, match=re.escape(problem)):
        show_bugs(stubbed + source)
