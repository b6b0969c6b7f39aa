"""What the benchmarks share: the machine's load, a work folder, the floor in a process of its own, the class's
shared costs per submission, and the per-cell comparison with stock nbgrader.

benchmarks/grading.py, term.py (and its term_*.py modules) and cluster.py use these, so that a figure two of them
print means the same in both.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the repository's tests/ holds the class builders
    sys.path.insert(0, str(ROOT))

from tests.builders import venv_env  # noqa: E402


def load() -> str:
    """The machine's load average, to print beside a timing taken on a shared machine."""
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())


@contextlib.contextmanager
def work_folder(keep: Path | None, prefix: str) -> Iterator[Path]:
    """``keep`` (made, and kept afterwards), or a temporary folder removed when the block ends."""
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        yield keep
        return
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield work
    finally:
        shutil.rmtree(work, ignore_errors=True)


def floor_runs(assignments: list[str], *, median_of: int = 5) -> dict[str, float]:
    """benchmarks/floor.py in a process of its own (it imports and runs every solution): CPU seconds per
    assignment, each the median of ``median_of`` runs."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "floor.py"), "--runs", str(median_of),
                           *assignments], env=venv_env(), capture_output=True, text=True, check=True)
    return {a: float(s) for a, s in (line.split() for line in proc.stdout.splitlines() if line.strip())}


def shared_per_submission(profile: dict) -> float:
    """Core-seconds per submission of what a ``grade --profile`` run's class shares (start-up, warm-up, the
    report, and what no timer saw), spread evenly over every submission it graded."""
    n = sum(profile["submissions"].values())
    return (sum(profile["phases"].get("", {}).values()) + profile["unattributed"]) / n


@dataclass
class Comparison:
    """Stock nbgrader's per-cell scores against ours on the same submissions."""

    compared: int
    different: list[tuple[tuple, float | None, float | None]]  # (student, assignment, grade id), stock, ours

    @property
    def equal(self) -> bool:
        return self.compared > 0 and not self.different

    def lines(self, kinds: dict[tuple[str, str], str], most: int = 20) -> list[str]:
        """A line per differing score (the first ``most``, with the submission's kind), then the count."""
        out = [f"  DIFFERENT {k}: stock {s}, ours {o} ({kinds.get(k[:2])})" for k, s, o in self.different[:most]]
        out.append(f"per-cell scores compared: {self.compared}; equal: {self.compared - len(self.different)}; "
                   f"different: {len(self.different)}")
        return out


def compare_scores(stock: dict[tuple, float], ours: dict[tuple, float]) -> Comparison:
    """Every (student, assignment, grade id) either side scored; a score one side lacks differs."""
    keys = sorted(set(stock) | set(ours))
    return Comparison(len(stock), [(k, stock.get(k), ours.get(k)) for k in keys if stock.get(k) != ours.get(k)])
