"""The similarity check's records: what it found in a class, as the report, the CSV and the JSON carry it.

Plain dataclasses with nothing heavy imported, so the class report can read a saved result (``similarity.json``)
without loading the fingerprinting (numpy, copydetect)."""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

SAVED = "similarity.json"  # beside the class report, for `grade` to show the section when it rebuilds the report
PAGES = "similarity"  # the folder of side-by-side pages, beside the report


@dataclass(frozen=True)
class Unread:
    """A submission that could not be compared, and why (said in the report, never a reason to stop)."""
    student: str
    assignment: str
    why: str


@dataclass(frozen=True)
class ExerciseTally:
    """One exercise across the class: how many answers were compared, how many pairs of them were alike."""
    assignment: str
    grade_id: str
    answered: int  # answers long enough to compare
    too_short: int  # answers the student changed, but too short to tell apart
    alike_pairs: int

    @property
    def pairs(self) -> int:
        return self.answered * (self.answered - 1) // 2

    @property
    def chance(self) -> float:
        """The share of this exercise's pairs that are alike: the chance two of the class's answers are."""
        return self.alike_pairs / self.pairs if self.pairs else 0.0


@dataclass(frozen=True)
class SharedExercise:
    assignment: str
    grade_id: str
    score: float  # how much likelier the two answers are copied than written apart, as a log-likelihood ratio


@dataclass(frozen=True)
class Pair:
    """Two students whose answers are alike on ``len(shared)`` exercises."""
    a: str
    b: str
    shared: tuple[SharedExercise, ...]
    both_answered: int  # exercises both answered at length (what they could have shared)
    expected: float  # exercises an independent pair with these answers would share by chance
    chance: float  # the chance of sharing len(shared) or more by chance alone

    @property
    def slug(self) -> str:
        """The file name of the pair's side-by-side page."""
        return f"{_safe(self.a)}--{_safe(self.b)}.html"


@dataclass(frozen=True)
class Similarity:
    """What ``similarity`` found in a class."""
    students: int
    min_exercises: int
    pairs: tuple[Pair, ...]  # most exercises shared first
    exercises: tuple[ExerciseTally, ...]
    unread: tuple[Unread, ...] = ()
    seconds: float = 0.0


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def save(out: Path, result: Similarity) -> Path:
    """Write ``result`` as ``out/similarity.json``; returns the path."""
    path = out / SAVED
    path.write_text(json.dumps(asdict(result), indent=1), encoding="utf-8")
    return path


def load(out: Path) -> Similarity | None:
    """The result saved in ``out``, or None when there is none or it cannot be read (then the report goes
    without the section rather than stop)."""
    try:
        data = json.loads((out / SAVED).read_text(encoding="utf-8"))
        return Similarity(
            students=data["students"], min_exercises=data["min_exercises"],
            pairs=tuple(Pair(p["a"], p["b"], tuple(SharedExercise(**s) for s in p["shared"]), p["both_answered"],
                             p["expected"], p["chance"]) for p in data["pairs"]),
            exercises=tuple(ExerciseTally(**t) for t in data["exercises"]),
            unread=tuple(Unread(**u) for u in data["unread"]), seconds=data.get("seconds", 0.0))
    except (OSError, ValueError, KeyError, TypeError):
        return None
