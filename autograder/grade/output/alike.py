"""What ``python -m autograder similarity`` found, as the class report reads it: the records and the section.

The similarity check (:mod:`autograder.similarity`) sits above the grader and imports it; the class report
(:mod:`.classreport`) shows what it found. So the records it saves (``similarity.json``) and the section that
shows them live here, in the report's own room, and the similarity check imports them from here: the report
reads a saved result without importing the check, its fingerprinting, numpy or copydetect.

- the records: plain dataclasses, saved and loaded as JSON;
- the section: the same HTML in the class report (``report.html``) and on ``similarity.html``. It names pairs
  and links each to its side-by-side page; it says, before any name, that it finds answers that look alike,
  not who copied, and what it cannot see.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from html import escape
from pathlib import Path
from urllib.parse import quote

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
    too_short: int  # answers the student changed, but too short to tell apart (fewer than 20 tokens of their own)
    alike_pairs: int
    too_short_here: int = 0  # longer, but too short at this class size: not alike even with a word-for-word copy

    @property
    def not_compared(self) -> int:
        """The answers too short to tell apart, for either reason."""
        return self.too_short + self.too_short_here

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




# Added to the report's own style; the pair pages use it as it is.
SIMILARITY_STYLE = """.pairs td,.pairs th{white-space:nowrap}.pairs td.ex{white-space:normal;min-width:12rem}
.caveat{background:#eef4fb;padding:.5rem .8rem;border-left:4px solid #0072B2;max-width:75ch}
.sbs{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1rem}.sbs figure{margin:0;min-width:0}
.sbs pre{overflow-x:auto;background:#f7f7f7;padding:.5rem;border:1px solid #ddd;font-size:.85em;margin:.3rem 0}
.sbs pre:focus{outline:3px solid #0072B2}mark{background:#fde68a;color:#111;text-decoration:underline dotted #8a5a00}
@media (max-width:40rem){.sbs{grid-template-columns:minmax(0,1fr)}.pairs td,.pairs th{white-space:normal}}"""


def e(text: object) -> str:
    return escape(str(text), quote=True)


def not_compared(result: Similarity) -> str:
    """How many answers were too short to tell apart, for each reason, in one sentence ("" when none was)."""
    few = sum(t.too_short for t in result.exercises)
    here = sum(t.too_short_here for t in result.exercises)
    if not few and not here:
        return ""
    return (f"{few + here} answer(s) were too short to tell apart and were not compared: {few} with fewer than "
            f"20 tokens of the student's own, {here} longer but too short at this class size (even a word-for-word "
            "copy of one could not be told from chance among this many students).")


def short_by_assignment(result: Similarity) -> dict[str, list[ExerciseTally]]:
    """The exercises with answers too short to tell apart, by assignment, in the course's order."""
    found: dict[str, list[ExerciseTally]] = {}
    for t in result.exercises:
        if t.not_compared:
            found.setdefault(t.assignment, []).append(t)
    return found


def short_table(result: Similarity) -> str:
    """Per exercise, the answers compared and those too short to tell apart, folded away ("" when none was)."""
    rows = "".join(f'<tr><th scope="row">{e(t.assignment)} {e(t.grade_id)}</th><td class="num">{t.answered}</td>'
                   f'<td class="num">{t.too_short}</td><td class="num">{t.too_short_here}</td></tr>'
                   for tallies in short_by_assignment(result).values() for t in tallies)
    if not rows:
        return ""
    return ('<details class="short"><summary>Answers too short to compare, per exercise</summary>'
            "<p>An answer too short to tell apart is never named, whoever wrote it: check a copy of one by "
            "reading it. At this class size an answer needs more of its own than in a large class, since a part "
            "that only two answers share is less unlikely among few.</p>"
            '<table><caption>Exercises with answers too short to compare</caption><thead><tr>'
            '<th scope="col">exercise</th><th scope="col">compared</th><th scope="col">too short (under 20 '
            'tokens)</th><th scope="col">too short at this class size</th></tr></thead><tbody>'
            + rows + "</tbody></table></details>")


def caveat(result: Similarity | None = None) -> str:
    """What the check finds and what it cannot see, in the words the instructor reads first."""
    short = f" {not_compared(result)}" if result and not_compared(result) else ""
    return ('<div class="caveat"><p><b>This finds answers that look alike, not who copied.</b> Two students who '
            "worked together as allowed, who followed the same worked example, or who reached the short obvious "
            "answer look alike too; a pair here is a reason to read both answers and talk with the students, never "
            "a verdict on its own.</p>"
            "<p><b>What it cannot see:</b> lines the course gave (the stub, the docstring, given code) and answers "
            "too short to tell apart (a one-line <code>Q @ K.T</code>, or in a small class a few lines) never count; "
            "code copied and then rewritten line by line, an answer translated from another language or produced "
            "by an AI assistant, work shared outside this class, and text and markdown answers are not compared. "
            "Names, comments, docstrings, blank lines, line breaks, the order of functions, temporaries split off "
            "or folded in, and the order of a sum's or product's terms are set aside, so renaming, reformatting "
            f"and splitting lines do not hide a copy.{short}</p></div>")


def _chance(p: Pair) -> str:
    """The chance of sharing this many exercises by chance alone, in words."""
    if p.chance < 1e-9:
        return "less than 1 in a billion"
    return f"about 1 in {max(1, round(1 / p.chance)):,}"


def pair_row(p: Pair, pages: str) -> str:
    names = "; ".join(f"{s.assignment} {s.grade_id}" for s in p.shared)
    return (f'<tr data-pair="{e(p.a)} {e(p.b)}" data-shared="{len(p.shared)}">'
            f'<th scope="row"><a href="{e(pages)}/{quote(p.slug)}">{e(p.a)} and {e(p.b)}</a></th>'
            f'<td class="num">{len(p.shared)} of {p.both_answered}</td><td class="num">{p.expected:.2f}</td>'
            f"<td>{_chance(p)}</td><td class=\"ex\">{e(names)}</td></tr>")


def section(result: Similarity, *, pages: str = PAGES) -> str:
    """The section for ``result``; ``pages`` is the folder of the side-by-side pages, relative to the page."""
    pairs = result.pairs
    compared = sum(t.answered for t in result.exercises)
    head = (f"<p><b>{len(pairs)} pair(s) of students</b> gave answers alike on {result.min_exercises} or more "
            "exercises.</p>" if pairs else
            f"<p>No pair of students gave answers alike on {result.min_exercises} or more exercises.</p>")
    table = ""
    if pairs:
        table = ("<p>Most exercises first (also in <code>similarity.csv</code>); a pair's names open both answers "
                 'side by side.</p><table class="pairs"><caption>Pairs alike on several exercises</caption><thead><tr>'
                 '<th scope="col">students</th><th scope="col">exercises alike (of those both answered)</th>'
                 '<th scope="col">alike by chance, expected</th><th scope="col">chance of this many</th>'
                 '<th scope="col">exercises</th></tr></thead><tbody>'
                 + "".join(pair_row(p, pages) for p in pairs) + "</tbody></table>")
    unread = ""
    if result.unread:
        unread = ("<p>Not compared: " + "; ".join(f"{e(u.student)} ({e(u.assignment)}): {e(u.why)}"
                                                   for u in result.unread) + ".</p>")
    return (f'<section id="similarity" data-pairs="{len(pairs)}"><h2>Answers that look alike</h2>' + caveat(result)
            + f"<p>{compared} answer(s) of {result.students} student(s) compared, exercise by exercise. Two answers "
            "are <i>alike</i> when the rarer parts they share (runs of code after names, comments and layout are "
            "set aside) are far likelier from copying than from chance, judged by how many of the class wrote "
            "each part. <i>Alike by chance, expected</i> is how many exercises two students who worked alone "
            "would share, from how often pairs in this class are alike on each exercise.</p>"
            + head + table + unread + short_table(result) + "</section>")
