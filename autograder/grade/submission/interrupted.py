"""Where a timed-out cell was when the grader stopped it, read from the interrupted traceback its outputs keep.

The engine stops a cell that runs past its time with SIGINT (:mod:`autograder.engine.child`; nbclient interrupts the
kernel in the fallback runner). IPython records the ``KeyboardInterrupt`` as the cell's error output, one
traceback entry per frame, innermost last::

    "Cell In[3], line 4\\n----> 4 check(greedy_token)\\n"
    "Cell In[2], line 3, in greedy_token(logits)\\n      1 def greedy_token(logits):\\n----> 3     while True:\\n"
    "File .../engine/child.py:132, in cell_runner.<locals>.interrupt(signum, frame)\\n--> 132     raise ..."

The innermost frame in one of the learner's own cells is the line that was running: a loop that never ends,
or the call that started work too large. Frames in the course's library, in NumPy or in the engine's own
handler are passed over, and a frame of a test cell is never named, so a hidden test's code stays hidden.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Mapping

from ...nbio import ANSI

FRAME = re.compile(r"^Cell In\s*\[(\d+)\], line (\d+)(?:, in (.+))?$")  # IPython 8's header of a cell's frame
MARKED = re.compile(r"^\s*-+>\s*(\d+)\s?(.*)$")  # "----> 3     while True:": the frame's current line


@dataclass(frozen=True)
class StoppedAt:
    """The line of the learner's own code that was running when a cell was stopped for running too long."""

    cell: str  # the exercise whose cell it is ("greedy_token"); "" for another cell of the learner's notebook
    line: int  # 1-based, within that cell
    code: str  # that line as the learner wrote it, stripped
    function: str = ""  # the frame as the traceback names it, "greedy_token(logits)"; "" at a cell's top level

    def where(self) -> str:
        """``line 3 of your greedy_token cell``, in the words of a feedback page."""
        return f"line {self.line} of your {self.cell} cell" if self.cell else f"line {self.line} of a cell of yours"

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "StoppedAt":
        return cls(cell=str(data.get("cell", "")), line=int(data.get("line", 0)), code=str(data.get("code", "")),
                   function=str(data.get("function", "")))


def _frames(outputs: list) -> list[tuple[int, int, str, str]]:
    """(execution count, line, function, the line's code as shown) of each cell frame of the interrupt's
    traceback, outermost first."""
    frames = []
    for out in outputs:
        if not isinstance(out, dict) or out.get("output_type") != "error" or out.get("ename") != "KeyboardInterrupt":
            continue
        for entry in out.get("traceback") or []:
            lines = ANSI.sub("", str(entry)).splitlines()
            head = FRAME.match(lines[0].strip()) if lines else None
            if head is None:
                continue
            marked = next((m for m in map(MARKED.match, lines[1:]) if m and int(m.group(1)) == int(head.group(2))),
                          None)
            frames.append((int(head.group(1)), int(head.group(2)), (head.group(3) or "").strip(),
                           marked.group(2).strip() if marked else ""))
    return frames


def stopped_at(outputs: list, cells: Mapping[int, tuple[str, str]]) -> StoppedAt | None:
    """Where the interrupt found the learner's code, from a timed-out cell's ``outputs``; None when its
    traceback names no line of theirs (an interrupt that landed in a library, or no traceback kept).

    ``cells``: position in the run -> (the exercise whose cell it is, or "", the source that ran) for every cell
    that is not a test cell. A frame names its cell by execution count (``Cell In[N]``: position N - 1 when
    no cell was skipped); it is taken only where that cell's line holds the code the traceback shows, and
    otherwise from the first other such cell that does, so a skipped cell never shifts it to a wrong one."""
    for count, line, function, code in reversed(_frames(outputs)):
        if not code:
            continue
        order = [count - 1] + [i for i in cells if i != count - 1]
        for i in order:
            if i not in cells:
                continue
            name, source = cells[i]
            lines = source.splitlines()
            if 0 < line <= len(lines) and lines[line - 1].strip() == code:
                return StoppedAt(cell=name, line=line, code=code, function=function if function != "<module>" else "")
    return None
