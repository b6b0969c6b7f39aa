"""The warm parent's pieces without forking: frames on a pipe, and an Attempt's steps.

The engine tests run them end to end; these pin what those cannot reach on purpose: frames that
arrive a byte at a time or several per read, malformed frames, and the order of the signals an
Attempt sends (nothing before the warden has reported the cell runner, SIGINT at the timeout, the kill after the grace).
"""
from __future__ import annotations

import math
import os
import signal
import time

import pytest

from autograder.engine import Limits, supervisor
from autograder.engine.frames import HEADER, MAX_FRAME, ChannelClosed, FrameReader, encode_frame, write_frame
from autograder.engine.supervisor import SETUP_SECONDS, Attempt


@pytest.fixture
def pipe():
    r, w = os.pipe()
    yield r, w
    for fd in (r, w):
        try:
            os.close(fd)
        except OSError:
            pass


def test_a_frame_is_a_length_and_json():
    data = encode_frame({"a": [1, "é"], "x": float("nan")})
    (n,) = HEADER.unpack_from(data)
    assert n == len(data) - HEADER.size
    assert data[HEADER.size:] == b'{"a": [1, "\\u00e9"], "x": NaN}'


def test_frames_split_across_reads_and_several_in_one_read(pipe):
    r, w = pipe
    data = encode_frame({"n": 1}) + encode_frame({"n": 2}) + encode_frame({"n": 3})
    reader = FrameReader(r)
    os.write(w, data[:3])  # not even a whole header
    assert reader.pump() == []
    os.write(w, data[3:HEADER.size + 4])
    assert reader.pump() == []
    os.write(w, data[HEADER.size + 4:])
    assert reader.pump() == [{"n": 1}, {"n": 2}, {"n": 3}]
    write_frame(w, {"n": 4, "nan": float("nan")})
    write_frame(w, {"n": 5})
    first = reader.read_one(timeout=1)
    assert first["n"] == 4 and math.isnan(first["nan"])
    assert reader.read_one(timeout=0) == {"n": 5}  # put back, not read again from the pipe
    with pytest.raises(TimeoutError):
        reader.read_one(timeout=0.01)
    os.close(w)
    with pytest.raises(ChannelClosed):
        reader.read_one(timeout=1)
    assert reader.eof


@pytest.mark.parametrize("data", [HEADER.pack(MAX_FRAME + 1), HEADER.pack(2) + b"[]", HEADER.pack(3) + b"{x}"])
def test_malformed_frames_are_value_errors(pipe, data):
    r, w = pipe
    os.write(w, data)
    with pytest.raises(ValueError):
        FrameReader(r).read_one(timeout=1)


@pytest.fixture
def run(monkeypatch):
    """An Attempt on two pipes, recording the signals it would send to the warden (pid 12345)."""
    msg_r, msg_w = os.pipe()
    st_r, st_w = os.pipe()
    sent = []
    monkeypatch.setattr(supervisor, "_signal", lambda pid, sig: sent.append((pid, sig)))
    a = Attempt(12345, FrameReader(msg_r), FrameReader(st_r), timeout=30.0, grace=5.0,
                setup_deadline=time.monotonic() + SETUP_SECONDS)
    a.sent, a.msg_w, a.st_w = sent, msg_w, st_w
    yield a
    for fd in (msg_r, msg_w, st_r, st_w):
        try:
            os.close(fd)
        except OSError:
            pass


def say(run, *frames, status=False):
    for f in frames:
        write_frame(run.st_w if status else run.msg_w, f)
    run.read_status() if status else run.read_messages()


def test_cells_start_and_finish_in_order(run, monkeypatch):
    monkeypatch.setattr(supervisor, "LINGER", 30.0)  # not over before the next line, however busy the machine
    say(run, {"pid": 77}, status=True)
    say(run, {"hello": ["no network"]}, {"start": 0})
    assert (run.runner, run.facts, run.current) == (77, ["no network"], 0)
    assert 20 < run.wait() <= 30  # until the cell's 30 s deadline (10 s of it may pass on a busy machine)
    say(run, {"done": 0, "status": "ok", "outputs": [], "seconds": 0.1, "cut": False}, {"start": 2})
    assert run.done[0]["status"] == "ok" and run.current == 2
    say(run, {"exit": 9, "cpu": 1.5}, status=True)
    assert run.warden_gone_at is not None and not run.over() and run.wait() <= supervisor.LINGER
    assert run.sent == [] and not run.garbled
    assert run.result() == {"done": run.done, "facts": ["no network"], "current": 2, "exit": 9, "setup_error": None,
                            "killed_for_timeout": None, "garbled": False, "cpu": 1.5, "interrupted": set(),
                            "cell_limits": {0: 30.0, 2: 30.0},  # each cell's limit as it started
                            "timed_out": False, "limit": 30.0, "spent": 0.0, "budget_spent": False,  # no cell timed out: none spent
                            "costs": run.costs(), "fork_cpu": 0.0}


def test_a_frame_out_of_step_stops_the_run_and_blames_the_last_cell(run):
    say(run, {"pid": 77}, status=True)
    say(run, {"hello": []}, {"start": 0}, {"done": 0, "status": "ok", "outputs": [], "seconds": 0, "cut": False})
    say(run, {"start": 0}, {"start": 1})  # a cell replaying the protocol
    assert run.garbled and run.msgs.eof and run.current == 0
    assert run.sent == [(12345, signal.SIGUSR2)]
    assert run.open_fds() == [run.stat.fd]


def test_bytes_that_are_not_frames_stop_the_run(run):
    os.write(run.msg_w, HEADER.pack(2) + b"[]")
    run.read_messages()  # no cell runner's pid yet: nobody to signal
    assert run.garbled and run.msgs.eof and run.sent == []


def test_garbage_in_the_same_read_as_a_start_blames_that_cell(run):
    """A cell that writes into the channel at once: the cell runner's "start 1" and its bytes arrive in one read.
    The start must still count, so cell 1 is blamed, not cell 0 (which finished) or nobody."""
    say(run, {"pid": 77}, status=True)
    say(run, {"hello": []}, {"start": 0}, {"done": 0, "status": "ok", "outputs": [], "seconds": 0, "cut": False})
    os.write(run.msg_w, encode_frame({"start": 1}) + HEADER.pack(3) + b"{x}")
    run.read_messages()
    assert run.garbled and run.current == 1 and 0 in run.done
    assert run.sent == [(12345, signal.SIGUSR2)]


def test_a_reader_hands_out_the_frames_before_bad_bytes_then_refuses(pipe):
    r, w = pipe
    os.write(w, encode_frame({"a": 1}) + HEADER.pack(2) + b"[]" + encode_frame({"b": 2}))
    reader = FrameReader(r)
    assert reader.pump() == [{"a": 1}] and reader.broken
    os.write(w, encode_frame({"c": 3}))  # nothing after the bad bytes is believed
    with pytest.raises(ValueError):
        reader.pump()


def test_timeout_interrupts_then_kills_once_the_cell_runner_is_known(run):
    run.limits, run.grace = Limits(cell_timeout=0.0), 0.0  # each cell's limit is set from these as it starts
    say(run, {"hello": []}, {"start": 3})
    run.enforce_deadlines()
    assert run.sent == [] and run.interrupted is None  # the warden has not said who the cell runner is
    say(run, {"pid": 77}, status=True)
    run.enforce_deadlines()
    assert run.sent == [(12345, signal.SIGUSR1)] and run.interrupted_cells == {3}
    run.enforce_deadlines()
    assert run.sent[1:] == [(12345, signal.SIGUSR2)] and run.killed_for_timeout == 3
    run.enforce_deadlines()
    assert len(run.sent) == 2 and run.wait() == supervisor.IDLE_WAIT


def test_a_cell_that_finishes_after_the_interrupt_is_not_current(run):
    run.limits = Limits(cell_timeout=0.0)
    say(run, {"pid": 77}, status=True)
    say(run, {"hello": []}, {"start": 0})
    run.enforce_deadlines()
    say(run, {"done": 0, "status": "error", "outputs": [], "seconds": 0, "cut": False})
    result = run.result()
    assert result["current"] is None and result["interrupted"] == {0} and 0 in result["done"]


def test_a_run_that_never_says_hello_is_given_up(run):
    say(run, {"pid": 77}, status=True)
    run.setup_deadline = time.monotonic() - 1
    assert run.wait() == 0.0
    run.enforce_deadlines()
    assert run.setup_error == "the run did not start within 120 s"
    assert run.sent == [(12345, signal.SIGUSR2)]


def test_the_warden_closing_its_pipe_ends_the_run_after_the_linger(run):
    os.close(run.st_w)
    run.read_status()
    assert run.stat.eof and run.warden_gone_at is not None
    run.warden_gone_at -= supervisor.LINGER
    assert run.over()


def test_costs_a_cell_reports_are_numbers_or_nothing(run):
    """The cell runner runs student code, so the CPU it reports is informative only: anything but a number counts as 0."""
    say(run, {"pid": 77, "cpu": 0.25}, status=True)
    say(run, {"hello": [], "cpu": "lots"}, {"start": 0},
        {"done": 0, "status": "ok", "outputs": [], "seconds": 0, "cut": False, "cpu": float("nan"), "sent": -1},
        {"start": 1}, {"done": 1, "status": "ok", "outputs": [], "seconds": 0, "cut": False, "cpu": 0.625, "sent": 0.125})
    assert not run.garbled
    assert run.costs() == {"fork": 0.0, "sandbox": 0.25, "cells": 0.5, "evidence": 0.125}


# ------------------------------------------- the grade command warms up before it imports the pipeline

def test_grade_starts_the_warm_interpreters_before_importing_the_pipeline(tmp_path, monkeypatch):
    """The pipeline's import (nbgrader, SQLAlchemy) takes a core-second and more on one core: the warm-up starts
    first, sized to the class (one per worker at most) and with the preloads of the notebooks found there."""
    import argparse

    from autograder import engine
    from autograder.grade import cli
    from autograder.engine import pool as pool_module

    for student in ("ann", "bob", "cy"):
        for assignment in ("05_gradients_and_chain_rule", "not_an_assignment"):
            (tmp_path / student / assignment).mkdir(parents=True)
    started: list[tuple[int, bool]] = []
    pool = pool_module.WarmPool()
    monkeypatch.setattr(pool, "start_warming", lambda n, *, light=False: started.append((n, light)))
    monkeypatch.setattr(engine, "default_pool", lambda: pool)
    args = argparse.Namespace(submissions=tmp_path, cluster=None, engine="auto", assignment=None, student=None, jobs=8)
    cli._start_warming(args)
    assert started == [(4, False)]  # 3 submissions and a reference, under 8 workers; every one needs torch
    assert pool.preload == ("torch", "torch._dynamo")  # what 05's runs would each import again
    started.clear()
    cli._start_warming(argparse.Namespace(**{**vars(args), "jobs": 2}))
    assert started == [(2, False)]
    # a class with 01, which needs no torch: a light parent grades it while the others import torch
    (tmp_path / "ann" / "01_tokens_and_ids").mkdir()
    started.clear()
    cli._start_warming(argparse.Namespace(**{**vars(args), "jobs": 2}))
    assert started == [(2, True)]
    for nothing_of_ours in ({"engine": "nbclient"}, {"cluster": "tcp://x:8786"}, {"student": ["nobody"]},
                            {"submissions": tmp_path / "missing"}):
        started.clear()
        cli._start_warming(argparse.Namespace(**{**vars(args), **nothing_of_ours}))
        assert started == [], nothing_of_ours
