"""The pool of warm parents and :func:`run`, the one call the grader makes.

The grader only calls :func:`run` with a :class:`.contract.RunRequest`; how cells run (a warm, forked, sandboxed interpreter, or a plain
Jupyter kernel as a fallback) is the engine's business. What a run is asked and answers is
:mod:`.contract`'s.
"""
from __future__ import annotations

import atexit
import os
import queue
import select
import subprocess
import threading
from dataclasses import replace
from pathlib import Path

from . import sandbox
from .contract import THREAD_VARS, CellResult, Isolation, RunRequest, RunResult
from .frames import FrameReader, encode_frame
from .measure import merge, number, thread_timer

# What the warm parents of a pool not told what its runs will import (WarmPool.expect) import besides the usual:
# the one heavy import most notebooks share (the grader tells it more, autograder.grade's running.NOTEBOOK_IMPORTS).
UNKNOWN_PRELOAD = ("torch",)


def run(request: RunRequest, *, pool: "WarmPool | None" = None) -> RunResult:
    """Execute ``request.sources`` in order in one fresh interpreter and return one CellResult each.

    ``request.files`` are written into the run's private scratch folder (the current directory of
    the code) and ``request.solutions`` where the run may import them; nothing else of the grader's machine is
    visible to it beyond the installed packages. The harness (:class:`.contract.Harness`) sets the run's
    environment, the seed included (:func:`.contract.child_environment`).

    The interpreter is a fork of a warm parent from ``pool`` (by default this process's
    :func:`default_pool`), so the imports are paid once per worker, not once per submission.
    ``request.hide`` names more folders the code must not see; without bubblewrap they are covered in the
    child's mount namespace. ``request.namespaces=False`` asks for resource limits only (what a machine without
    namespaces gets; None: the pool's). A cell that hangs past the limits' first timeout is interrupted; one that
    ignores the interrupt or kills its process is marked and the notebook re-run without it, at most
    ``request.max_restarts`` times.
    """
    pool = pool or default_pool()
    pool.also_preload(request.harness.preload)
    wants = frozenset(request.harness.preload)
    costs: dict[str, float] = {}
    n = len(request.sources)
    with thread_timer(costs, "sandbox"):  # the request stages the run's files and the earlier solutions
        encoded = {"run": replace(
            request, sources=[str(s) for s in request.sources],
            hide=sandbox.default_hide() + [str(Path(h).resolve()) for h in request.hide], keep=pool.keep(),
            namespaces=pool.namespaces if request.namespaces is None else request.namespaces).to_json()}
    budget = request.limits.whole_run(n, request.max_restarts)
    problems: list[str] = []
    for _ in range(2):
        parent = pool.acquire(wants)
        try:
            with thread_timer(costs, "evidence"):  # encoding the request, decoding the answer
                answer = parent.request(encoded, timeout=budget)
        except WarmParentError as exc:
            parent.close()
            problems.append(f"the grading process failed ({exc}); tried again")
            continue
        if "error" in answer:
            pool.release(parent)
            problems.append(f"the grading process reported: {answer['error']}")
            break
        try:  # an answer out of step with the request: the channel cannot be trusted any more
            with thread_timer(costs, "evidence"):
                result = RunResult.from_json(answer["result"])
            if [c.index for c in result.cells] != list(range(n)):
                raise ValueError("cells out of order")
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            parent.close()
            problems.append(f"the grading process answered nonsense ({type(exc).__name__}: {exc}); tried again")
            continue
        parent.modules |= wants  # it imported what it lacked before forking the run (warm.preload_late)
        pool.release(parent)
        merge(costs, result.costs)
        return replace(result, isolation=sandbox.isolation_of(parent.bubblewrap, result.facts),
                       problems=problems + result.problems, costs=costs)
    cells = [CellResult(index=i, status="skipped", detail="not run: the grading process failed") for i in range(n)]
    return RunResult(cells=cells, isolation=Isolation(kind="unknown"), problems=problems, costs=costs)


class WarmParentError(RuntimeError):
    """The warm parent died, hung or answered nonsense; the engine starts another."""


def _debug() -> bool:
    return os.environ.get("AUTOGRADER_ENGINE_DEBUG", "") not in ("", "0")


_SPAWNER: tuple[int, "queue.Queue"] | None = None
_SPAWNER_LOCK = threading.Lock()


def _spawn(start):
    """Run ``start`` (a Popen) on one long-lived thread of this process.

    bubblewrap's --die-with-parent (PR_SET_PDEATHSIG) fires when the *thread* that started it
    ends, so a warm parent started from a short-lived thread would die with that thread.
    """
    global _SPAWNER
    with _SPAWNER_LOCK:
        if _SPAWNER is None or _SPAWNER[0] != os.getpid():
            jobs: queue.Queue = queue.Queue()

            def serve() -> None:
                while True:
                    fn, box, done = jobs.get()
                    try:
                        box.append((True, fn()))
                    except BaseException as exc:  # noqa: BLE001 - handed to the caller
                        box.append((False, exc))
                    done.set()

            threading.Thread(target=serve, name="autograder-warm-spawner", daemon=True).start()
            _SPAWNER = (os.getpid(), jobs)
        jobs = _SPAWNER[1]
    box: list = []
    done = threading.Event()
    jobs.put((start, box, done))
    done.wait()
    ok, value = box[0]
    if not ok:
        raise value
    return value


class _Sibling:
    """The part of a Popen that :class:`WarmParent` uses, for a warm parent forked by another (its
    ``siblings``): its channel's two ends. It is not this process's child, so there is nothing to wait for
    or kill; closing its channel ends it, and it ends with the warm parent that forked it at the latest."""

    def __init__(self, write_fd: int, read_fd: int):
        self.stdin = open(write_fd, "wb")
        self.stdout = open(read_fd, "rb", buffering=0)

    def poll(self) -> int | None:
        # between runs a warm parent never writes: its channel readable then means it ended (end of file)
        try:
            readable, _, _ = select.select([self.stdout.fileno()], [], [], 0)
        except (OSError, ValueError):
            return 1
        return 1 if readable else None

    def wait(self, timeout: float | None = None) -> int:
        return 0

    def kill(self) -> None:
        pass


class WarmParent:
    """One warm interpreter (inside bubblewrap when ``bubblewrap``) serving one run at a time.

    With ``siblings`` it forks that many copies of itself once warm, each serving a channel of its own and
    sharing its sandbox; they are in :attr:`siblings`, ready, when this returns."""

    closed = False  # set by close(): the pool no longer counts it
    light = False  # started by WarmPool.start_warming(light=True): the harness's modules only

    def __init__(self, bubblewrap: bool, start_timeout: float = 180.0, preload: tuple[str, ...] = (),
                 siblings: int = 0):

        self.bubblewrap = bubblewrap
        self.siblings: list[WarmParent] = []
        # what it has imported of what requests name (Harness.preload): its warm-up's, then each run's
        self.modules = frozenset(preload)
        channels = [(os.pipe(), os.pipe()) for _ in range(siblings)]  # (requests, answers) per sibling
        theirs = [(requests[0], answers[1]) for requests, answers in channels]  # the ends the siblings keep
        argv = [sandbox.interpreter(), "-m", "autograder.engine.warm", *preload]  # see WarmPool.expect
        if theirs:
            argv.append("--siblings=" + ",".join(f"{r}:{w}" for r, w in theirs))
        if bubblewrap:
            argv = sandbox.bwrap_command(argv)
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "AUTOGRADER_ENGINE_DEBUG")}
        if os.environ.get("PYTHONPATH"):  # resolved, like every path the sandbox shows
            env["PYTHONPATH"] = os.pathsep.join(os.path.realpath(e) for e in os.environ["PYTHONPATH"].split(os.pathsep) if e)
        if sandbox.user_base():  # HOME is /tmp in there: say where `pip install --user` put the packages
            env["PYTHONUSERBASE"] = sandbox.user_base()
        env.update(THREAD_VARS)
        env.update({"HOME": "/tmp", "IPYTHONDIR": "/tmp/.ipython", "MPLCONFIGDIR": "/tmp/.matplotlib",
                    "PYTHONDONTWRITEBYTECODE": "1"})
        # umask 022, not the class run's private one (pipeline.private_files): the sandbox builds a view
        # of the file system (bubblewrap's mount points, the private /tmp) that its unprivileged user must
        # pass through; with o-rwx folders it could not reach the interpreter's own modules.
        try:
            self.proc = _spawn(lambda: subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None if _debug() else subprocess.DEVNULL,
                env=env, cwd="/", start_new_session=True, close_fds=True, umask=0o022,
                pass_fds=[fd for pair in theirs for fd in pair]))
        finally:
            for fd in (fd for pair in theirs for fd in pair):
                os.close(fd)
        self._hello(start_timeout)
        for requests, answers in channels:
            sibling = WarmParent.__new__(WarmParent)
            sibling.bubblewrap, sibling.siblings, sibling.modules = bubblewrap, [], self.modules
            sibling.proc = _Sibling(requests[1], answers[0])
            try:
                sibling._hello(start_timeout)
            except WarmParentError:
                continue  # fewer parents than asked: the pool starts another when one is wanted
            self.siblings.append(sibling)

    def _hello(self, timeout: float) -> None:
        self.reader = FrameReader(self.proc.stdout.fileno())
        try:
            hello = self.reader.read_one(timeout=timeout)
        except (EOFError, TimeoutError, ValueError) as exc:
            self.close()
            raise WarmParentError(f"the warm interpreter did not start: {exc}") from exc
        if not hello.get("ready"):
            self.close()
            raise WarmParentError("the warm interpreter did not start")
        self.failed_imports = [str(f) for f in hello.get("failed_imports") or []]  # see warm.warm_up
        # CPU of its start: the interpreter and the warm imports (a sibling's count starts at its fork, so the
        # warm-up counts once)
        self.warm_cpu = number(hello.get("cpu"))
        self.tree_cpu = self.warm_cpu  # CPU of it and its children so far, as its latest answer said

    def alive(self) -> bool:
        return self.proc.poll() is None

    def request(self, request: dict, timeout: float) -> dict:
        try:
            self.proc.stdin.write(encode_frame(request))
            self.proc.stdin.flush()
            answer = self.reader.read_one(timeout=timeout)
        except (OSError, EOFError, TimeoutError, ValueError) as exc:
            raise WarmParentError(f"{type(exc).__name__}: {exc}") from exc
        self.tree_cpu = max(self.tree_cpu, number(answer.get("tree_cpu")))
        return answer

    def close(self) -> None:
        self.closed = True
        try:
            if self.proc.poll() is None:
                try:
                    self.proc.stdin.close()  # end of input: the warm parent leaves its loop
                except OSError:
                    pass
                try:
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=5)
        finally:
            for f in (self.proc.stdin, self.proc.stdout):
                try:
                    f.close()
                except (OSError, ValueError):
                    pass


class WarmPool:
    """Warm parents kept alive across run_cells calls in one process; one per concurrent call."""

    def __init__(self, bubblewrap: bool | None = None, namespaces: bool = True):
        self.pid = os.getpid()
        self.namespaces = namespaces  # False: resource limits only (what a machine without namespaces gets)
        self._lock = threading.Lock()
        self._idle: list[WarmParent] = []
        self._all: list[WarmParent] = []
        self._bubblewrap = bubblewrap
        self._keep: list[str] | None = None
        # modules the warm parents started from now on import besides the usual (expect)
        self.preload: tuple[str, ...] = UNKNOWN_PRELOAD
        self.harness_preload: tuple[str, ...] = ()  # and first, what the requests' harness asked (also_preload)
        self.closed = False
        # the parents being started in the background (start_warming): what each will hold, and whether it is light
        self._coming: list[tuple[frozenset[str], bool]] = []
        self._light = False  # a light parent was started (start_warming(light=True)): at most one per pool
        self._ready = threading.Condition(self._lock)  # one of them is ready, or failed

    @property
    def _starting(self) -> int:
        """How many of the parents being started count among start_warming's ``n`` (the light one does not)."""
        return sum(not light for _, light in self._coming)

    @property
    def bubblewrap(self) -> bool:
        if self._bubblewrap is None:

            self._bubblewrap = os.environ.get("AUTOGRADER_NO_BWRAP", "") in ("", "0") and sandbox.bwrap_available()
        return self._bubblewrap

    def expect(self, modules) -> None:
        """What the runs about to come would each import again: warm parents started from now on import
        ``modules`` once instead of :data:`UNKNOWN_PRELOAD` (the grader works them out per notebook,
        ``autograder.grade``'s ``running.notebook_preloads``)."""
        self.preload = tuple(modules)

    def also_preload(self, modules) -> None:
        """Modules a request's harness wants the warm parents to hold (:attr:`.contract.Harness.preload`): those
        started from now on import them at their warm-up (a running one imports them on the request)."""
        new = tuple(m for m in modules if m not in self.harness_preload)
        if new:
            self.harness_preload += new

    def keep(self) -> list[str]:
        """The folders a child shows again under those it hides (:func:`.sandbox.python_paths`), worked out
        once per pool: it reads /proc/self/maps and resolves every path, 10 ms or more each time."""
        if self._keep is None:
            self._keep = sandbox.python_paths()
        return self._keep

    def acquire(self, wants: frozenset[str] = frozenset()) -> WarmParent:
        """An idle warm parent for a run that imports ``wants`` (its harness's modules): the leanest one that holds
        them all already if there is one; else one being started (:meth:`start_warming`) that will hold them is waited for;
        else any idle one (it imports what it lacks before the run, once), or one being started; else a new one.
        So a run that needs only the light parent's modules takes it while the others still import torch, and a
        run that needs torch waits for them rather than importing it again in the light one."""
        with self._lock:
            while True:
                for parent in [p for p in self._idle if not p.alive()]:
                    self._idle.remove(parent)
                    parent.close()
                ready = [p for p in self._idle if wants <= p.modules]
                if ready:  # the leanest: a fork of a smaller interpreter costs less (01 in a term: half the fork)
                    parent = min(reversed(ready), key=lambda p: len(p.modules))
                    self._idle.remove(parent)
                    return parent
                if any(wants <= modules for modules, _ in self._coming):
                    self._ready.wait()
                    continue
                if self._idle:
                    return self._idle.pop()
                if not self._coming:
                    break
                self._ready.wait()
        return self._start()

    def _start(self, siblings: int = 0, *, light: bool = False) -> WarmParent:
        """A new warm parent (inside bubblewrap when it runs here) and the ``siblings`` it forks, counted among
        this pool's; ``light``: with the harness's modules only, not those :meth:`expect` was given."""
        with self._lock:
            bubblewrap = self.bubblewrap
        preload = self._preload(light)
        try:
            parent = WarmParent(bubblewrap, preload=preload, siblings=siblings)
        except WarmParentError:
            if not bubblewrap:
                raise
            self._bubblewrap = False  # bubblewrap is there but cannot run here: namespaces from the child
            parent = WarmParent(False, preload=preload, siblings=siblings)
        parent.light = light
        with self._lock:
            self._all.extend([parent, *parent.siblings])
        return parent

    def _preload(self, light: bool = False) -> tuple[str, ...]:
        return self.harness_preload if light else self.harness_preload + self.preload

    def start_warming(self, n: int, *, light: bool = False) -> None:
        """Have ``n`` warm parents in all, starting the missing ones in the background (this returns at once):
        the grader imports its own modules and reads the class meanwhile, on a core the warm-up would otherwise
        leave idle. A parent that cannot start is not reported here; :meth:`acquire` then tries and says why.

        ``light``: also start, once per pool, one more parent with the harness's modules alone, beside the others
        (it is not one of the ``n``). It is ready in well under a second while they import what :meth:`expect`
        named (torch and more: seconds), and serves the runs that need nothing more (:meth:`acquire`): a class
        whose first notebook needs no torch has its first results while the others warm up."""
        with self._lock:  # busy parents count too: a reference run may already hold one
            have = sum(not p.closed and not p.light for p in self._all) + self._starting
            missing = max(0, n - have) if not self.closed else 0
            full, lean = frozenset(self._preload()), frozenset(self._preload(light=True))
            light = light and not self._light and not self.closed and full != lean
            self._coming += [(full, False)] * missing + [(lean, True)] * light
            self._light = self._light or light
        if light:
            threading.Thread(target=self._start_in_background, args=(1, lean), kwargs={"light": True},
                             name="autograder-warm-start-light", daemon=True).start()
        if missing:  # one warm-up, forked into the others once warm (see warm.fork_siblings)
            threading.Thread(target=self._start_in_background, args=(missing, full), name="autograder-warm-start",
                             daemon=True).start()

    def _start_in_background(self, n: int, modules: frozenset[str], *, light: bool = False) -> None:
        """Start ``n`` parents (one warm-up and its siblings), promised in ``_coming`` as holding ``modules``."""
        try:
            first = self._start(siblings=n - 1, light=light)
            parents = [first, *first.siblings]
        except BaseException:  # noqa: BLE001 - acquire() starts one itself and reports its failure
            parents = []
        with self._lock:  # in one step: a waiting acquire() must find them idle, or nothing more coming
            for _ in range(n):
                self._coming.remove((modules, light))
            keep = [p for p in parents if p.alive()] if not self.closed else []
            self._idle.extend(keep)
            self._ready.notify_all()
        for p in parents:
            if p not in keep:
                p.close()

    def release(self, parent: WarmParent) -> None:
        with self._lock:
            if parent.alive() and not self.closed:
                self._idle.append(parent)
                self._ready.notify_all()
                return
        parent.close()

    def warm(self, n: int = 1) -> None:
        """Start ``n`` warm parents now (e.g. before a timed loop)."""
        parents: list[WarmParent] = []
        errors: list[BaseException] = []

        def start() -> None:
            try:
                parents.append(self.acquire())
            except BaseException as exc:  # noqa: BLE001 - re-raised below
                errors.append(exc)

        threads = [threading.Thread(target=start) for _ in range(n)]  # they warm up side by side
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for p in parents:
            self.release(p)
        if errors:
            raise errors[0]

    def failed_imports(self) -> list[str]:
        """What the warm parents started so far could not import while warming up (for ``doctor``)."""
        with self._lock:
            parents = list(self._all)
        return sorted({f for p in parents for f in p.failed_imports})

    def cpu(self) -> tuple[float, float]:
        """(warm-up, everything) in CPU seconds over every warm parent this pool started, for --profile."""
        with self._lock:
            parents = list(self._all)
        return sum(p.warm_cpu for p in parents), sum(p.tree_cpu for p in parents)

    def shutdown(self) -> None:
        with self._lock:
            self.closed = True
            parents, self._all, self._idle = self._all, [], []
        if os.getpid() != self.pid:
            return  # a forked copy: the warm parents belong to the process that started them
        for p in parents:
            p.close()


_POOL: WarmPool | None = None
_POOL_LOCK = threading.Lock()


def default_pool() -> WarmPool:
    """This process's pool, created on first use (a forked worker gets its own)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None or _POOL.pid != os.getpid() or _POOL.closed:
            # AUTOGRADER_NO_NAMESPACES=1: resource limits and a private folder only (doctor's advice when
            # namespaces fail in a way the children cannot detect and skip by themselves)
            _POOL = WarmPool(namespaces=os.environ.get("AUTOGRADER_NO_NAMESPACES", "") in ("", "0"))
            _stop_at_exit()
        return _POOL


def shutdown_pool() -> None:
    """Stop this process's warm parents (also done at exit)."""
    global _POOL
    with _POOL_LOCK:
        pool, _POOL = _POOL, None
    if pool is not None and pool.pid == os.getpid():
        pool.shutdown()


_AT_EXIT: list[bool] = []  # whether shutdown_pool is registered with atexit (once, when a pool is first made)


def _stop_at_exit() -> None:
    if not _AT_EXIT:
        _AT_EXIT.append(True)
        atexit.register(shutdown_pool)
