"""The order a class is graded in: references start one per worker, the next when one is done, after its
submissions. With fakes for the reference run and the grading (no engine), on one worker: the first result
comes right after the first reference, not after every notebook's reference."""

from __future__ import annotations

import io
import threading

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
    def start_warming(self, n: int) -> None: ...


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
