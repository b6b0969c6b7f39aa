"""Does a student's feedback page from `python -m autograder grade` read right in a real browser?

The broken class of tests/broken_class.py (notebook 04, graded once for every module of its xdist group) has
`right_1`, who hands in the student notebook with the reference answers written in, and `blank`, who hands it
in untouched. Each one's feedback HTML is opened in Chromium over file:// (folded sections unfolded) and must
show every exercise by name with its points, and no internal test id; the full-marks student must see full
points on every exercise.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder.nbio import exercise_points
from tests import broken_class
from tests.builders import source_notebook, written_points

from .conftest import keep_shot, require_chromium

# The class is graded once for this module and the others that read it (`-n N --dist loadgroup`).
pytestmark = [pytest.mark.browser, pytest.mark.grading, pytest.mark.xdist_group(broken_class.GROUP)]

ASSIGNMENT = broken_class.A


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """The broken class's output folder, and exercise -> points of its notebook, in order."""
    require_chromium()  # fail before spending a minute grading on a machine without the browser
    run = broken_class.graded(tmp_path_factory.mktemp("broken_class"))
    return run.out, exercise_points(source_notebook(ASSIGNMENT))


def open_feedback(page, out: Path, student_id: str, shots: Path) -> str:
    """Open a student's feedback page over file://, screenshot it, return its visible text."""
    html = out / "feedback" / student_id / f"{ASSIGNMENT}.html"
    assert html.exists(), f"no feedback page at {html}; the grade command wrote: " + ", ".join(
        str(p.relative_to(out)) for p in sorted(out.rglob("*.html")))
    page.goto(html.as_uri())
    page.wait_for_load_state("load")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # passed ones are folded
    keep_shot(page, shots / f"feedback_{student_id}.png", full_page=True)
    return page.inner_text("body")


def row_of(text: str, exercise: str) -> str | None:
    """The visible heading line of an exercise: its name first, then its status and points."""
    pattern = re.compile(rf"^{re.escape(exercise)}\b.*\bpoints\b")
    return next((line for line in text.splitlines() if pattern.search(line.strip())), None)


def points_on(line: str, max_points: float) -> float | None:
    """The points shown as 'p / max' (or 'p of max') on a line, if any."""
    m = re.search(rf"(\d+(?:\.\d+)?)\s*(?:/|of|out of)\s*{max_points:g}(?:\.0+)?(?![\d.])", line)
    return float(m.group(1)) if m else None


@pytest.mark.parametrize("student_id", ["right_1", "blank"])
def test_feedback_names_every_exercise_with_its_points(graded_class, page, shots, student_id):
    """Does the feedback page list each exercise by name with 'points / max', and no test id?"""
    out, tests = graded_class
    text = open_feedback(page, out, student_id, shots)
    missing = [g for g in tests if row_of(text, g) is None]
    assert not missing, f"{student_id}'s feedback page does not name these exercises: {missing}"
    ids = re.findall(r"\btest_\w+", text)
    assert not ids, f"an internal test id on the page: {ids}"
    no_points = [g for g, pts in tests.items() if points_on(row_of(text, g), pts) is None]
    assert not no_points, (f"{student_id}'s feedback page names these tests but shows no 'points / max' "
                           f"beside them: {[row_of(text, g) for g in no_points]}")
    total = sum(tests.values()) + written_points(ASSIGNMENT)  # the bug hunt's written why is in the maximum too
    assert re.search(rf"\b{total:g}\b", text), f"{student_id}'s feedback page never shows the total {total:g}"


def test_feedback_gives_the_reference_answers_full_marks(graded_class, page, shots):
    """Does a student who wrote the reference answers see full points on every row?"""
    out, tests = graded_class
    text = open_feedback(page, out, "right_1", shots)
    short = {g: row_of(text, g) for g, pts in tests.items() if points_on(row_of(text, g) or "", pts) != pts}
    assert not short, f"the reference answers did not get full points on: {short}"
    assert not re.search(r"(?i)problems with this submission|tampered|could not be graded", text), (
        f"the reference answers' feedback page reports a problem:\n{text[:1500]}")
