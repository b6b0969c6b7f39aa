"""Does ``python -m autograder grade`` keep every promise of docs/grading.md on real notebooks and real nbgrader?

Resuming, --force, usage errors, stock nbgrader's scores and the fallback runner, each on a class of
its own (test_trouble_class.py grades one class with every kind of trouble once).
"""
from __future__ import annotations

import csv
import datetime
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from autograder import paths
from autograder.nbio import exercise_points, read_notebook

pytestmark = pytest.mark.grading
A = "01_tokens_and_ids"
POINTS = exercise_points(read_notebook(paths.solutions_dir() / f"{A}.ipynb"))  # notebook 01 grows
FULL = sum(POINTS.values())
# The least a cell gets: each cell's limit is this or 100 times what the course's own run of it took on this
# machine, under the same load (grade's own limits; a --timeout would give every cell 10 s, however slow the
# machine made the course's cells). Honest cells take well under one second.
TIMEOUT_FLOOR = "10"


# --------------------------------------------------------------------------- usage

@pytest.mark.parametrize("args, says", [(["/no/such/folder"], "no such folder"),
                                        ([__file__], "not a folder"),
                                        (["{tmp}", "--jobs", "0"], "--jobs"),
                                        (["{tmp}", "--timeout", "-1"], "--timeout")])
def test_usage_errors_exit_2_with_one_line(tmp_path, args, says):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", *args], capture_output=True, text=True)
    assert proc.returncode == 2
    assert says in proc.stderr and proc.stdout == ""


def test_a_missing_folder_is_said_before_nbgrader_is_imported(tmp_path):
    """A mistyped path is an error in a fraction of a second: nothing is warmed up, and the pipeline (nbgrader,
    SQLAlchemy: over a core-second) is not imported for it."""
    code = ("import sys\nfrom autograder.cli import main\nrc = main(['grade', sys.argv[1]])\n"
            "print(rc, 'nbgrader' in sys.modules, 'autograder.grade.classrun.pipeline' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "no-such")], capture_output=True, text=True)
    assert proc.stdout.split() == ["2", "False", "False"], (proc.stdout, proc.stderr)
    assert "no such folder" in proc.stderr


@pytest.mark.parametrize("text", ["{not json", '{"isolation": []}', '{"seed": "seven"}', "[]"])
def test_a_corrupt_run_json_is_a_usage_error_that_says_what_to_do_and_is_left_as_it_was(tmp_path, text):
    """Not a silent new seed, which would grade the whole class again: exit 2, the file named, what to do."""
    (tmp_path / "submitted").mkdir()
    out = tmp_path / "graded"
    out.mkdir()
    (out / "run.json").write_text(text)
    before = (out / "run.json").stat()
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(tmp_path / "submitted"), "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr[-2000:]
    said = proc.stderr.strip()
    assert said.startswith("error: ") and len(said.splitlines()) == 1, said
    assert str(out / "run.json") in said and "cannot be read" in said, said
    assert "Move it aside" in said and "--seed" in said and "--force" in said, said
    assert (out / "run.json").read_text() == text and (out / "run.json").stat().st_mtime_ns == before.st_mtime_ns
    assert not (out / "results").exists() and not (out / "gradebook.db").exists(), "nothing was graded"


# --------------------------------------------------------------------------- interruption

@pytest.mark.slow
def test_an_interrupted_run_keeps_what_it_finished_and_force_regrades_all(tmp_path, g):
    root = tmp_path / "submitted"
    n = 5
    # each takes a second of the learner's own (a cell of theirs runs whatever it does): graded in a few tenths
    # of a second, all five finished while the gradebook opened, and were written together, before any kill
    slow = g.add_cell(g.right_notebook(), "import time\ntime.sleep(1)")
    for i in range(n):
        g.write_submission(root, f"passes_all_{i}", slow)
    out = tmp_path / "graded"
    proc = subprocess.Popen(g.grade_command(root, "--out", str(out), "--jobs", "1"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while not list((out / "results").glob("*/*.json")) and time.monotonic() < deadline:
            assert proc.poll() is None, "finished before it could be interrupted"
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    kept = len(list((out / "results").glob("*/*.json")))
    assert 1 <= kept < n
    for p in (out / "results").glob("*/*.json"):
        json.loads(p.read_text())  # whole files only, never half-written

    resumed = g.run_grade(root, "--jobs", "1", out=out)
    assert resumed.proc.returncode == 0, resumed.proc.stderr[-2000:]
    assert f"({n - kept} graded now, {kept} unchanged" in resumed.proc.stdout
    assert [float(r["score"]) for r in resumed.rows("grades.csv")] == [FULL] * n

    forced = g.run_grade(root, "--jobs", "2", "--force", out=out)
    assert f"({n} graded now, 0 unchanged" in forced.proc.stdout


# --------------------------------------------------------------------------- stock nbgrader

def finished_assignments(g) -> list[str]:
    """Notebooks whose checks have their known-mistake tests (the others are still being written)."""
    return [a for a in g.gradable_assignments()
            if (paths.root() / "tests" / "checks" / f"test_nb{a[:2]}.py").exists()]


def stock_sample(assignments: list[str], day: int | None = None) -> list[str]:
    """Which notebook this run compares with stock nbgrader. Stock autograde costs about 10 core-seconds a
    submission (a fresh kernel, its imports, the whole notebook), and this test was a tenth of the test
    command's CPU with two notebooks, so the suite compares one, turning with the date: every notebook is
    compared within ten days of runs. The grading and term benchmarks compare all ten, and so does this test
    with AUTOGRADER_STOCK_ALL=1."""
    if os.environ.get("AUTOGRADER_STOCK_ALL") == "1":
        return assignments
    day = datetime.date.today().toordinal() if day is None else day
    return [assignments[day % len(assignments)]]


def test_the_stock_sample_turns_through_every_notebook(g, monkeypatch):
    monkeypatch.delenv("AUTOGRADER_STOCK_ALL", raising=False)
    every = finished_assignments(g)
    seen = {a for day in range(len(every)) for a in stock_sample(every, day)}
    assert seen == set(every) and all(len(stock_sample(every, d)) == 1 for d in range(len(every)))


@pytest.mark.slow
@pytest.mark.nbgrader
def test_scores_equal_stock_nbgrader_autograde_on_honest_submissions(tmp_path, g):
    assignments = stock_sample(finished_assignments(g))
    print(f"compared with stock nbgrader today: {', '.join(assignments)}")
    submissions = tmp_path / "submitted"
    kinds = g.make_class(submissions, assignments=assignments, students=1)
    # The right student also writes the bug hunt's "why" (the others leave it as released): stock nbgrader must
    # give a written answer no automatic score (a person's to give) and a blank one 0, as ours does
    wrote = written_whys(submissions, "right000", assignments)
    course = tmp_path / "course"
    g.stock_course(course, assignments=assignments, submissions=submissions)
    # Seed 0 is stock's own default (students' validate runs see it too). With seed 1234 nb10's hidden LayerNorm
    # check rejects the reference solution itself under stock nbgrader (a tolerance at the edge), where the grader,
    # comparing with the reference's evidence, accepts it.
    g.stock_autograde(course, assignments=assignments, seed=0)
    ours = g.run_grade(submissions, "--seed", "0")
    assert ours.proc.returncode == 0, ours.proc.stderr[-2000:]
    stock, mine = g.stock_scores(course), g.our_scores(ours.out)
    assert len(stock) > 0 and set(stock) == set(mine)
    whys = {k for k in stock if k[2].startswith("why_")}
    assert wrote and wrote <= whys, (wrote, whys)
    automatic = gradebook_auto_scores(ours.out)
    assert {k: stock[k] for k in whys} == {k: automatic[k] for k in whys} \
        == {k: None if k in wrote else 0 for k in whys}, "written answers: no automatic score; blank ones: 0"
    different = {k: (stock[k], mine[k]) for k in stock if k not in whys and stock[k] != mine[k]}
    assert not different, f"scores differ from stock nbgrader (stock, ours): {different}"
    assert {kinds[k[:2]] for k in stock if mine[k] == 0} >= {"blank", "wrong"}
    # Under stock nbgrader itself: every reference answer earns full marks, every released notebook zero.
    earned, possible = {}, {}
    for row in ours.rows("scores.csv"):
        key = row["student_id"], row["assignment_id"]
        if row["grade_id"].startswith("why_"):  # a written answer: a person's points, not the tests'
            continue
        earned[key] = earned.get(key, 0) + stock[key + (row["grade_id"],)]
        possible[key] = possible.get(key, 0) + float(row["max_points"])
    for key, kind in kinds.items():
        if kind == "right":
            assert earned[key] == possible[key] > 0, f"stock nbgrader gave the reference answers of {key} {earned[key]}"
        if kind == "blank":
            assert earned[key] == 0, f"stock nbgrader gave the released notebook {key} {earned[key]} points"


def written_whys(submissions, student: str, assignments: list[str]) -> set[tuple[str, str, str]]:
    """Write an answer into ``student``'s "why" cells of ``assignments``; their (student, assignment, grade id)."""
    import nbformat

    from autograder.grade.submission import manual
    from autograder.nbio import grade_id

    wrote = set()
    for a in assignments:
        path = submissions / student / a / f"{a}.ipynb"
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if manual.is_manual_cell(cell):
                cell.source = "The shape was right and the values were not: the flat order was kept."
                wrote.add((student, a, grade_id(cell)))
        nbformat.write(nb, path)
    return wrote


def gradebook_auto_scores(out) -> dict[tuple[str, str, str], float | None]:
    """(student, assignment, grade id) -> the automatic score our grade wrote into its gradebook.db."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        return {(sub.student.id, a.name, grade.name): grade.auto_score
                for a in gb.assignments for sub in a.submissions for nb in sub.notebooks for grade in nb.grades}


@pytest.mark.slow
def test_the_nbclient_fallback_gives_the_same_verdicts(tmp_path, g):
    root = tmp_path / "submitted"
    g.write_submission(root, "passes_all", g.right_notebook())
    g.write_submission(root, "blank", g.blank_notebook())
    g.write_submission(root, "timeout_decode", g.with_solution(g.right_notebook(), "decode", g.WAITING_DECODE))
    graded = g.run_grade(root, "--engine", "nbclient", "--timeout-floor", TIMEOUT_FLOOR)
    problems = graded.rows("problems.csv") if (graded.out / "problems.csv").exists() else "no problems.csv"
    assert graded.proc.returncode == 0, (problems, graded.proc.stdout[-2000:], graded.proc.stderr[-3000:])
    assert graded.total("passes_all") == FULL and graded.total("blank") == 0
    assert graded.scores("timeout_decode")["test_decode"] == (0, "timeout")
    assert graded.total("timeout_decode") == FULL - POINTS["decode"]
    assert "nbclient fallback" in graded.proc.stdout
