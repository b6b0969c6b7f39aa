"""Measuring CPU where the engine spends it: cheap per-phase timers whose numbers ride along with a run's answer
(:attr:`.contract.RunResult.costs`). The grader adds them up (``grade --profile``)."""
from __future__ import annotations

import contextlib
import math
import os
import time
from typing import Iterator


def number(value: object) -> float:
    """A cost as a float; anything else (a child's frame is not trusted) counts as nothing."""
    try:
        x = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0
    return x if math.isfinite(x) and x >= 0 else 0.0


def merge(into: dict[str, float], more: dict[str, float]) -> dict[str, float]:
    """Add ``more``'s phases into ``into`` (returned)."""
    for phase, seconds in more.items():
        into[phase] = into.get(phase, 0.0) + number(seconds)
    return into


class Lap:
    """This thread's CPU from now to the first :meth:`stop`, added to ``into[phase]`` (for a phase that
    ends at one of several returns)."""

    def __init__(self, into: dict[str, float], phase: str):
        self.into, self.phase, self.t0 = into, phase, time.thread_time()

    def stop(self) -> None:
        if self.t0 is not None:
            self.into[self.phase] = self.into.get(self.phase, 0.0) + time.thread_time() - self.t0
            self.t0 = None


@contextlib.contextmanager
def thread_timer(into: dict[str, float], phase: str) -> Iterator[None]:
    """Add the CPU this thread spends in the block to ``into[phase]``."""
    lap = Lap(into, phase)
    try:
        yield
    finally:
        lap.stop()


def tree_seconds() -> float:
    """CPU of this process (every thread) and of the children it has reaped, user and system."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
