"""Real Unix users for the course tests: who can run our Python, making a user when missing, and removing
at the end the users and groups this run made."""
from __future__ import annotations

import functools
import grp
import os
import pwd
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest


PREFIX = "ag_"  # every user and group the course tests make is named so; nothing else is ever removed
# The ag_ users and groups this machine had before this run made any, read when pytest imports this module
# (collection, before any test starts: pytest-xdist hands out tests only once every worker has collected).
# They are someone's, or kept from an earlier run: the clean-up leaves them.
USERS_BEFORE = frozenset(p.pw_name for p in pwd.getpwall() if p.pw_name.startswith(PREFIX))
GROUPS_BEFORE = frozenset(g.gr_name for g in grp.getgrall() if g.gr_name.startswith(PREFIX))


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


def _made_by_this_run(name: str, before: frozenset[str]) -> bool:
    return name.startswith(PREFIX) and name not in before


def remove_users_made_by_this_run(*users: str, groups: tuple[str, ...] = ()) -> list[str]:
    """Remove those of ``users`` this run made (``userdel -r``: the home, the mail spool and the private group),
    then those of ``groups`` it made, and each user's private group if ``userdel`` left it. A name already
    gone is skipped; one without the ag_ prefix, or there before the run, is never touched. What was removed."""
    removed, failed = [], []
    for user in users:
        if not _made_by_this_run(user, USERS_BEFORE):
            continue
        for _ in range(20):  # a user's last processes (a stopped Hub's servers) may take a moment to end
            try:
                pwd.getpwnam(user)
            except KeyError:
                break  # gone already, or removed on an earlier attempt
            done = subprocess.run(["userdel", "--remove", user], capture_output=True, text=True)
            if done.returncode in (0, 6):  # 6: no such user (removed meanwhile)
                removed.append(user)
                break
            if done.returncode != 8:  # 8: the user is still running a process; anything else will not pass
                failed.append(f"userdel {user}: {done.stderr.strip()}")
                break
            time.sleep(0.5)
        else:
            failed.append(f"userdel {user}: still running a process after 10 s: {done.stderr.strip()}")
    for group in dict.fromkeys([*groups, *users]):  # a private group outlives its user when others joined it
        if not _made_by_this_run(group, GROUPS_BEFORE):
            continue
        try:
            grp.getgrnam(group)
        except KeyError:
            continue
        done = subprocess.run(["groupdel", group], capture_output=True, text=True)
        if done.returncode in (0, 6):  # 6: no such group (removed meanwhile)
            removed.append(group)
        else:
            failed.append(f"groupdel {group}: {done.stderr.strip()}")
    if failed:
        raise RuntimeError("the course tests could not remove what they made: " + "; ".join(failed))
    return removed
