"""Does grading work in the setups instructors really have, and does it say what is isolated there?

Each setup grades the same small class (an honest and a blank notebook 01) with the real command:

* this interpreter as it is (tools/test.sh runs this file as root and again as an ordinary user);
* where namespaces are refused (``tests/no_userns.py``: Docker's default seccomp profile, Ubuntu
  24.04's AppArmor rule): it grades anyway and says plainly what is not isolated;
* a virtualenv outside the checkout reached through a symlink (pyenv-virtualenv's layout);
* a reference solution that cannot run: the run stops before anyone is graded (exit 2).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import paths

pytestmark = [pytest.mark.grading, pytest.mark.slow]
NO_USERNS = Path(__file__).resolve().parents[1] / "no_userns.py"
A = "01_tokens_and_ids"


def grade(g, tmp: Path, python: list[str], env: dict | None = None) -> "g.Graded":
    sub = tmp / "submitted"
    g.write_submission(sub, "honest", g.right_notebook())
    g.write_submission(sub, "blank", g.blank_notebook())
    out = tmp / "graded"
    proc = subprocess.run([*python, "-m", "autograder", "grade", str(sub), "--out", str(out), "--jobs", "2"],
                          capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})},
                          cwd=str(tmp))
    return g.Graded(proc, out)


def assert_honest_full_blank_zero(g, graded) -> None:
    detail = graded.proc.stdout + graded.proc.stderr[-3000:]
    assert graded.proc.returncode == 0, detail
    full = sum(g.full_marks(r["assignment_id"]) for r in graded.rows("grades.csv") if r["student_id"] == "honest")
    assert full > 0
    assert graded.total("honest") == full, detail
    assert graded.total("blank") == 0, detail


def isolation_line(graded) -> str:
    return next(line for line in graded.proc.stdout.splitlines() if line.startswith("Isolation in force:"))


def test_this_interpreter_grades_honest_full_and_blank_zero_with_the_strongest_isolation(g, tmp_path):
    graded = grade(g, tmp_path, [sys.executable])
    assert_honest_full_blank_zero(g, graded)
    line = isolation_line(graded)
    run = json.loads((graded.out / "run.json").read_text())
    assert run["isolation"] and run["isolation"][0] in line
    if shutil.which("bwrap") and subprocess.run(["bwrap", "--unshare-all", "--ro-bind", "/", "/", "true"],
                                                capture_output=True).returncode == 0:
        assert "bubblewrap" in line and "no network" in line, line
        assert "user nobody" in line if os.geteuid() == 0 else "no capabilities" in line, line
        assert run["not_isolated"] == [], run
        assert "NOT isolated" not in graded.proc.stdout
    else:  # no bubblewrap here: whatever is left unconfined is said, in the summary and in run.json alike
        assert "bubblewrap" not in line, line
        assert ("NOT isolated on this machine" in graded.proc.stdout) == bool(run["not_isolated"]), run


@pytest.mark.skipif(sys.platform != "linux", reason="seccomp is Linux's")
def test_without_namespaces_it_still_grades_and_says_what_is_not_isolated(g, tmp_path):
    graded = grade(g, tmp_path, [sys.executable, str(NO_USERNS), sys.executable])
    assert_honest_full_blank_zero(g, graded)
    line = isolation_line(graded)
    assert "bubblewrap" not in line, line
    assert "resource limits only (no namespaces available here)" in line, line
    run = json.loads((graded.out / "run.json").read_text())
    stdout = graded.proc.stdout
    # without a namespace nobody, root included, gets a private network or filesystem
    assert "NOT isolated on this machine" in stdout, stdout
    assert any("network" in gap for gap in run["not_isolated"]), run
    assert any("your files" in gap for gap in run["not_isolated"]), run
    if os.geteuid() == 0:  # root still changes identity (to nobody, when nobody can read the interpreter)
        assert "+ user nobody" in line or "+ root (nobody could not read" in line, line
    else:
        assert any("runs as you" in gap for gap in run["not_isolated"]), run


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def test_a_virtualenv_outside_the_checkout_reached_through_a_symlink(g, tmp_path):
    if sys.prefix == sys.base_prefix:
        pytest.skip("not running in a virtualenv")
    real = tmp_path / "envs" / "course"
    # a copy whose files are hard links (the same bytes, under another path; 1.8 GB copied took 15 core-s),
    # falling back to a real copy where linking is refused (another file system, protected_hardlinks)
    shutil.copytree(sys.prefix, real, symlinks=True, copy_function=_link_or_copy)
    link = tmp_path / "pyenv" / "versions" / "course"
    link.parent.mkdir(parents=True)
    link.symlink_to(real, target_is_directory=True)
    python = link / "bin" / Path(sys.executable).name
    graded = grade(g, tmp_path, [str(python)])
    assert_honest_full_blank_zero(g, graded)
    assert "ModuleNotFoundError" not in graded.proc.stdout + graded.proc.stderr


def test_a_reference_that_cannot_run_stops_the_run_before_anyone_is_graded(g, tmp_path):
    course = tmp_path / "course"
    (course / "solutions").mkdir(parents=True)
    source = nbformat.read(paths.solutions_dir() / f"{A}.ipynb", as_version=4)
    setup = source.cells[g.setup_index(source)]
    setup.source = "import module_the_sandbox_does_not_have\n" + setup.source
    nbformat.write(source, course / "solutions" / f"{A}.ipynb")
    graded = grade(g, tmp_path, [sys.executable], env={"AUTOGRADER_ROOT": str(course)})
    assert graded.proc.returncode == 2, graded.proc.stdout + graded.proc.stderr
    text = graded.proc.stderr
    assert "stopped before any student was graded" in text, text
    assert "importing 'module_the_sandbox_does_not_have'" in text and "Fix:" in text, text
    assert not (graded.out / "results").exists() or not any((graded.out / "results").rglob("*.json"))
    assert "could not be graded" not in graded.proc.stdout


def test_doctor_proves_the_machine_in_one_command(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "autograder", "doctor"], capture_output=True, text=True,
                          timeout=600, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "Isolation in force:" in out and "grading works on this machine" in out
    for name in ("the network", "the course checkout", "another student's submission", "writing outside"):
        assert name in out
    if "bubblewrap (private filesystem" in out:
        assert "REACHED " not in out, out
