"""``grade --cluster ADDRESS``: a local Dask cluster of two worker processes gives the local path's scores.

The workers are separate processes on loopback; jobs reach them as data (the notebook's bytes
and the folder's other files) and come back as result records. The same class is graded locally
with the same seed and every per-cell score and status must be equal.
"""
from __future__ import annotations

import json

import pytest

from autograder.grade.output import report

# one worker runs this module, so its module-scoped fixture is built once (loadgroup splits modules otherwise)
pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.xdist_group("test_cluster")]
A = "01_tokens_and_ids"


@pytest.fixture(scope="module")
def scheduler():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, protocol="tcp")
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def both(scheduler, tmp_path_factory, g):
    """One small class graded twice with one seed: locally, then through the cluster."""
    work = tmp_path_factory.mktemp("cluster")
    root = work / "submitted"
    g.write_submission(root, "right000", g.right_notebook())
    g.write_submission(root, "blank000", g.blank_notebook())
    g.write_submission(root, "fails_encode", g.with_solution(g.right_notebook(), "encode", g.WRONG_ENCODE))
    nb = g.with_solution(g.right_notebook(), "decode",
                         "from pathlib import Path\nDATA = Path('vocab.txt').read_text()\n"
                         "def decode(ids, vocab):\n    inverse = {i: t for t, i in vocab.items()}\n"
                         "    return [inverse[i] for i in ids]\n")
    g.write_submission(root, "reads_own_file", nb)
    (root / "reads_own_file" / A / "vocab.txt").write_text("a file the student saved beside the notebook\n")
    g.write_submission(root, "invalid_json", '{"cells": [ oops')
    local = g.run_grade(root, "--jobs", "2", "--timeout", "20", "--seed", "11", out=work / "local")
    remote = g.run_grade(root, "--cluster", scheduler, "--timeout", "20", "--seed", "11", out=work / "remote")
    print(local.proc.stdout, local.proc.stderr[-2000:], remote.proc.stdout, remote.proc.stderr[-2000:])
    return local, remote


def test_cluster_scores_equal_the_local_path(both, g):
    local, remote = both
    assert local.proc.returncode == remote.proc.returncode == 1  # invalid_json could not be graded, both ways
    key = lambda r: (r["student_id"], r["assignment_id"], r["grade_id"])  # noqa: E731
    ours = {key(r): (r["points"], r["status"]) for r in local.rows("scores.csv")}
    theirs = {key(r): (r["points"], r["status"]) for r in remote.rows("scores.csv")}
    assert {k[0] for k in ours} == {"right000", "blank000", "fails_encode", "reads_own_file", "invalid_json"}
    assert theirs == ours
    assert remote.rows("grades.csv") == local.rows("grades.csv")
    assert remote.total("right000") == g.FULL and remote.total("blank000") == 0.0
    assert remote.scores("reads_own_file")["test_decode"] == remote.scores("right000")["test_decode"]  # file came
    assert [p["problem"] for p in remote.rows("problems.csv")] == [p["problem"] for p in local.rows("problems.csv")]


def test_cluster_runs_in_the_same_sandbox(both):
    local, remote = both
    records = {r.student_id: r for r in report.read_results(remote.out)}
    assert records["right000"].engine == "engine"
    assert records["right000"].isolation == {r.student_id: r for r in report.read_results(local.out)}[
        "right000"].isolation
    assert "isolation" in remote.proc.stdout.lower()


def test_the_gradebook_is_written_by_the_main_process(both):
    _, remote = both
    assert (remote.out / "gradebook.db").exists()
    refs = list((remote.out / "reference").glob(f"{A}-*.json"))
    assert len(refs) == 1 and json.loads(refs[0].read_text())["evidence"]  # computed once, shipped as data


def test_an_unreachable_scheduler_is_a_usage_error(tmp_path, g, monkeypatch):
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "2s")  # Dask's own knob; 30 s by default
    root = tmp_path / "submitted"
    g.write_submission(root, "right000", g.right_notebook())
    graded = g.run_grade(root, "--cluster", "tcp://127.0.0.1:9", "--timeout", "20", timeout=120)
    assert graded.proc.returncode == 2, graded.proc.stderr[-2000:]
    assert "cannot reach the Dask scheduler" in graded.proc.stderr
