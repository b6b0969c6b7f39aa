"""Does `validate` tell a student, per exercise, passed / failed (and why) / not attempted?"""
import subprocess
import sys

import nbformat
import pytest

from autograder import paths
from autograder.nbio import grade_id, is_solution_cell, read_notebook, points_per_test
from tests.builders import setup_index

pytestmark = pytest.mark.slow
A = "01_tokens_and_ids"
TESTS = points_per_test(read_notebook(paths.solutions_dir() / f"{A}.ipynb"))  # notebook 01 grows: read, never restate
VISIBLE = sum(p for g, p in TESTS.items() if not g.endswith("_hidden"))
HIDDEN = sum(TESTS.values()) - VISIBLE


def validate(path):
    return subprocess.run([sys.executable, "-m", "autograder", "validate", str(path)],
                          capture_output=True, text=True, timeout=300)


def test_reference_solution_validates_clean_and_says_it_ran_locally():
    r = validate(paths.solutions_dir() / f"{A}.ipynb")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "passed        build_vocab" in r.stdout and "failed" not in r.stdout
    # the instructor's own reference is not graded against itself: validate says where it ran and why
    assert "checked in a local Jupyter kernel, not in the grader's sandbox: it is the reference solution" in r.stdout


def test_partly_done_notebook_names_the_failure_and_what_is_left(tmp_path):
    nb = nbformat.read(paths.notebooks_dir() / f"{A}.ipynb", as_version=4)
    for cell in nb.cells:
        if is_solution_cell(cell) and grade_id(cell) == "encode":
            cell.source = "def encode(tokens, vocab, unk='<unk>'):\n    return [vocab[t] for t in tokens if t in vocab]\n"
        if is_solution_cell(cell) and grade_id(cell) == "decode":
            cell.source = "def decode(ids, vocab):\n    inv = {i: t for t, i in vocab.items()}\n    return [inv[i] for i in ids]\n"
    path = tmp_path / f"{A}.ipynb"
    nbformat.write(nb, path)
    before = path.read_bytes()
    r = validate(path)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert any(line.split() == ["passed", "decode", "[1", "pt]"] for line in lines), r.stdout
    assert any(line.split()[:2] == ["failed", "encode"] for line in lines), r.stdout
    assert "expected 3 items, got 2" in r.stdout
    waiting = [line for line in lines if line.strip().startswith("not attempted yet")]  # one line, not failures
    assert len(waiting) == 1 and "build_vocab" in waiting[0] and "not attempted" not in r.stdout.replace(waiting[0], "")
    assert f"visible checks: 1 of {VISIBLE:g} points; hidden tests worth {HIDDEN:g} more" in r.stdout
    assert path.read_bytes() == before, "validate must never modify the student's file"


def test_validate_sees_what_the_grader_sees_despite_an_input_transformer(tmp_path):
    """A cell that turns every later cell into `pass` passes a local run; validate goes through the
    grader's pipeline (evidence judged outside the student's process) and says nothing passed."""
    nb = nbformat.read(paths.notebooks_dir() / f"{A}.ipynb", as_version=4)
    setup = setup_index(nb)
    nb.cells.insert(setup + 1, nbformat.v4.new_code_cell(
        'get_ipython().input_transformers_post.append(lambda lines: ["pass\\n"])'))
    path = tmp_path / f"{A}.ipynb"
    nbformat.write(nb, path)
    r = validate(path)
    assert f"visible checks: 0 of {VISIBLE:g} points" in r.stdout, r.stdout
    assert not any(line.split()[:1] == ["passed"] for line in r.stdout.splitlines()), r.stdout


def test_a_right_notebook_10_validates_clean_though_its_visible_prediction_tests_are_worth_0(tmp_path):
    """Issue 53 item 6, on the real notebook: its four visible prediction tests are worth 0 points (the point is in
    the hidden test), pass, and read "recorded", never "failed"; validate's exit status is the grade's, 0. Every
    other notebook's full marks are validated from the grader's scores in tests/test_predictions.py (the ten
    notebooks through the grader took 5.5 minutes, 17 to 52 s each)."""
    from tests.builders import right_notebook

    assignment = "10_decoder_block"
    path = tmp_path / f"{assignment}.ipynb"
    nbformat.write(right_notebook(assignment), path)
    r = validate(path)
    assert r.returncode == 0 and "failed" not in r.stdout, r.stdout + r.stderr
    zero = [g for g, p in points_per_test(read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")).items()
            if p == 0 and not g.endswith("_hidden")]
    assert zero, "notebook 10 no longer has a visible test worth 0 points: this test proves nothing"
    for gid in zero:
        line = next(line for line in r.stdout.splitlines() if line.split()[1:2] == [gid.removeprefix("test_")])
        assert line.split()[0] == "recorded", r.stdout
