"""The progress line of a class run, ``grading 12/40  2.3/s  about 12 s left``: the schedule draws it as results
come in (it needs nothing of the outputs the run writes).
"""
from __future__ import annotations

import time
from typing import TextIO


class Progress:
    """``grading 12/40  2.3/s  about 12 s left`` on one line of stderr, redrawn in place on a terminal."""

    def __init__(self, stream: TextIO, enabled: bool = True, every: float = 5.0):
        self.stream, self.enabled, self.every = stream, enabled, every
        self.total = self.done = 0
        self.started = self.last = 0.0
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.drawn = False

    def start(self, total: int) -> None:
        self.total, self.done, self.started, self.last = total, 0, time.monotonic(), 0.0
        self._draw(force=True)

    def advance(self) -> None:
        self.done += 1
        self._draw(force=self.done == self.total)

    def _draw(self, force: bool = False) -> None:
        if not self.enabled or not self.total:
            return
        now = time.monotonic()
        if not force and not self.tty and now - self.last < self.every:
            return
        self.last = now
        elapsed = now - self.started
        rate = self.done / elapsed if elapsed > 0 and self.done else 0.0
        left = f"about {(self.total - self.done) / rate:.0f} s left" if rate else "starting"
        line = f"grading {self.done}/{self.total} submissions  {rate:.2f}/s  {left}"
        if self.tty:
            self.stream.write("\r" + line.ljust(70))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.enabled and self.tty and self.drawn:
            self.stream.write("\n")
            self.stream.flush()
