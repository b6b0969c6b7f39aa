"""The public way to grade one notebook, and the records it passes around.

``grade_one`` is what class grading, ``validate`` and the Dask workers call; these tests call it
directly, as a newcomer's script would, and check that every record survives JSON both ways.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import nbformat
import pytest

from autograder import paths
from autograder.nbio import exercise_of, is_solution_cell, is_test_cell
from autograder.grade import UsageError
from autograder.grade.classrun.config import GradeConfig
from autograder.grade.submission.discover import Problem
from autograder.engine import Limits
from autograder.grade.submission import judge
from autograder.grade.submission.records import Job, NotebookFile, Reference
from autograder.grade.submission.timelimits import TimePolicy
from autograder.grade.submission.results import GradedTest, SubmissionResult
from autograder.grade.submission.grade_one import grade_one, released_bug_hunts, run_reference, source_hash

# one worker runs this module, so its module-scoped fixture is built once (loadgroup splits modules otherwise)
pytestmark = pytest.mark.xdist_group("test_grade_one")

A = "01_tokens_and_ids"


def roundtrip(record):
    return type(record).from_json(json.loads(json.dumps(record.to_json())))


def test_records_survive_json_both_ways():
    reference = Reference(assignment=A, source_path="/x.ipynb", source_hash="ab", evidence={"t": [{"a": 1}]})
    job = Job(student_id="s", assignment_id=A, path=None, reference=reference, submission_hash="h", seed=3,
              limits=Limits(cell_timeout=7), problems=(Problem("s", A, "missing notebook", "none", True),),
              notebook=NotebookFile(name="n.ipynb", content=b"{}", files={"data.bin": b"\x00\xff"}))
    result = SubmissionResult(assignment_id=A, source_hash="ab", seed=3, student_id="s",
                              tests=tuple(map(GradedTest.of, [judge.TestScore("test_encode", 1.0, 1.0, "passed")])),
                              problems=[Problem("s", A, "run", "slow")], code={"encode": "def encode(): ..."},
                              autograded="{}")
    assert roundtrip(reference) == reference and roundtrip(job) == job
    back = roundtrip(result)
    assert back.autograded is None and "autograded" not in result.to_json()  # written beside, never saved in it
    assert back == SubmissionResult(**{**result.__dict__, "autograded": None})


def test_a_saved_result_from_before_the_records_still_reads():
    saved = {"version": 1, "student_id": "s", "assignment_id": A, "notebook": None, "submission_hash": "",
             "source_hash": "x", "seed": 1, "engine": "", "isolation": "", "scores": [], "seconds": 0.0,
             "problems": [{"student_id": "s", "assignment_id": A, "problem": "grader error", "detail": "d",
                           "fatal": True}]}
    result = SubmissionResult.from_json(saved)
    assert result.fatal and result.started_at == 0.0 and result.to_json().items() >= saved.items()


def test_options_are_built_by_keyword_and_checked(tmp_path):
    with pytest.raises(TypeError):
        GradeConfig(tmp_path)  # noqa - positional arguments are refused on purpose
    cfg = GradeConfig(submissions=tmp_path)
    # each cell's limit comes from the course's timings, capped at stock nbgrader's ExecutePreprocessor.timeout;
    # --timeout gives every cell one limit instead
    assert cfg.timeout is None and cfg.time_policy() == TimePolicy(floor=2.0, factor=100.0)
    assert GradeConfig(submissions=tmp_path, timeout=12).time_policy() is None
    assert Limits().cell_timeout == 30, "stock nbgrader's ExecutePreprocessor.timeout"
    # a class run bounds a looping student: later time-outs of a quarter, a budget of 3 timeouts (at least 120 s)
    # and draws no figures unless asked (--draw-figures)
    assert cfg.limits() == replace(Limits(), later_timeout=7.5, timeout_budget=120.0, draw_figures=False)
    with pytest.raises(UsageError, match="--timeout-floor"):
        GradeConfig(submissions=tmp_path, timeout_floor=0).check()
    assert GradeConfig(submissions=tmp_path, draw_figures=True).limits().draw_figures is True
    assert GradeConfig(submissions=tmp_path, timeout=4).limits().timeout_budget == 120.0
    assert cfg.gradebook_url.endswith("gradebook.db")
    with pytest.raises(UsageError, match="unknown engine 'warm'"):
        GradeConfig(submissions=tmp_path, engine="warm").check()
    with pytest.raises(UsageError, match="no such folder"):
        GradeConfig(submissions=tmp_path / "nope").check()


@pytest.fixture(scope="module")
def reference():
    return run_reference(A, seed=0, limits=Limits(cell_timeout=30), engine="engine")


@pytest.mark.grading
def test_grade_one_scores_a_notebook_on_disk_and_one_that_travelled(reference, g, tmp_path):
    assert reference.source_hash == source_hash(A) and reference.evidence
    right = g.write_submission(tmp_path, "someone", g.right_notebook())
    on_disk = grade_one(right, assignment=A, seed=0, reference=reference, limits=Limits(cell_timeout=30))
    assert sum(s.points for s in on_disk.scores) == g.full_marks(A) and not on_disk.problems
    assert on_disk.engine == "engine" and on_disk.autograded and on_disk.notebook == right.name

    blank = NotebookFile(name=f"{A}.ipynb", content=nbformat.writes(g.blank_notebook()).encode())
    travelled = grade_one(blank, assignment=A, seed=0, reference=reference, limits=Limits(cell_timeout=30))
    assert sum(s.points for s in travelled.scores) == 0
    assert {s.status for s in travelled.scores} <= {"not attempted", "failed"}


@pytest.mark.grading
def test_a_bug_hunt_handed_in_as_released_is_not_attempted_and_a_changed_one_is_judged(reference, g, tmp_path):
    hunts = released_bug_hunts(reference.source_path, reference.source_hash)
    assert hunts, f"{A} has a bug hunt"
    hunt = next(iter(hunts))

    def statuses(nb, who):
        result = grade_one(g.write_submission(tmp_path, who, nb), assignment=A, seed=0, reference=reference,
                           limits=Limits(cell_timeout=30))
        return [(s.status, s.message) for s in result.scores if exercise_of(s.grade_id) == hunt]

    # every other exercise answered (a bug hunt may call them), the bug hunt as released
    untouched = g.right_notebook()
    untouched.cells[g.solution_index(untouched, hunt)].source = g.blank_notebook().cells[
        g.solution_index(g.blank_notebook(), hunt)].source
    as_released = statuses(untouched, "untouched")
    assert {st for st, _ in as_released} == {"not attempted"}
    assert all("as it was released" in message for _, message in as_released), as_released
    touched = untouched
    touched.cells[g.solution_index(touched, hunt)].source += "\n# I read it twice and changed nothing\n"
    assert {st for st, _ in statuses(touched, "touched")} == {"failed"}  # the learner's now: judged


@pytest.mark.grading
def test_grade_one_says_why_when_the_reference_could_not_run(g, tmp_path):
    broken = Reference(assignment=A, source_path=str(paths.solutions_dir() / f"{A}.ipynb"), source_hash="x",
                       evidence=None, problem="the reference ran out of memory")
    right = g.write_submission(tmp_path, "someone", g.right_notebook())
    result = grade_one(right, assignment=A, seed=0, reference=broken, limits=Limits())
    assert result.fatal and result.problems[0].detail == "the reference ran out of memory"
    assert result.scores and all(s.status == "missing" and s.points == 0 for s in result.scores)
    assert not Path(tmp_path / "someone" / A / "autograded").exists()


def test_a_change_to_any_checks_module_makes_old_grades_stale(tmp_path, monkeypatch):
    """questions.py (every prediction), nb09.py (10's attention), models/ (10's models) and nb10/'s modules decide
    grades too, not only nbNN.py and core."""
    import shutil

    from autograder.checks import core

    package = Path(core.__file__).parent
    copy = tmp_path / "checks"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(core, "__file__", str(copy / "core.py"))
    before = source_hash("04_softmax_and_probability")
    assert source_hash("04_softmax_and_probability") == before  # stable
    for module in ("questions.py", "nb09.py", "models/numpy_gpt.py", "nb10/gpt2.py"):
        (copy / module).write_text((copy / module).read_text() + "\n# changed\n")
        after = source_hash("04_softmax_and_probability")
        assert after != before, module
        before = after


@pytest.mark.grading
def test_the_courses_demonstrations_are_left_out_and_the_autograded_copy_says_so(reference, g, tmp_path):
    """A released demonstration no test reads does not run, and says so in the autograded notebook; a cell
    the learner added runs, and the scores are those of a run of every cell."""
    from autograder.grade.submission.autograded import LEFT_OUT

    nb = g.add_cell(g.right_notebook(), "print('my own cell ran')")
    graded = grade_one(g.write_submission(tmp_path, "someone", nb), assignment=A, seed=0, reference=reference,
                       limits=Limits(cell_timeout=30))
    cells = nbformat.reads(graded.autograded, as_version=4).cells
    left_out = [c for c in cells if c.cell_type == "code" and [o.get("text") for o in c.outputs] == [LEFT_OUT]]
    assert left_out and all(c.execution_count is None for c in left_out)
    assert not any(is_solution_cell(c) or is_test_cell(c) for c in left_out), "only demonstrations"
    mine = [c for c in cells if "my own cell ran" in c.source]
    assert [o.get("text") for o in mine[0].outputs] == ["my own cell ran\n"]
    assert sum(s.points for s in graded.scores) == g.full_marks(A) and not graded.problems
