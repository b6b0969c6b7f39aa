"""Does every reference solution still run from top to bottom and reproduce its stored outputs (nbval strict)?"""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import paths
from tests.conftest import assignment_params

pytestmark = pytest.mark.slow
SANITIZE = Path(__file__).with_name("nbval_sanitize.cfg")


@pytest.mark.parametrize("assignment", assignment_params())
def test_solution_reproduces_its_outputs_under_nbval_strict(assignment, record_property):
    notebook = paths.solutions_dir() / f"{assignment}.ipynb"
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    for var in ("NBGRADER_EXECUTION", "AUTOGRADER_MODE", "AUTOGRADER_SEED", "MPLBACKEND"):
        env.pop(var, None)
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                        "--nbval", "--nbval-current-env", "--nbval-sanitize-with", str(SANITIZE), str(notebook)],
                       capture_output=True, text=True, env=env, cwd=paths.root(), timeout=900)
    seconds = time.perf_counter() - start
    record_property("run_all_seconds", round(seconds, 1))
    print(f"{assignment}: run-all under nbval in {seconds:.1f} s")
    summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    assert r.returncode == 0 and re.search(r"\d+ passed", summary) and "failed" not in summary, \
        f"nbval found differences in {notebook.name}:\n{r.stdout[-6000:]}\n{r.stderr[-2000:]}"
