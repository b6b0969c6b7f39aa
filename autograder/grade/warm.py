"""The warm parent: one interpreter that has imported the heavy libraries once and forks per submission.

Started by the engine as ``python -m autograder.grade.warm`` (inside bubblewrap when the
machine has it). It speaks length-prefixed JSON frames on its stdin/stdout: it sends
``{"ready": ...}`` once warm, then answers each ``{"op": "run", ...}`` request with
``{"cells": [...], "isolation": ..., "problems": [...]}``.

Per request it supervises forked children (the child is expendable, this process never runs
student code): ``C`` enters fresh namespaces and stages the scratch folder, ``G`` (C's child,
PID 1 of a new PID namespace when possible) drops privileges and runs the cells, reporting
each cell's start and outputs on a pipe. A cell past its timeout gets SIGINT; one that
ignores it is killed with its whole process tree, as is a child that dies in a cell; the
notebook is then run again from the start without that cell, up to ``max_restarts`` times.
"""
from __future__ import annotations

import json
import os
import select
import signal
import struct
import sys
import tempfile
import time

from ..checks import core

HEADER = struct.Struct(">I")
MAX_FRAME = 512 * 2**20
THREAD_VARS = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "NUMEXPR_NUM_THREADS": "1", "VECLIB_MAXIMUM_THREADS": "1"}


class ChannelClosed(EOFError):
    pass


CHANNEL_FDS: list[int] = []  # the warm parent's frames to and from the engine; closed in every child


# ------------------------------------------------------------------------------- framing

_dumps = json.dumps  # bound once: a cell that replaces json.dumps must not change how results travel


def encode_frame(obj: dict) -> bytes:
    body = _dumps(obj, allow_nan=True).encode()
    return HEADER.pack(len(body)) + body


def write_frame(fd: int, obj: dict, _write=os.write) -> None:
    data = memoryview(encode_frame(obj))
    while data:
        n = _write(fd, data)
        data = data[n:]


class FrameReader:
    """Reads frames from a file descriptor without blocking past a deadline."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = bytearray()
        self.eof = False

    def _frames(self) -> list[dict]:
        out = []
        while len(self.buf) >= HEADER.size:
            (n,) = HEADER.unpack_from(self.buf)
            if n > MAX_FRAME:
                raise ValueError("frame too large")
            if len(self.buf) < HEADER.size + n:
                break
            body = bytes(self.buf[HEADER.size:HEADER.size + n])
            del self.buf[:HEADER.size + n]
            obj = json.loads(body)
            if not isinstance(obj, dict):
                raise ValueError("frame is not an object")
            out.append(obj)
        return out

    def pump(self) -> list[dict]:
        """Read what is available now (call after select says readable)."""
        try:
            chunk = os.read(self.fd, 1 << 20)
        except BlockingIOError:
            chunk = None
        if chunk == b"":
            self.eof = True
        elif chunk:
            self.buf += chunk
        return self._frames()

    def read_one(self, timeout: float | None = None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            frames = self._frames()
            if frames:
                if len(frames) > 1:  # put the rest back
                    self.buf[:0] = b"".join(encode_frame(f) for f in frames[1:])
                return frames[0]
            if self.eof:
                raise ChannelClosed("the other side closed the channel")
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.fd], [], [], wait)[0]:
                raise TimeoutError("no answer in time")
            chunk = os.read(self.fd, 1 << 20)
            if not chunk:
                self.eof = True
            self.buf += chunk


# ------------------------------------------------------------------------------ warming up

def warm_up():
    """Import what notebooks use, once; no tensor operation here (no thread pools before fork)."""
    for k, v in THREAD_VARS.items():
        os.environ.setdefault(k, v)
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    import importlib
    import pkgutil

    for name in ("numpy", "torch", "matplotlib", "matplotlib.pyplot", "IPython", "ipywidgets",
                 "math", "random", "collections", "itertools", "functools", "fractions", "statistics",
                 "dataclasses", "typing", "re", "string", "textwrap", "unicodedata", "json", "copy",
                 "getpass", "autograder.checks.core", "autograder.reference", "autograder.paths"):
        try:
            importlib.import_module(name)
        except Exception:
            pass
    try:
        import autograder.checks as checks

        for info in pkgutil.iter_modules(checks.__path__):
            try:
                importlib.import_module(f"autograder.checks.{info.name}")
            except Exception:
                pass
    except Exception:
        pass
    from .shell import RECORDER, make_shell

    shell = make_shell()
    # pay once here what the first figure and the first traceback would cost in every child
    try:
        import io

        import matplotlib.pyplot as plt

        fig = plt.figure()
        fig.gca().plot([0, 1], [0, 1])
        fig.savefig(io.BytesIO(), format="png")
        plt.close(fig)
    except Exception:
        pass
    try:
        raise ValueError("warming up")
    except ValueError:
        shell.showtraceback()
    RECORDER.reset()
    return shell


# ------------------------------------------------------------------------------- the child

def child_environment(conf, extra: dict[str, str]) -> dict[str, str]:
    path = os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"])
    env = {"PATH": path, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": conf.scratch, "TMPDIR": conf.scratch,
           "MPLCONFIGDIR": conf.scratch, "AUTOGRADER_MODE": "evidence", "NBGRADER_EXECUTION": "autograde",
           "MPLBACKEND": "module://matplotlib_inline.backend_inline", "AUTOGRADER_ROOT": conf.course_root,
           "PYTHONHASHSEED": "0", "TORCHINDUCTOR_CACHE_DIR": os.path.join(conf.scratch, ".torchinductor"),
           **THREAD_VARS}
    env.update({str(k): str(v) for k, v in (extra or {}).items()})
    return env


def _decode_files(files: dict[str, str]) -> dict[str, bytes]:
    import base64

    return {name: base64.b64decode(data) for name, data in (files or {}).items()}


def run_child(shell, req: dict, skip: set[int], msg_fd: int, status_fd: int, workdir: str) -> None:
    """The forked child C: namespaces, scratch, then fork G to run the cells. Never returns."""
    from . import sandbox

    try:
        sandbox.die_with_parent()
        conf = sandbox.Confinement(real_root=sandbox.is_real_root())
        plan = sandbox.Plan(**req["plan"])
        if req.get("namespaces", True):
            sandbox.enter_namespaces(conf)
        owner = sandbox.NOBODY if conf.real_root else -1
        solutions, files = _decode_files(req.get("solutions")), _decode_files(req.get("files"))
        if conf.private_fs:
            try:
                sandbox.private_filesystem(conf, plan, solutions, files, owner)
            except OSError:
                conf.private_fs = False
        if not conf.private_fs:
            sandbox.host_scratch(conf, workdir, solutions, files, owner)
        g = os.fork()
        if g == 0:
            os.close(status_fd)
            run_cells_in_child(shell, req, skip, msg_fd, conf, plan)
            os._exit(0)
        os.close(msg_fd)

        def forward(signum, frame):  # the warm parent signals C (its own child, never a reused pid)
            try:
                if signum == signal.SIGUSR1:
                    os.kill(g, signal.SIGINT)
                else:
                    os.kill(g, signal.SIGKILL)
                    os.killpg(g, signal.SIGKILL)
            except OSError:
                pass

        signal.signal(signal.SIGUSR1, forward)
        signal.signal(signal.SIGUSR2, forward)
        write_frame(status_fd, {"pid": g})
        cpu = 0.0
        while True:
            try:
                _, status, usage = os.wait4(g, 0)
                cpu = usage.ru_utime + usage.ru_stime
                break
            except ChildProcessError:
                status = 0
                break
            except InterruptedError:
                continue
        try:
            os.killpg(g, signal.SIGKILL)  # whatever G left behind (a fork bomb's survivors)
        except OSError:
            pass
        write_frame(status_fd, {"exit": status, "cpu": cpu})
    except BaseException as exc:  # noqa: BLE001 - report, never fall back into the warm parent's loop
        try:
            write_frame(status_fd, {"setup_error": f"{type(exc).__name__}: {exc}"})
        except BaseException:
            pass
    os._exit(0)


def run_cells_in_child(shell, req: dict, skip: set[int], msg_fd: int, conf, plan) -> None:
    """G: confine, then run the cells. Writes frames {"hello"}, {"start": i}, {"done": i, ...}."""
    from . import sandbox
    from .shell import RECORDER, prepare_child, run_cell

    send = write_frame  # bound before any student code runs
    me = os.getpid()
    sandbox.die_with_parent()
    os.setpgid(0, 0)
    sandbox.mount_proc(conf)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    os.chdir(conf.scratch)
    os.environ.clear()
    os.environ.update(child_environment(conf, req.get("env") or {}))
    # evidence mode and the run seed are fixed now, before any student code: a cell that clears
    # os.environ later must not turn the checks back into local ones (which hand no evidence over)
    core.configure_from_environment()
    # tempfile cached the warm parent's /tmp, where this user may not write (torch.optim's first step
    # puts its compile cache there): the scratch folder is the temporary folder
    tempfile.tempdir = conf.scratch
    sandbox.limit(conf, plan)

    def forked() -> None:  # a process the student forks must never speak for the run
        try:
            os.close(msg_fd)
        except OSError:
            pass

    os.register_at_fork(after_in_child=forked)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # as PID 1 of its namespace G would ignore SIGXCPU's default action: leave explicitly
    signal.signal(signal.SIGXCPU, lambda *_: os._exit(128 + signal.SIGXCPU))
    if sys.path and sys.path[0] not in ("",):
        sys.path[0] = ""
    else:
        sys.path.insert(0, "")
    try:
        import random

        import numpy as np

        random.seed()
        np.random.seed(int.from_bytes(os.urandom(4), "little"))
    except Exception:
        pass
    try:
        import torch

        torch.set_num_threads(1)
        torch.seed()
    except Exception:
        pass
    prepare_child(shell, int(req["limits"]["output_bytes"]))
    send(msg_fd, {"hello": conf.facts, "private_fs": conf.private_fs})
    clock = time.monotonic
    for i, source in enumerate(req["sources"]):
        if i in skip:
            continue
        try:
            send(msg_fd, {"start": i})
            t0 = clock()
            try:
                status, outputs = run_cell(shell, source)
            except KeyboardInterrupt:  # the interrupt landed outside the cell's own code
                status, outputs = "error", RECORDER.outputs + [{
                    "output_type": "error", "ename": "KeyboardInterrupt", "evalue": "", "traceback": []}]
            seconds = clock() - t0
            if os.getpid() != me:
                os._exit(0)
            send(msg_fd, {"done": i, "status": status, "outputs": outputs, "seconds": seconds,
                          "cut": RECORDER.cut})
        except KeyboardInterrupt:
            continue
    os._exit(0)


# ------------------------------------------------------------------------------ supervision

def describe_death(status: int, limits: dict, cpu: float = 0.0) -> str:
    if cpu >= float(limits.get("cpu_seconds", 1e9)) - 0.05 or (
            os.WIFEXITED(status) and os.WEXITSTATUS(status) == 128 + signal.SIGXCPU):
        return (f"the process running the notebook died in this cell: the CPU time limit "
                f"({limits.get('cpu_seconds')} s for the notebook) ran out")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        why = {
            signal.SIGSEGV: "a segmentation fault (the process crashed, e.g. through ctypes or a C extension)",
            signal.SIGBUS: "a bus error (the process crashed)",
            signal.SIGABRT: "an abort (a C library gave up)",
            signal.SIGFPE: "a floating point exception in native code",
            signal.SIGILL: "an illegal instruction in native code",
            signal.SIGXCPU: f"the CPU time limit ({limits.get('cpu_seconds')} s for the notebook) ran out",
            signal.SIGXFSZ: f"a file grew past the size limit ({limits.get('file_bytes')} bytes)",
            signal.SIGKILL: "it was killed, most likely for using too much memory",
        }.get(sig, f"signal {signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else sig}")
        return f"the process running the notebook died in this cell: {why}"
    if os.WIFEXITED(status):
        code = os.WEXITSTATUS(status)
        return (f"the process running the notebook exited in this cell with status {code} "
                "(os._exit or a library that ends the process)")
    return "the process running the notebook died in this cell"


def attempt(shell, req: dict, skip: set[int]) -> dict:
    """One forked run of the notebook without the cells in ``skip``."""
    import shutil
    import tempfile

    limits = req["limits"]
    timeout = float(limits["cell_timeout"])
    grace = float(limits.get("interrupt_grace", 5.0))
    workdir = tempfile.mkdtemp(prefix="ag-run-")
    os.chmod(workdir, 0o755)
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
        run_child(shell, req, skip, msg_w, st_w, workdir)
        os._exit(0)
    os.close(msg_w)
    os.close(st_w)
    msgs, stat = FrameReader(msg_r), FrameReader(st_r)
    done: dict[int, dict] = {}
    facts: list[str] | None = None
    gpid = None
    exit_status = None
    cpu_used = 0.0
    setup_error = None
    current = started = interrupted = None
    killed_for_timeout = None
    garbled = False
    last_start = -1
    interrupted_cells: set[int] = set()
    c_gone_at = None
    setup_deadline = time.monotonic() + 120
    try:
        while True:
            now = time.monotonic()
            if c_gone_at is not None:
                wait = max(0.0, c_gone_at + 1.0 - now)
            elif current is not None and killed_for_timeout is None:
                wait = max(0.0, (started + timeout if interrupted is None else interrupted + grace) - now)
            elif facts is None and killed_for_timeout is None:
                wait = max(0.0, setup_deadline - now)
            else:
                wait = 5.0
            fds = [fd for fd, r in ((msg_r, msgs), (st_r, stat)) if not r.eof]
            if not fds:
                break
            ready = select.select(fds, [], [], wait)[0]
            if msg_r in ready:
                try:
                    frames = msgs.pump()
                except ValueError:  # something wrote into the channel: stop the run
                    frames, garbled = [], True
                    msgs.eof = True
                    if gpid:
                        _signal(pid, signal.SIGUSR2)
                for m in frames:
                    if "hello" in m and facts is None:
                        facts = list(m["hello"])
                    elif type(m.get("start")) is int and m["start"] > last_start:
                        current, started, interrupted = m["start"], time.monotonic(), None
                        last_start = current
                    elif current is not None and m.get("done") == current and type(m["done"]) is int:
                        done[current] = m
                        current = None
                    else:  # out of step with the cells (student code wrote frames): stop the run
                        garbled = True
                        current = last_start if current is None and last_start >= 0 else current
                        msgs.eof = True
                        if gpid:
                            _signal(pid, signal.SIGUSR2)
                        break
            if st_r in ready:
                for m in stat.pump():
                    if "pid" in m:
                        gpid = int(m["pid"])
                    elif "exit" in m:
                        exit_status = int(m["exit"])
                        cpu_used = float(m.get("cpu", 0.0))
                        c_gone_at = time.monotonic()
                    elif "setup_error" in m:
                        setup_error = m["setup_error"]
                        c_gone_at = time.monotonic()
                if stat.eof and c_gone_at is None:
                    c_gone_at = time.monotonic()
            if c_gone_at is not None:
                if msgs.eof or time.monotonic() >= c_gone_at + 1.0:
                    break
                continue
            now = time.monotonic()
            if current is not None and killed_for_timeout is None and gpid:
                if interrupted is None and now >= started + timeout:
                    _signal(pid, signal.SIGUSR1)
                    interrupted = now
                    interrupted_cells.add(current)
                elif interrupted is not None and now >= interrupted + grace:
                    killed_for_timeout = current
                    _signal(pid, signal.SIGUSR2)
            elif facts is None and now >= setup_deadline and gpid:
                setup_error = "the run did not start within 120 s"
                _signal(pid, signal.SIGUSR2)
    finally:
        os.close(msg_r)
        os.close(st_r)
        if gpid and exit_status is None:
            _signal(pid, signal.SIGUSR2)  # C is not reaped yet, so its pid is still ours
        _reap(pid)
        shutil.rmtree(workdir, ignore_errors=True)
    if current is not None and current in done:
        current = None
    return {"done": done, "facts": facts, "current": current, "exit": exit_status, "setup_error": setup_error,
            "killed_for_timeout": killed_for_timeout, "garbled": garbled, "cpu": cpu_used,
            "interrupted": interrupted_cells}


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _reap(pid: int) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0]:
                return
        except ChildProcessError:
            return
        time.sleep(0.01)
    _signal(pid, signal.SIGKILL)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def supervise(shell, req: dict) -> dict:
    """Run the notebook, re-running without cells that hung or killed the process."""
    n = len(req["sources"])
    limits = req["limits"]
    max_restarts = int(req.get("max_restarts", 3))
    skipped: dict[int, dict] = {}
    problems: list[str] = []
    restarts = 0
    facts: list[str] = []
    while True:
        run = attempt(shell, req, set(skipped))
        facts = run["facts"] if run["facts"] is not None else facts
        if run["setup_error"] and run["facts"] is None:
            problems.append(f"the grading process could not start the notebook: {run['setup_error']}")
            break
        cell = run["current"]
        if run["garbled"] and cell is not None:
            skipped[cell] = _cell(cell, "crashed", "this cell wrote into the grader's channel, so its process "
                                                  "was stopped; the rest of the notebook ran without it")
        elif cell is None:
            break
        elif run["killed_for_timeout"] == cell:
            skipped[cell] = _cell(cell, "timeout",
                                  f"still running after {float(limits['cell_timeout']):g} s and it ignored the "
                                  "interrupt, so its process was stopped; the rest of the notebook ran without it",
                                  float(limits["cell_timeout"]) + float(limits.get("interrupt_grace", 5.0)))
        else:
            why = describe_death(run["exit"], limits, run["cpu"]) if run["exit"] is not None else \
                "the process running the notebook disappeared in this cell"
            skipped[cell] = _cell(cell, "crashed", why + "; the rest of the notebook ran without it")
        for i in run["interrupted"]:  # it would only hang again: keep its result, do not run it again
            if i in run["done"] and i not in skipped:
                skipped[i] = _finished(run["done"][i], limits, interrupted=True)
        restarts += 1
        if restarts > max_restarts:
            problems.append(f"the notebook's process died {restarts} times; later cells were not run")
            break
    cells = []
    for i in range(n):
        if i in skipped:
            cells.append(skipped[i])
        elif i in run["done"]:
            cell = _finished(run["done"][i], limits, interrupted=i in run["interrupted"])
            cells.append(cell)
        else:
            cells.append(_cell(i, "skipped", "not run: the notebook's process could not get this far"))
    return {"cells": cells, "facts": facts, "problems": problems}


def _finished(m: dict, limits: dict, interrupted: bool) -> dict:
    status, detail = m["status"], ""
    if interrupted:
        status, detail = "timeout", f"interrupted after {float(limits['cell_timeout']):g} s"
    if m.get("cut"):
        detail = (detail + "; " if detail else "") + f"output cut at {int(limits['output_bytes'])} bytes"
    return {"index": int(m["done"]), "status": status, "outputs": m["outputs"], "seconds": float(m["seconds"]),
            "detail": detail}


def _cell(i: int, status: str, detail: str, seconds: float = 0.0) -> dict:
    return {"index": i, "status": status, "outputs": [], "seconds": seconds, "detail": detail}


# ----------------------------------------------------------------------------------- main

def main() -> None:
    inp, out = os.dup(0), os.dup(1)
    CHANNEL_FDS[:] = [inp, out]
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the grader's terminal is the engine's business
    t0 = time.monotonic()
    shell = warm_up()
    import gc

    gc.collect()
    gc.freeze()  # the warm objects stay out of the children's collections: fewer copy-on-write pages per fork
    write_frame(out, {"ready": True, "seconds": time.monotonic() - t0, "pid": os.getpid(),
                      "uid": os.getuid()})
    reader = FrameReader(inp)
    while True:
        try:
            req = reader.read_one()
        except (ChannelClosed, ValueError):
            break
        if req.get("op") != "run":
            break
        try:
            resp = supervise(shell, req)
        except Exception as exc:  # noqa: BLE001 - answer, so the engine can say what went wrong
            resp = {"error": f"{type(exc).__name__}: {exc}"}
        write_frame(out, resp)
    os._exit(0)


if __name__ == "__main__":
    main()
