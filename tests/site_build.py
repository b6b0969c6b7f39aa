"""The course site, built once per test session for every test that reads it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from filelock import FileLock


def built_site(tmp_path_factory) -> Path:
    """The course site as `python -m autograder site --out DIR` builds it, built once per test session and shared
    by every xdist worker (tests/test_website.py reads its files, tests/browser/test_report_and_site.py opens its
    pages; each built its own, ~17 core-seconds apiece). The first worker to ask builds it under a lock; the
    others wait for it. Read it, never write into it."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # shared by this session's workers
    out = root / "course-site" / "site"
    with FileLock(str(root / "course-site.lock")):
        if not (out.parent / "built").is_file():
            out.parent.mkdir(exist_ok=True)
            proc = subprocess.run([sys.executable, "-m", "autograder", "site", "--out", str(out)],
                                  capture_output=True, text=True, timeout=600)
            assert proc.returncode == 0, proc.stderr[-3000:]
            print(proc.stdout.strip())
            (out.parent / "built").write_text(proc.stdout)
    return out
