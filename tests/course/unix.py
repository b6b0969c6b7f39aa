"""Real Unix users for the course tests: who can run our Python, and making a user when missing."""
from __future__ import annotations

import functools
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


@functools.lru_cache(maxsize=None)  # a new interpreter as nobody, ~1 core-second: once per test process
def everyone_can_run(python: str) -> bool:
    probe = subprocess.run(["runuser", "-u", "nobody", "--", python, "-c", "import autograder, nbgrader"],
                           capture_output=True, timeout=120)
    return probe.returncode == 0


def ensure_user(name: str) -> Path:
    try:
        return Path(pwd.getpwnam(name).pw_dir)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name], check=True)
        return Path(pwd.getpwnam(name).pw_dir)


def python_every_user_can_run() -> str:
    """This Python, when the tests can create users (root) and every user can run it; else skip, saying why."""
    if os.geteuid() != 0 or not shutil.which("runuser") or not shutil.which("useradd"):
        pytest.skip("creates Unix users: run as root (tools/test-as-instructor.sh does)")
    if not everyone_can_run(sys.executable):
        pytest.skip(f"{sys.executable} cannot be read by other users (a Python inside root's home); "
                    "tools/test-as-instructor.sh runs this with an installation every user can read")
    return sys.executable
