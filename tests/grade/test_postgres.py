"""``grade --db postgresql://...``: grades land in a real PostgreSQL server and nbgrader's own ``export`` reads them.

Each test module run starts its own server from Debian's ``postgresql`` package on loopback
(initdb into a temporary folder, ``postgres`` on a free port, as the ``postgres`` user when run as
root) and stops it at teardown, whatever happened.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.builders import free_port, nbgrader_course, read_rows, venv_env

# one worker runs this module, so its module-scoped fixture is built once (loadgroup splits modules otherwise)
pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.xdist_group("test_postgres")]
A, B = "01_tokens_and_ids", "02_shapes_and_matmul"


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class Server:
    """One PostgreSQL server on 127.0.0.1, trusting local connections, in a throwaway data folder."""

    def __init__(self, bin_dir: Path):
        self.bin = bin_dir
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="autograder-pg-"))  # under /tmp: the postgres user can reach it
        self.proc: subprocess.Popen | None = None
        self.log = self.dir / "server.log"
        self.prefix: list[str] = []
        if os.geteuid() == 0:  # the server refuses to run as root
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.prefix = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--init-groups", "--"]
        self.data = self.dir / "data"

    def start(self) -> None:
        env = {**os.environ, "HOME": str(self.dir), "LC_ALL": "C"}
        subprocess.run([*self.prefix, str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
                        "--auth=trust", "-E", "UTF8", "--no-sync"], check=True, capture_output=True, env=env,
                       cwd=self.dir)
        with open(self.log, "wb") as log:  # setpriv execs: the Popen is the postmaster itself
            self.proc = subprocess.Popen(
                [*self.prefix, str(self.bin / "postgres"), "-D", str(self.data), "-h", "127.0.0.1",
                 "-p", str(self.port), "-k", str(self.dir), "-F", "-c", "max_connections=60"],
                stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.dir)
        import psycopg2

        deadline = time.monotonic() + 60
        while True:
            try:
                psycopg2.connect(host="127.0.0.1", port=self.port, user="postgres", dbname="postgres").close()
                return
            except psycopg2.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"PostgreSQL did not start:\n{self.log.read_text()[-2000:]}")
                time.sleep(0.2)

    def create_database(self, name: str) -> str:
        import psycopg2

        conn = psycopg2.connect(host="127.0.0.1", port=self.port, user="postgres", dbname="postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(f'CREATE DATABASE "{name}"')
        conn.close()
        return f"postgresql+psycopg2://postgres@127.0.0.1:{self.port}/{name}"  # the URL nbgrader's export needs

    def stop(self) -> None:
        try:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.send_signal(signal.SIGINT)  # fast shutdown: roll back clients, stop cleanly
                try:
                    self.proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def server():
    bin_dir = _pg_bin()
    if bin_dir is None:
        pytest.skip("PostgreSQL is not installed (Debian: apt-get install postgresql; tools/system-packages.sh)")
    srv = Server(bin_dir)
    try:
        srv.start()
        yield srv
    finally:
        srv.stop()


def nbgrader_export(course: Path, db_url: str) -> list[dict]:
    """Stock ``nbgrader export`` from a course folder whose config points at ``db_url``."""
    nbgrader_course(course, {"CourseDirectory.db_url": db_url})
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "export"], cwd=course, env=venv_env(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return read_rows(course / "grades.csv")


def totals(graded) -> dict[tuple[str, str], float]:
    return {(r["student_id"], r["assignment_id"]): float(r["score"]) for r in graded.rows("grades.csv")}


def exported(rows: list[dict]) -> dict[tuple[str, str], float]:
    return {(r["student_id"], r["assignment"]): float(r["score"]) for r in rows}


def small_class(g, root: Path, assignment: str) -> Path:
    g.make_class(root, assignments=[assignment])  # right000, wrong000, blank000
    return root


def test_grades_land_in_postgres_and_nbgrader_export_reads_them(server, tmp_path, g):
    db = server.create_database("course")
    root = small_class(g, tmp_path / "submitted", A)
    plain = db.replace("postgresql+psycopg2://", "postgresql://")  # grade accepts the plain spelling too
    graded = g.run_grade(root, "--db", plain, "--jobs", "2", "--timeout", "20", "--seed", "7")
    assert graded.proc.returncode == 0, graded.proc.stderr[-3000:]
    assert not (graded.out / "gradebook.db").exists(), "--db was given: no SQLite gradebook"
    ours = totals(graded)
    assert ours[("right000", A)] == g.FULL and ours[("blank000", A)] == 0.0
    assert 0 < ours[("wrong000", A)] < g.FULL

    # Grading again: nothing new is graded, the database keeps one submission per student. One export, after
    # this run (an nbgrader process, some 2 core-seconds): the first run's grades, unchanged by the second.
    again = g.run_grade(root, "--db", db, "--jobs", "2", "--timeout", "20")
    assert again.proc.returncode == 0, again.proc.stderr[-3000:]
    assert "(0 graded now, 3 unchanged" in again.proc.stdout, again.proc.stdout[-2000:]
    rows = nbgrader_export(tmp_path / "course", db)
    assert len(rows) == 3 and exported(rows) == ours


def test_two_graders_share_one_database(server, tmp_path, g):
    """Two graders, two assignments, the same students, one fresh database, at the same time."""
    db = server.create_database("shared")
    procs, outs = [], []
    for assignment in (A, B):
        root = small_class(g, tmp_path / f"submitted-{assignment}", assignment)
        out = tmp_path / f"graded-{assignment}"
        outs.append(out)
        procs.append(subprocess.Popen(g.grade_command(root, "--out", str(out), "--db", db, "--jobs", "1",
                                                      "--timeout", "20", "--seed", "7"),
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    try:
        finished = [p.communicate(timeout=900) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (stdout, stderr) in zip(procs, finished):
        assert p.returncode == 0, stderr[-3000:]
    ours: dict[tuple[str, str], float] = {}
    for out in outs:
        ours.update({(r["student_id"], r["assignment_id"]): float(r["score"]) for r in read_rows(out / "grades.csv")})
    assert {a for _, a in ours} == {A, B} and len(ours) == 6
    assert exported(nbgrader_export(tmp_path / "course", db)) == ours
