"""Issue 47: every way a notebook comes back broken is graded, and ``validate`` agrees with the grade.

The corpus of tests/mangled.py (36 damages of a right notebook of 01) and the course's kinds of student (full,
blank, and wrong and partial in one), a notebook damaged in ten ways at once and one that meets the kernel unusually
(input(), sys.exit(), %%time, a widget that waits) are graded once, as one class, by the real
``python -m autograder grade``. Every damage is graded, none stops the class; every exercise keeps its points or
is scored 0 with a reason the learner can act on.

``validate`` runs as in a students' image (AUTOGRADER_ROOT without solutions/) on the five notebooks that are not
single damages, in one process, and must give the grade's pass/fail on every visible test it can run, and say
how many it cannot run. A kernel costs some 2 core-seconds, so the single damages are not each run again: each
either runs, once validate has put it back, exactly the cells of the full notebook (decided in-process by
:func:`~autograder.grade.submission.repair.local_cells`, and its grade must then equal the full one's), or is one
of the ten damages of the several-at-once notebook, which validate runs.
"""
from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.engine import Limits
from autograder.grade.submission.manual import is_manual_id
from autograder.grade.submission.repair import local_cells
from autograder.nbio import exercise_of, read_notebook
from autograder.validate import has_code
from tests import builders, mangled

# one worker grades the class once for every test of the module
pytestmark = [pytest.mark.slow, pytest.mark.grading, pytest.mark.xdist_group("mangled")]
A = mangled.A
T = mangled.TARGETS[A]
PASSING = ("passed", "recorded")  # validate's words for a visible test that earned its point
STATUS_LINE = re.compile(r"^  (passed|recorded|failed|error|timeout|missing|tampered)\s+(\w+)  \[")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict:
    """The class written and graded once: {"root", "graded", "damages", "behaviours"}."""
    root = tmp_path_factory.mktemp("mangled")
    submissions = root / "submitted"
    damages = mangled.write_class(submissions)
    plain = mangled.write_plain(submissions)
    graded = builders.run_grade(submissions, "--jobs", "2", "--timeout-floor", str(mangled.TIMEOUT_FLOOR),
                                out=root / "graded", timeout=600)
    return {"root": root, "submissions": submissions, "graded": graded, "damages": damages, "plain": plain}


def result(corpus, student: str) -> dict:
    return json.loads((corpus["graded"].out / "results" / student / f"{A}.json").read_text(encoding="utf-8"))


def visible_passed(corpus, student: str) -> dict[str, bool]:
    """exercise -> whether the grade's visible test of it earned its points (a written answer, read by a person, is
    no test)."""
    return {exercise_of(s["grade_id"]): s["points"] == s["max_points"] for s in result(corpus, student)["scores"]
            if not s["grade_id"].endswith("_hidden") and not is_manual_id(s["grade_id"])}


def test_the_class_finishes_and_grades_every_damaged_notebook(corpus):
    g = corpus["graded"]
    students = set(corpus["damages"]) | set(corpus["plain"])
    rows = {r["student_id"]: r for r in g.rows("grades.csv")}
    assert set(rows) == students, g.proc.stdout[-2000:] + g.proc.stderr[-2000:]
    assert f"{len(students)} submissions:" in g.proc.stdout and "Traceback" not in g.proc.stderr, g.proc.stderr[-3000:]


@pytest.mark.parametrize("damage", mangled.DAMAGES, ids=lambda d: d.name)
def test_each_damage_keeps_its_points_or_says_why_it_lost_them(corpus, damage):
    g, full = corpus["graded"], builders.full_marks(A)
    saved = result(corpus, damage.name)
    problems = [f"{p['problem']}: {p['detail']}" for p in saved["problems"]]
    lost = [s for s in saved["scores"] if s["points"] < s["max_points"]]
    if damage.fatal:  # nothing could be read: every test 0, the file's problem said in words
        assert g.total(damage.name, A) == 0 and all(s["message"] for s in lost)
        assert any(damage.problem in p and "then hand it in again" in p for p in problems), problems
        return
    if damage.problem:
        assert any(damage.problem in p for p in problems), problems
    if not damage.lost:
        assert g.total(damage.name, A) == full, (damage.what, lost, problems)
        return
    assert lost, f"{damage.what}: expected the answer {T.exercise} to be lost"
    assert all(s["message"] for s in lost), lost  # what calls the lost answer says so too
    if damage.lost_in == "file":  # the work is in a file that was not graded: its row names it, and what to do
        graded = mangled.notebook(corpus["submissions"], damage.name)
        others = [p.name for p in graded.parent.glob("*.ipynb") if p != graded]
        assert others and all(any(f"{o} beside it was not graded" in p and f"rename it to {graded.name}" in p
                                  for p in problems) for o in others), problems
        return
    own = [s for s in lost if exercise_of(s["grade_id"]) == T.exercise]
    assert own and all(f"the cell with grade id {T.exercise} was deleted" in s["message"]
                       and "restore it from the released notebook" in s["message"] for s in own), own


def test_a_notebook_that_cannot_be_read_says_why_on_every_test(corpus):
    """The feedback page shows each test's message: an unreadable notebook's says what is wrong and what to do,
    not only "could not be read" (problems.csv says it too)."""
    scores = result(corpus, "invalid_json")["scores"]
    assert scores and all("not valid JSON" in s["message"] and s["points"] == 0 for s in scores), scores[:2]


def test_the_figures_of_issue_47(corpus):
    """kinds of damage, graded, put back (full marks though damaged), scored 0 with a reason; none aborts."""
    g, full = corpus["graded"], builders.full_marks(A)
    damages = corpus["damages"].values()
    graded = [d for d in damages if (g.out / "results" / d.name / f"{A}.json").exists()]
    put_back = [d for d in damages if g.total(d.name, A) == full]
    with_reason = [d for d in damages if g.total(d.name, A) < full
                   and all(s["message"] for s in result(corpus, d.name)["scores"] if s["points"] < s["max_points"])]
    print(f"\nissue 47 figures: {len(mangled.DAMAGES)} kinds of damage, {len(graded)} graded, "
          f"{len(put_back)} put back with every point, {len(with_reason)} scored 0 on what was lost, with a reason")
    assert len(graded) == len(mangled.DAMAGES) == len(put_back) + len(with_reason)
    assert sorted(d.name for d in damages if d.lost or d.fatal) == sorted(d.name for d in with_reason)


def test_a_test_cell_validate_cannot_see_is_counted_and_named():
    """No kernel: what validate would run of a notebook whose visible test cell was deleted, in-process."""
    nb = builders.right_notebook(A, markers=False)
    del nb.cells[builders.cell_index(nb, T.gid("test"))]
    local = local_cells(nb.cells)
    assert local.cannot_run == [T.gid("test")]
    assert any("grading puts it back" in detail for _, detail in local.notes)


# --------------------------------------------------------------------------- validate, as in a students' image

@functools.lru_cache(maxsize=None)
def _runs(path: Path) -> tuple | None:
    try:
        local = local_cells(read_notebook(path).cells)
    except ValueError:
        return None
    return (tuple(c.source for c in local.cells if c.cell_type == "code" and has_code(c.source)),
            tuple(local.cannot_run))


def runs(corpus, student: str) -> tuple | None:
    """What validate runs of a student's notebook once put back: its code cells that hold code (a released
    hidden-test cell holds only comments) and the visible tests it cannot run; None when it cannot be read."""
    return _runs(mangled.notebook(corpus["submissions"], student))


@pytest.fixture(scope="module")
def validated(corpus, tmp_path_factory) -> dict:
    """One ``validate`` process over the five notebooks of :data:`tests.mangled.PLAIN` and the unreadable one, in
    a students' image (no solutions/): {"blocks": {student: its lines of output}, "proc"}."""
    students = [*corpus["plain"], "invalid_json"]
    image = tmp_path_factory.mktemp("students-image")  # AUTOGRADER_ROOT without solutions/, as on the Hub
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOGRADER_ROOT", "NBGRADER_EXECUTION")}
    env["AUTOGRADER_ROOT"] = str(image)
    proc = subprocess.run([sys.executable, "-m", "autograder", "validate", "--timeout", str(mangled.WAIT_SECONDS),
                           *(str(mangled.notebook(corpus["submissions"], s)) for s in students)],
                          capture_output=True, text=True, env=env, timeout=600)
    blocks, names = {}, iter(students)
    for line in proc.stdout.splitlines():
        if line.endswith(": running your notebook to check it (hidden tests run when your work is graded)"):
            current = next(names)
            blocks[current] = []
        elif blocks:
            blocks[current].append(line)
    return {"blocks": blocks, "proc": proc}


def validate_says(lines: list[str]) -> dict[str, bool]:
    """exercise -> whether validate says its visible test passed, from its lines of output."""
    said = {}
    for line in lines:
        if m := STATUS_LINE.match(line):
            said[m.group(2)] = m.group(1) in PASSING
        elif line.strip().startswith("not attempted yet"):
            said.update({name.strip(): False for name in line.split(":", 1)[1].split(",")})
    return {name: ok for name, ok in said.items() if not is_manual_id(name)}  # a written answer is no test


def test_validate_checked_every_notebook_without_the_course(corpus, validated):
    proc = validated["proc"]
    assert list(validated["blocks"]) == [*corpus["plain"], "invalid_json"], proc.stdout + proc.stderr
    assert "grader's sandbox" not in proc.stdout and "Traceback" not in proc.stderr and proc.returncode == 1, (
        proc.stdout + proc.stderr)
    # the unreadable notebook is said as an error, in one line, and the others were still checked
    assert [line for line in proc.stderr.splitlines() if "not valid JSON" in line and "then hand it in again" in line]


@pytest.mark.parametrize("student", mangled.PLAIN)
def test_validate_gives_the_grades_pass_or_fail_on_every_visible_test_it_runs(corpus, validated, student):
    lines = validated["blocks"][student]
    said, grade = validate_says(lines), visible_passed(corpus, student)
    assert said, lines
    if student == "wrong_and_partial":  # a wrong, a right and a not attempted answer, as the grade says too
        assert {said.get("build_vocab"), said.get("decode"), said.get("bpe_decode")} == {False, True}, lines
        assert any(l.strip().startswith("not attempted yet") for l in lines), lines
    assert {ex: said[ex] for ex in said if said[ex] != grade[ex]} == {}, (student, lines)
    # what validate could not run, it counts and names: exactly the visible tests it did not report
    unseen = sorted(set(grade) - set(said))
    cannot = next((l for l in lines if l.strip().startswith("cannot run here:")), "")
    assert unseen == sorted(exercise_of(t) for t in re.findall(r"test_\w+", cannot)), lines
    if unseen:
        assert f"cannot run here: {len(unseen)} visible test" in cannot, cannot
    if student == "several_damages":  # validate says, before grading, what grading puts back
        notes = "\n".join(l for l in lines if l.strip().startswith("note:"))
        for words in ("grade id encode was deleted", "test cell test_build_vocab is not in your notebook",
                      "test_embedding_lookup: moved above", "grade id bpe_encode was split",
                      "grade id predict_utf8_length was turned into a markdown cell"):
            assert words in notes, (words, notes)


@pytest.mark.parametrize("damage", mangled.DAMAGES, ids=lambda d: d.name)
def test_each_single_damage_validates_as_a_notebook_that_validate_ran(corpus, damage):
    """Validate runs the damage as it runs the full notebook, or another notebook of :data:`tests.mangled.PLAIN`
    (and the grade is that one's), or the damage is one of those validate ran in the several-at-once notebook, or
    nothing can be read of it."""
    mine = runs(corpus, damage.name)
    same = next((p for p in corpus["plain"] if mine is not None and runs(corpus, p) == mine), None)
    if mine is None:
        assert damage.fatal
    elif same is not None:  # the full notebook, or another that validate ran (the right name left blank)
        assert visible_passed(corpus, damage.name) == visible_passed(corpus, same), same
    else:
        assert damage.name in mangled.SEVERAL, f"{damage.what}: validate runs it differently; add it to SEVERAL"


def test_input_exit_time_magic_and_a_waiting_widget_grade_as_they_validate(corpus, validated):
    lines = validated["blocks"]["kernel_meets"]
    grade = visible_passed(corpus, "kernel_meets")
    said = validate_says(lines)  # the tests it cannot run here are held to the grade with the others, above
    assert all(grade.values()) and said and all(said.values()) and set(said) <= set(grade), lines
    shown = "\n".join(lines)
    assert "StdinNotImplementedError" in shown and "SystemExit: stop here" in shown, shown
    assert f"ran longer than {mangled.WAIT_SECONDS} s and was interrupted; the cells after it ran on" in shown, shown
    problems = [p["detail"] for p in result(corpus, "kernel_meets")["problems"]]
    cap = Limits.for_grading().first_timeout()  # the limit of a cell the course does not run: the widget's
    assert any(f"interrupted after {cap:g} s" in p for p in problems), problems
