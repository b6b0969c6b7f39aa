"""Is "an exercise passed" decided by one rule, the same in scores.csv, report.html, the feedback page, the
terminal summary and ``validate``, with a person's score counted alike everywhere? And does the saved result
keep its format, so earlier runs still load?

No notebook runs: results are made as ``grade`` saves them and written with ``report.write_outputs``.
"""
from __future__ import annotations

import csv
import json
import re
import threading
import time
from pathlib import Path

import pytest

from autograder import validate
from autograder.checks import core
from autograder.grade.output import classreport, report
from autograder.grade.submission import judge, results
from autograder.grade.classrun import pipeline, schedule
from autograder.grade.classrun.config import GradeConfig
from autograder.grade.classrun.progress import Progress
from autograder.grade.submission.discover import Problem, Submission
from autograder.engine import Isolation
from autograder.grade.submission.records import Reference
from autograder.grade.submission.results import GradedTest, Recorded, SubmissionResult
from autograder.grade.submission.grade_one import failed_result

A = "01_tokens_and_ids"


def saved(student: str, encode: float = 0.0, decode: float = 1.0) -> SubmissionResult:
    """One result as ``grade`` saves it: encode (a visible check and hidden tests) and decode."""
    tests = [("test_encode", encode), ("test_encode_hidden", 1.0), ("test_decode", decode)]
    return SubmissionResult.from_json({"student_id": student, "assignment_id": A, "problems": [], "code": {}, "scores": [
        {"grade_id": gid, "points": pts, "max_points": 1.0, "status": "passed" if pts else "failed",
         "message": "" if pts else "wrong values"} for gid, pts in tests]})


def person(points: float) -> Recorded:
    """A person who gave test_encode ``points`` in formgrader (it had 0)."""
    return Recorded(scores={"test_encode": points}, overridden={"test_encode": 0.0}, comments={},
                    submitted_at="", seconds_late=0.0, late_penalty=0.0)


def written(out: Path, recorded: dict) -> dict[str, dict]:
    """Per student, what each output says of the exercise encode: the CSV's test status, the report's
    visible-check pass, the feedback page's badge, the terminal's pass rate."""
    finals = report.write_outputs(out, [saved("ada"), saved("bob"), saved("cy")], recorded)
    with open(out / "scores.csv", newline="") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh) if r["grade_id"] == "test_encode"}
    said = {}
    for r in finals:
        s = r.student_id
        page = (out / "feedback" / s / f"{A}.html").read_text()
        badge = re.search(r'<h2 id="ex-encode">encode <span class="badge ([\w-]+)">', page).group(1)
        alone = classreport.summarise([r])[A].exercises["encode"]
        rate = {ex: p for a, ex, p, _ in report.pass_rates([r])}["encode"]
        said[s] = {"csv": rows[s]["status"], "report": alone.visible == [True], "feedback": badge,
                   "terminal": rate == 1, "exercise": next(ex for ex in r.exercises if ex.name == "encode").status}
    return said


def test_a_person_s_score_changes_the_points_in_every_output_and_the_status_in_none(tmp_path):
    """A person's credit counts in the points; the status stays what the grader found in the code, alike in
    every output, so the named mistake stays on the learner's page and in the class's statistics."""
    said = written(tmp_path, {("ada", A): person(1.0), ("bob", A): person(0.5)})
    failed = {"csv": "failed", "report": False, "feedback": "failed", "terminal": False, "exercise": "failed"}
    assert said["ada"] == said["bob"] == said["cy"] == failed
    grades = {r["student_id"]: r for r in csv.DictReader((tmp_path / "grades.csv").read_text().splitlines())}
    assert (grades["ada"]["score"], grades["bob"]["score"], grades["cy"]["score"]) == ("3", "2.5", "2")
    assert (grades["ada"]["overridden"], grades["cy"]["overridden"]) == ("yes", "")
    page = (tmp_path / "feedback" / "ada" / f"{A}.html").read_text()
    assert "wrong values" in page, "the grader's message stays beside a person's full credit"


def test_every_output_asks_the_one_rule(tmp_path, monkeypatch):
    """Break the rule (every exercise passes, partial points included): every output must follow it, so
    none of them decides "passed" on its own."""
    monkeypatch.setattr(results, "exercise_status", lambda statuses: "passed")
    said = written(tmp_path, {("bob", A): person(0.5)})
    for student in ("ada", "bob", "cy"):
        assert said[student]["report"] and said[student]["terminal"], said[student]
        assert said[student]["feedback"] == said[student]["exercise"] == "passed", said[student]
        assert said[student]["csv"] == "failed", "a test's own status is not the exercise's rule"
    lines: list[str] = []
    validate._print_report(Path(f"{A}.ipynb"), list(saved("dee").exercises), 0, None, 0.0, lines.append)
    assert re.search(r"^  passed +encode", "\n".join(lines), re.M), lines


def test_a_person_who_takes_points_away_leaves_the_status_and_the_saved_record():
    taken = saved("eve", encode=1.0).with_gradebook(person(0.0))
    encode = taken.tests[0]
    assert (encode.points, encode.status, encode.auto_points, encode.overridden) == (0.0, "passed", 1.0, True)
    assert taken.to_json() == saved("eve", encode=1.0).to_json(), "the saved record stays the grader's"


def test_validate_reads_exercises_through_the_one_rule():
    stub = [validate.test("test_encode", 1.0, "passed"), validate.test("test_encode_hidden", 1.0, "not attempted")]
    exercise = results.Exercise(name="encode", tests=tuple(stub))
    assert validate.shown_status(exercise, A) == exercise.status == "not attempted"  # passed on a stub: not tried


# --------------------------------------------------------------------------- the saved format

def test_the_saved_format_is_the_one_grade_writes_and_an_old_result_still_loads():
    graded = SubmissionResult(assignment_id=A, source_hash="h", seed=3, student_id="s", notebook=f"{A}.ipynb",
                              submission_hash="x", engine="engine", isolation=Isolation(bubblewrap=True), seconds=1.5,
                              code={"decode": "def decode(ids):\n    pass\n"}, submitted_at="2030-01-01T00:00:00Z",
                              tests=tuple(map(GradedTest.of, [judge.TestScore("test_encode", 1.0, 1.0, "passed", "ok",
                                                prediction=core.Prediction("(1, 2)", False, "why")),
                                      judge.TestScore("test_decode", 0.0, 2.0, "failed", "wrong", "off by one")])),
                              problems=[Problem("s", A, "tampered", "test_decode changed")])
    data = json.loads(json.dumps(graded.to_json()))
    final = SubmissionResult.from_json(data)
    assert final.to_json() == data, "a result written again reads as it was saved"
    assert SubmissionResult.from_json(final.to_json()) == SubmissionResult.from_json(data)
    assert [ex.name for ex in final.exercises] == ["encode", "decode"] and final.exercises[0].prediction.why == "why"
    old = {"version": 1, "assignment_id": A, "student_id": "s", "source_hash": "h", "seed": 0, "unknown": 1,
           "scores": [{"grade_id": "test_encode", "points": 0.0, "max_points": 1.0, "status": "failed"}]}
    loaded = SubmissionResult.from_json(old)
    assert loaded.version == 1 and loaded.tests[0].prediction is None and loaded.tests[0].message == ""


def test_saved_results_load_back_as_they_were_written(tmp_path):
    result = saved("ada")
    report.save_result(tmp_path, result)
    assert report.load_result(tmp_path, "ada", A) == result and report.read_results(tmp_path) == [result]
    report.result_path(tmp_path, "bob", A).parent.mkdir()
    report.result_path(tmp_path, "bob", A).write_text('{"scores": []}')  # no student: graded again, not a crash
    assert report.load_result(tmp_path, "bob", A) is None


# --------------------------------------------------------------------------- run.json and the config

def test_seed_or_force_replace_a_corrupt_run_json_and_run_json_has_one_writer(tmp_path):
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(report.RunFileError, match="cannot be read"):
        pipeline._seed(tmp_path, None)
    assert pipeline._seed(tmp_path, 7) == 7 and report.read_run(tmp_path) == report.RunRecord(seed=7)
    (tmp_path / "run.json").write_text("{not json")
    drawn = pipeline._seed(tmp_path, None, force=True)
    assert report.read_run(tmp_path).seed == drawn and pipeline._seed(tmp_path, None) == drawn
    grade = Path(pipeline.__file__).parent.parent  # the whole grade package
    writers = [p.name for p in sorted(grade.rglob("*.py")) if '"run.json"' in p.read_text()]
    assert writers == ["report.py"], writers


class FakeCluster(schedule.cluster.ClusterExecutor):
    """A "cluster" of threads in this process: grade_all's scheduling without a warm-up or a sandbox."""

    def __init__(self, workers: int = 1):
        self.pool = schedule.ThreadPoolExecutor(workers)

    def threads(self):
        return 7

    def submit(self, fn, /, *args, **kwargs):
        return self.pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait=True, *, cancel_futures=False):
        self.pool.shutdown(wait=wait, cancel_futures=cancel_futures)


def test_grade_all_leaves_the_caller_s_config_as_it_was(tmp_path, monkeypatch):
    """With --cluster the workers are the cluster's threads: said in the return value, not written into cfg."""
    monkeypatch.setattr(schedule, "executor", lambda cfg: FakeCluster())
    monkeypatch.setattr(schedule.cluster, "grade_remote", lambda job: failed_result(job, "not graded here"))
    (tmp_path / "submitted").mkdir()
    cfg = GradeConfig(submissions=tmp_path / "submitted", jobs=2, cluster="tcp://nowhere:8786")
    kept: list = []
    graded = schedule.grade_all([(Submission("s", A, None), "")], cfg=cfg, seed=1, hashes={},
                                on_start=lambda: None, on_result=kept.append,
                                progress=Progress(None, enabled=False))
    assert graded == schedule.Graded(count=1, workers=7) and len(kept) == 1
    assert cfg.jobs == 2, "the caller's --jobs is left as it was"


def _graded_beside(tmp_path, monkeypatch, on_start, reference_run, on_result) -> None:
    """grade_all on one submission of A, whose reference runs first."""
    monkeypatch.setattr(schedule, "executor", lambda cfg: FakeCluster(workers=2))
    monkeypatch.setattr(schedule.cluster, "reference_remote", reference_run)
    monkeypatch.setattr(schedule.cluster, "grade_remote", lambda job: failed_result(job, "not graded here"))
    (tmp_path / "submitted").mkdir()
    cfg = GradeConfig(submissions=tmp_path / "submitted", out=tmp_path / "out", cluster="tcp://nowhere:8786")
    cfg.out.mkdir()
    schedule.grade_all([(Submission("s", A, None), "")], cfg=cfg, seed=1, hashes={A: "0" * 16},
                       on_start=on_start, on_result=on_result, progress=Progress(None, enabled=False))


def test_the_gradebook_opens_while_the_references_run_and_is_open_before_the_class_ends(tmp_path, monkeypatch):
    """on_start (the caller opens its gradebook: a core-second) runs beside the reference runs, not after
    them; results do not wait for it (test_schedule_order), but the class does not end before it has returned."""
    began, opened = threading.Event(), threading.Event()

    def on_start():
        began.set()
        time.sleep(0.3)  # a gradebook still opening when the submission's result comes back
        opened.set()

    def reference_run(assignment, *args):
        assert began.wait(120), "the gradebook was not being opened while the reference ran"  # at once, unless busy
        return Reference(assignment=assignment, source_path="", source_hash="0" * 16, evidence={})

    arrived: list[str] = []
    _graded_beside(tmp_path, monkeypatch, on_start, reference_run, on_result=lambda r: arrived.append(r.student_id))
    assert len(arrived) == 1 and opened.is_set()


def test_a_gradebook_that_cannot_open_stops_the_class_before_any_result_is_kept(tmp_path, monkeypatch):
    def on_start():
        raise OSError("the gradebook is on a disk that went away")

    def reference_run(assignment, *args):
        return Reference(assignment=assignment, source_path="", source_hash="0" * 16, evidence={})

    kept: list = []
    with pytest.raises(OSError, match="went away"):
        _graded_beside(tmp_path, monkeypatch, on_start, reference_run, on_result=kept.append)
    assert kept == []


def test_the_feedback_page_says_every_exercise_passed_only_when_the_rule_says_so(tmp_path):
    """Full points are not "every exercise passed": a changed test cell graded from the original keeps its
    points, and its exercise is tampered, not passed."""
    full = saved("fay", encode=1.0)
    changed = SubmissionResult.from_json({**full.to_json(), "student_id": "gus", "scores": [
        {**s, "status": "tampered", "message": "test cell changed"} if s["grade_id"] == "test_encode" else s
        for s in full.to_json()["scores"]]})
    report.write_outputs(tmp_path, [full, changed], {})
    page = {s: (tmp_path / "feedback" / s / f"{A}.html").read_text() for s in ("fay", "gus")}
    assert "Every exercise passed" in page["fay"]
    assert "Every exercise passed" not in page["gus"] and "No points lost" in page["gus"]
