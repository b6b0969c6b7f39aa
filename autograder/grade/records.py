"""The records grading passes between its stages: what one submission is graded against, the job
that travels to a worker, and the result that comes back. Each is a dataclass built by keyword,
with ``to_json``/``from_json`` for the plain data that is saved or sent.
"""
from __future__ import annotations

import base64
import dataclasses
from dataclasses import dataclass, field

from .config import DEFAULT_ENGINE
from .discover import Problem
from .engine import Isolation, Limits
from .isolation import from_saved, to_saved
from .judge import TestScore

# Bump when a change to grading makes saved results stale. 2: a prediction earns its points for a well-formed
# answer and its test score records the answer (TestScore.prediction); version-1 results still read.
RESULT_VERSION = 2


def problem_from_json(data: dict) -> Problem:
    """A saved problem (keys it does not know are ignored)."""
    return Problem(**{f.name: data[f.name] for f in dataclasses.fields(Problem) if f.name in data})


def _bytes(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True, kw_only=True)
class Reference:
    """What every submission of one assignment is judged against: the solution and its run's evidence."""

    assignment: str
    source_path: str  # the solution notebook; its test cells are the ones graded
    source_hash: str  # of the solution and its checks (:func:`.submission.source_hash`)
    evidence: dict | None = None  # grade_id -> the reference run's payloads; None when it could not run
    problem: str = ""  # why there is no evidence, for the learner's page and problems.csv
    cpu: float = 0.0  # the CPU seconds its run cost, for --profile; not sent

    def to_json(self) -> dict:
        data = dataclasses.asdict(self)
        data.pop("cpu")
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Reference":
        return cls(**data)


@dataclass(frozen=True, kw_only=True)
class NotebookFile:
    """A notebook as bytes, with the other files of its folder: a submission that left its machine."""

    name: str
    content: bytes
    files: dict[str, bytes] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"name": self.name, "content": _bytes(self.content),
                "files": {k: _bytes(v) for k, v in self.files.items()}}

    @classmethod
    def from_json(cls, data: dict) -> "NotebookFile":
        return cls(name=data["name"], content=base64.b64decode(data["content"]),
                   files={k: base64.b64decode(v) for k, v in data.get("files", {}).items()})


@dataclass(frozen=True, kw_only=True)
class Job:
    """One submission to grade: who, which notebook, against what, under which limits."""

    student_id: str
    assignment_id: str
    path: str | None  # the notebook on the grading machine; None when discovery found none
    reference: Reference
    submission_hash: str
    seed: int
    limits: Limits = field(default_factory=Limits)
    engine: str = DEFAULT_ENGINE  # one of config.ENGINES
    hide: tuple[str, ...] = ()  # folders the student's code must not see: the submissions, the output
    problems: tuple[Problem, ...] = ()  # what discovery found wrong with the folder
    notebook: NotebookFile | None = None  # set when the job travels (--cluster); else read from path

    def to_json(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data.update(reference=self.reference.to_json(), limits=self.limits.to_json(),
                    hide=list(self.hide), problems=[dataclasses.asdict(p) for p in self.problems],
                    notebook=self.notebook.to_json() if self.notebook else None)
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Job":
        return cls(**{**data, "reference": Reference.from_json(data["reference"]),
                      "limits": Limits.from_json(data["limits"]), "hide": tuple(data["hide"]),
                      "problems": tuple(problem_from_json(p) for p in data["problems"]),
                      "notebook": NotebookFile.from_json(data["notebook"]) if data.get("notebook") else None})


_NOT_SAVED = {"autograded", "costs"}  # SubmissionResult's fields that travel with it but are not its record


@dataclass(kw_only=True)
class SubmissionResult:
    """The result of grading one notebook, as a worker returns it: what is saved in
    ``results/<student>/<assignment>.json`` (:meth:`to_json`), which reads back as the
    :class:`~.results.FinalResult` the CSVs, the gradebook and the feedback pages are built from.

    A prediction question's learner answer travels in its test scores: each passing test of a question
    holds ``prediction`` (:class:`~.judge.TestScore`), the answer as written and whether it was right, with
    the reason when wrong. Its points and status are about the form alone. Results saved before (no
    ``prediction`` key) read with none.
    """

    assignment_id: str
    source_hash: str
    seed: int
    student_id: str = ""
    notebook: str | None = None  # the file name graded
    submission_hash: str = ""  # "" for a submission that could not be graded: the next run tries again
    engine: str = ""  # "engine" or "nbclient"; "" when nothing ran
    isolation: Isolation | None = None  # what confined the student's code (None: nothing ran), for the summary
    scores: list[TestScore] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    code: dict[str, str] = field(default_factory=dict)  # the learner's code of unfinished exercises
    seconds: float = 0.0
    started_at: float = 0.0
    finished_at: float = 0.0
    submitted_at: str = ""  # from nbgrader's timestamp.txt, ISO 8601 UTC; set by the class run
    version: int = RESULT_VERSION
    autograded: str | None = None  # the notebook as it ran, with verdicts; written apart, never saved here
    costs: dict[str, float] = field(default_factory=dict)  # CPU seconds by phase (see .costs), for --profile; not saved

    @property
    def key(self) -> tuple[str, str]:
        return self.student_id, self.assignment_id

    @property
    def fatal(self) -> bool:
        return any(p.fatal for p in self.problems)

    def add_problem(self, kind: str, detail: str, fatal: bool = False) -> None:
        self.problems.append(Problem(self.student_id, self.assignment_id, kind, detail, fatal))

    def to_json(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in _NOT_SAVED}
        data.update(isolation=to_saved(self.isolation), scores=[s.to_json() for s in self.scores],
                    problems=[dataclasses.asdict(p) for p in self.problems])
        return data

    @classmethod
    def from_json(cls, data: dict) -> "SubmissionResult":
        known = {f.name for f in dataclasses.fields(cls)} - _NOT_SAVED
        return cls(**{**{k: v for k, v in data.items() if k in known},
                      "isolation": from_saved(data.get("isolation")),
                      "scores": [TestScore.from_json(s) for s in data.get("scores", [])],
                      "problems": [problem_from_json(p) for p in data.get("problems", [])]})
