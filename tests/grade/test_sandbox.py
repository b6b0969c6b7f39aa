"""Isolation: what a submission's code can reach, with bubblewrap and with namespaces alone.

Each test plants something the code must not reach (a solution of its own assignment, a
file outside its scratch folder, a TCP server on loopback) and checks it stays out of reach,
while what it may use (an earlier notebook's reference solution, its scratch folder) works.
"""
from __future__ import annotations

import json
import os
import socket
import select
from pathlib import Path

import nbformat
import pytest

from autograder.engine import sandbox
from autograder.engine import Limits, RunResult, WarmPool, default_pool
from autograder.grade.submission.isolation import describe_isolation
from autograder.grade.submission.running import run_cells

# one worker runs this module, so its module-scoped fixture is built once (loadgroup splits modules otherwise)
pytestmark = [pytest.mark.grading, pytest.mark.xdist_group("test_sandbox")]

FAST = Limits(cell_timeout=60, interrupt_grace=1)  # no cell here loops: each has a minute, however busy the machine
SECRET = "SECRET-do-not-read-42"

MODES = ["namespaces"] + (["bubblewrap"] if default_pool().bubblewrap else [])


@pytest.fixture(scope="module")
def plain_pool():
    p = WarmPool(bubblewrap=False)
    p.warm(1)
    yield p
    p.shutdown()


@pytest.fixture(scope="module", params=MODES)
def pool(request, plain_pool):
    if request.param == "namespaces":
        return plain_pool
    p = default_pool()  # bubblewrap here, shared with the other engine tests
    assert p.bubblewrap
    return p


def _notebook(path: Path, source: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source, metadata={"tags": ["library"]})]
    nbformat.write(nb, str(path))


@pytest.fixture(scope="module")
def course(tmp_path_factory, ):
    root = tmp_path_factory.mktemp("course")
    sol = root / "solutions"
    sol.mkdir()
    _notebook(sol / "01_first.ipynb", "VALUE = 41 + 1")
    _notebook(sol / "02_second.ipynb", f"ANSWER = {SECRET!r}")
    _notebook(sol / "03_third.ipynb", f"LATER = {SECRET!r}")
    (root / "gradebook.db").write_text(SECRET)
    return root


def out(result: RunResult, i: int) -> str:
    cell = result.cells[i]
    assert cell.status == "ok", (cell.status, cell.detail, cell.outputs)
    return "".join(o.get("text", "") for o in cell.outputs if o["output_type"] == "stream")


REACH = """
import os
def reach(path):
    try:
        with open(path) as f:
            return 'READ:' + f.read()[:200]
    except Exception as e:
        return 'DENIED:' + type(e).__name__
"""


def test_solutions_of_this_and_later_notebooks_are_out_of_reach(pool, course, monkeypatch):
    monkeypatch.setenv("AUTOGRADER_ROOT", str(course))
    result = run_cells([
        REACH,
        "from autograder.reference import import_notebook\nprint(import_notebook('01_first').VALUE)",
        f"print(reach({str(course / 'solutions' / '02_second.ipynb')!r}))",
        f"print(reach({str(course / 'solutions' / '03_third.ipynb')!r}))",
        f"print(reach({str(course / 'gradebook.db')!r}))",
        "print(sorted(os.listdir(os.environ['AUTOGRADER_ROOT'] + '/solutions')))",
        "from autograder.reference import import_notebook\ntry:\n    import_notebook('02_second')\n"
        "except Exception as e:\n    print(type(e).__name__)",
    ], assignment="02_second", limits=FAST, pool=pool)
    assert out(result, 1) == "42\n"  # an earlier notebook's reference solution is there
    for i in (2, 3, 4):
        assert out(result, i).startswith("DENIED:"), out(result, i)
    assert out(result, 5) == "['01_first.ipynb']\n"
    assert out(result, 6) == "ReferenceUnavailable\n"
    assert SECRET not in json.dumps([c.outputs for c in result.cells])


def test_the_real_course_solutions_are_hidden(pool):
    from autograder import paths

    own = paths.solutions_dir() / "01_tokens_and_ids.ipynb"
    assert own.exists()
    result = run_cells([REACH, f"print(reach({str(own)!r}))",
                        f"print(reach({str(paths.root() / 'autograder' / 'paths.py')!r})[:5])"],
                       assignment="01_tokens_and_ids", limits=FAST, pool=pool)
    assert out(result, 1).startswith("DENIED:")
    assert out(result, 2) == "READ:\n"  # the autograder package itself stays importable


def test_other_submissions_are_hidden(pool, tmp_path):
    other = tmp_path / "submitted" / "bob" / "02_second"
    other.mkdir(parents=True)
    (other / "02_second.ipynb").write_text(SECRET)
    result = run_cells([REACH, f"print(reach({str(other / '02_second.ipynb')!r}))"], assignment="02_second",
                       limits=FAST, pool=pool, hide=[tmp_path / "submitted"])
    assert out(result, 1).startswith("DENIED:")


def test_no_writing_outside_scratch(pool, tmp_path):
    target = tmp_path / "outside"
    target.mkdir()
    target.chmod(0o777)
    result = run_cells([
        "def attempt(path):\n    try:\n        open(path, 'w').write('x')\n        return 'WROTE'\n"
        "    except Exception as e:\n        return 'DENIED:' + type(e).__name__",
        f"print(attempt({str(target / 'planted.txt')!r}))",
        "print(attempt('/usr/planted.txt'), attempt('/etc/planted.txt'), attempt('/var/tmp/planted.txt'), "
        "attempt('/run/lock/planted.txt'), attempt('/dev/shm/planted.txt'), attempt('/tmp/planted.txt'))",
        "import os\nprint(attempt('here.txt'), os.path.exists('here.txt'))",
    ], assignment="02_second", limits=FAST, pool=pool)
    assert out(result, 1).startswith("DENIED:")
    assert not (target / "planted.txt").exists()
    assert "WROTE" not in out(result, 2)
    assert out(result, 3) == "WROTE True\n"


def test_no_network(pool):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        result = run_cells([
            f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "    print('CONNECTED')\nexcept OSError as e:\n    print('DENIED:' + type(e).__name__)",
        ], assignment="02_second", limits=FAST, pool=pool)
        pending = select.select([server], [], [], 0)[0]  # a connection would wait in the backlog
    finally:
        server.close()
    assert out(result, 0).startswith("DENIED:")
    assert pending == []
    assert result.isolation.no_network


def test_unprivileged_and_limited(pool):
    result = run_cells([
        "import os, resource\nprint(os.getuid(), os.getgid(), resource.getrlimit(resource.RLIMIT_CORE)[0],"
        " resource.getrlimit(resource.RLIMIT_NPROC)[0])",
        "print(open('/proc/self/status').read().split('NoNewPrivs:')[1].split()[0])",
    ], assignment="02_second", limits=Limits(cell_timeout=60, processes=50), pool=pool)
    uid, gid, core, nproc = out(result, 0).split()
    if os.geteuid() == 0:
        assert (uid, gid) == ("65534", "65534") and result.isolation.user_nobody
    assert core == "0" and nproc == "50"
    assert out(result, 1).strip() == "1"
    assert result.isolation.bubblewrap == (pool.bubblewrap is True)


def test_without_namespaces_it_degrades_to_limits_and_says_so(plain_pool):
    result = run_cells(["import os\nprint(os.getcwd() == os.environ['HOME'])"], assignment="02_second",
                       limits=FAST, pool=plain_pool, namespaces=False)
    assert out(result, 0) == "True\n"
    assert describe_isolation(result.isolation).startswith("resource limits only")


def test_isolation_is_reported():
    from autograder.engine.sandbox import isolation_of  # late: only this test needs it

    assert describe_isolation(isolation_of(False, ["rlimits (memory, CPU, processes, file size)"])).startswith(
        "resource limits only")
    assert describe_isolation(isolation_of(True, ["no network", "user nobody"])).startswith("bubblewrap")
