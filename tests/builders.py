"""Submissions and classes of them, built from solutions/ and notebooks/, and what grading them wrote.

One place for what the grading tests (tests/grade, tests/adversarial, tests/browser, tests/course) and the
benchmarks (benchmarks/grading.py, cluster.py, report.py) build, so that both grade the same kind of class:

* a notebook: the released one left blank, answered right (the reference solution's code typed into its
  solution cells), wrong (one exercise replaced by a known mistake of tests/checks/test_nbNN.py) or with
  every answer returning None; one answer changed (:func:`solve`), a cell found, added or copied;
* a submission written where ``grade`` and nbgrader look for it (``SUBMISSIONS/<student>/<assignment>/``),
  and a class of right, wrong and blank students (:func:`make_class`);
* the real ``python -m autograder grade`` (:func:`run_grade`, whose record is :class:`Graded`) and stock
  ``nbgrader autograde`` on the same class (:func:`stock_course`, :func:`stock_autograde`);
* a made-up class of results, for the report without running a notebook (:func:`made_up_class`), and a
  broken class of 04 as records (:func:`broken_04_records`: a SyntaxError, time-outs, a known mistake).

A kind of student or a known mistake is chosen by name from a closed set: a misspelled name raises
ValueError naming the choices (``autograder.checks.core.known_variant``), never hands out something else.
Submissions in the tests are named for their expected outcome (``passes_all``, ``fails_encode``, ``blank``);
problem cases for what is wrong with them (``invalid_json``, ``deleted_test``).
"""
from __future__ import annotations

import copy
import csv
import hashlib
import importlib
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder import paths
from autograder.checks.core import known_variant
from autograder.nbio import exercise_of, exercise_points, grade_id, is_solution_cell, points_per_test, read_notebook

A = "01_tokens_and_ids"  # the notebook most grading tests hand in
KINDS = ("right", "wrong", "blank")  # the students of a generated class
WRONG_ENCODE = "def encode(tokens, vocab, unk='<unk>'):\n    return [vocab.get(t, 0) + 1 for t in tokens]\n"
# A decode that never returns, waiting rather than spinning: the tests that hand it in are about the verdict
# "timed out" and what follows it, not the loop. It meets three cells (time-outs of 10, 5 and 5 s), and spinning
# it took a core from the rest of the test command for those 20 s; the interrupt reaches a sleeping loop the same
# way (KeyboardInterrupt at the next bytecode). Busy loops are interrupted in tests/grade/test_engine.py and
# tests/grade/test_time_budget.py (issue 25's class, tests/broken_class.py, waits too).
WAITING_DECODE = "def decode(ids, vocab):\n    import time\n    while True:\n        time.sleep(0.05)\n"
SOLUTION_MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")
SETUP = re.compile(r"\bimport nb\d\d as check\b")  # the set-up cell: `from autograder.checks import nbNN as check`


# --------------------------------------------------------------------------- an assignment

def one_of(name: str, choices, of: str) -> str:
    """``name`` if it is one of ``choices``. A misspelled name raises ValueError naming the choices (the
    package's ``known_variant``, whose message the checks' NumPy models give), and so does no name at all:
    here, unlike a model's variant, None is not a choice."""
    if name not in choices:
        known_variant(name, choices, of)
        raise ValueError(f"{of}: name one of {', '.join(sorted(choices))}")
    return name


def gradable_assignments() -> list[str]:
    """Assignments with both a reference solution and a released student notebook."""
    return [a for a in paths.assignments() if (paths.notebooks_dir() / f"{a}.ipynb").exists()]


def source_notebook(assignment: str = A) -> nbformat.NotebookNode:
    """The reference solution (solutions/), as nbgrader's source."""
    return read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")


def solutions(assignment: str = A) -> dict[str, str]:
    """exercise -> the reference solution's code of that exercise."""
    return {grade_id(c): c.source for c in source_notebook(assignment).cells if is_solution_cell(c)}


def full_marks(assignment: str = A) -> float:
    return sum(exercise_points(source_notebook(assignment)).values())


FULL = full_marks()  # notebook 01 grows: tests read its points instead of restating them


def written_points(assignment: str = A) -> float:
    """The points of the notebook's written answers (each bug hunt's ``why_...``): in the maximum from the start,
    given by a person in formgrader, so a right notebook graded by ``grade`` alone scores :func:`full_marks`."""
    from autograder.grade.submission.manual import is_manual_cell

    return sum(float(c.metadata.nbgrader["points"]) for c in source_notebook(assignment).cells if is_manual_cell(c))


# --------------------------------------------------------------------------- notebooks

def blank_notebook(assignment: str = A) -> nbformat.NotebookNode:
    """The released student notebook, untouched (every exercise "not attempted")."""
    return read_notebook(paths.notebooks_dir() / f"{assignment}.ipynb")


def fill_in(nb, assignment: str = A, *, markers: bool = True):
    """``nb`` (in place) with each solution cell holding the reference code; ``markers=False`` leaves out the
    ``### BEGIN/END SOLUTION`` lines, as a learner would type it."""
    answers = solutions(assignment)
    for cell in nb.cells:
        if is_solution_cell(cell) and grade_id(cell) in answers:
            source = answers[grade_id(cell)]
            cell.source = source if markers else "\n".join(
                line for line in source.splitlines() if not SOLUTION_MARKER.match(line))
    return nb


def right_notebook(assignment: str = A, *, markers: bool = True) -> nbformat.NotebookNode:
    """The released notebook with every exercise answered by the reference solution's code."""
    return fill_in(blank_notebook(assignment), assignment, markers=markers)


def returning(exercise: str, value: str = "None") -> str:
    """An answer that defines ``exercise`` to return the expression ``value``, whatever it is given."""
    return f"def {exercise}(*args, **kwargs):\n    return {value}\n"


def answer_all(nb, value: str = "None"):
    """``nb`` (in place) with every exercise answered by a function returning ``value``."""
    for cell in nb.cells:
        if is_solution_cell(cell):
            cell.source = returning(grade_id(cell), value)
    return nb


def none_notebook(assignment: str = A) -> nbformat.NotebookNode:
    """Every exercise answered with a function that returns None."""
    return answer_all(blank_notebook(assignment))


def mistakes(assignment: str) -> list:
    """The known-wrong implementations (tests.harness.Mistake) of tests/checks/test_nbNN.py, [] where none."""
    root = str(paths.root())
    if root not in sys.path:  # tests/ is a package of the repository, not of the installed autograder
        sys.path.insert(0, root)
    name = f"tests.checks.test_nb{assignment[:2]}"
    try:
        return list(importlib.import_module(name).MISTAKES)
    except ModuleNotFoundError as exc:
        if exc.name != name:  # a module the checks' tests import is missing: say so, not "no mistakes"
            raise
        return []
    except AttributeError:
        return []


def known_mistake(assignment: str, exercise: str, label: str):
    """The known mistake ``label`` of ``exercise`` in tests/checks/test_nbNN.py.

    Labels are a closed set: one that is not there raises ValueError naming the choices, where a
    misspelled label would otherwise hand a class the wrong mistake or none."""
    known = mistakes(assignment)
    one_of(exercise, {m.exercise for m in known}, f"tests/checks/test_nb{assignment[:2]}.py's MISTAKES")
    by_label = {m.label: m for m in known if m.exercise == exercise}
    return by_label[one_of(label, by_label, f"{exercise} of {assignment}")]


def mistake_for(assignment: str, index: int = 0) -> tuple[str, str]:
    """(exercise, source) of a known-wrong implementation, the ``index``-th (round the list) of the notebook's
    checks tests; a function returning None where the notebook has none."""
    known = mistakes(assignment)
    if known:
        m = known[index % len(known)]
        return m.exercise, typed(m.source)
    exercise = next(iter(solutions(assignment)))
    return exercise, returning(exercise)


def wrong_notebook(assignment: str = A, index: int = 0, *, mistake=None) -> nbformat.NotebookNode:
    """Right everywhere except one exercise, which holds a realistic mistake: ``mistake`` (a Mistake, see
    :func:`known_mistake`) or else the ``index``-th of :func:`mistake_for`."""
    exercise, source = (mistake.exercise, mistake.source) if mistake is not None else mistake_for(assignment, index)
    return solve(right_notebook(assignment), exercise, source)


def notebook_of(kind: str, assignment: str = A, index: int = 0) -> nbformat.NotebookNode:
    """The notebook a ``kind`` of student ("right", "wrong", "blank") hands in; any other kind raises."""
    one_of(kind, KINDS, "a generated class's student")
    return {"right": right_notebook, "blank": blank_notebook,
            "wrong": lambda a: wrong_notebook(a, index)}[kind](assignment)


# --------------------------------------------------------------------------- cells

def typed(source: str) -> str:
    """``source`` as a cell holds it: dedented, no blank lines around it, one newline at the end."""
    return textwrap.dedent(source).strip() + "\n"


def cell_index(nb, gid: str) -> int:
    """Where the cell whose grade_id is ``gid`` stands; a grade_id not there raises ValueError."""
    for i, cell in enumerate(nb.cells):
        if grade_id(cell) == gid:
            return i
    raise ValueError(f"no cell has grade_id {gid!r}; the notebook has "
                     f"{', '.join(g for g in map(grade_id, nb.cells) if g)}")


def setup_index(nb) -> int:
    """Where the set-up cell (``from autograder.checks import nbNN as check``) stands."""
    return next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and SETUP.search(c.source))


def solve(nb, exercise: str, source: str):
    """``nb`` (in place) with ``source`` (dedented) as the answer to ``exercise``."""
    nb.cells[solution_index(nb, exercise)].source = typed(source)
    return nb


def with_solution(nb, exercise: str, source: str):
    """A copy of ``nb`` with ``source`` as the answer to ``exercise``."""
    return solve(copy.deepcopy(nb), exercise, source)


def solution_index(nb, exercise: str) -> int:
    for i, cell in enumerate(nb.cells):
        if is_solution_cell(cell) and grade_id(cell) == exercise:
            return i
    raise ValueError(f"no solution cell answers {exercise!r}; the notebook's exercises are "
                     f"{', '.join(grade_id(c) for c in nb.cells if is_solution_cell(c))}")


def add_cell(nb, source: str, after: int | str | None = None):
    """``nb`` (in place) with a plain student code cell after cell ``after`` (an index or a grade_id; default:
    after the set-up cell)."""
    at = setup_index(nb) if after is None else (cell_index(nb, after) if isinstance(after, str) else after)
    nb.cells.insert(at + 1, nbformat.v4.new_code_cell(typed(source)))
    return nb


def copy_cell(nb, gid: str, *, id: str, source: str | None = None):
    """A copy of the cell ``gid`` (its nbgrader metadata too) under cell id ``id``, not yet in ``nb``."""
    cell = copy.deepcopy(nb.cells[cell_index(nb, gid)])
    cell.id = id
    if source is not None:
        cell.source = source
    return cell


# --------------------------------------------------------------------------- submissions and classes

def write_submission(root: Path, student: str, nb, assignment: str = A, name: str | None = None) -> Path:
    """``root/<student>/<assignment>/<name or assignment.ipynb>``: ``nb`` a notebook or the file's text."""
    path = root / student / assignment / (name or f"{assignment}.ipynb")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(nb) if not isinstance(nb, str) else nb, encoding="utf-8")
    return path


def make_class(root: Path, *, assignments: list[str], students: int = 1) -> dict[tuple[str, str], str]:
    """``students`` of each kind (``right000``, ``wrong000``, ``blank000``...) hand in every assignment under
    ``root``; returns (student, assignment) -> kind. Wrong student i makes the i-th known mistake."""
    kinds = {}
    for kind in KINDS:
        for i in range(students):
            student = f"{kind}{i:03d}"
            for a in assignments:
                write_submission(root, student, notebook_of(kind, a, i), a)
                kinds[student, a] = kind
    return kinds


def file_hashes(root: Path) -> dict[str, str]:
    """relative path -> sha256 of every file under ``root``."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


# --------------------------------------------------------------------------- grading them

def venv_env(env: dict | None = None) -> dict[str, str]:
    """``env`` (default os.environ) with this interpreter's bin first on PATH (nbgrader calls ``alembic``)."""
    env = dict(os.environ if env is None else env)
    return {**env, "PATH": str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")}


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Graded:
    """A finished ``grade`` run: its exit status, terminal output and the files in --out."""

    proc: subprocess.CompletedProcess
    out: Path

    def rows(self, name: str) -> list[dict]:
        return read_rows(self.out / name)

    def _of(self, name: str, student: str, assignment: str) -> list[dict]:
        return [r for r in self.rows(name) if r["student_id"] == student and r["assignment_id"] == assignment]

    def scores(self, student: str, assignment: str = A) -> dict[str, tuple[float, str]]:
        """grade_id -> (points, status)."""
        return {r["grade_id"]: (float(r["points"]), r["status"]) for r in self._of("scores.csv", student, assignment)}

    def cells(self, student: str, assignment: str = A) -> dict[str, tuple[float, float, str]]:
        """grade_id -> (points, max_points, status)."""
        return {r["grade_id"]: (float(r["points"]), float(r["max_points"]), r["status"])
                for r in self._of("scores.csv", student, assignment)}

    def grade(self, student: str, assignment: str = A) -> tuple[float, float]:
        """(score, max_score) from grades.csv."""
        return next((float(r["score"]), float(r["max_score"])) for r in self._of("grades.csv", student, assignment))

    def total(self, student: str, assignment: str = A) -> float:
        return self.grade(student, assignment)[0]

    def problems(self, student: str, assignment: str = A) -> list[tuple[str, str]]:
        return [(r["problem"], r["detail"]) for r in self._of("problems.csv", student, assignment)]

    def course_seconds(self, student: str, assignment: str = A) -> dict[str, float]:
        """The course's own seconds for each cell ("test:test_x" -> s) that ``student``'s result was graded
        against: its reference run, timed on this machine under its load and saved in --out (what each cell's
        limit was computed from)."""
        saved = json.loads((self.out / "results" / student / f"{assignment}.json").read_text(encoding="utf-8"))
        ref = self.out / "reference" / f"{assignment}-{saved['source_hash'][:16]}-{saved['seed']}.json"
        return {k: float(v) for k, v in json.loads(ref.read_text(encoding="utf-8"))["seconds"].items()}

    def course_limit(self, student: str, grade_id: str, floor: float, assignment: str = A) -> tuple[float, float]:
        """(limit, the course's seconds) of test cell ``grade_id`` in a run given ``--timeout-floor floor``:
        max(floor, factor x the course's seconds for it), at most the cap, as grade computes it."""
        from autograder.engine import Limits
        from autograder.grade.submission.timelimits import TimePolicy

        course = self.course_seconds(student, assignment)[f"test:{grade_id}"]
        return TimePolicy(floor=floor).limit(course, Limits.for_grading().first_timeout()), course


def grade_command(submissions: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "autograder", "grade", str(submissions), *args]


def run_grade(submissions: Path, *args: str, out: Path | None = None, timeout: float = 900) -> Graded:
    """``python -m autograder grade SUBMISSIONS --out OUT ARGS`` (OUT defaults to SUBMISSIONS-graded beside it)."""
    out = out or submissions.parent / f"{submissions.name}-graded"
    proc = subprocess.run(grade_command(submissions, "--out", str(out), *args), capture_output=True, text=True,
                          timeout=timeout)
    return Graded(proc, out)


def our_scores(out: Path) -> dict[tuple[str, str, str], float]:
    """(student, assignment, grade_id) -> points, from a ``grade`` run's scores.csv."""
    return {(r["student_id"], r["assignment_id"], r["grade_id"]): float(r["points"])
            for r in read_rows(out / "scores.csv")}


def nbgrader_course(course: Path, settings: dict[str, object]) -> Path:
    """``course`` with an nbgrader_config.py naming it the course root and setting ``settings``
    (``{"CourseDirectory.db_url": url}``: ``c.CourseDirectory.db_url = url``)."""
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text(
        "c = get_config()\n" + "".join(f"c.{key} = {value!r}\n"
                                       for key, value in {"CourseDirectory.root": str(course), **settings}.items()))
    return course


def stock_course(course: Path, *, assignments: list[str], submissions: Path, timeout: float = 60) -> None:
    """An nbgrader course folder: source/ from solutions/, generate_assignment, submitted/ from ``submissions``."""
    nbgrader_course(course, {"ExecutePreprocessor.timeout": int(timeout)})
    for a in assignments:
        target = course / "source" / a / f"{a}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(paths.solutions_dir() / f"{a}.ipynb", target)
        subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", a, "--force"], cwd=course,
                       env=venv_env(), check=True, capture_output=True)
    shutil.copytree(submissions, course / "submitted", dirs_exist_ok=True)


def stock_autograde(course: Path, *, assignments: list[str], seed: int = 0) -> None:
    """``nbgrader autograde`` each assignment; hidden inputs follow ``seed``, as ours follow ``grade --seed``."""
    env = {**venv_env(), "AUTOGRADER_SEED": str(seed)}
    for a in assignments:
        subprocess.run([sys.executable, "-m", "nbgrader", "autograde", a, "--force"], cwd=course, env=env,
                       check=True, capture_output=True)


def stock_scores(course: Path) -> dict[tuple[str, str, str], float]:
    """(student, assignment, grade_id) -> auto_score, from the course's gradebook."""
    from nbgrader.api import Gradebook

    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "") as gb:
        for assignment in gb.assignments:
            for sub in assignment.submissions:
                for nb in sub.notebooks:
                    for grade in nb.grades:
                        scores[sub.student.id, assignment.name, grade.name] = grade.auto_score
    return scores


# --------------------------------------------------------------------------- a broken class of 04, as records

NB04 = "04_softmax_and_probability"
# the line a learner forgets the colon on, and a loop that never ends; variance and sample_token call the two
NB04_SYNTAX_ERROR = "def expectation(values, probs)\n    return float((values * probs).sum())\n"
NB04_ENDLESS_LOOP = "def greedy_token(logits):\n    n = 0\n    while True:\n        n += 1\n"
NB04_LOOPING = {"cell": "greedy_token", "line": 3, "code": "while True:", "function": "greedy_token(logits)"}
NB04_NO_MAX = "softmax([1000, 999, 998]) gave [nan nan nan]: did you subtract the max?"


def broken_04_records() -> list["SubmissionResult"]:
    """The records `grade` saves for a class of 04, no notebook run: right, blank, a SyntaxError (whose NameError
    also stops variance), an endless loop (four test cells of two exercises timed out, and the time budget left
    cross_entropy unrun), and a softmax without the max subtraction."""
    from autograder.grade.submission.results import SubmissionResult

    points = points_per_test(source_notebook(NB04))

    def result(student: str, status_of, code: dict | None = None, problems: tuple = ()) -> "SubmissionResult":
        scores = []
        for gid, of in points.items():
            status, message, extra = status_of(gid)
            scores.append({"grade_id": gid, "points": of if status == "passed" else 0.0, "max_points": of,
                           "status": status, "message": message, **extra})
        problems_ = [{"problem": p, "detail": d} for p, d in problems]
        return SubmissionResult.from_json({"student_id": student, "assignment_id": NB04, "scores": scores,
                                      "code": code or {}, "problems": problems_})

    def syntax(gid):
        if exercise_of(gid) in ("expectation", "variance"):  # variance calls expectation, never defined
            return "error", "NameError: name 'expectation' is not defined", {}
        return "passed", "ok", {}

    def loop(gid):
        if gid in ("test_greedy_token", "test_greedy_token_hidden", "test_sample_token", "test_sample_token_hidden"):
            return "timeout", "interrupted after 6 s", {"stopped": NB04_LOOPING}
        if exercise_of(gid) == "cross_entropy":
            return "missing", "not run: time budget spent (earlier cells of this notebook timed out)", {}
        return "passed", "ok", {}

    def no_max(gid):
        if exercise_of(gid) == "softmax":
            return "failed", NB04_NO_MAX, {"mistake": "did not subtract the max"}
        return "passed", "ok", {}

    timeouts = tuple(("timeout", f"test cells test_{ex}, test_{ex}_hidden: interrupted after 6 s")
                     for ex in ("greedy_token", "sample_token"))  # as grade_one says them: one per exercise
    return [result("passes_all", lambda gid: ("passed", "ok", {})),
            result("blank", lambda gid: ("not attempted", "not attempted", {})),
            result("syntax_error", syntax, code={"expectation": NB04_SYNTAX_ERROR,
                                                 "variance": "def variance(values, probs):\n"
                                                             "    return expectation(values ** 2, probs)\n"}),
            result("endless_loop", loop, code={"greedy_token": NB04_ENDLESS_LOOP,
                                               "sample_token": "def sample_token(l, r):\n    return greedy_token(l)\n"},
                   problems=timeouts),
            result("no_max_subtraction", no_max)]


# --------------------------------------------------------------------------- a made-up class of results

MADE_UP_MISTAKES = ["you subtracted the max of the whole array, not of each row",
                    "the softmax runs over the wrong axis", "that is KL(p || q): the arguments are swapped",
                    "epsilon belongs inside the square root"]


def made_up_class(n: int, seed: int = 0) -> tuple[list["SubmissionResult"], dict]:
    """``n`` result records spread over the assignments (as ``grade`` writes them, no notebook run), seeded:
    failures with known mistakes, a few not attempted, ungradable (not valid JSON), and a gradebook record
    ((student, assignment) -> Recorded) with overrides and late penalties."""
    from autograder.grade.output.gradebook import Recorded
    from autograder.grade.submission.results import SubmissionResult

    rng = random.Random(seed)
    assignments = paths.assignments()
    tests = {a: list(points_per_test(source_notebook(a)).items()) for a in assignments}
    results, recorded = [], {}
    for i in range(n):
        a = assignments[i % len(assignments)]
        student = f"student{i // len(assignments):03d}"
        r = {"student_id": student, "assignment_id": a, "scores": [], "problems": [], "code": {}}
        # the ungradable and the recorded are picked by position, not drawn: a draw's stream moves with every test
        # the course adds, and once 100 draws at 3% gave no ungradable at all (the report's tests need some)
        if i % 31 == 7:  # about 3%
            r["problems"].append({"problem": "not valid JSON", "detail": "line 1: Expecting value", "fatal": True})
            results.append(r)
            continue
        skill = rng.random()
        for gid, pts in tests[a]:
            roll = rng.random()
            status = "passed" if roll < skill else "not attempted" if roll > 0.95 else "failed"
            mistake = rng.choice(MADE_UP_MISTAKES) if status == "failed" and rng.random() < 0.7 else ""
            r["scores"].append({"grade_id": gid, "points": pts if status == "passed" else 0.0, "max_points": pts,
                                "status": status, "message": mistake or "wrong values", "mistake": mistake})
            r["code"][exercise_of(gid)] = "def f(x):\n    return x\n"
        if i % 19 == 3:  # about 5%
            first = r["scores"][0]
            recorded[student, a] = Recorded(scores={first["grade_id"]: first["max_points"]},
                                            overridden={first["grade_id"]: first["points"]}, comments={},
                                            late_penalty=1.0, seconds_late=7200.0, submitted_at="")
        results.append(r)
    return [SubmissionResult.from_json(r) for r in results], recorded
