"""Issue 55, item 1: every lost point is explained where people read it (problems.csv, report.html, the feedback page).

Three damages of a right notebook 04 that were graded in silence or explained wrongly: the work done in
``NAME-Copy1.ipynb`` beside the right-named notebook (the right name is graded, as nbgrader grades it, and the
copy must be named), an answer split in two whose second part has no nbgrader metadata (joined and named
with its grade id), and a Colab save that dropped every cell's nbgrader metadata (matched to the release and
graded, said once, never as tampering). The rules are proven in-process first (discover, repair, rematch),
then on the three graded by the real ``grade`` command, in the class tests/grade/test_classreport.py counts
mistakes in (tests/class04.py: one run for both).
"""
from __future__ import annotations

import copy
import csv
import html
import json
import os
import re
from pathlib import Path

import nbformat
import pytest

from autograder import paths
from autograder.grade.submission.discover import discover
from autograder.grade.submission.repair import repair
from autograder.grade.submission.sanitize import plan, source_tests
from autograder.nbio import exercise_of, grade_id, is_solution_cell, is_test_cell, read_notebook
from autograder.release import student_notebook
from tests import builders, class04, mangled

pytestmark = [pytest.mark.grading, pytest.mark.xdist_group(class04.GROUP)]  # the class is graded once for both
A = class04.A
T = mangled.TARGETS[A]
COPY = f"{A}-Copy1.ipynb"
RELEASED = read_notebook(paths.notebooks_dir() / f"{A}.ipynb")
ANSWERS = sum(is_solution_cell(c) for c in RELEASED.cells)  # code answers; 04 also grows a written one
GRADED = sum(bool(grade_id(c)) for c in RELEASED.cells)  # every cell nbgrader grades or reads


@pytest.fixture(scope="module")
def course():
    """(the release as a student gets it, its source tests) of 04."""
    source = read_notebook(paths.solutions_dir() / f"{A}.ipynb")
    released = student_notebook(source, f"{A}.ipynb")
    return released, source_tests(source, released)


def save(folder: Path, nb, name: str, mtime: float | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def stripped(nb):
    """``nb`` as a Colab save leaves it: every cell's nbgrader metadata gone."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        cell.metadata.pop("nbgrader", None)
    return nb


# --------------------------------------------------------------------------- 1. a copy beside the right name

def test_a_newer_fuller_copy_beside_the_right_name_is_named_and_the_right_name_graded(tmp_path):
    folder = tmp_path / "ann" / A
    save(folder, builders.blank_notebook(A), f"{A}.ipynb", mtime=1_700_000_000)
    save(folder, builders.right_notebook(A, markers=False), COPY, mtime=1_700_007_200)
    (sub,) = discover(tmp_path, [A])
    assert sub.path.name == f"{A}.ipynb"  # what nbgrader grades
    (problem,) = sub.problems
    assert problem.problem == "other notebook" and not problem.fatal
    detail = problem.detail
    assert f"graded {A}.ipynb" in detail and f"{COPY} beside it was not graded" in detail, detail
    assert "was saved 2 h later" in detail and f"more answers written ({ANSWERS} of {ANSWERS}, against 0)" in detail, detail
    assert f"rename it to {A}.ipynb" in detail and "hand it in again" in detail, detail


def test_a_copy_is_named_for_more_answers_or_more_cells_run_even_when_saved_first(tmp_path):
    folder = tmp_path / "ben" / A
    save(folder, builders.right_notebook(A, markers=False), COPY, mtime=1_700_000_000)
    save(folder, builders.blank_notebook(A), f"{A}.ipynb", mtime=1_700_000_500)
    ran = builders.blank_notebook(A)  # the demonstrations run and one changed, no answer written
    for n, cell in enumerate(c for c in ran.cells if c.cell_type == "code"):
        cell.execution_count = n + 1
    ran.cells[builders.setup_index(ran)].source += "\nprint('my own line')\n"
    save(folder, ran, "scratch.ipynb", mtime=1_700_000_000)
    (sub,) = discover(tmp_path, [A])
    details = {p.detail.split(" beside it")[0].rsplit("; ", 1)[1]: p.detail for p in sub.problems}
    assert set(details) == {COPY, "scratch.ipynb"}, sub.problems
    assert "more answers written" in details[COPY] and "saved" not in details[COPY].split("though it")[1]
    assert "has more cells run" in details["scratch.ipynb"] and "answers" not in details["scratch.ipynb"]


def test_an_older_backup_or_an_unchanged_copy_is_not_named(tmp_path):
    right = builders.right_notebook(A, markers=False)
    save(tmp_path / "cy" / A, right, f"{A}.ipynb", mtime=1_700_000_500)
    save(tmp_path / "cy" / A, builders.blank_notebook(A), "backup.ipynb", mtime=1_700_000_000)  # older, emptier
    save(tmp_path / "di" / A, right, f"{A}.ipynb", mtime=1_700_000_000)
    save(tmp_path / "di" / A, right, COPY, mtime=1_700_000_900)  # newer, but the same code: nothing to gain
    assert [s.problems for s in discover(tmp_path, [A])] == [[], []]


def test_a_readable_copy_beside_an_unreadable_right_name_is_named(tmp_path):
    folder = tmp_path / "eve" / A
    folder.mkdir(parents=True)
    (folder / f"{A}.ipynb").write_text('{"cells": [ cut', encoding="utf-8")
    save(folder, builders.right_notebook(A, markers=False), COPY)
    (sub,) = discover(tmp_path, [A])
    assert sub.path.name == f"{A}.ipynb" and [p.problem for p in sub.problems] == ["other notebook"]
    assert f"can be read as a notebook, and {A}.ipynb cannot" in sub.problems[0].detail


# --------------------------------------------------------------------------- 2. a split whose second part has no metadata

def test_a_split_answer_whose_second_part_lost_its_metadata_is_joined_and_named_by_grade_id(course):
    _, tests = course
    nb = builders.right_notebook(A, markers=False)
    whole = nb.cells[builders.cell_index(nb, T.exercise)].source
    mangled.damage("solution_split_unmarked").change(nb, T)
    second = nb.cells[builders.cell_index(nb, T.exercise) + 1]
    assert "nbgrader" not in second.metadata and second.source.startswith(" ")  # the damage is what it says
    p = plan(nb, tests)
    (note,) = [d for kind, d in p.notes if kind == "cell split"]
    assert f"grade id {T.exercise} was split into 2 cells (1 of them without its nbgrader metadata)" in note
    assert whole in p.sources and not p.tampered and not p.missing


def test_a_plain_cell_after_an_answer_that_runs_alone_is_not_joined_to_it(course):
    answers = [g for g in dict.fromkeys(t.anchor for t in course[1]) if g]
    nb = builders.right_notebook(A, markers=False)
    at = builders.cell_index(nb, T.exercise)
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell("print(softmax(np.zeros(3)))\n"))
    fixed = repair(list(nb.cells), answers)
    assert not fixed.notes and len(fixed.cells) == len(nb.cells)


# --------------------------------------------------------------------------- 3. a save that dropped nbgrader's metadata

def test_a_notebook_without_any_nbgrader_metadata_is_matched_to_the_release(course):
    released, tests = course
    nb = stripped(builders.right_notebook(A, markers=False))
    p = plan(nb, tests)
    assert [kind for kind, _ in p.notes] == ["metadata lost"], p.notes
    assert f"{GRADED} of {GRADED} graded cells found" in p.notes[0][1] and not p.tampered and not p.missing
    # every graded cell has its released metadata back, in memory, where the release has it
    assert [(i, grade_id(c)) for i, c in enumerate(nb.cells) if grade_id(c)] == \
        [(i, grade_id(c)) for i, c in enumerate(released.cells) if grade_id(c)]


@pytest.mark.parametrize("assignment", builders.gradable_assignments())
@pytest.mark.parametrize("kind", ["right", "blank"])
def test_every_notebook_of_the_course_gets_every_graded_cell_back_in_its_place(assignment, kind):
    """In-process, on all ten notebooks: each graded cell of a stripped notebook (answers, tests, written answers)
    gets its grade id back on the very cell that had it, nothing is tampered or missing, and it is said once."""
    source = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    tests = source_tests(source, student_notebook(source, f"{assignment}.ipynb"))
    nb = builders.right_notebook(assignment, markers=False) if kind == "right" else builders.blank_notebook(assignment)
    had = [(i, grade_id(c)) for i, c in enumerate(nb.cells) if grade_id(c)]
    bare = stripped(nb)
    p = plan(bare, tests)
    assert [kind for kind, _ in p.notes] == ["metadata lost"] and not p.tampered and not p.missing, p.notes
    assert [(i, grade_id(c)) for i, c in enumerate(bare.cells) if grade_id(c)] == had
    assert f"{len(had)} of {len(had)} graded cells found" in p.notes[0][1]


def test_a_blank_notebook_without_metadata_keeps_its_stubs_as_answers(course):
    _, tests = course
    nb = stripped(builders.blank_notebook(A))
    p = plan(nb, tests)
    assert [kind for kind, _ in p.notes] == ["metadata lost"] and not p.missing
    assert sum(is_solution_cell(c) for c in nb.cells) == ANSWERS


def test_an_edited_test_cell_is_still_tampering_when_the_metadata_is_gone(course):
    _, tests = course
    nb = builders.right_notebook(A, markers=False)
    nb.cells[builders.cell_index(nb, f"test_{T.exercise}")].source = "pass"
    p = plan(stripped(nb), tests)
    assert [kind for kind, _ in p.notes].count("metadata lost") == 1
    assert list(p.tampered) == [f"test_{T.exercise}"], p.tampered


def test_a_notebook_that_kept_some_metadata_is_not_rematched(course):
    _, tests = course
    nb = builders.right_notebook(A, markers=False)
    nb.cells[builders.cell_index(nb, f"test_{T.exercise}")].metadata.pop("nbgrader")
    p = plan(nb, tests)
    assert "metadata lost" not in [kind for kind, _ in p.notes] and list(p.tampered) == [f"test_{T.exercise}"]


# --------------------------------------------------------------------------- the three, graded as a class

DAMAGES = class04.DAMAGES


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The three and "full", graded in one class with tests/grade/test_classreport.py's (tests/class04.py)."""
    return class04.graded(tmp_path_factory.mktemp("class04"))


def page_text(path: Path) -> str:
    text = re.sub(r"<style.*?</style>|<script.*?</script>", " ", path.read_text(encoding="utf-8"), flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", text)))


def feedback(g, student: str) -> str:
    return page_text(g.out / "feedback" / student / f"{A}.html")


def test_the_copy_is_named_in_problems_csv_the_feedback_page_and_the_report(graded):
    said = f"{COPY} beside it was not graded"
    rows = [d for kind, d in graded.problems("work_in_a_copy", A) if kind == "other notebook"]
    assert len(rows) == 1 and said in rows[0] and f"rename it to {A}.ipynb" in rows[0], graded.problems("work_in_a_copy", A)
    assert said in feedback(graded, "work_in_a_copy")
    assert f"other notebook: graded {A}.ipynb" in page_text(graded.out / "report.html")
    assert graded.total("work_in_a_copy", A) == 0  # the right name, as released, is what was graded


def test_the_split_answer_is_named_with_its_grade_id_and_keeps_its_points(graded):
    rows = [d for kind, d in graded.problems("solution_split_unmarked", A) if kind == "cell split"]
    assert len(rows) == 1 and f"grade id {T.exercise} was split" in rows[0], graded.problems("solution_split_unmarked", A)
    assert f"grade id {T.exercise} was split" in feedback(graded, "solution_split_unmarked")
    assert graded.cells("solution_split_unmarked", A) == graded.cells("full", A)


def test_the_colab_save_is_said_once_never_as_tampering_and_the_report_agrees_with_the_points(graded):
    student = "saved_by_colab_without_nbgrader"
    problems = graded.problems(student, A)
    assert [kind for kind, _ in problems] == ["metadata lost"], problems
    assert "matched to the released notebook" in problems[0][1]
    cells = graded.cells(student, A)
    assert cells == graded.cells("full", A) and "passed" in {s for _, _, s in cells.values()}  # every point, status
    assert not {s for _, _, s in cells.values()} & {"tampered", "missing"}, cells
    assert "test cell was changed" not in feedback(graded, student).lower()
    # the report's pass rates are the points: per exercise, who earned every point of its visible check
    report = (graded.out / "report.html").read_text(encoding="utf-8")
    rows = {r["grade_id"]: r for r in graded.rows("scores.csv") if r["grade_id"].startswith("test_")}
    for gid in {g for g in rows if not g.endswith("_hidden")}:
        earned = sum(1 for r in graded.rows("scores.csv") if r["grade_id"] == gid
                     and float(r["points"]) == float(r["max_points"]))
        m = re.search(rf'data-exercise="{exercise_of(gid)}"><td>[^<]*</td><td data-visible-passed="(\d+)" '
                      rf'data-visible-of="(\d+)"', report)
        assert m and (int(m[1]), int(m[2])) == (earned, len(class04.EVERYONE)), (gid, m and m.groups(), earned)


def test_the_colab_save_s_gradebook_and_autograded_notebook_are_nbgrader_s(graded):
    """formgrader reads the gradebook and the autograded notebook: both hold the matched cells as nbgrader's."""
    from nbgrader.api import Gradebook

    def autograded(student: str) -> list[str]:
        nb = json.loads((graded.out / "autograded" / student / A / f"{A}.ipynb").read_text(encoding="utf-8"))
        return [c["metadata"]["nbgrader"]["grade_id"] for c in nb["cells"] if "nbgrader" in c["metadata"]]

    student = "saved_by_colab_without_nbgrader"
    with Gradebook(f"sqlite:///{graded.out / 'gradebook.db'}") as gb:
        mine, full = gb.find_submission(A, student), gb.find_submission(A, "full")
        assert mine.score == full.score == graded.total("full", A)
        assert {g.name: g.score for g in mine.notebooks[0].grades} == {g.name: g.score for g in full.notebooks[0].grades}
    assert autograded(student) == autograded("full") and len(autograded(student)) >= GRADED
