"""Hostile submissions graded by the real ``python -m autograder grade``: every promise of docs/grading.md.

The class (tests/adversarial/cases.py, one submission per case, named for its expected outcome)
is graded once per session with ``--jobs 2``; each test reads one case's outcome off scores.csv,
grades.csv, problems.csv and the feedback, or what the machine saw (files, connections).
Under xdist use `-n N --dist loadgroup`, so one worker grades the class once for every test.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder import paths
from autograder.engine import Limits
from autograder.grade.classrun.doctor import Listener
from autograder.nbio import exercise_of
from tests.adversarial import cases
from tests.builders import Graded, file_hashes, written_points

pytestmark = [pytest.mark.adversarial, pytest.mark.slow, pytest.mark.xdist_group("adversarial")]
# The least a cell of the course gets: each one's limit is this or 100 times what the course's own run of it took on
# this machine, under the same load (grade's own limits: a --timeout would give every cell 6 s, however slow the
# test command, the instructor's install, the Hub and the main suite at once, made the honest ones). A cell the
# learner added has no course time and gets the cap, stock nbgrader's 30 s. An honest case flagged "timeout" here
# was twice the fork bomb's children: left spinning after their cell was interrupted (fixed:
# tests/grade/test_engine.py::test_what_a_timed_out_cell_started_stops_with_it), and, while their cell ran, sharing
# one session with the runs beside them, so the scheduler gave the honest run 1/65 of it (fixed:
# test_each_run_leads_a_session_of_its_own). Look there first.
TIMEOUT_FLOOR = "6"
# AUTOGRADER_TEST_NO_NAMESPACES=1 grades the class where namespaces are refused (tests/no_userns.py);
# the promises that rest on isolation are then replaced by the summary saying what is not isolated
NO_NAMESPACES = os.environ.get("AUTOGRADER_TEST_NO_NAMESPACES", "") not in ("", "0")
NO_USERNS = Path(__file__).resolve().parents[1] / "no_userns.py"


SHARED_PLACES = [Path(d) / "PWNED-adversarial.txt" for d in ("/tmp", "/var/tmp", "/dev/shm")]


def needs_isolation() -> None:
    if NO_NAMESPACES:
        pytest.skip("namespaces are refused here: this promise rests on them (the summary says it does not hold)")


def host_ip() -> str:
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5).stdout.split()
        return next((a for a in out if "." in a), "127.0.0.1")
    except (OSError, subprocess.SubprocessError):
        return "127.0.0.1"


@dataclass(repr=False)  # Graded's short repr: this one would fill a failure's message
class Attacked(Graded):
    """The class graded once, and what the machine saw meanwhile."""

    ctx: cases.Context
    seconds: float
    before: dict[str, str]  # file_hashes of the submissions before grading
    after: dict[str, str]
    connections: int  # that reached the loopback server
    built: list[str]  # the cases in the class
    shared_before: dict[Path, int]  # mtime of a PWNED file an earlier run left in a shared folder


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("adversarial")
    listener = Listener("0.0.0.0")  # every address: the test also tries the machine's own
    ctx = cases.Context(submissions=base / "submitted", out=base / "submitted-graded", outside=base / "outside",
                        port=listener.port, host_ip=host_ip())
    ctx.outside.mkdir()
    try:
        built = cases.build_class(ctx, isolated=not NO_NAMESPACES)
        before = file_hashes(ctx.submissions)
        shared_before = {p: p.stat().st_mtime_ns for p in SHARED_PLACES if p.exists()}
        start = time.monotonic()
        wrap = [sys.executable, str(NO_USERNS)] if NO_NAMESPACES else []
        proc = subprocess.run([*wrap, sys.executable, "-m", "autograder", "grade", str(ctx.submissions), "--out",
                               str(ctx.out), "--jobs", "2", "--timeout-floor", TIMEOUT_FLOOR, "--seed", "7"],
                              capture_output=True, text=True, timeout=600)
        seconds = time.monotonic() - start
    finally:
        listener.close()
    print(proc.stdout, proc.stderr[-3000:], f"graded in {seconds:.1f} s", sep="\n")
    return Attacked(proc, ctx.out, ctx, seconds, before, file_hashes(ctx.submissions), listener.connections, built,
                    shared_before)


@pytest.mark.parametrize("case", list(cases.EXPECT))
def test_case_scores_what_an_honest_reading_says(graded, case):
    want = cases.EXPECT[case]
    if want.needs_isolation:
        needs_isolation()
    scores = graded.cells(case)
    assert scores, f"{case}: not in scores.csv\n{graded.proc.stdout}\n{graded.proc.stderr[-2000:]}"
    score, max_score = graded.grade(case)
    detail = "\n".join(f"  {g}: {p:g}/{m:g} {s}" for g, (p, m, s) in scores.items()) + \
        "\n" + "\n".join(f"  problem {k}: {d}" for k, d in graded.problems(case))
    written = written_points(cases.A)  # the why a person grades: in the maximum, 0 until then
    assert max_score == cases.FULL + written, detail
    assert sum(m for _, m, _ in scores.values()) == cases.FULL + written, detail
    assert score == want.score, f"{case}: {score:g} instead of {want.score:g}\n{detail}"
    for gid, status in want.status.items():
        assert scores[gid][2] == status, f"{case}: {gid} is {scores[gid][2]}, expected {status}\n{detail}"
    for gid, (points, max_points, _) in scores.items():
        if exercise_of(gid) in want.lost:
            assert points == 0, detail
        elif want.lost and not gid.startswith("why_"):  # the why, left blank, is a person's to give anyway
            assert points == max_points, f"{case}: {gid} lost points\n{detail}"
    kinds = {k for k, _ in graded.problems(case)}
    for kind in want.problems:
        assert kinds & set(kind.split("|")), f"{case}: no {kind!r} problem\n{detail}"
    if want.no_problems:
        assert not kinds, f"{case}: unexpected problems\n{detail}"


def test_the_class_was_graded_and_the_broken_submission_reported(graded):
    assert graded.proc.returncode == 1, graded.proc.stderr[-2000:]  # invalid JSON could not be graded
    failed = {r["student_id"] for r in graded.rows("problems.csv") if r["problem"] == "not valid JSON"}
    assert failed == {"zero_for_invalid_json"}
    assert {r["student_id"] for r in graded.rows("grades.csv")} == set(graded.built)


def test_summary_names_the_isolation_in_force(graded):
    text = graded.proc.stdout
    print(text)
    assert "Isolation in force:" in text
    line = next(x for x in text.splitlines() if x.startswith("Isolation in force:"))
    if NO_NAMESPACES:  # root too: without a namespace there is no private network (tests/grade/test_setups.py)
        assert "bubblewrap" not in line, line
        assert "NOT isolated on this machine" in text and "the network" in text, text
    elif sys.platform == "linux" and Path("/usr/bin/bwrap").exists():
        assert "bubblewrap" in text and "NOT isolated" not in text
    else:  # no bubblewrap: the line must not claim it
        assert "bubblewrap" not in line, line


def test_forged_evidence_never_passes_a_hidden_test_that_compares_with_the_reference(graded):
    """Forged evidence can carry what the run itself can compute (the visible checks' expected values,
    NumPy one-liners), never the reference solution's outputs (absent from the run)."""
    scores = graded.cells("only_visible_points_for_evidence_forged_from_the_checks")
    for gid in cases.FORGEABLE_ONLY:
        assert scores[gid][0] == 0, gid


def test_no_submission_file_is_modified(graded):
    if NO_NAMESPACES:  # hostile cells may add files there (nothing stops them); the grader changes none
        assert {k: graded.after.get(k) for k in graded.before} == graded.before
    else:
        assert graded.after == graded.before


def test_nothing_was_written_outside_the_scratch_folder(graded):
    needs_isolation()
    ctx = graded.ctx
    assert list(ctx.outside.iterdir()) == []
    for path in (paths.root() / "PWNED-adversarial.txt", *SHARED_PLACES,
                 ctx.submissions / "PWNED.txt", ctx.out / "PWNED.txt", ctx.out / "results" / "PWNED.json"):
        # a file left in a shared folder by an earlier run on this machine is not this run's doing
        assert not path.exists() or graded.shared_before.get(path) == path.stat().st_mtime_ns, path
    assert not list(ctx.submissions.rglob("PWNED*")) and not list(ctx.out.rglob("PWNED*"))


def test_the_gradebook_was_not_rewritten(graded):
    needs_isolation()
    import sqlite3

    db = sqlite3.connect(graded.ctx.out / "gradebook.db")
    try:
        manual = db.execute("select count(*) from grade where manual_score is not null").fetchone()[0]
    finally:
        db.close()
    assert manual == 0


def test_no_connection_reached_the_loopback_server(graded):
    needs_isolation()
    assert graded.connections == 0


def test_feedback_reports_tampering_and_never_shows_hidden_tests(graded):
    page = (graded.ctx.out / "feedback" / "only_build_vocab_lost_when_its_tests_are_edited" /
            f"{cases.A}.html").read_text(encoding="utf-8")
    assert "changed" in page and "hidden=True" not in page


LIMIT_SAID = re.compile(r"(?:interrupted|still running) after (\d+(?:\.\d+)?) s")


def test_every_stall_was_cut_at_a_limit_and_within_the_time_budget(graded):
    """No hostile submission holds the class up: every cell that timed out was cut at a limit the grader names, no
    more than the cap, and what the time-outs cost each submission stays within its time budget, as the grader
    computed both (the budget is checked as a cell starts, so only the last cell may take the cost past it).
    That holds however busy the machine is: it is the grader's accounting, not a stopwatch. A stall that was never
    cut would leave the class unfinished (the fixture gives it 10 minutes); the cases' own statuses (time-out,
    killed) are asserted by the other tests."""
    limits = Limits.for_grading()
    cap, budget, grace = limits.first_timeout(), limits.budget(), limits.interrupt_grace
    stalled = 0
    for case in graded.built:
        path = graded.out / "results" / case / f"{cases.A}.json"
        if not path.exists():  # the invalid JSON: nothing ran
            continue
        saved = json.loads(path.read_text(encoding="utf-8"))
        said = [t["message"] for t in saved["scores"] if t["status"] == "timeout"]
        said += [p["detail"] for p in saved["problems"]  # a cell the learner added: said only as a problem
                 if p["problem"] == "timeout" and not p["detail"].startswith("test cell")]
        cut = [LIMIT_SAID.search(text) for text in said]
        assert all(cut), f"{case}: a time-out that names no limit: {said}"
        seconds = [float(m.group(1)) for m in cut]
        assert all(0 < s <= cap for s in seconds), f"{case}: a limit past the cap of {cap:g} s: {said}"
        # the budget is checked as each cell starts: all but the last cell to time out (at most the dearest) cost
        # less than it, counted at their limits (the grader counts the wall time they took, no less)
        costs = [s + grace for s in seconds]
        before_last = sum(costs) - max(costs, default=0.0)
        assert before_last < budget, f"{case}: time-outs cost {before_last:g} s before the last, past the {budget:g} s " \
                                     f"budget: {said}"
        stalled += bool(seconds)
    assert stalled >= 4, "the looping, sleeping and bombing cases time out: this test must have seen them"
