"""How long does rebuilding the CSVs, feedback pages and ``report.html`` take for a class of N submissions?

No notebook runs: the results are made up from the real assignments' tests (seeded), with a share of
failures carrying known mistakes, a few not attempted, overridden, late or ungradable. Prints the time
``report.write_outputs`` takes (everything a grading run rebuilds) and the time of ``report.html`` alone.

    python benchmarks/report.py [--submissions 100] [--keep DIR]
"""
from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from autograder import paths
from autograder.grade import classreport, report
from autograder.grade.gradebook import Recorded
from autograder.nbio import exercise_of, read_notebook

MISTAKES = ["you subtracted the max of the whole array, not of each row", "the softmax runs over the wrong axis",
            "that is KL(p || q): the arguments are swapped", "epsilon belongs inside the square root"]


def grade_ids(assignment: str) -> list[tuple[str, float]]:
    nb = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    return [(c.metadata.nbgrader["grade_id"], float(c.metadata.nbgrader.get("points", 0))) for c in nb.cells
            if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")
            and not c.metadata.nbgrader.get("solution")]


def made_up_class(n: int, seed: int = 0) -> tuple[list[dict], dict]:
    """``n`` results spread over the assignments, and a gradebook record with overrides and penalties."""
    rng = random.Random(seed)
    assignments = paths.assignments()
    tests = {a: grade_ids(a) for a in assignments}
    results, recorded = [], {}
    for i in range(n):
        a = assignments[i % len(assignments)]
        student = f"student{i // len(assignments):03d}"
        r = {"student_id": student, "assignment_id": a, "scores": [], "problems": [], "code": {}}
        if rng.random() < 0.03:
            r["problems"].append({"problem": "not valid JSON", "detail": "line 1: Expecting value", "fatal": True})
            results.append(r)
            continue
        skill = rng.random()
        for gid, pts in tests[a]:
            roll = rng.random()
            status = "passed" if roll < skill else "not attempted" if roll > 0.95 else "failed"
            mistake = rng.choice(MISTAKES) if status == "failed" and rng.random() < 0.7 else ""
            r["scores"].append({"grade_id": gid, "points": pts if status == "passed" else 0.0, "max_points": pts,
                                "status": status, "message": mistake or "wrong values", "mistake": mistake})
            r["code"][exercise_of(gid)] = "def f(x):\n    return x\n"
        if rng.random() < 0.05:
            first = r["scores"][0]
            recorded[student, a] = Recorded(scores={first["grade_id"]: first["max_points"]},
                                            overridden={first["grade_id"]: first["points"]}, comments={}, late_penalty=1.0,
                                            seconds_late=7200.0, submitted_at="")
        results.append(r)
    return results, recorded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--keep", type=Path, help="write into this folder and keep it")
    args = parser.parse_args(argv)
    results, recorded = made_up_class(args.submissions)
    out = args.keep or Path(tempfile.mkdtemp(prefix="report-bench-"))
    try:
        t0 = time.perf_counter()
        report.write_outputs(out, results, recorded)
        everything = time.perf_counter() - t0
        finals = [report.final(r, recorded.get((r["student_id"], r["assignment_id"]))) for r in results]
        t0 = time.perf_counter()
        classreport.write_report(out, finals)
        alone = time.perf_counter() - t0
        size = (out / "report.html").stat().st_size
        print(f"{len(results)} submissions: CSVs + feedback pages + report.html in {everything:.3f} s; "
              f"report.html alone in {alone * 1000:.1f} ms ({size / 1024:.0f} KiB)")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
