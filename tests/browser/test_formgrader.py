"""Does formgrader, in a real browser, show why a test failed, and does a score changed there reach the CSVs?

A course folder (this repository's nbgrader_config.py, source/ links and solutions) with two
collected submissions is graded by ``python -m autograder grade submitted``; then JupyterLab with
nbgrader's formgrader serves it to Debian's Chromium. The reviewer opens the submission whose
``encode`` is wrong, sees the check's message under the failed test, gives the test 1 point and a
comment, and the next ``grade`` puts both in grades.csv and scores.csv.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder import paths
from tests.browser.conftest import jupyterlab, keep_shot, require_chromium
from autograder.grade.submission.manual import is_manual_cell
from autograder.nbio import grade_id, read_notebook
from tests.builders import A, WRONG_ENCODE, read_rows, right_notebook, with_solution, write_submission

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.nbgrader, pytest.mark.xdist_group("formgrader")]
WHY = next(grade_id(c) for c in read_notebook(paths.solutions_dir() / f"{A}.ipynb").cells if is_manual_cell(c))
WRITTEN = "The windows were cut before the split, so validation windows held training tokens: a loss too good."


def grade(root: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "submitted", "--jobs", "2"], cwd=root,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    require_chromium()
    root = tmp_path_factory.mktemp("formgrader") / "course"
    root.mkdir()
    for name in ("solutions", "source"):
        shutil.copytree(paths.root() / name, root / name, symlinks=True)
    shutil.copy(paths.root() / "nbgrader_config.py", root)
    sub = root / "submitted"
    write_submission(sub, "honest", right_notebook())
    wrong = with_solution(right_notebook(), "encode", WRONG_ENCODE)
    next(c for c in wrong.cells if grade_id(c) == WHY).source = WRITTEN  # the bug hunt's why, written
    write_submission(sub, "wrong_encode", wrong)
    for student in ("honest", "wrong_encode"):
        (sub / student / A / "timestamp.txt").write_text("2026-11-30 09:00:00.000000 UTC")
    grade(root)
    return root


@pytest.fixture(scope="module")
def formgrader(course, tmp_path_factory):
    with jupyterlab(course, tmp_path_factory.mktemp("formgrader-server")) as server:
        yield server.url


def submission_id(course: Path, student: str) -> str:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "transformer-math") as gb:
        return gb.find_submission_notebook(A, A, student).id


def test_formgrader_lists_the_submissions_as_autograded(formgrader, page, shots):
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{formgrader}/formgrader/gradebook/{A}/{A}", wait_until="networkidle")
    page.wait_for_function("document.body.innerHTML.includes('wrong_encode')", timeout=30_000)
    keep_shot(page, shots / "submissions.png", full_page=True)
    assert "honest" in page.content() and "wrong_encode" in page.content()
    page.goto(f"{formgrader}/formgrader/manage_students/wrong_encode", wait_until="networkidle")
    page.wait_for_function(f"document.body.innerText.includes('{A}')", timeout=30_000)
    text = page.inner_text("body")
    keep_shot(page, shots / "student.png", full_page=True)
    assert "not autograded" not in text.lower(), text[:2000]
    assert errors == [], errors


def test_a_reviewer_sees_why_a_test_failed_and_an_override_reaches_the_csvs(course, formgrader, page, shots):
    page.goto(f"{formgrader}/formgrader/submissions/{submission_id(course, 'wrong_encode')}",
              wait_until="networkidle")
    page.wait_for_selector("input.score#test_encode", timeout=30_000)
    body = page.inner_text("body")
    keep_shot(page, shots / "review.png", full_page=True)
    assert "failed: " in body, "the failed test's verdict is shown under it"
    failed = next(r for r in read_rows(course / "submitted-graded" / "scores.csv")
                  if r["student_id"] == "wrong_encode" and r["grade_id"] == "test_encode")
    assert failed["status"] == "failed"
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "transformer-math") as gb:
        pass
    message = json.loads((course / "submitted-graded" / "results" / "wrong_encode" / f"{A}.json").read_text())
    why = next(t["message"] for t in message["scores"] if t["grade_id"] == "test_encode")
    assert why in body, (why, body[:3000])
    assert "hidden=True" not in body, "hidden tests stay hidden in review too"

    score = page.locator("input.score#test_encode")
    score.fill("1")
    score.press("Tab")
    comment = page.locator("textarea#encode-comment")
    comment.fill("Ids start at 0: drop the + 1.")
    comment.press("Tab")
    deadline, saved = time.monotonic() + 30, (None, None)
    while time.monotonic() < deadline:  # formgrader saves in the background
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "transformer-math") as gb:
            saved = (gb.find_grade("test_encode", A, A, "wrong_encode").manual_score,
                     gb.find_comment("encode", A, A, "wrong_encode").manual_comment)
            if saved[0] == 1 and saved[1]:
                break
        time.sleep(0.5)
    keep_shot(page, shots / "override.png", full_page=True)
    assert saved == (1, "Ids start at 0: drop the + 1."), "formgrader saved the score and the comment"

    grade(course)
    graded = course / "submitted-graded"
    row = next(r for r in read_rows(graded / "scores.csv") if r["student_id"] == "wrong_encode"
               and r["grade_id"] == "test_encode")
    assert row["points"] == "1" and row["overridden"] == "yes" and row["comment"] == "Ids start at 0: drop the + 1."
    assert row["status"] == "failed", "a person's score changes the points, not what the grader found"
    total = next(r for r in read_rows(graded / "grades.csv") if r["student_id"] == "wrong_encode")
    assert total["overridden"] == "yes"  # as in scores.csv
    page.goto((graded / "feedback" / "wrong_encode" / f"{A}.html").as_uri())
    assert "Ids start at 0: drop the + 1." in page.inner_text("body")
    keep_shot(page, shots / "feedback.png", full_page=True)


def test_a_written_why_shows_with_its_mark_scheme_and_a_score_given_there_counts(course, formgrader, page, shots):
    """The bug hunt's why is an nbgrader manually graded answer: formgrader shows the learner's words with the
    course's mark scheme under them and a score box; the score saved there reaches the CSVs and the feedback page."""
    page.goto(f"{formgrader}/formgrader/submissions/{submission_id(course, 'wrong_encode')}",
              wait_until="networkidle")
    page.wait_for_selector(f"input.score#{WHY}", timeout=30_000)
    body = page.inner_text("body")
    assert WRITTEN in body and f"Mark scheme for {WHY}" in body, body[:3000]
    keep_shot(page, shots / "why.png", full_page=True)
    score = page.locator(f"input.score#{WHY}")
    score.fill("1")
    score.press("Tab")
    deadline, saved = time.monotonic() + 30, None
    while time.monotonic() < deadline:  # formgrader saves in the background
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "transformer-math") as gb:
            saved = gb.find_grade(WHY, A, A, "wrong_encode").manual_score
        if saved == 1:
            break
        time.sleep(0.5)
    assert saved == 1, "formgrader saved the why's score"
    grade(course)
    graded = course / "submitted-graded"
    row = next(r for r in read_rows(graded / "scores.csv") if r["student_id"] == "wrong_encode"
               and r["grade_id"] == WHY)
    assert (row["points"], row["status"], row["overridden"]) == ("1", "manual", "yes"), row
    total = next(r for r in read_rows(graded / "grades.csv") if r["student_id"] == "wrong_encode")
    assert total["needs_manual_grade"] == "", total
    page.goto((graded / "feedback" / "wrong_encode" / f"{A}.html").as_uri())
    text = page.inner_text("body")
    assert "scored by your instructor" in text and WRITTEN in text, text[:3000]
