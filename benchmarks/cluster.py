"""Throughput of ``grade --cluster`` with 1 and 2 Dask workers on this machine, and the local path's scores.

One generated class (tests/builders.py's, as in benchmarks/grading.py: right, wrong and blank students) is
graded with one seed: first on the local path (``--jobs 2``), then through a ``distributed.LocalCluster`` of 1 and
of 2 worker processes (one thread each) on loopback. Each cluster grades the class twice: cold
(fresh workers start their warm interpreters) and warm (``--force`` on the same workers). Every
per-cell score and status must equal the local path's; the script exits 1 when one differs.

    python benchmarks/cluster.py [--students 3] [--assignments 01_tokens_and_ids ...] [--keep DIR]
"""
from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: the repository's tests/ holds the class builders
    sys.path.insert(0, str(ROOT))

from benchmarks.common import work_folder  # noqa: E402
from tests.builders import grade_command, make_class, venv_env  # noqa: E402


def scores(out: Path) -> dict[tuple[str, str, str], tuple[str, str]]:
    with open(out / "scores.csv", newline="") as fh:
        return {(r["student_id"], r["assignment_id"], r["grade_id"]): (r["points"], r["status"])
                for r in csv.DictReader(fh)}


def grade(submissions: Path, out: Path, seed: int, *extra: str) -> tuple[float, subprocess.CompletedProcess]:
    cmd = grade_command(submissions, "--out", str(out), "--seed", str(seed), *extra)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=venv_env(), capture_output=True, text=True)
    return time.perf_counter() - t0, proc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=3, help="students per kind (right, wrong, blank)")
    parser.add_argument("--assignments", nargs="*", default=["01_tokens_and_ids"])
    parser.add_argument("--seed", type=int, default=20260901)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args(argv)
    from distributed import LocalCluster

    with work_folder(args.keep, "cluster-bench-") as work:
        submissions = work / "submitted"
        n = len(make_class(submissions, assignments=args.assignments, students=args.students))
        print(f"class: {n} submissions of {', '.join(args.assignments)}; {os.cpu_count()} cores", flush=True)
        seconds, proc = grade(submissions, work / "local", args.seed, "--jobs", "2", "--force")
        if proc.returncode != 0:
            print(proc.stderr[-2000:], file=sys.stderr)
            return 1
        print(f"local path (--jobs 2): {seconds:.1f} s, {n / seconds:.2f} submissions/s", flush=True)
        local = scores(work / "local")
        differ = 0
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                              dashboard_address=None) as cluster:
                for run in ("cold", "warm"):
                    out = work / f"cluster{workers}-{run}"
                    seconds, proc = grade(submissions, out, args.seed, "--cluster", cluster.scheduler_address,
                                          "--force")
                    if proc.returncode != 0:
                        print(proc.stderr[-2000:], file=sys.stderr)
                        return 1
                    theirs = scores(out)
                    bad = [k for k in sorted(set(local) | set(theirs)) if local.get(k) != theirs.get(k)]
                    differ += len(bad)
                    for k in bad[:10]:
                        print(f"  DIFFERENT {k}: local {local.get(k)}, cluster {theirs.get(k)}")
                    print(f"--cluster, {workers} worker{'s' if workers > 1 else ''} ({run}): {seconds:.1f} s, "
                          f"{n / seconds:.2f} submissions/s; per-cell scores equal to the local path: "
                          f"{len(theirs) - len(bad)}/{len(local)}", flush=True)
        return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
