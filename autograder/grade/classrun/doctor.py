"""``python -m autograder doctor``: prove that this machine can grade, and say how safely.

Three questions, answered by doing, not by reading settings:

1. Which isolation is in force for student code here (bubblewrap, namespaces, a user that cannot
   touch the instructor's files, resource limits), and what is *not* isolated.
2. Does a reference solution run in that sandbox (if not, grading would fail: exit 1)?
3. What each layer blocks, tried from inside the sandbox: the network, the course checkout, another
   student's folder, the instructor's home folder, writing outside the scratch folder.

:func:`explain_reference_failure` is the paragraph ``grade`` prints when a reference cannot run.
"""
from __future__ import annotations

import os
import re
import shlex
import socket
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from ... import paths
from ... import engine
from ..submission import running
from ...engine import sandbox
from ..submission.isolation import describe_isolation, not_isolated
from ..submission.grade_one import run_reference

PROBE_ASSIGNMENT = "01_tokens_and_ids"  # the quickest reference to run


@dataclass(frozen=True)
class Probe:
    """One thing student code must not do, tried inside the sandbox."""

    name: str  # what a person reads: "the network"
    code: str  # prints "blocked" or "REACHED: <detail>"


def _probes(port: int, course: Path, other: Path, home: Path, outside: Path) -> list[Probe]:
    def attempt(body: str) -> str:
        return ("try:\n" + "".join(f"    {line}\n" for line in body.strip().splitlines())
                + "except Exception as exc:\n    print('blocked', type(exc).__name__)\n")

    return [
        Probe("the network (a server on this machine)",
              attempt(f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=3).close()\n"
                      "print('REACHED: connected to a server on 127.0.0.1')")),
        Probe("the course checkout (solutions and hidden tests)",
              attempt(f"import os\nprint('REACHED:', sorted(os.listdir({str(course / 'solutions')!r}))[:3])")),
        Probe("another student's submission",
              attempt(f"print('REACHED:', open({str(other)!r}).read()[:20])")),
        Probe("your home folder",  # entries on the way to the Python installation are shown on purpose
              attempt(f"import os\nentries = set(os.listdir({str(home)!r})) - {_on_the_way(home)!r}\n"
                      "print('REACHED:', len(entries), 'entries') if entries else print('blocked (empty)')")),
        Probe("writing outside the scratch folder",
              attempt(f"open({str(outside / 'written-by-student.txt')!r}, 'w').write('x')\n"
                      "print('REACHED: wrote a file in a folder of yours')")),
    ]


def _on_the_way(folder: Path) -> set[str]:
    """Names in ``folder`` that lead to a folder of the Python installation the sandbox shows."""
    names = set()
    for p in sandbox.python_paths():
        rel = os.path.relpath(p, folder)
        if not rel.startswith(".."):
            names.add(rel.split(os.sep)[0])
    return names


class Listener:
    """A TCP server on ``host`` (loopback by default, "0.0.0.0" for every address); counts who connects."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()


# --------------------------------------------------------------------------- who else can read the course

@dataclass(frozen=True)
class Exposure:
    """Something of the course that users outside the owner and the staff group can read or change."""

    what: str  # "the solutions (answers and hidden tests)"
    path: Path
    how: str  # "other users can read it"
    fix: str  # the exact command that closes it

    def __str__(self) -> str:
        return f"{self.what} ({self.path}): {self.how}. Fix: {self.fix}"


def _others_can_enter(path: Path) -> bool:
    """Every folder above ``path`` lets other users through (o+x): what decides whether they reach it."""
    return all(os.stat(p).st_mode & stat.S_IXOTH for p in path.resolve().parents)


def _open_to_others(path: Path, bits: int) -> bool:
    try:
        return bool(path.exists() and os.stat(path).st_mode & bits and _others_can_enter(path))
    except OSError:
        return False


def _writable_within(folder: Path, depth: int = 2) -> Path | None:
    """The first folder at most ``depth`` levels down that other users can write into, or None."""
    try:
        if os.stat(folder).st_mode & stat.S_IWOTH:
            return folder
        if depth:
            for child in sorted(folder.iterdir()):
                if child.is_dir() and not child.is_symlink() and (hit := _writable_within(child, depth - 1)):
                    return hit
    except OSError:
        pass
    return None


def exposures(*, course: Path, solutions: Path, gradebook: Path | None = None,
              submitted: Path | None = None, outputs: tuple[Path, ...] = ()) -> list[Exposure]:
    """What of the course other users (not the owner, not its group) can read or change, with the fix.

    Checked by mode bits, as a student's shell would meet them: a folder is open when others can pass
    every folder above it and read it. The course folder itself only needs closing to listing (o-rw):
    other users keep o+x so that a virtualenv inside it stays readable by the sandbox's own user."""
    found: list[Exposure] = []
    q = lambda p: shlex.quote(str(p))  # noqa: E731 - the commands are pasted into a shell
    if _open_to_others(course, stat.S_IROTH | stat.S_IWOTH):
        found.append(Exposure("the course folder", course, "other users can list or change it",
                              f"chmod o-rw {q(course)}"))
    private = [("the solutions (answers and hidden tests)", solutions),
               ("the nbgrader source (answers and hidden tests)", course / "source"),
               ("the gradebook", gradebook), ("the graded notebooks", course / "autograded"),
               *(("the grading output", p) for p in outputs)]
    for what, path in private:
        if path is not None and _open_to_others(path, stat.S_IROTH | stat.S_IXOTH | stat.S_IWOTH):
            found.append(Exposure(what, path, "other users can read it",
                                  f"chmod {'-R ' if path.is_dir() else ''}o-rwx {q(path)}"))
    if submitted is not None and submitted.is_dir() and _others_can_enter(submitted / "x"):
        hit = _writable_within(submitted)
        if hit is not None:  # nbgrader collect leaves submitted/<student>/<assignment>/ at 0777
            found.append(Exposure("the submissions", hit, "other users can change a student's work before "
                                  "it is graded", f"chmod -R o-rwx {q(submitted)}"))
    return found


def exposures_here(*, course: Path | None = None, submitted: Path | None = None, gradebook: Path | None = None,
                   outputs: tuple[Path, ...] = ()) -> list[Exposure]:
    """:func:`exposures` for ``course`` (default this checkout, whose solutions grading uses); ``doctor``
    asks with the defaults, ``grade`` adds its own submissions, gradebook and output."""
    root = course or paths.root()
    db = root / "gradebook.db"
    sub = root / "submitted"
    return exposures(course=root, solutions=paths.solutions_dir(), gradebook=gradebook or (db if db.exists() else None),
                     submitted=submitted or (sub if sub.is_dir() else None), outputs=outputs)


def doctor(*, out=print) -> int:
    """Print what this machine gives student code; 0 when grading works here, 1 when it would fail."""
    real_root = sandbox.is_real_root()
    out(f"Python: {sys.executable} (runs as {sandbox.interpreter()}; prefix {os.path.realpath(sys.prefix)})")
    out(f"User: uid {os.getuid()}{' (root)' if real_root else ''}; course: {paths.root()}")
    out("The sandbox shows student code these folders of the Python installation (read-only): "
        + ", ".join(sandbox.python_paths()))
    bwrap = sandbox.which_bwrap()
    out(f"bubblewrap: {bwrap or 'not installed (Debian/Ubuntu: apt-get install bubblewrap)'}")
    open_ = exposures_here()
    out("Who else can read the course: " + ("only you and the course's group" if not open_ else
                                            f"{len(open_)} thing(s) are open to every user of this machine"))
    for e in open_:
        out(f"  warning: {e}")

    listener = Listener()
    with tempfile.TemporaryDirectory(prefix="autograder-doctor-") as tmp:
        tmp_path = Path(tmp)
        os.chmod(tmp_path, 0o755)
        other = tmp_path / "submitted" / "another_student" / "notebook.ipynb"
        other.parent.mkdir(parents=True)
        other.write_text('{"secret": "another student\'s answers"}')
        outside = tmp_path / "outside"
        outside.mkdir()
        os.chmod(outside, 0o777)  # so that only the sandbox, not file permissions, stands in the way
        probes = _probes(listener.port, paths.root(), other, Path.home(), outside)
        try:
            run = running.run_cells([p.code for p in probes], assignment=PROBE_ASSIGNMENT,
                                    hide=(str(tmp_path / "submitted"), str(outside)))
        finally:
            listener.close()
        written = any(outside.iterdir())
    out(f"\nIsolation in force: {describe_isolation(run.isolation)}")
    for problem in run.problems:
        out(f"  problem: {problem}")
    for failed in engine.default_pool().failed_imports():
        out(f"  problem: the warm interpreter could not import {failed}; a notebook that needs it imports it "
            "again for every submission (slower), or fails there")
    gaps = not_isolated(run.isolation)
    out("Not isolated: " + ("; ".join(gaps) if gaps else "nothing we know of"))
    out("\nWhat student code could reach, tried from inside the sandbox:")
    leaks = 0
    for probe, cell in zip(probes, run.cells):
        text = "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream").strip()
        if probe.name.startswith("the network") and listener.connections:
            text = "REACHED: the server saw a connection"
        if probe.name.startswith("writing") and written:
            text = "REACHED: a file appeared in a folder of yours"
        if cell.status != "ok":
            text = f"{cell.status}: {cell.detail}"
        blocked = text.startswith("blocked")
        leaks += not blocked
        out(f"  {'blocked ' if blocked else 'REACHED '} {probe.name}" + ("" if blocked else f"  ({text})"))

    out(f"\nRunning the reference solution {PROBE_ASSIGNMENT} in the sandbox ...")
    try:
        ref = run_reference(PROBE_ASSIGNMENT, seed=1, limits=engine.Limits(), engine="engine")
    except Exception as exc:  # noqa: BLE001 - this is what the doctor is for
        out(explain_reference_failure(PROBE_ASSIGNMENT, str(exc)))
        return 1
    out(f"  ok: {len(ref.evidence)} test cells recorded their results; grading works on this machine.")
    if leaks:
        out(f"  {leaks} of {len(probes)} things above are reachable by student code: grade on a machine with "
            "bubblewrap and user namespaces (or as root) for more isolation.")
    return 0


def explain_reference_failure(assignment: str, message: str) -> str:
    """One paragraph for a person: which layer failed, the cause, the fix."""
    module = re.search(r"No module named '([^']+)'", message)
    if module:
        layer = f"the sandbox's view of the Python installation (importing {module.group(1)!r} failed)"
        fix = ("student code sees only this interpreter's own folders: " + ", ".join(sandbox.python_paths())
               + f". Install what is missing into this environment ({sys.executable} -m pip install -r "
               "requirements.txt), or tell us about a layout the grader does not show yet.")
    elif "failed to map segment" in message or "MemoryError" in message or "Cannot allocate memory" in message:
        layer = "the memory limit on student code (RLIMIT_AS): the interpreter could not map a library"
        fix = ("the limit is the warm interpreter's own size plus a budget; a Python installation larger "
               "than we measured (several CUDA libraries, say) can still hit it: install the CPU build of "
               "torch, or grade with --engine nbclient (no sandbox) and tell us.")
    elif "warm interpreter did not start" in message or "grading process failed" in message:
        layer = "starting the sandboxed interpreter (bubblewrap or the Python it runs)"
        fix = ("set AUTOGRADER_NO_BWRAP=1 to grade without bubblewrap (the other layers stay), "
               "or set AUTOGRADER_ENGINE_DEBUG=1 to see the interpreter's own error.")
    elif "could not start the notebook" in message or "Errno" in message:
        call = re.search(r"(OSError|PermissionError|FileNotFoundError): (\[Errno \d+\] [^;:)]+)(: [^;)]*)?", message)
        layer = ("confining the student's process (namespaces, mounts, its private folder)"
                 + (f": the system call failed with {call.group(2)}{call.group(3) or ''}" if call else ""))
        fix = ("set AUTOGRADER_NO_NAMESPACES=1 to grade with resource limits and a private working folder only "
               "(the summary then says what is not isolated), or grade as root.")
    else:
        layer = "the reference solution's own tests"
        fix = (f"the solution or its checks fail on this machine: run `python -m autograder validate "
               f"solutions/{assignment}.ipynb`; if the course files were edited, restore them "
               "(`git status`), or reinstall with `pip install -r requirements.txt`.")
    return (f"Grading stopped before any student was graded: the reference solution {assignment}.ipynb could not "
            f"run on this machine, so no submission could be judged fairly.\n"
            f"  Layer that failed: {layer}.\n"
            f"  Cause: {message}\n"
            f"  Fix: {fix}\n"
            f"  Nothing was recorded for any student. `python -m autograder doctor` checks this machine in one "
            f"command.")

