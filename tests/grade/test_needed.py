"""Which cells grading runs: the exercise and test cells, and every cell that makes or may change what they read.

Each test is a small notebook (its code cells as strings): KEEP marks the exercise and test cells."""

from __future__ import annotations

import glob

import pytest

from autograder.grade.submission.needed import names_of, needed
from autograder.nbio import is_solution_cell, is_test_cell, read_notebook
from autograder import paths

SETUP = "import numpy as np\nimport torch\nfrom autograder.checks import nb10 as check"


def skipped(cells: list[str], keep: set[int]) -> set[int] | None:
    run = needed(cells, keep)
    return None if run is None else set(range(len(cells))) - run


def test_a_demonstration_that_only_prints_is_left_out_and_the_set_up_kept():
    cells = [SETUP, "def f(x):\n    return np.tanh(x)", "print(f(np.arange(3.0)))", "check.f(f)"]
    assert skipped(cells, {1, 3}) == {2}


def test_a_helper_and_the_data_an_exercise_reads_are_kept():
    cells = [SETUP, "def helper(x):\n    return 2 * x", "TABLE = np.arange(4)", "plot = TABLE * 3",
             "def f(x):\n    return helper(x) + TABLE[0]", "check.f(f)"]
    assert skipped(cells, {4, 5}) == {3}


def test_a_cell_that_may_change_what_an_exercise_reads_is_kept():
    """A method called on it, an argument passed, an item or attribute assigned, a module configured, a
    global bound by a function the cell calls: each may change a name a needed cell reads."""
    exercise = "def f(x):\n    return x + len(STATE) + CFG.eps + torch.zeros(1).double().sum().item() + counter"
    cells = [SETUP, "STATE = []", "class CFG:\n    eps = 1.0", "counter = 0",
             "def bump():\n    global counter\n    counter += 1",
             "STATE.append(1)",            # a method called on it
             "fill(STATE)",                # passed on: fill may change it
             "CFG.eps = 2.0",              # an attribute of a class assigned
             "torch.set_default_dtype(torch.float64)",  # a module configured
             "bump()",                     # binds the global its function declares
             "print(len(STATE), CFG.eps)",  # only reads: left out
             exercise, "check.f(f)"]
    assert skipped(cells, {11, 12}) == {10}


def test_a_functions_own_parameters_and_locals_are_not_the_notebooks():
    cells = [SETUP, "model = [1, 2]", "def demo(model):\n    model.append(3)\n    return model",
             "print(demo([0]))", "def f(x):\n    return x + model[0]", "check.f(f)"]
    assert skipped(cells, {4, 5}) == {2, 3}, "demo's model is its parameter, not the notebook's model"


def test_calling_a_function_or_a_module_does_not_change_it():
    cells = [SETUP, "def g(x):\n    return x", "print(g(1), np.zeros(2), torch.manual_seed(0))",
             "def f(x):\n    return g(x) + np.ones(1)", "check.f(f)"]
    assert skipped(cells, {3, 4}) == {2}


def test_a_global_a_function_reads_when_called_is_kept_even_when_bound_after_it():
    """f reads SCALE when its test calls it, after the cell that binds SCALE ran: that cell is needed."""
    cells = [SETUP, "def f(x):\n    return SCALE * x", "SCALE = 2.0", "print(f(1.0))", "check.f(f)"]
    assert skipped(cells, {1, 4}) == {3}


def test_restoring_the_random_state_is_a_draw_not_a_setting_and_keeps_no_demonstration():
    """A section that saves torch's random state and restores it after its demo (so later cells draw as before)
    calls torch.set_rng_state: like torch.manual_seed it changes only the global generator, which no check
    reads. Read as a setting of torch, it kept itself, and through it every cell that calls torch: the
    training demo too."""
    cells = [SETUP, "saved = torch.get_rng_state()",
             "torch.manual_seed(0)\nmodel = torch.nn.Linear(2, 2)\nprint(model(torch.ones(2)))",
             "torch.set_rng_state(saved)", "np.random.set_state(np.random.get_state())",
             "def f(x):\n    return torch.tanh(x)", "check.f(f)"]
    assert skipped(cells, {5, 6}) == {1, 2, 3, 4}


def test_a_modules_setting_keeps_its_cell_but_does_not_make_every_call_through_the_module_a_change():
    """torch.set_printoptions configures torch, so its cell runs; torch.zeros elsewhere still changes nothing.
    A list changed in place (TABLE.append) is data, so a cell that passes it on may change it and runs."""
    cells = [SETUP, "torch.set_printoptions(precision=3)",
             "torch.manual_seed(0)\nmodel = torch.nn.Linear(2, 2)\nprint(model(torch.zeros(2)))",
             "from data import TABLE", "TABLE.append(1)", "shuffle(TABLE)", "print(TABLE)",
             "def f(x):\n    return torch.tanh(x) + TABLE[0]", "check.f(f)"]
    assert skipped(cells, {7, 8}) == {2, 6}


@pytest.mark.parametrize("opaque", ["exec('y = 1')", "globals()['y'] = 1", "from math import *",
                                    "setattr(CFG, 'eps', 3)", "def broken(:\n    pass"])
def test_what_the_grader_cannot_follow_runs_every_cell(opaque):
    assert needed([SETUP, opaque, "def f(x):\n    return x", "check.f(f)"], {2, 3}) is None


def test_a_magic_is_read_and_its_cell_always_runs():
    cells = [SETUP, "%matplotlib inline", "!ls", "def f(x):\n    return x", "check.f(f)"]
    assert skipped(cells, {3, 4}) == set()
    assert names_of("%time y = 1") is None and names_of("%run other.py") is None, "code the grader cannot read"


def test_the_course_leaves_out_the_demonstrations_of_notebook_10_and_keeps_every_exercise():
    """In 10's solution, the training runs, the plots and the printed examples are not needed; the set-up
    and project_heads (which generate_cached calls) are."""
    nb = read_notebook(sorted(glob.glob(str(paths.solutions_dir() / "10_*.ipynb")))[0])
    code = [c for c in nb.cells if c.cell_type == "code"]
    keep = {i for i, c in enumerate(code) if is_solution_cell(c) or is_test_cell(c)}
    run = needed([c.source for c in code], keep)
    assert run is not None and keep <= run
    left_out = [code[i].source for i in set(range(len(code))) - run]
    assert any("train_tiny_gpt(" in s for s in left_out), "the training demo is left out"
    assert 0 in run and any("def project_heads" in code[i].source for i in run)


def test_only_the_courses_own_cells_are_left_out_whatever_the_learner_wrote_runs(g, tmp_path):
    """A plan leaves out a released demonstration nothing needs, never a cell the learner added or changed
    (a hostile or looping cell of theirs runs, and is contained, as in stock nbgrader)."""
    from autograder.grade.submission.sanitize import plan, source_tests

    source = read_notebook(paths.solutions_dir() / "01_tokens_and_ids.ipynb")
    released = read_notebook(paths.notebooks_dir() / "01_tokens_and_ids.ipynb")
    tests = source_tests(source, released)
    given = frozenset(c.source for c in source.cells
                      if c.cell_type == "code" and not is_solution_cell(c) and not is_test_cell(c))
    nb = g.right_notebook()
    g.add_cell(nb, "print('mine')")
    ran = plan(nb, tests, given)
    assert ran.left_out and any("print('mine')" in s for s in ran.sources), "the learner's own cell runs"
    assert all(not ran.sources[i] for i in ran.left_out)
    assert not plan(nb, tests).left_out, "nothing given: every cell runs"
