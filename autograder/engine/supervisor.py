"""Supervising the forked children: one attempt at a time, restarts without the cells that failed.

The warm parent never runs student code. Per attempt it forks the warden (see :mod:`.child`) and
watches two pipes: the cell runner's frames (``hello``, ``start``, ``done``) and the warden's (``pid``,
``exit``, ``setup_error``). A cell past its timeout gets SIGINT; one that ignores it is killed with its
whole process tree, as is a child that dies in a cell; :func:`supervise` then runs the notebook
again from the start without that cell, up to ``max_restarts`` times.

The warm parent only ever signals the warden, its own child (a pid that cannot be reused before it is
reaped): SIGUSR1 asks the warden to interrupt the cell runner, SIGUSR2 to kill it and its process group.
"""
from __future__ import annotations

import os
import select
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field

from .child import ran_out_of_memory, warden
from .contract import CellResult, Limits, RunRequest, RunResult
from .frames import FrameReader
from .measure import merge, number

CHANNEL_FDS: list[int] = []  # the warm parent's frames to and from the engine; closed in every child
SETUP_SECONDS = 120  # from the fork to the cell runner's hello: namespaces, staging, confinement
LINGER = 1.0  # once the warden is gone, how long the cell runner's last frames may still take to arrive
IDLE_WAIT = 5.0  # no deadline pending: how long to wait for the next frame before looking again


def describe_death(status: int, limits: Limits, cpu: float = 0.0) -> str:
    if cpu >= limits.cpu_seconds - 0.05 or (
            os.WIFEXITED(status) and os.WEXITSTATUS(status) == 128 + signal.SIGXCPU):
        return (f"the process running the notebook died in this cell: the CPU time limit "
                f"({limits.cpu_seconds} s for the notebook) ran out")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        why = {
            signal.SIGSEGV: "a segmentation fault (the process crashed, e.g. through ctypes or a C extension)",
            signal.SIGBUS: "a bus error (the process crashed)",
            signal.SIGABRT: "an abort (a C library gave up)",
            signal.SIGFPE: "a floating point exception in native code",
            signal.SIGILL: "an illegal instruction in native code",
            signal.SIGXCPU: f"the CPU time limit ({limits.cpu_seconds} s for the notebook) ran out",
            signal.SIGXFSZ: f"a file grew past the size limit ({limits.file_bytes} bytes)",
            signal.SIGKILL: "it was killed, most likely for using too much memory",
        }.get(sig, f"signal {signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else sig}")
        return f"the process running the notebook died in this cell: {why}"
    if os.WIFEXITED(status):
        code = os.WEXITSTATUS(status)
        return (f"the process running the notebook exited in this cell with status {code} "
                "(os._exit or a library that ends the process)")
    return "the process running the notebook died in this cell"


@dataclass
class Attempt:
    """What the warm parent knows of one forked run while it watches it."""

    pid: int  # the warden: ours to signal until reaped
    msgs: FrameReader  # the cell runner's frames
    stat: FrameReader  # the warden's frames
    timeout: float  # the running cell's limit (set from limits.timeout_for as each cell starts), then SIGINT
    grace: float  # after SIGINT, then the kill
    setup_deadline: float  # the cell runner must have said hello by then
    limits: Limits = field(default_factory=Limits)  # each cell's own time limit
    runner: int | None = None  # the cell runner, once the warden has reported it: until then no one to signal
    facts: list[str] | None = None  # the cell runner's hello: the confinement really in force
    done: dict[int, dict] = field(default_factory=dict)  # cell -> its done frame
    current: int | None = None  # the cell the cell runner started and has not finished
    started: float | None = None  # when it started
    interrupted: float | None = None  # when it got SIGINT
    last_start: int = -1  # cells start in increasing order, each once
    interrupted_cells: set[int] = field(default_factory=set)
    cell_limits: dict[int, float] = field(default_factory=dict)  # cell -> the limit it had when it started
    killed_for_timeout: int | None = None
    garbled: bool = False  # something other than the cell runner's frames came down the message pipe
    exit_status: int | None = None  # the cell runner's wait status, as the warden reported it
    cpu_used: float = 0.0
    setup_error: str | None = None
    warden_gone_at: float | None = None  # when the warden reported its end (or its pipe closed)
    timed_out: bool = False  # a cell of this run has timed out: later cells get no more than the later limit
    spent: float = 0.0  # seconds time-outs have cost this submission, earlier attempts included
    budget: float = float("inf")  # once spent reaches it, the next cell is not run
    budget_spent: bool = False  # the run was stopped for it: the cell that was starting and the rest did not run
    # CPU seconds, for `grade --profile` (the cell runner's figures come from the cells' process: informative,
    # never trusted)
    fork_cpu: float = 0.0  # this process's side of forking the warden
    warden_setup: float = 0.0  # the warden before it forked the cell runner: namespaces, file system, staging
    runner_setup: float = 0.0  # the cell runner before its first cell: confinement, seeds, the shell's streams
    runner_cpu: float = 0.0  # the cell runner since its fork, as of its last done frame
    sent_cpu: float = 0.0  # the cell runner writing its frames (all but the last)
    total_cpu: float = 0.0  # the warden and the cell runner from start to exit, counted when the warden was reaped

    def wait(self) -> float:
        """How long select may sleep before the next deadline."""
        now = time.monotonic()
        if self.warden_gone_at is not None:
            return max(0.0, self.warden_gone_at + LINGER - now)
        if self.current is not None and self.killed_for_timeout is None:
            return max(0.0, (self.started + self.timeout if self.interrupted is None
                             else self.interrupted + self.grace) - now)
        if self.facts is None and self.killed_for_timeout is None:
            return max(0.0, self.setup_deadline - now)
        return IDLE_WAIT

    def open_fds(self) -> list[int]:
        return [r.fd for r in (self.msgs, self.stat) if not r.eof]

    def read_messages(self) -> None:
        """The cell runner's frames: hello, then each cell's start and done, in order."""
        try:
            frames = self.msgs.pump()
        except ValueError:  # something wrote into the channel: stop the run
            self._channel_garbled()
            return
        for m in frames:
            if "hello" in m and self.facts is None:
                self.facts = list(m["hello"])
                self.runner_setup = number(m.get("cpu"))
            elif type(m.get("start")) is int and m["start"] > self.last_start:
                self.current, self.started, self.interrupted = m["start"], time.monotonic(), None
                self.last_start = self.current
                self.timeout = self.limits.timeout_for(self.current, after_timeout=self.timed_out)
                self.cell_limits[self.current] = self.timeout
                if self.spent >= self.budget and not self.budget_spent:  # stop before the cell costs more
                    self.budget_spent = True
                    _signal(self.pid, signal.SIGUSR2)
            elif self.current is not None and m.get("done") == self.current and type(m["done"]) is int:
                if self.budget_spent:  # the cell runner ran on before the stop reached it (a loaded machine):
                    self.current = None  # that cell was not to run, so it is "not run", as when the stop is quick
                    continue
                self.done[self.current] = m
                self.runner_cpu = max(self.runner_cpu, number(m.get("cpu")))
                self.sent_cpu = max(self.sent_cpu, number(m.get("sent")))
                if self.current in self.interrupted_cells:
                    self.spent += time.monotonic() - self.started
                self.current = None
            else:  # out of step with the cells (student code wrote frames): stop the run
                if self.current is None and self.last_start >= 0:
                    self.current = self.last_start
                self._channel_garbled()
                break
        if self.msgs.broken and not self.garbled:  # bad bytes after the frames above: the current cell wrote them
            self._channel_garbled()

    def _channel_garbled(self) -> None:
        self.garbled = True
        self.msgs.eof = True  # nothing more it says is believed
        if self.runner:
            _signal(self.pid, signal.SIGUSR2)

    def read_status(self) -> None:
        """The warden's frames: the cell runner's pid, then how it ended (or why the run could not start)."""
        for m in self.stat.pump():
            if "pid" in m:
                self.runner = int(m["pid"])
                self.warden_setup = number(m.get("cpu"))
            elif "exit" in m:
                self.exit_status = int(m["exit"])
                self.cpu_used = float(m.get("cpu", 0.0))
                self.warden_gone_at = time.monotonic()
            elif "setup_error" in m:
                self.setup_error = m["setup_error"]
                self.warden_gone_at = time.monotonic()
        if self.stat.eof and self.warden_gone_at is None:
            self.warden_gone_at = time.monotonic()

    def over(self) -> bool:
        """The warden is gone: the run is over once the cell runner's pipe is drained, or after LINGER at the
        latest."""
        return self.msgs.eof or time.monotonic() >= self.warden_gone_at + LINGER

    def enforce_deadlines(self) -> None:
        """Interrupt a cell past its timeout, kill it past the grace; give up on a run that never starts."""
        now = time.monotonic()
        if self.current is not None and self.killed_for_timeout is None and self.runner:
            if self.interrupted is None and now >= self.started + self.timeout:
                _signal(self.pid, signal.SIGUSR1)
                self.interrupted = now
                self.interrupted_cells.add(self.current)
                self.timed_out = True  # a loop met once is met again by the cells that call it
            elif self.interrupted is not None and now >= self.interrupted + self.grace:
                self.killed_for_timeout = self.current
                _signal(self.pid, signal.SIGUSR2)
        elif self.facts is None and now >= self.setup_deadline and self.runner:
            self.setup_error = f"the run did not start within {SETUP_SECONDS} s"
            _signal(self.pid, signal.SIGUSR2)

    def close(self) -> None:
        """Close the pipes, make sure the cell runner is gone, reap the warden."""
        os.close(self.msgs.fd)
        os.close(self.stat.fd)
        if self.runner and self.exit_status is None:
            _signal(self.pid, signal.SIGUSR2)  # the warden is not reaped yet, so its pid is still ours
        self.total_cpu = _reap(self.pid)

    def costs(self) -> dict[str, float]:
        """This attempt's CPU by phase; what the processes spent outside their reported steps (the warden
        waiting for the cell runner, both exiting, the runner's last frame) counts with the fork, the price of
        a fresh process."""
        cells = max(0.0, self.runner_cpu - self.runner_setup - self.sent_cpu)
        reported = self.warden_setup + self.runner_setup + cells + self.sent_cpu
        return {"fork": self.fork_cpu + max(0.0, self.total_cpu - reported),
                "sandbox": self.warden_setup + self.runner_setup,
                "cells": cells, "evidence": self.sent_cpu}

    def result(self) -> dict:
        current = None if self.current is not None and self.current in self.done else self.current
        return {"done": self.done, "facts": self.facts, "current": current, "exit": self.exit_status,
                "setup_error": self.setup_error, "killed_for_timeout": self.killed_for_timeout,
                "garbled": self.garbled, "cpu": self.cpu_used, "interrupted": self.interrupted_cells,
                "cell_limits": self.cell_limits,
                "budget_spent": self.budget_spent, "spent": self.spent, "timed_out": self.timed_out, "limit": self.timeout, "costs": self.costs(),
                "fork_cpu": self.fork_cpu}


def attempt(shell, request: RunRequest, skip: set[int], *, timed_out: bool = False, spent: float = 0.0) -> dict:
    """One forked run of the notebook without the cells in ``skip``; each cell gets its limit
    (:meth:`.Limits.timeout_for`, the later one once ``timed_out``), ``spent`` the seconds earlier attempts'
    time-outs cost, counted against the budget."""
    limits = request.limits
    workdir = tempfile.mkdtemp(prefix="ag-run-")
    os.chmod(workdir, 0o755)
    c0 = time.process_time()
    pid, msg_r, st_r = _fork(shell, request, skip, workdir)
    run = Attempt(pid, FrameReader(msg_r), FrameReader(st_r), limits.first_timeout(), limits.interrupt_grace,
                  time.monotonic() + SETUP_SECONDS, limits=limits, timed_out=timed_out, spent=spent,
                  budget=limits.budget(), fork_cpu=time.process_time() - c0)
    try:
        while True:
            fds = run.open_fds()
            if not fds:  # both pipes at their end
                break
            ready = select.select(fds, [], [], run.wait())[0]
            if msg_r in ready:
                run.read_messages()
            if st_r in ready:
                run.read_status()
            if run.warden_gone_at is not None:
                if run.over():
                    break
                continue
            run.enforce_deadlines()
    finally:
        run.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return run.result()


def _fork(shell, request: RunRequest, skip: set[int], workdir: str) -> tuple[int, int, int]:
    """Fork the warden with a pipe for the cell runner's frames and one for the warden's; returns the warden's
    pid and the two read ends."""
    msg_r, msg_w = os.pipe()
    st_r, st_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(msg_r)
        os.close(st_r)
        for fd in CHANNEL_FDS:  # the engine's channel: student code must never read or write it
            try:
                os.close(fd)
            except OSError:
                pass
        warden(shell, request, skip, msg_w, st_w, workdir)
        os._exit(0)
    os.close(msg_w)
    os.close(st_w)
    return pid, msg_r, st_r


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _reap(pid: int) -> float:
    """Wait for the warden (killed after 10 s); returns the CPU it and its reaped children used."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            done, _, usage = os.wait4(pid, os.WNOHANG)
            if done:
                return usage.ru_utime + usage.ru_stime
        except ChildProcessError:
            return 0.0
        time.sleep(0.01)
    _signal(pid, signal.SIGKILL)
    try:
        _, _, usage = os.wait4(pid, 0)
        return usage.ru_utime + usage.ru_stime
    except ChildProcessError:
        return 0.0


def supervise(shell, request: RunRequest) -> RunResult:
    """Run the notebook, re-running without cells that hung or killed the process. The result's ``isolation``
    is the pool's to word (from its ``facts``)."""
    n = len(request.sources)
    limits = request.limits
    skipped: dict[int, CellResult] = {}
    problems: list[str] = []
    restarts = 0
    facts: list[str] = []
    timed_out, spent = False, 0.0  # whether a cell has timed out, and the time-outs' cost so far, across attempts
    costs: dict[str, float] = {}
    forks, c0 = 0.0, time.process_time()
    while True:
        run = attempt(shell, request, set(skipped), timed_out=timed_out, spent=spent)
        merge(costs, run["costs"])
        forks += run["fork_cpu"]
        facts = run["facts"] if run["facts"] is not None else facts
        timed_out, spent = run["timed_out"], run["spent"]
        if run["setup_error"] and run["facts"] is None:
            problems.append(f"the grading process could not start the notebook: {run['setup_error']}")
            break
        cell = run["current"]
        if run["budget_spent"]:
            problems.append(f"time-outs cost this notebook {spent:.0f} s, its whole time budget "
                            f"({limits.timeout_budget:g} s); the cells after them were not run")
            break
        if run["garbled"] and cell is not None:
            skipped[cell] = _cell(cell, "crashed", "this cell wrote into the grader's channel, so its process "
                                                  "was stopped; the rest of the notebook ran without it")
        elif cell is None:
            full = _stopped_for_memory(run["done"], skipped, n)
            if full is None:
                break
            skipped[full] = _finished(run["done"][full], limits, interrupted=full in run["interrupted"],
                                      limit=run["cell_limits"].get(full))
        elif run["killed_for_timeout"] == cell:
            limit = run["limit"]  # the limit the cell had when it started
            cost = limit + limits.interrupt_grace
            spent += cost
            timed_out = True
            skipped[cell] = _cell(cell, "timeout",
                                  f"still running after {limit:g} s and it ignored the "
                                  "interrupt, so its process was stopped; the rest of the notebook ran without it",
                                  cost)
        else:
            why = describe_death(run["exit"], limits, run["cpu"]) if run["exit"] is not None else \
                "the process running the notebook disappeared in this cell"
            skipped[cell] = _cell(cell, "crashed", why + "; the rest of the notebook ran without it")
        for i in run["interrupted"]:  # it would only hang again: keep its result, do not run it again
            if i in run["done"] and i not in skipped:
                skipped[i] = _finished(run["done"][i], limits, interrupted=True, limit=run["cell_limits"].get(i))
        restarts += 1
        if restarts > request.max_restarts:
            problems.append(f"the notebook's process died {restarts} times; later cells were not run")
            break
    cells = []
    for i in range(n):
        if i in skipped:
            cells.append(skipped[i])
        elif i in run["done"]:
            cell = _finished(run["done"][i], limits, interrupted=i in run["interrupted"],
                             limit=run["cell_limits"].get(i))
            cells.append(cell)
        elif run["budget_spent"]:
            cells.append(_cell(i, "skipped", "not run: time budget spent (earlier cells of this notebook timed out)"))
        else:
            cells.append(_cell(i, "skipped", "not run: the notebook's process could not get this far"))
    # this process's own time besides the forks: reading the children's frames, building the answer
    costs["evidence"] = costs.get("evidence", 0.0) + max(0.0, time.process_time() - c0 - forks)
    return RunResult(cells=cells, isolation=None, problems=problems, costs=costs, facts=facts)


def _stopped_for_memory(done: dict[int, dict], skipped: dict[int, CellResult], n: int) -> int | None:
    """The cell after whose MemoryError the cell runner ended its run (child.cell_runner), when cells after it
    are still to run; None otherwise."""
    if not done:
        return None
    last = max(done)
    if not ran_out_of_memory(done[last].get("outputs") or []):
        return None
    return last if any(j not in skipped for j in range(last + 1, n)) else None


def _finished(m: dict, limits: Limits, interrupted: bool, limit: float | None = None) -> CellResult:
    """A cell the cell runner finished (its done frame ``m``; ``limit``: the one it had when it started)."""
    status, detail = m["status"], ""
    if interrupted:
        index, seconds = int(m["done"]), float(m["seconds"])
        full, shorter = limits.timeout_for(index), limits.timeout_for(index, after_timeout=True)
        if limit is None:  # not known: guessed from how long it ran (a loaded machine may overshoot the shorter)
            limit = full if seconds > (full + shorter) / 2 or shorter >= full else shorter
        status, detail = "timeout", (f"interrupted after {limit:g} s" if limit >= full else
                                     f"interrupted after {limit:g} s (the shorter limit once a cell "
                                     "of this notebook has timed out)")
    if m.get("cut"):
        detail = (detail + "; " if detail else "") + f"output cut at {int(limits.output_bytes)} bytes"
    return CellResult(index=int(m["done"]), status=status, outputs=m["outputs"], seconds=float(m["seconds"]),
                      detail=detail)


def _cell(i: int, status: str, detail: str, seconds: float = 0.0) -> CellResult:
    return CellResult(index=i, status=status, outputs=[], seconds=seconds, detail=detail)
