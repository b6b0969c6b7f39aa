"""The records grading passes between its stages: what one submission is graded against and the job
that travels to a worker (the result that comes back is :class:`.results.SubmissionResult`). Each is a dataclass built by keyword,
with ``to_json``/``from_json`` for the plain data that is saved or sent.
"""
from __future__ import annotations

import base64
import dataclasses
from dataclasses import dataclass, field

from .discover import Problem
from ...engine import Limits
from .running import DEFAULT_ENGINE
from .timelimits import TimePolicy

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
    source_hash: str  # of the solution and its checks (:func:`.grade_one.source_hash`)
    evidence: dict | None = None  # grade_id -> the reference run's payloads; None when it could not run
    problem: str = ""  # why there is no evidence, for the learner's page and problems.csv
    # the reference run's seconds per code cell (.timelimits.cell_key -> seconds): each cell's time limit
    seconds: dict[str, float] = field(default_factory=dict)
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
    # how each cell's limit follows from the reference's seconds; None: every cell gets limits.cell_timeout
    time_policy: TimePolicy | None = None

    def to_json(self) -> dict:
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data.update(reference=self.reference.to_json(), limits=self.limits.to_json(),
                    hide=list(self.hide), problems=[dataclasses.asdict(p) for p in self.problems],
                    notebook=self.notebook.to_json() if self.notebook else None,
                    time_policy=self.time_policy.to_json() if self.time_policy else None)
        return data

    @classmethod
    def from_json(cls, data: dict) -> "Job":
        return cls(**{**data, "reference": Reference.from_json(data["reference"]),
                      "limits": Limits.from_json(data["limits"]), "hide": tuple(data["hide"]),
                      "problems": tuple(problem_from_json(p) for p in data["problems"]),
                      "notebook": NotebookFile.from_json(data["notebook"]) if data.get("notebook") else None,
                      "time_policy": TimePolicy.from_json(data.get("time_policy"))})
