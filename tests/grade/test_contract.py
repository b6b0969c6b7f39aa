"""The engine's contract: one JSON form for what a run is asked and answers, and the child reads it.

The pool encodes a :class:`RunRequest` and the warm parent decodes it (and the other way for the
:class:`RunResult`), so a field that one side writes and the other does not read would be lost on
the way: the round trips pin the form, the runs pin that the child obeys what arrived.
"""
from __future__ import annotations

import json

import pytest

from autograder.engine import CellResult, Isolation, Limits, RunRequest, RunResult, WarmPool, default_pool
from autograder.engine.contract import MAX_RESTARTS, child_environment
from autograder.grade.submission.running import EVIDENCE_MODE, harness, run_cells


def through_the_pipe(data: dict) -> dict:
    return json.loads(json.dumps(data))  # what the frames do


def test_limits_round_trip():
    limits = Limits(cell_timeout=3.5, memory_bytes=123, cpu_seconds=7, processes=9, output_bytes=1000,
                    file_bytes=77, interrupt_grace=0.5, later_timeout=1.0, timeout_budget=9.0, draw_figures=False)
    assert Limits.from_json(through_the_pipe(limits.to_json())) == limits
    assert Limits.from_json(through_the_pipe(Limits().to_json())) == Limits()


def test_a_request_round_trips_with_its_bytes_and_seed():
    request = RunRequest(sources=["print(1)", "x = 2"], files={"data.bin": bytes(range(256))},
                         solutions={"01_a.ipynb": b"{}"}, seed=41, limits=Limits(cell_timeout=2, output_bytes=10),
                         hide=["/home"], keep=["/home/venv"], max_restarts=2, namespaces=False)
    assert RunRequest.from_json(through_the_pipe(request.to_json())) == request
    assert RunRequest(sources=[]).max_restarts == MAX_RESTARTS


def test_a_result_round_trips():
    result = RunResult(cells=[CellResult(0, "ok", [{"output_type": "stream", "name": "stdout", "text": "1\n"}], 0.25),
                              CellResult(1, "timeout", [], 3.0, "interrupted after 3 s")],
                       isolation=Isolation(no_network=True), problems=["a problem"], costs={"cells": 0.5}, facts=["no network"])
    assert RunResult.from_json(through_the_pipe(result.to_json())) == result


def test_a_result_missing_a_field_is_refused():
    data = RunResult(cells=[CellResult(0, "ok")], isolation=None).to_json()
    del data["cells"][0]["status"]
    with pytest.raises(KeyError):
        RunResult.from_json(data)


def test_the_childs_environment_carries_the_seed_and_evidence_mode():
    env = child_environment(RunRequest(sources=[], seed=12, harness=harness()), scratch="/tmp/s", course_root="/tmp/c")
    assert env["AUTOGRADER_SEED"] == "12" and env["AUTOGRADER_MODE"] == EVIDENCE_MODE
    assert env["HOME"] == env["TMPDIR"] == "/tmp/s" and env["AUTOGRADER_ROOT"] == "/tmp/c"


@pytest.fixture(scope="module")
def obeyed() -> RunResult:
    default_pool().warm(1)
    return run_cells([
        "print('x' * 5000)",
        "import time\ntime.sleep(30)",
        "from autograder.checks import core\nprint(core.mode(), core.SETTINGS.seed)",
    ], assignment="02_demo", seed=23,  # the sleeping cell's own limit; the others have a minute, whatever the load
        limits=Limits(cell_timeout=60, interrupt_grace=1, output_bytes=1000, cell_timeouts={1: 1.5}))


def test_the_child_cuts_output_at_the_requested_size(obeyed):
    cell = obeyed.cells[0]
    assert cell.status == "ok" and "output cut at 1000 bytes" in cell.detail
    assert sum(len(o.get("text", "")) for o in cell.outputs) < 2000


def test_the_child_interrupts_at_the_requested_timeout(obeyed):
    cell = obeyed.cells[1]
    assert cell.status == "timeout" and cell.detail == "interrupted after 1.5 s"
    assert cell.seconds < 30, "the sleep ran to its end"  # the property's bound, not the machine's speed


def test_the_checks_in_the_child_get_the_requested_seed_in_evidence_mode(obeyed):
    text = "".join(o.get("text", "") for o in obeyed.cells[2].outputs)
    assert text.split() == [EVIDENCE_MODE, "23"]


def test_a_failed_warm_up_import_is_said_and_runs_go_on():
    """warm.py imports what notebooks use; one that fails is reported (doctor shows it), not hidden, and a
    run that does not need it still runs."""
    pool = WarmPool()
    pool.preload = ("no_such_module_for_the_warm_up",)
    try:
        result = run_cells(["print(6 * 7)"], assignment="02_demo", pool=pool)
        failed = pool.failed_imports()
    finally:
        pool.shutdown()
    assert result.cells[0].status == "ok" and result.cells[0].outputs[0]["text"] == "42\n"
    assert len(failed) == 1 and failed[0].startswith("no_such_module_for_the_warm_up (ModuleNotFoundError")
