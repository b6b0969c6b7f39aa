import os
import sys
from pathlib import Path

import pytest

# Plots in set-up cells must not try to open a window when notebooks run in-process.
os.environ.setdefault("MPLBACKEND", "Agg")
# nbgrader shells out to alembic and jupyter: the interpreter's own bin must come first on PATH.
_bin = str(Path(sys.executable).parent)
if not os.environ.get("PATH", "").startswith(_bin):
    os.environ["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")

from autograder import paths  # noqa: E402

ASSIGNMENTS = paths.assignments()


# The longest work units first, so that on 2 cores no long test starts last and runs alone at the end
# (longest-processing-time-first scheduling). tools/test.sh passes --no-loadscope-reorder, so pytest-xdist
# hands out work in this order instead of putting the groups with the most tests first. Rough core-seconds
# measured on 2 cores; a test not listed keeps its place after these.
LONGEST_FIRST = (
    # one xdist group, the largest (~160): the broken class, shared with the browser's report, site and feedback
    "tests/grade/test_broken_class.py",
    "tests/browser/test_report_and_site.py",
    "tests/browser/test_feedback.py",
    "tests/course/test_learner_pieces.py",  # ~100: runs 05, 09 and 10 in a students' image
    "tests/test_solutions_nbval.py::test_solution_reproduces_its_outputs_under_nbval_strict[10_decoder_block]",
    "tests/grade/test_pipeline.py::test_scores_equal_stock_nbgrader_autograde",  # stock nbgrader, one kernel each
    "tests/grade/test_engine.py",  # ~50 with test_time_budget.py, its group
    "tests/grade/test_time_budget.py",
    "tests/grade/test_cluster.py",
    "tests/adversarial/test_adversarial.py",
    "tests/grade/test_postgres.py",
    "tests/browser/test_formgrader.py",
    "tests/test_mangled.py",  # ~30, one group
    "tests/test_website.py",  # ~30 (or ~15 when the site is built for the browser's tests first), one group
    "tests/grade/test_trouble_class.py",
    "tests/grade/test_manual_answers.py",
    "tests/grade/test_pipeline.py",
    "tests/grade/test_setups.py",
    "tests/grade/test_lost_points_explained.py",
    "tests/grade/test_classreport.py",
    "tests/grade/test_time_limits.py",
    "tests/checks/test_nb10_training.py",
    "tests/test_solutions_nbval.py",
)


def _rank(nodeid: str) -> int:
    return next((i for i, prefix in enumerate(LONGEST_FIRST) if nodeid.startswith(prefix)), len(LONGEST_FIRST))


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: _rank(item.nodeid))  # stable: within a rank, collection order


def assignment_params():
    """One pytest param per reference notebook, carrying its nbNN marker."""
    return [pytest.param(a, marks=getattr(pytest.mark, f"nb{a[:2]}"), id=a) for a in ASSIGNMENTS]


# Where the test command's time goes, in core-seconds rather than wall seconds: a number that stays
# meaningful on a busy machine. With TEST_CPU_LOG=<file> every setup, call and teardown appends one
# JSON line (test id, phase, wall seconds, core-seconds); `python tools/test_cpu.py <file>` sums them by
# module. As root on a machine with cgroup v1's cpuacct, each test process moves into a cgroup of its own,
# whose count includes every process it starts, also those inside bubblewrap's PID namespace (a grading
# run's cells), which os.times() never sees; elsewhere the count is this process and the children it
# waited for.
# absolute: some tests change the working folder (monkeypatch.chdir), and the log must not move with them
_CPU_LOG = os.path.abspath(os.environ["TEST_CPU_LOG"]) if os.environ.get("TEST_CPU_LOG") else None
_CPUACCT = Path("/sys/fs/cgroup/cpuacct")
_cgroup: Path | None = None


def _own_cgroup() -> Path | None:
    try:
        group = _CPUACCT / f"autograder-tests-{os.getpid()}"
        group.mkdir(exist_ok=True)
        (group / "cgroup.procs").write_text(str(os.getpid()))
        return group
    except OSError:
        return None


def _core_seconds() -> float:
    if _cgroup is not None:
        return int((_cgroup / "cpuacct.usage").read_text()) / 1e9
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


if _CPU_LOG:
    import json
    import time

    _cgroup = _own_cgroup() if os.geteuid() == 0 and _CPUACCT.is_dir() else None

    def _timed(item, phase):
        wall, cpu = time.perf_counter(), _core_seconds()
        yield
        row = {"test": item.nodeid, "phase": phase, "wall": round(time.perf_counter() - wall, 3),
               "cpu": round(_core_seconds() - cpu, 3)}
        with open(_CPU_LOG, "a", encoding="utf-8") as log:  # one short append per phase: lines never interleave
            log.write(json.dumps(row) + "\n")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(item):
        yield from _timed(item, "setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(item):
        yield from _timed(item, "call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(item):
        yield from _timed(item, "teardown")
