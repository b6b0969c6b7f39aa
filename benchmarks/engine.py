"""Per-submission cost of the warm, forked, sandboxed engine against nbclient with a fresh kernel.

    python benchmarks/engine.py [--runs N] [--notebook PATH]

Runs the same notebook N times each way (the engine's warm-up is timed separately: a
grader pays it once per worker, not per submission) and prints seconds per run and the
ratio. The notebook's code cells get a first cell ``import torch`` so both sides pay for
what real notebooks import.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.engine import Limits, default_pool, shutdown_pool  # noqa: E402
from autograder.grade.submission.isolation import describe_isolation  # noqa: E402
from autograder.grade.submission.running import grading_environment, run_cells  # noqa: E402

PRELUDE = "import torch\ntorch.set_num_threads(1)"


def sources_of(path: Path) -> list[str]:
    nb = nbformat.read(str(path), as_version=4)
    return [PRELUDE] + [c.source for c in nb.cells if c.cell_type == "code"]


def run_nbclient(sources: list[str], timeout: float) -> float:
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": os.getcwd()}}).execute()
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--notebook", type=Path, default=ROOT / "solutions" / "01_tokens_and_ids.ipynb")
    args = parser.parse_args(argv)
    sources = sources_of(args.notebook)
    assignment = args.notebook.stem
    os.environ.update(grading_environment(0))  # the nbclient runs below: evidence mode, as in the engine

    t0 = time.perf_counter()
    default_pool().warm(1)
    warm = time.perf_counter() - t0
    engine_times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        result = run_cells(sources, assignment=assignment, limits=Limits(cell_timeout=60))
        engine_times.append(time.perf_counter() - t0)
        bad = [c for c in result.cells if c.status not in ("ok", "error")]
        if bad:
            print(f"warning: cells not run normally: {[(c.index, c.status, c.detail) for c in bad]}")
    isolation = describe_isolation(result.isolation)
    shutdown_pool()

    client_times = [run_nbclient(sources, 60) for _ in range(args.runs)]

    e, c = statistics.median(engine_times), statistics.median(client_times)
    print(f"notebook: {args.notebook.name} ({len(sources)} code cells, first `import torch`), {args.runs} runs each")
    print(f"engine warm-up (once per worker): {warm:.2f} s")
    print(f"engine  per submission: median {e:.3f} s  (runs: {', '.join(f'{t:.2f}' for t in engine_times)})")
    print(f"nbclient per submission: median {c:.3f} s  (runs: {', '.join(f'{t:.2f}' for t in client_times)})")
    print(f"ratio nbclient / engine: {c / e:.1f}x")
    print(f"isolation: {isolation}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
