"""A graded submission as it counts: the one typed record the CSVs, the class report, the feedback
pages, the gradebook and ``validate`` read, and the one rule for "an exercise passed".

:class:`SubmissionResult` is what grading one submission returns and what ``results/<student>/<assignment>.json``
holds (:meth:`SubmissionResult.to_json`, :meth:`SubmissionResult.from_json`), and with
:meth:`SubmissionResult.with_gradebook` what the gradebook says of it: a person's scores, comments,
lateness and penalty. A person's score changes a test's points, never its status: the status is what the
grader found in the code (the named mistake stays on the learner's page and in the class's statistics when a
person gives partial or full credit). An exercise's status is :func:`.judge.exercise_status` of its tests'
statuses (:class:`Exercise`), and nothing else decides whether an exercise passed.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from ...checks.causes import traced_to
from ...checks.core import Prediction
from ...nbio import exercise_of
from .discover import Problem
from ...engine import Isolation
from .interrupted import StoppedAt
from .isolation import from_saved, to_saved
from .judge import Status, TestScore, exercise_status
from .manual import is_manual_id
from .records import RESULT_VERSION, problem_from_json


def is_hidden(grade_id: str) -> bool:
    """A hidden test: inputs the learner never saw; its status and points show, never its inputs."""
    return grade_id.endswith("_hidden")


@dataclass(frozen=True, kw_only=True)
class Recorded:
    """What the gradebook says of one submission, after formgrader (:meth:`.gradebook.GradebookWriter.recorded`)."""

    scores: Mapping[str, float]  # grade_id -> the score that counts (a manual score if set, plus extra credit)
    overridden: Mapping[str, float | None]  # grade_id -> the automatic score, for grades a person changed
    comments: Mapping[str, str]  # grade_id of a solution cell -> a person's comment on it
    submitted_at: str  # ISO 8601 UTC, "" when unknown
    seconds_late: float
    late_penalty: float


@dataclass(frozen=True, kw_only=True)
class GradedTest:
    """One graded test cell as it counts: the grader's score, and a person's where they gave one."""

    grade_id: str
    points: float  # what counts: a person's score if they gave one, else the grader's
    max_points: float
    status: Status  # the grader's, whatever a person's score: it says what the code did
    message: str = ""
    mistake: str = ""  # the known mistake a failed check recognised, else ""
    prediction: Prediction | None = None  # a question's recorded answer, right or wrong
    stopped: StoppedAt | None = None  # a timed-out test: the learner's line that was running when it was stopped
    auto_points: float | None = None  # the grader's points; None: the same as points
    overridden: bool = False  # a person changed its score in the gradebook

    def __post_init__(self) -> None:
        if self.auto_points is None:
            object.__setattr__(self, "auto_points", self.points)

    @property
    def exercise(self) -> str:
        return exercise_of(self.grade_id)

    @property
    def hidden(self) -> bool:
        return is_hidden(self.grade_id)

    @property
    def manual(self) -> bool:
        """A written answer a person grades (the bug hunt's "why"), not a test the grader judges."""
        return is_manual_id(self.grade_id)

    @property
    def waiting(self) -> bool:
        """A written answer no person has scored yet: it waits for a person, it did not fail."""
        return self.status == "manual" and not self.overridden

    @classmethod
    def of(cls, score: TestScore) -> "GradedTest":
        """The grader's score, as nobody has changed it yet."""
        return cls(grade_id=score.grade_id, points=score.points, max_points=score.max_points, status=score.status,
                   message=score.message, mistake=score.mistake, prediction=score.prediction,
                   stopped=score.stopped)

    def score(self) -> TestScore:
        """The grader's score, as saved."""
        return TestScore(self.grade_id, self.auto_points, self.max_points, self.status, self.message,
                         self.mistake, self.prediction, self.stopped)

    def counted(self, points: float, overridden: bool) -> "GradedTest":
        """This test with the gradebook's score for it (its status stays the grader's)."""
        return dataclasses.replace(self, points=points, overridden=overridden)


@dataclass(frozen=True, kw_only=True)
class Exercise:
    """One exercise of one submission: its tests, in notebook order, and their one status."""

    name: str
    tests: tuple[GradedTest, ...] = ()

    @property
    def status(self) -> Status:
        """The one rule (:func:`.judge.exercise_status`): passed when every test passed."""
        return exercise_status(t.status for t in self.tests)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    @property
    def manual(self) -> bool:
        """A written answer a person grades (its tests are the one answer cell), not an exercise the grader judges."""
        return any(t.manual for t in self.tests)

    @property
    def waiting(self) -> bool:
        """Written, and no person has scored it yet."""
        return any(t.waiting for t in self.tests)

    @property
    def points(self) -> tuple[float, float]:
        return sum(t.points for t in self.tests), sum(t.max_points for t in self.tests)

    @property
    def visible(self) -> tuple[GradedTest, ...]:
        return tuple(t for t in self.tests if not t.hidden)

    @property
    def hidden(self) -> tuple[GradedTest, ...]:
        return tuple(t for t in self.tests if t.hidden)

    @property
    def hidden_only(self) -> bool:
        """Every visible check passed and a hidden test did not: the notebook's own check cannot show why."""
        visible = self.visible
        return bool(visible) and exercise_status(t.status for t in visible) == "passed" and not self.passed

    @property
    def traced_to(self) -> str:
        """The exercise the grader traced this one's failure to (it calls it, and it fails its own check), or ""."""
        return next((name for name in map(traced_to, (t.mistake for t in self.tests)) if name), "")

    @property
    def prediction(self) -> Prediction | None:
        """The learner's recorded prediction: the first test that holds one (every test holds the same answer)."""
        return next((t.prediction for t in self.tests if t.prediction), None)


def exercises(tests: Iterable[GradedTest]) -> tuple[Exercise, ...]:
    """The one grouping of test scores into exercises, in the order their first tests come."""
    grouped: dict[str, list[GradedTest]] = {}
    for t in tests:
        grouped.setdefault(t.exercise, []).append(t)
    return tuple(Exercise(name=name, tests=tuple(ts)) for name, ts in grouped.items())


def untouched(exercises_: Iterable[Exercise]) -> bool:
    """Nothing was attempted anywhere: the learner most likely handed in the wrong file."""
    found = list(exercises_)
    return bool(found) and all(ex.status == "not attempted" for ex in found)


_SAVED = ("assignment_id", "source_hash", "seed", "student_id", "notebook", "submission_hash", "engine", "isolation",
          "code", "answers", "seconds", "started_at", "finished_at", "submitted_at", "version")  # beside scores and problems


@dataclass(kw_only=True)
class SubmissionResult:
    """The result of grading one submission: as a worker returns it (:func:`.grade_one.grade_one` fills it in),
    as saved in ``results/<student>/<assignment>.json`` (:meth:`to_json`, :meth:`from_json`), and once
    :meth:`with_gradebook` has been applied, as the gradebook has it (a person's scores and comments, lateness
    and its penalty): what every CSV row, report line and feedback page is built from.

    Its tests (:class:`GradedTest`) are saved as ``scores``, the grader's :class:`~.judge.TestScore` of each
    (:attr:`scores`). A prediction question's learner answer travels in its test scores: each passing test of a
    question holds ``prediction``, the answer as written and whether it was right, with the reason when wrong.
    Its points and status are about the form alone. Results saved before (no ``prediction`` key) read with none;
    any saved version reads (keys it does not know are ignored, missing ones take their default).
    """

    assignment_id: str
    student_id: str = ""
    source_hash: str = ""
    seed: int = 0
    notebook: str | None = None  # the file name graded
    submission_hash: str = ""  # "" for a submission that could not be graded: the next run tries again
    engine: str = ""  # "engine" or "nbclient"; "" when nothing ran
    isolation: Isolation | None = None  # what confined the student's code (None: nothing ran), for the summary
    tests: tuple[GradedTest, ...] = ()  # saved as "scores"
    problems: list[Problem] = field(default_factory=list)
    code: Mapping[str, str] = field(default_factory=dict)  # the learner's code of unfinished exercises
    answers: Mapping[str, str] = field(default_factory=dict)  # grade id -> a written answer a person grades (.manual)
    seconds: float = 0.0
    started_at: float = 0.0
    finished_at: float = 0.0
    submitted_at: str = ""  # ISO 8601 UTC: nbgrader's timestamp.txt, set by the class run; the gradebook's when it has one
    version: int = RESULT_VERSION
    # travel with a fresh result, never saved in it
    autograded: str | None = None  # the notebook as it ran, with verdicts; the class run writes it apart
    costs: dict[str, float] = field(default_factory=dict)  # CPU seconds by phase (see output.costs), for --profile
    # from the gradebook (with_gradebook), never saved here
    comments: Mapping[str, str] = field(default_factory=dict)  # exercise -> a person's comment on it
    seconds_late: float = 0.0
    late_penalty: float = 0.0

    @property
    def key(self) -> tuple[str, str]:
        return self.student_id, self.assignment_id

    @property
    def fatal(self) -> bool:
        return any(p.fatal for p in self.problems)

    @property
    def scores(self) -> list[TestScore]:
        """The grader's score of each test, as saved (a person's scores live in the gradebook)."""
        return [t.score() for t in self.tests]

    @scores.setter
    def scores(self, scores: Iterable[TestScore]) -> None:
        self.tests = tuple(GradedTest.of(s) for s in scores)

    def add_problem(self, kind: str, detail: str, fatal: bool = False) -> None:
        self.problems.append(Problem(self.student_id, self.assignment_id, kind, detail, fatal))

    @property
    def ungradable(self) -> bool:
        """No test of it ran: none is listed, or a fatal problem left every one missing (grades.csv may still
        give it a zero row; the report calls it "could not be graded" and item analysis leaves it out)."""
        return not self.tests or self.fatal and all(t.status == "missing" for t in self.tests)

    @property
    def exercises(self) -> tuple[Exercise, ...]:
        return exercises(self.tests)

    @property
    def score(self) -> float:
        """What counts, as grades.csv says: a person's scores, less the late penalty, never below 0."""
        return max(0.0, sum(t.points for t in self.tests) - self.late_penalty)

    @property
    def auto_score(self) -> float:
        return sum(t.auto_points for t in self.tests)

    @property
    def max_score(self) -> float:
        return sum(t.max_points for t in self.tests)

    @property
    def overridden(self) -> bool:
        return any(t.overridden for t in self.tests)

    @property
    def needs_manual_grade(self) -> bool:
        """A written answer waits for a person's score (nbgrader's ``needs_manual_grade``)."""
        return any(t.waiting for t in self.tests)

    def with_gradebook(self, recorded: Recorded | None) -> "SubmissionResult":
        """This result as the gradebook has it: each test's score that counts (its status stays the grader's), the
        comments, lateness and its penalty; this result itself when the gradebook has no record of it."""
        if recorded is None:
            return self
        tests = tuple(t.counted(recorded.scores.get(t.grade_id, t.auto_points), t.grade_id in recorded.overridden)
                      for t in self.tests)
        return dataclasses.replace(self, tests=tests, comments=dict(recorded.comments),
                                   submitted_at=recorded.submitted_at or self.submitted_at,
                                   seconds_late=recorded.seconds_late, late_penalty=recorded.late_penalty)

    def to_json(self) -> dict:
        """The saved record: the grader's scores (a person's live in the gradebook); never what travels beside it
        (``autograded``, ``costs``) or what the gradebook says (``comments``, lateness)."""
        data = {name: getattr(self, name) for name in _SAVED}
        data.update(isolation=to_saved(self.isolation), code=dict(self.code), answers=dict(self.answers), scores=[s.to_json() for s in self.scores],
                    problems=[dataclasses.asdict(p) for p in self.problems])
        return data

    @classmethod
    def from_json(cls, data: dict) -> "SubmissionResult":
        """A saved record, of any version: what results/<student>/<assignment>.json holds, as this class writes it
        and as earlier versions wrote it (two classes then, a worker's record and the saved one, wrote the same
        keys; a version-1 result has no ``prediction`` in its scores, an older one its isolation as text)."""
        student, assignment = data.get("student_id", ""), data["assignment_id"]
        return cls(**{**{k: data[k] for k in _SAVED if k in data}, "isolation": from_saved(data.get("isolation"))},
                   tests=tuple(GradedTest.of(TestScore.from_json(s)) for s in data.get("scores", [])),
                   problems=[problem_from_json({"student_id": student, "assignment_id": assignment, **p})
                             for p in data.get("problems", [])])
