"""Confining student code: bubblewrap around the warm parent, namespaces, nobody and rlimits per child.

Two layers, each as strong as the machine allows:

* Around the warm parent (``bwrap_command``): bubblewrap with a whitelisted, read-only view of
  what Python needs (``/usr``, the interpreter, the virtualenv, the autograder package), no
  network, a private ``/tmp`` and nothing else of the grader's machine: no solutions, no
  gradebook, no submissions. Secrets never enter it; the earlier notebooks' solutions a
  run may read arrive in its request.
* Around each forked child (``confine``): fresh mount, network and PID namespaces (so a fork
  bomb dies with the run), a private ``/tmp`` holding the scratch folder, the course paths
  hidden behind empty tmpfs mounts (this is what protects the machine when bubblewrap is
  missing), user ``nobody`` when running as root, resource limits and ``PR_SET_NO_NEW_PRIVS``
  always. Every step that fails is skipped and the child reports what is really in force.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import shutil
import signal
import site
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import autograder

from .. import paths
from .contract import Isolation, Limits

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
NOBODY = 65534
BWRAP = "/usr/bin/bwrap"

_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int = 0, data: str | None = None) -> None:
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    _check(_libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), f"mount {target}")


def prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0),
                       ctypes.c_ulong(0)), "prctl")


@dataclass
class Confinement:
    """What really is in force in a child, and where it may write."""

    facts: list[str] = field(default_factory=list)
    scratch: str = ""
    course_root: str = ""
    private_fs: bool = False
    pid_namespace: bool = False
    # decided once, before any namespace: inside a user namespace of our own we are "root" too,
    # but cannot become nobody there (only our own uid is mapped) and must shed capabilities instead
    real_root: bool = False
    user_namespace: bool = False


# The facts a child reports (Confinement.facts) and the fields of the Isolation record each one sets.
FACT_FIELDS = {
    "user namespace": ("user_namespace",),
    "no network": ("no_network",),
    "private /tmp": ("private_tmp",),
    "private /tmp, course hidden": ("private_tmp", "course_hidden"),
    "root (nobody could not read the interpreter's files)": ("runs_as_root",),
    "user nobody": ("user_nobody",),
    "no capabilities": ("no_capabilities",),
    "rlimits (memory, CPU, processes, file size)": ("rlimits",),
}


def isolation_of(bubblewrap: bool, facts: list[str]) -> Isolation:
    """The record of what confined a run: the child's ``facts``, inside bubblewrap or not."""
    return Isolation(bubblewrap=bubblewrap, **{name: True for f in facts for name in FACT_FIELDS.get(f, ())})


# ------------------------------------------------------------------------------ in the child

def is_real_root() -> bool:
    """uid 0 of the machine, not uid 0 of a user namespace (bubblewrap's, or one of ours)."""
    if os.geteuid() != 0:
        return False
    try:
        with open("/proc/self/uid_map") as f:
            return f.read().split() == ["0", "0", "4294967295"]
    except OSError:
        return True


def enter_namespaces(conf: Confinement) -> None:
    """unshare network, mount and PID namespaces (as root), or inside a user namespace (not root)."""
    root = conf.real_root
    base = 0 if root else CLONE_NEWUSER
    uid, gid = os.getuid(), os.getgid()
    # a fresh IPC namespace too: System V shared memory and semaphores made by one run are not there for the
    # next, nor for a run of another warm parent in the same bubblewrap (pool.WarmParent's siblings)
    for extra in (CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC, CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID,
                  CLONE_NEWNET | CLONE_NEWNS, CLONE_NEWNET):
        try:
            unshare(base | extra)
        except OSError:
            continue
        flags = base | extra
        break
    else:
        return
    if not root:
        _map_user(uid, gid)
        conf.user_namespace = True
        conf.facts.append("user namespace")
    if flags & CLONE_NEWNET:
        conf.facts.append("no network")
    conf.private_fs = bool(flags & CLONE_NEWNS)
    conf.pid_namespace = bool(flags & CLONE_NEWPID)


def _map_user(uid: int, gid: int) -> None:
    for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
        try:
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
        except OSError:
            pass


def private_filesystem(conf: Confinement, hide: list[str], keep: list[str], solutions: dict[str, bytes],
                       files: dict[str, bytes], owner: int) -> None:
    """In a fresh mount namespace: cover ``hide`` (showing ``keep`` below it again), give a private /tmp with
    scratch and staged solutions."""
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    hidden = 0
    for target in hide:
        if os.path.isdir(target):
            _cover(target, keep, "mode=0755,size=64k")
            hidden += 1
    for target in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock", "/dev/mqueue"):  # the world-writable places
        if os.path.isdir(target):
            try:
                _cover(target, keep, "mode=0755")
            except OSError:
                if target == "/tmp":
                    raise
    conf.scratch = "/tmp/scratch"
    conf.course_root = "/tmp/course"
    _stage(conf, solutions, files, owner)
    conf.facts.append("private /tmp" + (", course hidden" if hidden else ""))


def _cover(target: str, keep: list[str], options: str) -> None:
    """An empty tmpfs over ``target``, with the kept folders below it (a virtualenv in the checkout or
    under /tmp, the autograder package) bound again read-only on top."""
    keeps = [k for k in keep if k != target and k.startswith(target.rstrip("/") + "/") and os.path.isdir(k)]
    fds = [(k, os.open(k, os.O_PATH | os.O_DIRECTORY)) for k in keeps]
    try:
        mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, options)
        for k, fd in fds:
            os.makedirs(k, exist_ok=True)
            mount(f"/proc/self/fd/{fd}", k, None, MS_BIND | MS_REC)
            try:
                mount(None, k, None, MS_BIND | MS_REMOUNT | MS_RDONLY)
            except OSError:
                pass
    finally:
        for _, fd in fds:
            os.close(fd)


def host_scratch(conf: Confinement, base: str, solutions: dict[str, bytes], files: dict[str, bytes],
                 owner: int) -> None:
    """Without a mount namespace: a fresh folder on the host (the caller removes it)."""
    conf.scratch = os.path.join(base, "scratch")
    conf.course_root = os.path.join(base, "course")
    _stage(conf, solutions, files, owner)


def _stage(conf: Confinement, solutions: dict[str, bytes], files: dict[str, bytes], owner: int) -> None:
    sol = os.path.join(conf.course_root, "solutions")
    os.makedirs(sol, mode=0o755, exist_ok=True)
    os.chmod(conf.course_root, 0o755)
    for name, data in solutions.items():
        path = os.path.join(sol, os.path.basename(name))
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o644)
    os.makedirs(conf.scratch, mode=0o700, exist_ok=True)
    for name, data in files.items():
        rel = os.path.normpath(name)
        if rel.startswith(("..", "/")):
            continue
        path = os.path.join(conf.scratch, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    if owner >= 0:
        for dirpath, dirnames, filenames in os.walk(conf.scratch):
            for name in [dirpath] + [os.path.join(dirpath, n) for n in dirnames + filenames]:
                os.lchown(name, owner, owner)


def mount_proc(conf: Confinement) -> None:
    if conf.pid_namespace and conf.private_fs:
        try:
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        except OSError:
            pass


def limit(conf: Confinement, limits: Limits) -> None:
    """The run's resource limits (always), then nobody when root, then no new privileges."""
    def setl(which: int, value: int, hard: int | None = None) -> None:
        try:
            resource.setrlimit(which, (value, value if hard is None else hard))
        except (ValueError, OSError):
            pass

    setl(resource.RLIMIT_CORE, 0)
    # on top of what the warm interpreter already maps: a CUDA build of torch maps 3 GB of address space
    # before any student code runs (the CPU build under 1 GB), and a fixed cap would fail every import
    setl(resource.RLIMIT_AS, mapped_bytes() + limits.memory_bytes)
    setl(resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 5)
    setl(resource.RLIMIT_FSIZE, limits.file_bytes)
    setl(resource.RLIMIT_NPROC, limits.processes)
    if conf.real_root and not conf.private_fs and not others_can_read(python_paths()):
        conf.facts.append("root (nobody could not read the interpreter's files)")
    elif conf.real_root:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            conf.facts.append("user nobody")
        except OSError:
            pass
    elif conf.user_namespace and drop_capabilities():
        # the student's code keeps the instructor's uid outside (nothing else is mapped), but with no
        # capability left it cannot undo the mounts that hide the instructor's files
        conf.facts.append("no capabilities")
    try:
        prctl(PR_SET_NO_NEW_PRIVS, 1)
    except OSError:
        pass
    conf.facts.append("rlimits (memory, CPU, processes, file size)")


def mapped_bytes() -> int:
    """This process's address space now (VmSize), 0 when /proc cannot tell."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


_CAP_VERSION_3 = 0x20080522
PR_CAPBSET_DROP = 24


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def drop_capabilities() -> bool:
    """Empty the bounding, effective, permitted and inheritable capability sets of this process."""
    try:
        last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    except (OSError, ValueError):
        last = 40
    for cap in range(last + 1):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except OSError:
            pass
    header, data = _CapHeader(_CAP_VERSION_3, 0), (_CapData * 2)()
    return _libc.capset(ctypes.byref(header), data) == 0


def others_can_read(dirs: list[str]) -> bool:
    """Every folder on the way to ``dirs`` can be searched and read by any user."""
    for d in dirs:
        p = Path(d)
        for a in [p, *p.parents]:
            try:
                mode = a.stat().st_mode
            except OSError:
                return False
            if not mode & stat.S_IXOTH or (a == p and not mode & stat.S_IROTH):
                return False
    return True


def stop_leftovers() -> None:
    """Kill and reap, from the cell runner, every other process of the run once a cell was interrupted (what
    earlier cells left running too: the notebook goes on without them). A fork bomb's children, spinning,
    would otherwise take the cores from the rest of this notebook and from the student graded beside it
    until the run ended (a CI run once timed out an honest student's plot cell that way). As PID 1 of its own
    PID namespace the runner kills everyone else in it (kill(-1) reaches no process outside the namespace);
    without one, the members of its process group."""
    me = os.getpid()
    if me == 1:
        try:
            os.kill(-1, signal.SIGKILL)  # one call reaches them all, also those forked meanwhile
        except OSError:  # nobody left to signal
            pass
        _reap_children()
        return
    for _ in range(20):  # a fork bomb may still be forking while a pass kills
        group = _process_group(me)
        if not group:
            return
        for pid in group:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap_children()


def _process_group(pgid: int) -> list[int]:
    """The other live processes of a process group (zombies are dead already: their parent reaps them)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == pgid:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()  # after "(comm)", which may hold spaces
        except OSError:
            continue
        if fields[0] != b"Z" and int(fields[2]) == pgid:
            found.append(int(name))
    return found


def _reap_children(wait: float = 2.0) -> None:
    """Reap the killed children (and, as PID 1, the orphans it inherited), for up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > deadline:
                return
            time.sleep(0.002)


def die_with_parent() -> None:
    try:
        prctl(PR_SET_PDEATHSIG, 9)
    except OSError:
        pass


# ------------------------------------------------------------------- around the warm parent

def interpreter() -> str:
    """This interpreter's path with every symlinked folder on the way resolved, the file itself not.

    A virtualenv reached through a link (pyenv-virtualenv's ``~/.pyenv/versions/NAME``) is started
    at its real place, so that every path it imports from is a real path the sandbox can show; the
    file stays unresolved because a venv's ``python`` is a link to the base interpreter, and Python
    finds its venv (``pyvenv.cfg``) from the path it was started with.
    """
    return os.path.join(os.path.realpath(os.path.dirname(sys.executable)), os.path.basename(sys.executable))


def user_base() -> str | None:
    """The real ``pip install --user`` base when its site-packages is in use, else None."""
    if not site.ENABLE_USER_SITE:
        return None
    user_site = site.getusersitepackages()
    if not (user_site and os.path.isdir(user_site) and user_site in sys.path):
        return None
    return os.path.realpath(site.getuserbase())


def loaded_library_dirs() -> list[str]:
    """Folders of the shared libraries this process has loaded, outside the system's own folders."""
    dirs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split(None, 5)[-1].strip() if line.count(" ") >= 5 else ""
                if path.startswith("/") and ".so" in os.path.basename(path):
                    dirs.add(os.path.dirname(os.path.realpath(path)))
    except OSError:
        return []
    system = ("/usr/", "/lib/", "/lib64/", "/lib32/", "/libx32/", "/etc/", "/proc/", "/dev/")
    return sorted(d for d in dirs if not d.startswith(system))


def python_paths() -> list[str]:
    """Directories the interpreter imports from, resolved: its prefixes, its site folders (the user's
    ``pip --user`` one too), other ``sys.path`` entries and the autograder package; never the course
    checkout, the current folder, a home folder or ``/`` as a whole."""
    package = str(Path(autograder.__file__).resolve().parent)
    course = str(Path(package).parent)  # an editable checkout: it also holds the solutions, never bind it
    out = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    out.add(os.path.dirname(os.path.realpath(sys.executable)))  # the base interpreter's bin folder
    out.add(os.path.dirname(interpreter()))  # a virtualenv's bin folder
    prefixes = tuple(p.rstrip("/") + "/" for p in out)
    entries = list(sys.path[1:]) + list(site.getsitepackages())
    if sys.path and os.path.realpath(sys.path[0] or ".").startswith(prefixes):
        entries.append(sys.path[0])  # the script's folder only when installed in a prefix (a venv's bin)
    if user_base():
        entries.append(site.getusersitepackages())
    entries += loaded_library_dirs()  # e.g. a libpython the interpreter links from outside its prefix
    unsafe = {"/", os.path.realpath(os.path.expanduser("~")), os.path.realpath(os.getcwd()),
              *(str(a) for a in Path(course).parents)}
    for e in entries:
        if not e or not os.path.isdir(e):
            continue
        r = os.path.realpath(e)
        if r in unsafe or r == course or r.startswith(course + "/"):
            continue
        out.add(r)
    keep = {p for p in out if p != "/" and not p.startswith(("/usr/", "/proc/")) and p != "/usr"
            and p != course and not p.startswith(course + "/solutions")}
    keep.add(package)
    return sorted(p for p in keep if not any(p != q and p.startswith(q.rstrip("/") + "/") for q in keep))


ETC_FILES = ["ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf", "localtime",
             "hosts", "ssl", "fonts", "matplotlibrc", "alternatives", "mime.types"]


def bwrap_command(argv: list[str], *, bwrap: str = BWRAP) -> list[str]:
    """bubblewrap around ``argv``: no network, read-only system and Python, private /tmp, nothing else."""
    cmd = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try",
           "--die-with-parent", "--new-session"]
    if os.geteuid() == 0:
        # real root, no user namespace: the warm parent keeps the capabilities it needs to give
        # each child its own namespaces and then drop it to nobody (a user namespace made by
        # bubblewrap would map uid 0 only, and nobody would not exist in it)
        cmd += ["--cap-add", "ALL"]
    else:
        cmd += ["--unshare-user-try"]
    cmd += ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "lib", "lib32", "lib64", "libx32", "sbin"):
        p = "/" + name
        if os.path.islink(p):
            cmd += ["--symlink", os.readlink(p), p]
        elif os.path.isdir(p):
            cmd += ["--ro-bind", p, p]
    for name in ETC_FILES:
        cmd += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    # private /tmp first, so that a virtualenv living under /tmp is bound on top of it, not hidden by it
    cmd += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/var/tmp", "--dir", "/dev/shm"]
    binds = python_paths()
    parents = sorted({str(a) for p in binds for a in Path(p).parents
                      if str(a) not in ("/", "/tmp", "/var", "/var/tmp")}, key=len)
    for d in parents:  # bubblewrap would make them 0700, and nobody could not reach the packages
        cmd += ["--perms", "0755", "--dir", d]
    for p in binds:
        cmd += ["--ro-bind", p, p]
    cmd += ["--chdir", "/tmp", "--"]
    return cmd + argv


def bwrap_available(bwrap: str = BWRAP) -> bool:
    """bubblewrap is installed and can create its namespaces here."""
    if not os.path.exists(bwrap):
        return False
    try:
        proc = subprocess.run(bwrap_command(["/usr/bin/true"], bwrap=bwrap), capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


SYSTEM_DIRS = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev", "proc", "sys", "tmp",
               "var", "run", "boot", "lost+found"}


def default_hide() -> list[str]:
    """What a child must not see when there is no bubblewrap: the course checkout, home folders and
    every other top-level folder that is not the operating system's (the interpreter, the
    virtualenv and the autograder package are shown again, read-only)."""
    out = [str(paths.root())]
    try:
        out += sorted(f"/{name}" for name in os.listdir("/") if name not in SYSTEM_DIRS
                      and os.path.isdir(f"/{name}") and not os.path.islink(f"/{name}"))
    except OSError:
        out += ["/root", "/home"]
    return [p for p in dict.fromkeys(out) if os.path.isdir(p)]


def which_bwrap() -> str | None:
    return BWRAP if os.path.exists(BWRAP) else shutil.which("bwrap")
