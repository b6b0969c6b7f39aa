"""How long does rebuilding the CSVs, feedback pages and ``report.html`` take for a class of N submissions?

No notebook runs: the results are made up from the real assignments' tests (seeded), with a share of
failures carrying known mistakes, a few not attempted, overridden, late or ungradable. Prints the time
``report.write_outputs`` takes (everything a grading run rebuilds) and the time of ``report.html`` alone.

    python benchmarks/report.py [--submissions 100] [--keep DIR]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the repository's tests/ makes up the class
    sys.path.insert(0, str(ROOT))

from autograder.grade.output import classreport, report  # noqa: E402
from benchmarks.common import work_folder  # noqa: E402
from tests.builders import made_up_class  # noqa: E402  (the class tests/grade/test_classreport.py reads too)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=100)
    parser.add_argument("--keep", type=Path, help="write into this folder and keep it")
    args = parser.parse_args(argv)
    results, recorded = made_up_class(args.submissions)
    with work_folder(args.keep, "report-bench-") as out:
        t0 = time.perf_counter()
        finals = report.write_outputs(out, results, recorded)
        everything = time.perf_counter() - t0
        t0 = time.perf_counter()
        classreport.write_report(out, finals)
        alone = time.perf_counter() - t0
        size = (out / "report.html").stat().st_size
        print(f"{len(results)} submissions: CSVs + feedback pages + report.html in {everything:.3f} s; "
              f"report.html alone in {alone * 1000:.1f} ms ({size / 1024:.0f} KiB)")
        return 0


if __name__ == "__main__":
    sys.exit(main())
