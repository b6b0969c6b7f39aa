"""What runs in the warm parent's forked children: the warden confines a run, the cell runner runs its cells.

The warden (:func:`warden`, forked by the supervisor) enters fresh namespaces, stages the scratch folder
and forks the cell runner (PID 1 of a new PID namespace when possible); it reports on a status pipe
``{"pid"}``, then ``{"exit", "cpu"}`` once the cell runner is gone, or ``{"setup_error"}``, and passes on the
supervisor's signals. The cell runner (:func:`cell_runner`) drops privileges and runs the cells, writing
``{"hello"}``, ``{"start": i}`` and ``{"done": i, ...}`` frames on the message pipe. Neither ever returns
into the warm parent's loop.
"""
from __future__ import annotations

import importlib
import os
import random
import signal
import sys
import tempfile
import time

import numpy as np

from . import sandbox
from .contract import RunRequest, child_environment
from .frames import write_frame


def warden(shell, request: RunRequest, skip: set[int], msg_fd: int, status_fd: int, workdir: str) -> None:
    """The warden: namespaces, scratch, then fork the cell runner and watch it. Never returns."""
    try:
        sandbox.die_with_parent()
        conf = sandbox.Confinement(real_root=sandbox.is_real_root())
        if request.namespaces:
            sandbox.enter_namespaces(conf)
        owner = sandbox.NOBODY if conf.real_root else -1
        if conf.private_fs:
            try:
                sandbox.private_filesystem(conf, request.hide, request.keep, request.solutions, request.files, owner)
            except OSError:
                conf.private_fs = False
        if not conf.private_fs:
            sandbox.host_scratch(conf, workdir, request.solutions, request.files, owner)
        setup = time.process_time()  # the warden's part of the sandbox's start (its CPU count began at the fork)
        runner = os.fork()
        if runner == 0:
            os.close(status_fd)
            cell_runner(shell, request, skip, msg_fd, conf)
            os._exit(0)
        os.close(msg_fd)

        def forward(signum, frame):  # the warm parent signals the warden (its own child, never a reused pid)
            try:
                if signum == signal.SIGUSR1:
                    os.kill(runner, signal.SIGINT)
                else:
                    os.kill(runner, signal.SIGKILL)
                    os.killpg(runner, signal.SIGKILL)
            except OSError:
                pass

        signal.signal(signal.SIGUSR1, forward)
        signal.signal(signal.SIGUSR2, forward)
        write_frame(status_fd, {"pid": runner, "cpu": setup})
        cpu = 0.0
        while True:
            try:
                _, status, usage = os.wait4(runner, 0)
                cpu = usage.ru_utime + usage.ru_stime
                break
            except ChildProcessError:
                status = 0
                break
            except InterruptedError:
                continue
        try:
            os.killpg(runner, signal.SIGKILL)  # whatever the cell runner left behind (a fork bomb's survivors)
        except OSError:
            pass
        write_frame(status_fd, {"exit": status, "cpu": cpu})
    except BaseException as exc:  # noqa: BLE001 - report, never fall back into the warm parent's loop
        try:
            write_frame(status_fd, {"setup_error": f"{type(exc).__name__}: {exc}"})
        except BaseException:
            pass
    os._exit(0)


def cell_runner(shell, request: RunRequest, skip: set[int], msg_fd: int, conf: sandbox.Confinement) -> None:
    """The cell runner: confine, then run the cells. Writes frames {"hello"}, {"start": i}, {"done": i, ...}."""
    # late: shell imports IPython, which only the cell runner needs (the warden and the warm parent's other
    # code run without it)
    from .shell import RECORDER, figures_as_text, prepare_child, run_cell

    send = write_frame  # bound before any student code runs
    me = os.getpid()
    sandbox.die_with_parent()
    # A session of its own (and so a process group of its own, which stop_leftovers reads): the kernel shares
    # the CPU between sessions first (autogroups), so what this run forks, a fork bomb's children say, takes
    # CPU from this run and not from the students graded beside it, whose runs share the warm parent's
    # sandbox. Also no controlling terminal, as bwrap --new-session.
    os.setsid()
    sandbox.mount_proc(conf)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    os.chdir(conf.scratch)
    os.environ.clear()
    os.environ.update(child_environment(request, scratch=conf.scratch, course_root=conf.course_root))
    # the harness reads its settings (the checks: evidence mode, the run seed) now, from this environment,
    # before any student code: a cell that clears os.environ later must not turn the checks back into local
    # ones (which hand no evidence over)
    configure(request.harness.configure)
    # tempfile cached the warm parent's /tmp, where this user may not write (torch.optim's first step
    # puts its compile cache there): the scratch folder is the temporary folder
    tempfile.tempdir = conf.scratch
    sandbox.limit(conf, request.limits)

    def forked() -> None:  # a process the student forks must never speak for the run
        try:
            os.close(msg_fd)
        except OSError:
            pass

    os.register_at_fork(after_in_child=forked)
    # The supervisor's SIGINT is meant for the cell that ran past its timeout. One that lands after the
    # cell returned (a loaded machine) must not interrupt the sending of its result: it would skip the
    # "done" frame, and that cell would be reported as never reached. So it interrupts cells only.
    in_cell, interrupted = [False], [False]

    def interrupt(signum, frame) -> None:
        if in_cell[0]:
            interrupted[0] = True
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)
    # as PID 1 of its namespace the cell runner would ignore SIGXCPU's default action: leave explicitly
    signal.signal(signal.SIGXCPU, lambda *_: os._exit(128 + signal.SIGXCPU))
    if sys.path and sys.path[0] not in ("",):
        sys.path[0] = ""
    else:
        sys.path.insert(0, "")
    try:
        random.seed()
        np.random.seed(int.from_bytes(os.urandom(4), "little"))
    except Exception:
        pass
    torch = sys.modules.get("torch")  # when warm_up loaded it (a class of 01 or 06 never needs it)
    if torch is not None:
        try:
            torch.set_num_threads(1)
            torch.seed()
        except Exception:
            pass
    prepare_child(shell, request.limits.output_bytes, request.harness.kept_mime)
    if not request.limits.draw_figures:
        figures_as_text(shell)
    # For `grade --profile`: the cell runner's CPU since its fork (process_time), and the part of it spent
    # writing frames (thread_time: with RLIMIT_CPU set the process clock moves in scheduler ticks, too coarse
    # to time one write; the thread clock stays exact).
    cpu, thread_cpu = time.process_time, time.thread_time
    send(msg_fd, {"hello": conf.facts, "private_fs": conf.private_fs, "cpu": cpu()})
    clock = time.monotonic
    sent = 0.0  # CPU spent writing the frames so far (each done frame reports the ones before it)
    for i, source in enumerate(request.sources):
        if i in skip:
            continue
        try:
            c0 = thread_cpu()
            send(msg_fd, {"start": i})
            sent += thread_cpu() - c0
            t0 = clock()
            try:
                in_cell[0] = True
                status, outputs = run_cell(shell, source)
            except KeyboardInterrupt:  # the interrupt landed outside the cell's own code
                status, outputs = "error", RECORDER.outputs + [{
                    "output_type": "error", "ename": "KeyboardInterrupt", "evalue": "", "traceback": []}]
            finally:
                in_cell[0] = False
            seconds = clock() - t0
            if os.getpid() != me:
                os._exit(0)
            if interrupted[0]:  # a timed-out cell: what it started stops with it
                interrupted[0] = False
                sandbox.stop_leftovers()
            c1 = thread_cpu()
            send(msg_fd, {"done": i, "status": status, "outputs": outputs, "seconds": seconds,
                          "cut": RECORDER.cut, "cpu": cpu(), "sent": sent})
            sent += thread_cpu() - c1
            if ran_out_of_memory(outputs):
                # What filled the memory may still be held (`hog = []` ... a global), leaving the cells after it
                # a few MiB: whether they fit was luck. This process ends here; the warm parent runs the rest in a
                # fresh one without this cell (supervisor.supervise), as after a crash.
                os._exit(0)
        except KeyboardInterrupt:
            continue
    os._exit(0)


def configure(hook: str) -> None:
    """Call the harness's ``module:function`` with this process's environment ("" : nothing to call)."""
    if hook:
        module, _, name = hook.partition(":")
        getattr(importlib.import_module(module), name)(dict(os.environ))


def ran_out_of_memory(outputs: list) -> bool:
    """Did the cell end in a MemoryError (the address-space limit, or a real shortage)?"""
    return any(isinstance(o, dict) and o.get("output_type") == "error" and o.get("ename") == "MemoryError"
               for o in outputs)
