"""Sum a TEST_CPU_LOG written by the test suite (tests/conftest.py) by module: core-seconds and wall seconds.

    TEST_CPU_LOG=build/cpu.jsonl bash tools/test.sh ...
    python tools/test_cpu.py build/cpu.jsonl [--top 25]

Core-seconds count this process and the children it waited for, so they hold on a busy machine where wall
seconds do not; their sum over 2 cores is a floor for the suite's wall time.
"""
from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", type=Path)
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    cpu: dict[str, float] = defaultdict(float)
    wall: dict[str, float] = defaultdict(float)
    for line in args.log.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        module = row["test"].split("::")[0]
        cpu[module] += row["cpu"]
        wall[module] += row["wall"]
    total_cpu, total_wall = sum(cpu.values()), sum(wall.values())
    print(f"{'core-s':>8} {'wall-s':>8}  module")
    for module in sorted(cpu, key=cpu.get, reverse=True)[:args.top]:
        print(f"{cpu[module]:8.1f} {wall[module]:8.1f}  {module}")
    print(f"{total_cpu:8.1f} {total_wall:8.1f}  all {len(cpu)} modules (core-s / 2 cores = {total_cpu / 2 / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
