"""The small defects found on the round-3 trial, each where it is behaviour: a validate run that does not
print the kernel's own warnings, a greedy_token message that does not contradict itself, and the
``grade --help`` text for the gradebook in a course."""
from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from autograder.validate import run_notebook
from tests.harness import run_exercise

pytestmark = pytest.mark.grading


def test_a_local_validate_run_does_not_print_the_kernel_s_tcp_warning(tmp_path, capfd):
    path = tmp_path / "99_not_in_the_course.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print('hi')")]), path)
    nb, problem = run_notebook(path, timeout=60)
    assert problem is None and nb.cells[0].outputs[0]["text"] == "hi\n"  # the run itself still shows its output
    err = capfd.readouterr().err
    assert "TCP" not in err and "WARNING" not in err, err


def test_greedy_token_s_message_names_the_expected_index_without_contradicting_itself():
    argmin = "def greedy_token(logits):\n    import numpy as np\n    return int(np.argmin(logits))\n"
    verdicts = run_exercise("04_softmax_and_probability", "greedy_token", argmin)
    messages = [str(v.local) for v in verdicts if v.local is not None]
    assert messages, "the argmin mistake must fail"
    assert any("largest logit at index 0" in m and "expected 0, got 2" in m for m in messages), messages
    assert not any("is 0: expected 0" in m for m in messages), messages


def test_grade_help_says_where_the_gradebook_is_in_a_course():
    text = subprocess.run([sys.executable, "-m", "autograder", "grade", "--help"], capture_output=True, text=True,
                          check=True).stdout
    flat = " ".join(text.split())
    assert "the course's own gradebook" in flat and "sqlite in --out" in flat, flat
