"""Does a student's feedback page from `python -m autograder grade` read right in a real browser?

A class of two is graded: `passes_all` hands in the student notebook with the reference
answers written in, `not_attempted` hands in the student notebook untouched. Each one's
feedback HTML is opened in Chromium over file:// (folded sections unfolded) and must show every
exercise by name with its points, and no internal test id; the full-marks student must see full points
on every exercise.
"""
from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.nbio import exercise_points
from tests.builders import blank_notebook, right_notebook, run_grade, source_notebook, write_submission

from .conftest import require_chromium

# One worker grades the class once for all three tests (`-n N --dist loadgroup`).
pytestmark = [pytest.mark.browser, pytest.mark.grading, pytest.mark.xdist_group("browser_feedback")]

ASSIGNMENT = "01_tokens_and_ids"
GRADE_TIMEOUT = 600  # seconds for the whole class; about 70 s on 2 busy cores


def grade_command_available() -> str | None:
    """None when `python -m autograder grade` works, else why not."""
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--help"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return f"`python -m autograder grade --help` exits {proc.returncode}: {proc.stderr.strip()[-300:]}"
    return None


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """Grade a class of two in nbgrader's layout; return the output folder and the grading time."""
    require_chromium()  # fail before spending a minute grading on a machine without the browser
    why_not = grade_command_available()
    if why_not:
        pytest.skip(f"the grade command is not ready yet: {why_not}")
    base = tmp_path_factory.mktemp("class")
    submissions = base / "submitted"
    # the reference answers as a learner would type them (no SOLUTION markers), and the notebook untouched
    write_submission(submissions, "passes_all", right_notebook(ASSIGNMENT, markers=False), ASSIGNMENT)
    write_submission(submissions, "not_attempted", blank_notebook(ASSIGNMENT), ASSIGNMENT)
    started = time.monotonic()
    graded = run_grade(submissions, out=base / "graded", timeout=GRADE_TIMEOUT)
    seconds = time.monotonic() - started
    proc = graded.proc
    assert proc.returncode == 0, (f"`python -m autograder grade` exited {proc.returncode}:\n"
                                  f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return graded.out, seconds, exercise_points(source_notebook(ASSIGNMENT))  # exercise -> points, in order


def open_feedback(page, out: Path, student_id: str, shots: Path) -> str:
    """Open a student's feedback page over file://, screenshot it, return its visible text."""
    html = out / "feedback" / student_id / f"{ASSIGNMENT}.html"
    assert html.exists(), f"no feedback page at {html}; the grade command wrote: " + ", ".join(
        str(p.relative_to(out)) for p in sorted(out.rglob("*.html")))
    page.goto(html.as_uri())
    page.wait_for_load_state("load")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # passed ones are folded
    page.screenshot(path=shots / f"feedback_{student_id}.png", full_page=True)
    return page.inner_text("body")


def row_of(text: str, exercise: str) -> str | None:
    """The visible heading line of an exercise: its name first, then its status and points."""
    pattern = re.compile(rf"^{re.escape(exercise)}\b.*\bpoints\b")
    return next((line for line in text.splitlines() if pattern.search(line.strip())), None)


def points_on(line: str, max_points: float) -> float | None:
    """The points shown as 'p / max' (or 'p of max') on a line, if any."""
    m = re.search(rf"(\d+(?:\.\d+)?)\s*(?:/|of|out of)\s*{max_points:g}(?:\.0+)?(?![\d.])", line)
    return float(m.group(1)) if m else None


@pytest.mark.parametrize("student_id", ["passes_all", "not_attempted"])
def test_feedback_names_every_exercise_with_its_points(graded_class, page, shots, student_id):
    """Does the feedback page list each exercise by name with 'points / max', and no test id?"""
    out, seconds, tests = graded_class
    text = open_feedback(page, out, student_id, shots)
    print(f"graded the class in {seconds:.1f} s; screenshot {shots / f'feedback_{student_id}.png'}")
    missing = [g for g in tests if row_of(text, g) is None]
    assert not missing, f"{student_id}'s feedback page does not name these exercises: {missing}"
    ids = re.findall(r"\btest_\w+", text)
    assert not ids, f"an internal test id on the page: {ids}"
    no_points = [g for g, pts in tests.items() if points_on(row_of(text, g), pts) is None]
    assert not no_points, (f"{student_id}'s feedback page names these tests but shows no 'points / max' "
                           f"beside them: {[row_of(text, g) for g in no_points]}")
    total = sum(tests.values())
    assert re.search(rf"\b{total:g}\b", text), f"{student_id}'s feedback page never shows the total {total:g}"


def test_feedback_gives_the_reference_answers_full_marks(graded_class, page, shots):
    """Does a student who wrote the reference answers see full points on every row?"""
    out, _, tests = graded_class
    text = open_feedback(page, out, "passes_all", shots)
    short = {g: row_of(text, g) for g, pts in tests.items() if points_on(row_of(text, g) or "", pts) != pts}
    assert not short, f"the reference answers did not get full points on: {short}"
    assert not re.search(r"(?i)problems with this submission|tampered|could not be graded", text), (
        f"the reference answers' feedback page reports a problem:\n{text[:1500]}")
