"""The order a class is graded in: references start one per worker, the next when one is done, after its
submissions. With fakes for the reference run and the grading (no engine), on one worker: the first result
comes right after the first reference, not after every notebook's reference."""

from __future__ import annotations

import io
import threading

import pytest

from autograder.grade.classrun import schedule
from autograder.grade.classrun.config import GradeConfig
from autograder.grade.classrun.progress import Progress
from autograder.grade.submission.discover import Submission
from autograder.grade.submission.records import Reference
from autograder.grade.submission.results import SubmissionResult

ASSIGNMENTS = ("01_tokens_and_ids", "02_shapes_and_matmul", "03_dot_and_outer_products")


class NoPool:
    """The warm pool's calls the schedule makes, doing nothing: the fakes below run no notebook."""

    def also_preload(self, modules) -> None: ...
    def expect(self, modules) -> None: ...
    def start_warming(self, n: int, *, light: bool = False) -> None: ...


def test_the_first_result_comes_after_its_own_reference_not_after_every_reference(monkeypatch, tmp_path):
    order: list[str] = []
    lock = threading.Lock()

    def reference(assignment, source_hash, seed, limits, engine, hide):
        with lock:
            order.append(f"reference {assignment[:2]}")
        return Reference(assignment=assignment, source_path="", source_hash=source_hash, evidence={})

    def grade(job):
        with lock:
            order.append(f"grade {job.assignment_id[:2]}")
        return SubmissionResult(student_id=job.student_id, assignment_id=job.assignment_id)

    monkeypatch.setattr(schedule, "_reference", reference)
    monkeypatch.setattr(schedule, "grade_job", grade)
    monkeypatch.setattr(schedule.engine_module, "default_pool", NoPool)
    todo = [(Submission(f"s{i}", a, tmp_path / f"{a}.ipynb"), f"h{i}") for a in ASSIGNMENTS for i in range(3)]
    results: list[SubmissionResult] = []
    cfg = GradeConfig(submissions=tmp_path, out=tmp_path / "graded", jobs=1)
    (tmp_path / "graded").mkdir()
    graded = schedule.grade_all(todo, cfg=cfg, seed=1, hashes={a: "x" * 16 for a in ASSIGNMENTS},
                                on_start=lambda: None, on_result=results.append,
                                progress=Progress(io.StringIO(), enabled=False))
    assert graded.count == 9 and len(results) == 9
    assert order == ["reference 01", "grade 01", "grade 01", "grade 01", "reference 02", "grade 02", "grade 02",
                     "grade 02", "reference 03", "grade 03", "grade 03", "grade 03"], order


@pytest.fixture
def instant(monkeypatch):
    """References and gradings that return at once, and no warm pool."""
    monkeypatch.setattr(schedule, "_reference", lambda a, h, *rest: Reference(assignment=a, source_path="",
                                                                             source_hash=h, evidence={}))
    monkeypatch.setattr(schedule, "grade_job", lambda job: SubmissionResult(student_id=job.student_id,
                                                                            assignment_id=job.assignment_id))
    monkeypatch.setattr(schedule.engine_module, "default_pool", NoPool)


def grade_one_notebook(tmp_path, students: int, on_start, on_result) -> schedule.Graded:
    todo = [(Submission(f"s{i}", ASSIGNMENTS[0], tmp_path / "x.ipynb"), f"h{i}") for i in range(students)]
    (tmp_path / "graded").mkdir()
    return schedule.grade_all(todo, cfg=GradeConfig(submissions=tmp_path, out=tmp_path / "graded", jobs=1), seed=1,
                              hashes={ASSIGNMENTS[0]: "x" * 16}, on_start=on_start, on_result=on_result,
                              progress=Progress(io.StringIO(), enabled=False))


def test_results_do_not_wait_for_the_gradebook_to_open(instant, tmp_path):
    """Opening a gradebook costs a second and more; the first results come while it is still opening."""
    released, opened = threading.Event(), threading.Event()
    while_opening: list[bool] = []

    def open_gradebook() -> None:
        released.wait(30)  # until the first result is in
        opened.set()

    def on_result(result: SubmissionResult) -> None:
        while_opening.append(not opened.is_set())
        released.set()

    graded = grade_one_notebook(tmp_path, 2, open_gradebook, on_result)
    assert graded.count == 2 and while_opening[0] is True and opened.is_set()  # and it was joined before the end


def test_an_error_opening_the_gradebook_is_raised_after_the_results_that_came_first(instant, tmp_path):
    def broken() -> None:
        raise OSError("the gradebook's disk is full")

    with pytest.raises(OSError, match="disk is full"):
        grade_one_notebook(tmp_path, 3, broken, lambda result: None)


class FakeWriter:
    def __init__(self):
        self.saved: list[tuple[str, str]] = []

    def save_result(self, result, *, submission_changed=False):
        self.saved.append(result.key)
        return []


def test_a_result_before_the_gradebook_is_open_is_saved_at_once_and_recorded_once_it_is(tmp_path):
    """The pipeline's side: a result that comes while the gradebook opens is on disk at once and reaches the
    gradebook when it is open, before the next result's, and nothing is recorded twice."""
    from autograder.grade.classrun.pipeline import _Run
    from autograder.grade.output import report

    out = tmp_path / "graded"
    run = _Run(cfg=GradeConfig(submissions=tmp_path, out=out), course=None, previous={}, submitted_at={})
    first = SubmissionResult(student_id="ann", assignment_id=ASSIGNMENTS[0])
    kept = threading.Thread(target=run.keep, args=(first,), daemon=True)  # a keep that waited would hang here
    kept.start()
    kept.join(120)  # at once; minutes only on a machine busy with other work
    assert not kept.is_alive() and report.load_result(out, "ann", ASSIGNMENTS[0]) is not None and run.unrecorded == [first]
    run.writer, run.gradebook_ok = FakeWriter(), True
    run.gradebook_open.set()
    run.keep(SubmissionResult(student_id="bob", assignment_id=ASSIGNMENTS[0]))
    assert run.writer.saved == [("ann", ASSIGNMENTS[0]), ("bob", ASSIGNMENTS[0])] and not run.unrecorded
    assert report.load_result(out, "bob", ASSIGNMENTS[0]) is not None


def test_a_changed_submission_waits_for_the_gradebook(tmp_path):
    """A submission that changed since a person graded it may lose those grades, which its saved result says:
    it is not saved before the gradebook has answered."""
    from autograder.grade.classrun.pipeline import _Run
    from autograder.grade.output import report

    out = tmp_path / "graded"
    run = _Run(cfg=GradeConfig(submissions=tmp_path, out=out), course=None,
               previous={("ann", ASSIGNMENTS[0]): "old"}, submitted_at={})
    changed = SubmissionResult(student_id="ann", assignment_id=ASSIGNMENTS[0], submission_hash="new")
    kept = threading.Thread(target=run.keep, args=(changed,))
    kept.start()
    kept.join(0.5)
    assert kept.is_alive() and report.load_result(out, "ann", ASSIGNMENTS[0]) is None
    run.writer, run.gradebook_ok = FakeWriter(), True
    run.gradebook_open.set()
    kept.join(120)  # at once; minutes only on a machine busy with other work
    assert run.writer.saved == [("ann", ASSIGNMENTS[0])] and report.load_result(out, "ann", ASSIGNMENTS[0]) is not None
