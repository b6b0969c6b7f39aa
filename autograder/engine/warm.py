"""The warm parent: one interpreter that has imported the heavy libraries once and forks per submission.

Started by the engine as ``python -m autograder.engine.warm`` (inside bubblewrap when the
machine has it). It speaks length-prefixed JSON frames (:mod:`.frames`) on its stdin/stdout:
it sends ``{"ready": ..., "failed_imports": [...]}`` once warm, then answers each ``{"run": <RunRequest>}``
with ``{"result": <RunResult>, "tree_cpu": ...}`` (or ``{"error": ...}``), both records in their JSON form
(:mod:`.contract`).

Per request it supervises forked children (:mod:`.supervisor`; the child is expendable, this
process never runs student code): the warden enters fresh namespaces and stages the scratch folder,
the cell runner (the warden's child, PID 1 of a new PID namespace when possible) drops privileges and
runs the cells (:mod:`.child`), reporting each cell's start and outputs on a pipe. A cell past its
timeout gets SIGINT; one that ignores it is killed with its whole process tree, as is a child
that dies in a cell; the notebook is then run again from the start without that cell, up to
``max_restarts`` times.
"""
from __future__ import annotations

import gc
import importlib
import io
import os
import re
import signal
import sys
import time

from .contract import THREAD_VARS, RunRequest
from .frames import ChannelClosed, FrameReader, write_frame
from .measure import tree_seconds
from .supervisor import CHANNEL_FDS, supervise


# ------------------------------------------------------------------------------ warming up

MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


WARM_IMPORTS = ("numpy", "matplotlib", "matplotlib.pyplot", "IPython", "ipywidgets",
                "math", "random", "collections", "itertools", "functools", "fractions", "statistics",
                "dataclasses", "typing", "re", "string", "textwrap", "unicodedata", "json", "copy",
                "getpass")


def warm_up(preload: tuple[str, ...] = (), failed: list[str] | None = None):
    """Import what notebooks use, once, and the ``preload`` modules (the pool's: its harness's, then those
    :meth:`.pool.WarmPool.expect` was given); no tensor
    operation here (no thread pools before fork). An import that fails does not stop the warm-up (a run that
    needs the module imports it itself, and fails there if it must); it is added to ``failed``, which the
    hello frame carries to the pool and ``doctor`` shows."""
    failed = [] if failed is None else failed

    def load(name: str) -> None:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - said, not raised: see above
            failed.append(f"{name} ({type(exc).__name__}: {exc})")

    for k, v in THREAD_VARS.items():
        os.environ.setdefault(k, v)
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    for name in WARM_IMPORTS:
        load(name)
    for name in preload:  # the harness's first (the pool puts them first), then the notebooks'
        if MODULE_NAME.fullmatch(name):
            load(name)
    from .shell import RECORDER, make_shell  # late: IPython, like the imports above, after the environment is set

    shell = make_shell()
    # pay once here what the first figure and the first traceback would cost in every child
    try:
        import matplotlib.pyplot as plt  # late: optional, and only once MPLBACKEND is set

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
    # and the first notebook read: nbformat builds its schema validator then (0.035 core-seconds in each child of
    # 05, 09 and 10, whose set-up cells read the earlier solutions; 0.007 once it is built). An empty notebook.
    try:
        from ..nbio import parse_notebook  # here: the warm-up loads only what it warms; nbio pulls in nbformat

        parse_notebook('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    except Exception:
        pass
    RECORDER.reset()
    return shell


def preload_late(modules, tried: set[str]) -> None:
    """Import the harness's modules a request names that this warm parent was not started with, once each,
    before it forks the run: its runs then find them imported, as if they had been part of the warm-up."""
    for name in modules:
        if name not in tried and MODULE_NAME.fullmatch(name):
            tried.add(name)
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001 - the run imports it itself, and says why it fails there
                pass


# ----------------------------------------------------------------------------------- main

SIBLINGS = "--siblings="  # argv: --siblings=R:W,R:W (the channels of the warm parents to fork once warm)


def parse_argv(argv: list[str]) -> tuple[tuple[str, ...], list[tuple[int, int]]]:
    """(the modules to preload, the siblings' channels as (read fd, write fd) pairs)."""
    preload = tuple(a for a in argv if not a.startswith(SIBLINGS))
    siblings = [tuple(int(fd) for fd in pair.split(":")) for a in argv if a.startswith(SIBLINGS)
                for pair in a[len(SIBLINGS):].split(",") if pair]
    return preload, siblings


def fork_siblings(channels: list[tuple[int, int]], own: tuple[int, int]) -> tuple[int, int]:
    """Fork one more warm parent per channel, each a copy of this warm interpreter that serves its own channel
    (the warm-up is paid once for all of them: a core-second and more each). Returns the channel this process
    serves: its own in the original, the sibling's in each copy. Every process closes the channels that are
    not its own, so a run forked by one warm parent holds no other's."""
    mine = own
    for channel in channels:
        if os.fork() == 0:
            mine = channel
            break
    for fd in {fd for pair in (own, *channels) for fd in pair} - set(mine):
        os.close(fd)
    CHANNEL_FDS[:] = list(mine)
    return mine


def main() -> None:
    inp, out = os.dup(0), os.dup(1)
    CHANNEL_FDS[:] = [inp, out]
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the grader's terminal is the engine's business
    failed: list[str] = []
    preload, siblings = parse_argv(sys.argv[1:])
    shell = warm_up(preload, failed)
    gc.collect()
    gc.freeze()  # the warm objects stay out of the children's collections: fewer copy-on-write pages per fork
    if siblings:
        inp, out = fork_siblings(siblings, (inp, out))
    write_frame(out, {"ready": True, "failed_imports": failed, "cpu": time.process_time()})
    reader = FrameReader(inp)
    tried = set(preload)  # the modules imported at the warm-up, or tried
    answered = 0.0  # CPU spent writing the last answer, reported with the next one
    while True:
        c0 = time.process_time()
        try:
            frame = reader.read_one()
        except (ChannelClosed, ValueError):
            break
        if "run" not in frame:
            break
        try:
            request = RunRequest.from_json(frame["run"])
        except (KeyError, TypeError, ValueError) as exc:  # the pool and this module disagree: say so
            write_frame(out, {"error": f"a request this process cannot read ({type(exc).__name__}: {exc})",
                              "tree_cpu": tree_seconds()})
            continue
        read = time.process_time() - c0
        try:
            preload_late(request.harness.preload, tried)
            result = supervise(shell, request)
        except Exception as exc:  # noqa: BLE001 - answer, so the engine can say what went wrong
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        else:
            # for `grade --profile`: the channel's share (the request stages the run's files; the answer
            # carries the evidence)
            result.costs["sandbox"] = result.costs.get("sandbox", 0.0) + read
            result.costs["evidence"] = result.costs.get("evidence", 0.0) + answered
            answer = {"result": result.to_json()}
        # this process's whole tree so far (the grader cannot count it: inside bubblewrap's PID namespace it
        # is never reaped into the grader's own count)
        answer["tree_cpu"] = tree_seconds()
        c1 = time.process_time()
        write_frame(out, answer)
        answered = time.process_time() - c1
    os._exit(0)


if __name__ == "__main__":
    main()
