"""Give back nbgrader's metadata to a notebook saved by an editor that dropped it (issue 55).

Google Colab, and some older editors, keep a notebook's cells but not their ``metadata.nbgrader``: no cell is
an answer or a test any more, and without this step every test would read as deleted and every answer as
missing, though nothing of the learner's work is gone. When no cell of a notebook has a grade id, its code
cells are matched to the released notebook's graded cells by their text: a test cell holds the text it was
released with (the hidden ones all read alike, so the order decides), and an answer cell is the learner's
code cell between the tests around it that defines the exercise (or reads most like its stub), and a written
answer a person grades (markdown) is the cell as many places after its test as in the release. Each match
gets the released cell's metadata back, in memory, and is graded as in any notebook; the learner reads one
line about it. The file itself is never changed.
"""
from __future__ import annotations

import copy
import difflib
import re

from nbformat import NotebookNode

from ...nbio import grade_id

KIND = "metadata lost"  # the problems.csv kind of the one row that says so
SAID = ("this notebook was saved by an editor that dropped nbgrader's metadata (Google Colab, or an older "
        "editor): its cells were matched to the released notebook by their text ({found} of {graded} graded "
        "cells found) and graded as usual, nothing was counted as changed. To hand in a notebook nbgrader reads "
        "as it is, copy your answers into the released notebook in Jupyter and submit that one")
LIKE_STUB = 0.5  # an answer that does not define its function must read at least this much like its stub


def _norm(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _defines(source: str, name: str) -> bool:
    return re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b|^{re.escape(name)}\s*=", source,
                     re.MULTILINE) is not None


def restore(cells: list[NotebookNode], tests: list) -> tuple[str, str] | None:
    """When no cell of ``cells`` carries a grade id, put back the released metadata of every graded cell found
    among them (in place) and return the one (problem, detail) that says so; None, changing nothing, when some
    cell still has its metadata or no test cell of the release is found (not this course's notebook).
    ``tests`` are the source's :class:`.sanitize.SourceTest` (not imported: sanitize imports this module), each
    with the text it was released with and its exercise's answer as released."""
    if not tests or any(grade_id(c) for c in cells):
        return None
    graded = _released(tests)  # (kind, grade id, text, metadata) in the release's order
    code = [c for c in cells if c.get("cell_type") == "code"]
    texts = [_norm(c.get("source", "")) for c in code]
    matcher = difflib.SequenceMatcher(None, texts, [_norm(g[2]) for g in graded], autojunk=False)
    at: dict[int, int] = {}  # graded position -> code cell position
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            at[block.b + k] = block.a + k
    if not any(graded[b][0] == "test" for b in at):
        return None
    taken = set(at.values())
    for b, (kind, gid, text, _) in enumerate(graded):
        if kind != "answer" or b in at:
            continue
        before = max((at[k] for k in at if k < b), default=-1)
        after = min((at[k] for k in at if k > b), default=len(code))
        found = _answer(code, range(before + 1, after), taken, gid, text)
        if found is not None:
            at[b] = found
            taken.add(found)
    for b, a in at.items():
        code[a].setdefault("metadata", {})["nbgrader"] = copy.deepcopy(graded[b][3])
    written = _written_answers(cells, tests)
    total = len(graded) + sum(len(t.answers_after) for t in tests)
    return KIND, SAID.format(found=len(at) + written, graded=total)


def _written_answers(cells: list[NotebookNode], tests: list) -> int:
    """Put back the metadata of each written answer (a markdown cell graded by a person) found where the release
    has it: as many cells after its test cell, once that test is matched, and not a code cell. Returns how many."""
    where = {grade_id(c): i for i, c in enumerate(cells) if grade_id(c)}
    found = 0
    for t in tests:
        for gid, _, meta, offset in t.answers_after:
            i = where.get(t.grade_id, -1) + offset
            if t.grade_id in where and i < len(cells) and cells[i].get("cell_type") != "code" \
                    and not grade_id(cells[i]):
                cells[i].setdefault("metadata", {})["nbgrader"] = copy.deepcopy(meta)
                found += 1
    return found


def _released(tests: list) -> list[tuple[str, str, str, dict]]:
    """The release's graded cells in order: each exercise's answer (as released) before its first test."""
    out, seen = [], set()
    for t in tests:
        if t.anchor and t.anchor not in seen and t.anchor_meta:
            seen.add(t.anchor)
            out.append(("answer", t.anchor, t.anchor_released, t.anchor_meta))
        out.append(("test", t.grade_id, t.released, t.released_meta))
    return out


def _answer(code: list[NotebookNode], window: range, taken: set[int], gid: str, stub: str) -> int | None:
    """The code cell of ``window`` that is the answer ``gid``: one that defines it, the most like its stub first;
    else the one most like the stub, if it is like it at all."""
    def likeness(i: int) -> float:
        return difflib.SequenceMatcher(None, code[i].get("source", ""), stub, autojunk=False).ratio()

    free = [i for i in window if i not in taken and code[i].get("source", "").strip()]
    defining = [i for i in free if _defines(code[i].get("source", ""), gid)]
    if defining:
        return max(defining, key=likeness)
    best = max(free, key=likeness, default=None)
    return best if best is not None and likeness(best) >= LIKE_STUB else None
