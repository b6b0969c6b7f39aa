"""A term on JupyterHub: the Hub's settings for this course, the students' image, and a test term.

``python -m autograder hub`` starts JupyterHub as root, so that each user's server runs as that Unix user
(JupyterHub's local process spawner):

* an instructor's server runs the course's own installation with the course folder as its root:
  formgrader, the course list, the assignment list, and a terminal where ``python -m autograder grade`` runs;
* a student's server runs the students' image (the course installed from its wheel, never ``solutions/``)
  in the student's home: the assignment list (fetch, submit, fetch feedback) and the Validate button, without
  formgrader, the course list or the create-assignment toolbar;
* everyone logs in with their Unix password (PAM), or, in a test term, with one shared password;
* assignments and submissions travel through nbgrader's exchange, a folder every user can write (mode 1777).

``python -m autograder hub --test`` makes what a test term needs and starts it: the Unix users (homes
only their owner can open), a copy of the course for the instructor, an exchange and a students' image
built in seconds from this installation. docs/grading.md, "A term on JupyterHub", has both ways.
"""
from __future__ import annotations

import functools
import grp
import importlib.metadata
import json
import os
import pwd
import secrets
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import paths
from .nbio import write_atomic

COURSE_ID = "transformer-math"
PROXY = "configurable-http-proxy"  # JupyterHub's proxy, from npm: tools/system-packages.sh installs it
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
# nbgrader's parts for the staff, which a student's server runs without (nbgrader's own table of which
# extension goes to whom, "Using nbgrader with JupyterHub")
STAFF_SERVER_EXTENSIONS = ("nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list")
STAFF_LAB_EXTENSIONS = ("@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:course-list",
                        "@jupyter/nbgrader:create-assignment")
# The file in a students' image that turns those off; named to sort after nbgrader's own nbgrader.json,
# which turns every nbgrader server extension on (a later file of jupyter_server_config.d wins).
STUDENTS_SERVER_CONFIG = "zz-transformer-math-students.json"
# JupyterLab's settings in a students' image, as defaults a student may still change (JupyterLab reads them
# from <prefix>/share/jupyter/lab/settings/overrides.json): no question about fetching "official Jupyter news"
# from the internet at each new student's first start, and no notice of JupyterLab releases, which a student
# cannot install into the image. The plugin and values are those of JupyterLab's schema (apputils-extension,
# notification.json; its announcements plugin reads them).
STUDENTS_LAB_SETTINGS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false",
                                                                         "checkForUpdates": False}}
# What a build of the course as root leaves in its folder (`pip wheel .`, `pip install .`): root's files there
# stop the owner's next build, so the Hub gives them back (give_back_builds).
BUILD_LEFTOVERS = ("build", "dist", "*.egg-info")
# What a students' image must import, and whether it reaches the course's solutions (it must not).
IMAGE_PROBE = ("import json, jupyterhub.singleuser, jupyterlab, nbgrader, autograder\n"
               "from autograder import paths, reference\n"
               "print(json.dumps({'autograder': autograder.__file__, 'solutions': str(paths.solutions_dir()),\n"
               "                  'reachable': reference.available('01_tokens_and_ids')}))")


class HubError(Exception):
    """A term that cannot start, with what to do about it."""


@dataclass(frozen=True)
class Term:
    """Everything the Hub's configuration needs; written as JSON into the generated jupyterhub_config.py."""

    course: Path  # the instructors' course folder: nbgrader_config.py, source/, solutions/, the gradebook
    exchange: Path  # nbgrader's exchange (mode 1777)
    image: Path  # the students' image: a Python prefix (a virtualenv) with the course from its wheel
    staff_python: Path  # the interpreter instructors' servers run: the course's own installation
    state: Path  # the Hub's own files: its database, cookie secret, the proxy's pid, the generated config
    instructors: tuple[str, ...]
    students: tuple[str, ...] = ()  # allowed by name, and/or ...
    students_group: str = ""  # ... every member of this Unix group
    ip: str = "127.0.0.1"
    port: int = 8000
    password: str = field(default="", repr=False)  # a test term's shared password; empty: PAM
    course_id: str = COURSE_ID

    def to_json(self) -> str:
        return json.dumps({k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items()}, indent=1)

    @classmethod
    def from_json(cls, text: str) -> "Term":
        data = json.loads(text)
        for key in ("course", "exchange", "image", "staff_python", "state"):
            data[key] = Path(data[key])
        for key in ("instructors", "students"):
            data[key] = tuple(data[key])
        return cls(**data)

    def is_instructor(self, user: str) -> bool:
        return user in self.instructors


# --------------------------------------------------------------------------- the Hub's configuration

def configure(c, term: Term, *, hub_port: int, proxy_api_port: int) -> None:
    """Set JupyterHub's configuration ``c`` for ``term``."""
    state = term.state
    c.JupyterHub.bind_url = f"http://{term.ip}:{term.port}/"
    c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{hub_port}"
    c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{proxy_api_port}"
    c.ConfigurableHTTPProxy.command = [proxy_command()]
    c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")
    c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
    c.JupyterHub.cookie_secret_file = str(state / "cookie_secret")

    c.JupyterHub.spawner_class = _spawner_class()
    c.Spawner.default_url = "/lab"
    # A server's first start imports JupyterLab and nbgrader: seconds, more on a busy machine.
    c.Spawner.start_timeout = 120
    c.Spawner.http_timeout = 120
    c.Spawner.pre_spawn_hook = functools.partial(prepare_server, term)

    c.Authenticator.allowed_users = set(term.instructors) | set(term.students)
    if term.password:
        c.JupyterHub.authenticator_class = "shared-password"
        c.SharedPasswordAuthenticator.user_password = term.password
    else:
        c.JupyterHub.authenticator_class = "pam"
        if term.students_group:
            c.PAMAuthenticator.allowed_groups = {term.students_group}


def prepare_server(term: Term, spawner) -> None:
    """JupyterHub's pre-spawn hook: which installation, folder and settings this user's server gets."""
    user = spawner.user.name
    if term.is_instructor(user):
        python = term.staff_python
        spawner.notebook_dir = str(term.course)
        extra = {"AUTOGRADER_ROOT": str(term.course),  # `grade` reads this course's solutions
                 # the course's nbgrader_config.py reads these: the same course and exchange as the students'
                 "NBGRADER_EXCHANGE": str(term.exchange), "AUTOGRADER_COURSE_ID": term.course_id}
    else:
        python = term.image / "bin" / "python"
        extra = {}
    # A terminal's shell is not a login shell: /etc/profile would put back Debian's PATH without the
    # installation's bin (no python, nbgrader or jupyter of the course's there).
    spawner.cmd = [str(python), "-m", "jupyterhub.singleuser",
                   "--ServerApp.terminado_settings=shell_command=/bin/bash"]
    # The Hub passes on none of its own environment (JupyterHub's env_keep): say everything a server needs.
    spawner.environment = {"PATH": f"{python.parent}:{SYSTEM_PATH}", "LANG": "C.UTF-8", **extra}
    for warning in open_homes([user]):
        spawner.log.warning(warning)


def _spawner_class():
    """JupyterHub's local process spawner, with each server working in its root folder (the course for an
    instructor: formgrader reads the course's nbgrader_config.py from there, terminals open there), not
    in the home, where JupyterHub's own puts it."""
    from jupyterhub.spawner import LocalProcessSpawner  # late: only the Hub itself needs JupyterHub

    class ServerInItsFolder(LocalProcessSpawner):
        def make_preexec_fn(self, name):
            become_user = super().make_preexec_fn(name)
            folder = self.format_string(self.notebook_dir) if self.notebook_dir else ""

            def preexec():
                become_user()
                if folder:
                    os.chdir(folder)
            return preexec

    return ServerInItsFolder


def open_homes(users) -> list[str]:
    """A warning, with the fix, for each user whose home other users can enter or list."""
    found = []
    for user in users:
        try:
            home = Path(pwd.getpwnam(user).pw_dir)
            mode = home.stat().st_mode
        except (KeyError, OSError):
            continue
        if mode & 0o007:
            found.append(f"warning: {user}'s home {home} is open to other users (mode {stat.S_IMODE(mode):o}): "
                         f"any student can read the work in it. Fix: chmod 700 {shlex.quote(str(home))}")
    return found


def proxy_command() -> str:
    found = shutil.which(PROXY)
    if not found:
        raise HubError(f"{PROXY} (JupyterHub's proxy, a Node.js program) is not installed: install it as root "
                       "with `bash tools/system-packages.sh` (it pins the version), or "
                       f"`npm install -g {PROXY}`")
    return found


# --------------------------------------------------------------------------- the students' image

def configure_image(image: Path, *, course_id: str, exchange: Path) -> None:
    """The Jupyter settings of a students' image: nbgrader's student parts only, the course's exchange, and
    JupyterLab's settings for students (STUDENTS_LAB_SETTINGS)."""
    etc = image / "etc" / "jupyter"
    lab_settings = image / "share" / "jupyter" / "lab" / "settings"
    if not lab_settings.resolve().is_relative_to(image.resolve()):
        raise HubError(f"{lab_settings} leads out of the students' image (to {lab_settings.resolve()}): the "
                       "students' JupyterLab settings would change another installation's. Make share/jupyter/lab "
                       "a folder of the image (pip install jupyterlab into it)")
    overrides = lab_settings / "overrides.json"
    try:
        lab = json.loads(overrides.read_text()) if overrides.exists() else {}
    except ValueError as exc:
        raise HubError(f"{overrides} is not JSON ({exc}): fix or remove it, then start again") from None
    for plugin, values in STUDENTS_LAB_SETTINGS.items():
        lab.setdefault(plugin, {}).update(values)
    write_atomic(etc / "jupyter_server_config.d" / STUDENTS_SERVER_CONFIG, json.dumps(
        {"ServerApp": {"jpserver_extensions": {name: False for name in STAFF_SERVER_EXTENSIONS}}}, indent=1) + "\n")
    page = etc / "labconfig" / "page_config.json"
    settings = json.loads(page.read_text()) if page.exists() else {}
    settings.setdefault("disabledExtensions", {}).update({name: True for name in STAFF_LAB_EXTENSIONS})
    write_atomic(page, json.dumps(settings, indent=1) + "\n")
    # Students fetch and submit without naming the course (nbgrader reads this from the image's prefix)
    write_atomic(etc / "nbgrader_config.py",
                 "# Written by `python -m autograder hub`: the course students fetch from and submit to.\n"
                 "c = get_config()  # noqa: F821\n"
                 f"c.CourseDirectory.course_id = {course_id!r}\n"
                 f"c.Exchange.root = {str(exchange)!r}\n")
    write_atomic(overrides, json.dumps(lab, indent=1) + "\n")
    for written in (etc / "jupyter_server_config.d" / STUDENTS_SERVER_CONFIG, page, etc / "nbgrader_config.py",
                    overrides):
        written.chmod(0o644)  # every student's server reads them, whatever root's umask
        written.parent.chmod(0o755)


def check_image(image: Path) -> dict:
    """What the students' image holds, tried as another user (``nobody``); HubError when students could
    not run it or it reaches the course's solutions."""
    python = image / "bin" / "python"
    if not python.exists():
        raise HubError(f"{image} is not a students' image: it has no bin/python. Build one as docs/grading.md "
                       "says ('The students' environment'), or start a test term with --test")
    proc = _as_nobody([str(python), "-c", IMAGE_PROBE])
    if proc.returncode != 0:
        raise HubError(f"the students' image {image} does not run for other users (tried as nobody): "
                       f"{proc.stderr.strip()[-1500:]}")
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    if found["reachable"]:
        raise HubError(f"the students' image {image} reaches the course's solutions ({found['solutions']}): "
                       "install the course into it from its wheel, never from a clone (docs/grading.md, "
                       "'The students' environment')")
    return found


def build_test_image(dest: Path) -> Path:
    """A students' image made in seconds from this installation: a virtualenv of a Python every user can
    run, the course from its wheel (no solutions/), and this installation's other packages read from its
    site-packages (a plain path: its own .pth files, among them the checkout's editable install, are not
    read). A real term installs the packages into the image instead (docs/grading.md)."""
    base = python_for_everyone(os.path.realpath(getattr(sys, "_base_executable", sys.executable)))
    subprocess.run([base, "-m", "venv", "--without-pip", "--clear", str(dest)], check=True, capture_output=True)
    python = dest / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                        "--target", str(site), str(wheel)], check=True, capture_output=True, timeout=300)
    shared = list(dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]))
    (site / "zz_course_packages.pth").write_text("\n".join(shared) + "\n")
    _link_jupyter_data(dest / "share" / "jupyter")
    server_config = dest / "etc" / "jupyter" / "jupyter_server_config.d"
    server_config.mkdir(parents=True, exist_ok=True)
    for enabled in (Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d").glob("*.json"):
        shutil.copy2(enabled, server_config / enabled.name)  # which server extensions are on, as installed
    _console_scripts(dest / "bin", python, shared)
    for path in [dest, *dest.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | stat.S_IRGRP | stat.S_IROTH
                       | (stat.S_IXGRP | stat.S_IXOTH if path.is_dir() or path.stat().st_mode & stat.S_IXUSR else 0))
    return dest


def build_wheel(out: Path) -> Path:
    """A wheel of the course built from a copy of its sources in ``out``: building in place, as root, would
    leave root's build/ and *.egg-info in the course (see give_back_builds)."""
    src = out / "src"
    shutil.copytree(paths.root() / "autograder", src / "autograder",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(paths.root() / name, src / name)
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise HubError(f"building the course's wheel failed: {proc.stderr.strip()[-1500:]}")
    return next(out.glob("*.whl"))


def _link_jupyter_data(dest: Path, source: Path | None = None) -> None:
    """JupyterLab's application, the lab extensions, nbconvert's templates and the kernel spec, as installed,
    linked; JupyterLab's settings folder (lab/settings) a copy of the image's own, where configure_image writes
    the students' settings without changing the installation's."""
    source = source or Path(sys.prefix) / "share" / "jupyter"
    dest.mkdir(parents=True, exist_ok=True)
    for entry in source.iterdir():
        target = dest / entry.name
        if entry.name == "lab" and entry.is_dir():
            target.mkdir(exist_ok=True)
            for part in entry.iterdir():
                if part.name == "settings":
                    shutil.copytree(part.resolve(), target / part.name, dirs_exist_ok=True)
                elif not (target / part.name).exists():
                    (target / part.name).symlink_to(part.resolve())
        elif not target.exists():
            target.symlink_to(entry.resolve())


def _console_scripts(bin_dir: Path, python: Path, shared: list[str]) -> None:
    """The commands of the shared packages (jupyter, nbgrader, ...) in the image's bin, run by its Python,
    as pip would have written them: a student's terminal finds them there."""
    for dist in importlib.metadata.distributions(path=shared):
        for ep in dist.entry_points.select(group="console_scripts"):
            script = bin_dir / ep.name
            if script.exists() or "/" in ep.name:
                continue
            head = ep.attr.split(".")[0]
            script.write_text(f"#!{python}\nimport sys\nfrom {ep.module} import {head}\nsys.exit({ep.attr}())\n")
            script.chmod(0o755)


# --------------------------------------------------------------------------- users and interpreters

def _tool(name: str) -> str:
    """A system command, also where root's tools live when PATH leaves them out (a login-less root shell)."""
    return shutil.which(name, path=f"{os.environ.get('PATH', '')}:/usr/sbin:/sbin") or name


def _as_nobody(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([_tool("runuser"), "-u", "nobody", "--", "env", "-i", f"PATH={SYSTEM_PATH}", "LANG=C.UTF-8",
                           *cmd], capture_output=True, text=True, cwd="/", timeout=300)


def runs_for_everyone(python: str) -> bool:
    return _as_nobody([python, "-c", "import sys"]).returncode == 0


def everyones_python() -> Path:
    """This interpreter, which instructors' servers run: HubError when other users cannot run it."""
    if not runs_for_everyone(sys.executable):
        raise HubError(f"other users cannot run this Python ({sys.executable}: inside a folder they cannot open, "
                       "such as a pyenv build in root's home), and instructors' servers run it. Install the "
                       "course with the system's Python, in a folder everyone can read: /usr/bin/python3 -m venv "
                       "/opt/transformer-math/venv && /opt/transformer-math/venv/bin/pip install -r requirements.txt,"
                       " and start the Hub with that venv's python")
    return Path(sys.executable)


def python_for_everyone(preferred: str) -> str:
    """``preferred``, or the system's interpreter of the same version, whichever other users can run."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in dict.fromkeys([preferred, f"/usr/bin/python{version}"]):
        if os.path.exists(candidate) and runs_for_everyone(candidate):
            return candidate
    raise HubError(f"no Python {version} that other users can run: {preferred} is inside a folder they cannot "
                   f"open (a pyenv build in root's home, say). Install the course with the system's Python: "
                   f"/usr/bin/python3 -m venv .venv && .venv/bin/pip install -r requirements.txt")


def ensure_account(name: str) -> Path:
    """A Unix user ``name`` (made when missing, with a home only they can open); their home."""
    try:
        return Path(pwd.getpwnam(name).pw_dir)
    except KeyError:
        pass
    subprocess.run([_tool("useradd"), "--create-home", "--shell", "/bin/bash", "--key", "HOME_MODE=0700", name],
                   check=True, capture_output=True)
    home = Path(pwd.getpwnam(name).pw_dir)
    home.chmod(0o700)  # whatever login.defs says: students must not read each other's work
    return home


def give_back_builds(course: Path, out=print) -> list[Path]:
    """Build leftovers (BUILD_LEFTOVERS) holding root's files in a course someone else owns, given to the course
    folder's owner and group: what ``sudo pip wheel .`` or ``sudo pip install .`` run in the course leaves.
    Root's build/ stops the owner's next ``pip wheel .`` there. The leftovers it gave back."""
    owner = course.stat()
    if owner.st_uid == 0:
        return []
    given = []
    for pattern in BUILD_LEFTOVERS:
        for found in sorted(course.glob(pattern)):
            if found.is_symlink() or not any(p.lstat().st_uid == 0 for p in [found, *found.rglob("*")]):
                continue
            subprocess.run([_tool("chown"), "-R", f"{owner.st_uid}:{owner.st_gid}", str(found)], check=True)
            out(f"{found} held root's files (a build run as root in the course): given to "
                f"{_name(owner.st_uid)}, who owns the course")
            given.append(found)
    return given


def _name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def require_root(what: str) -> None:
    if os.geteuid() != 0:
        raise HubError(f"{what} runs as root: JupyterHub starts each user's server as that Unix user. "
                       f"Run it with sudo, e.g. `sudo {shlex.quote(sys.executable)} -m autograder hub ...`")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------- a test term, a real term

TEST_INSTRUCTOR = "tm-instructor"
TEST_STUDENTS = ("tm-student1", "tm-student2")


def prepare_test_term(folder: Path, *, instructor: str = TEST_INSTRUCTOR, students: tuple[str, ...] = TEST_STUDENTS,
                      port: int = 8000, ip: str = "127.0.0.1", password: str = "", out=print) -> Term:
    """Everything a test term needs under ``folder``: the users, the instructor's copy of the course, an
    exchange, a students' image and the Hub's state. Users that exist are kept as they are."""
    require_root("a test term")
    proxy_command()
    staff_python = everyones_python()
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)
    for name in (instructor, *students):
        ensure_account(name)
    owner = pwd.getpwnam(instructor)

    course = folder / "course"
    if not (course / "nbgrader_config.py").exists():
        course.mkdir(exist_ok=True)
        for name in ("solutions", "source"):
            shutil.copytree(paths.root() / name, course / name, symlinks=True, dirs_exist_ok=True)
        shutil.copy2(paths.root() / "nbgrader_config.py", course)
        subprocess.run(["chown", "-R", f"{owner.pw_uid}:{owner.pw_gid}", str(course)], check=True)
        course.chmod(0o700)
    give_back_builds(course, out=out)
    exchange = folder / "exchange"
    exchange.mkdir(exist_ok=True)
    exchange.chmod(0o1777)  # nbgrader's exchange: everyone writes, nobody removes another's files
    state = folder / "hub"
    state.mkdir(exist_ok=True)
    state.chmod(0o700)
    image = folder / "students-image"
    out(f"building the students' image in {image} ...")  # each start: the course's code may have changed
    build_test_image(image)
    configure_image(image, course_id=COURSE_ID, exchange=exchange)
    check_image(image)
    return Term(course=course, exchange=exchange, image=image, staff_python=staff_python, state=state,
                instructors=(instructor,), students=tuple(students), ip=ip, port=port,
                password=password or secrets.token_urlsafe(9))


def prepare_term(*, course: Path, instructors: tuple[str, ...], image: Path, students: tuple[str, ...] = (),
                 students_group: str = "", course_id: str = COURSE_ID, exchange: Path = Path("/srv/nbgrader/exchange"),
              state: Path = Path("/srv/jupyterhub"), ip: str = "127.0.0.1", port: int = 8000, out=print) -> Term:
    """A term for the server's own accounts (PAM): checks what would break or expose students' work."""
    require_root("the Hub")
    proxy_command()
    course = course.resolve()
    if not (course / "nbgrader_config.py").exists():
        raise HubError(f"{course} has no nbgrader_config.py: --course names the course folder (this repository, "
                       "or your copy of it)")
    if not students and not students_group:
        raise HubError("name who may log in as a student: --students alice,bob or --students-group GROUP")
    missing = [u for u in (*instructors, *students) if not _exists(u)]
    if missing:
        raise HubError(f"no Unix user {', '.join(missing)} on this machine: create them first "
                       f"(`sudo useradd --create-home --key HOME_MODE=0700 NAME`)")
    if students_group:
        try:
            members = grp.getgrnam(students_group).gr_mem
        except KeyError:
            raise HubError(f"no Unix group {students_group}: create it with `sudo groupadd {students_group}` "
                           f"and add each student with `sudo usermod -aG {students_group} NAME`") from None
    else:
        members = []
    if not exchange.is_dir():
        raise HubError(f"the exchange {exchange} does not exist: "
                       f"`sudo mkdir -p {exchange} && sudo chmod 1777 {exchange}`")
    if stat.S_IMODE(exchange.stat().st_mode) != 0o1777:
        raise HubError(f"the exchange {exchange} must be mode 1777 (everyone writes, nobody removes another's "
                       f"files): `sudo chmod 1777 {exchange}`")
    staff_python = everyones_python()
    give_back_builds(course, out=out)
    check_image(image)  # before writing anything into it: it must be a students' image
    configure_image(image, course_id=course_id, exchange=exchange)
    for warning in open_homes([*students, *members]):
        out(warning)
    from .grade.classrun.doctor import exposures  # late: it pulls in the grading sandbox
    for found in exposures(course=course, solutions=course / "solutions",
                           gradebook=course / "gradebook.db" if (course / "gradebook.db").exists() else None,
                           submitted=course / "submitted" if (course / "submitted").is_dir() else None):
        out(f"warning: {found}")
    for warning in checkout_exposures(course, installed_checkout()):
        out(warning)
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o700)
    return Term(course=course, exchange=exchange, image=image, staff_python=staff_python, state=state,
                instructors=instructors, students=students, students_group=students_group, ip=ip, port=port,
                course_id=course_id)


def installed_checkout() -> Path | None:
    """The checkout this installation imports the course's code from (``pip install -e .`` ties it to one), when
    it holds solutions/; None for an installation from the wheel."""
    checkout = Path(paths.__file__).resolve().parent.parent
    return checkout if (checkout / "solutions").is_dir() else None


def checkout_exposures(course: Path, checkout: Path | None) -> list[str]:
    """A warning, with the fix, for each part of ``checkout`` other users can read, when the instructors'
    installation imports from it and it is not the course (whose own are checked with the rest of it)."""
    if checkout is None or checkout.resolve() == course.resolve():
        return []
    from .grade.classrun.doctor import exposures  # late: it pulls in the grading sandbox
    return [f"warning: the course's installation imports from {checkout}; {found}"
            for found in exposures(course=checkout, solutions=checkout / "solutions")]


def _exists(user: str) -> bool:
    try:
        pwd.getpwnam(user)
        return True
    except KeyError:
        return False


CONFIG = '''# Written by `python -m autograder hub` for this start of the Hub: change its options, not this file.
from autograder.hub import Term, configure

configure(c, Term.from_json({term!r}), hub_port={hub_port}, proxy_api_port={proxy_api_port})  # noqa: F821
'''


def write_config(term: Term) -> Path:
    config = term.state / "jupyterhub_config.py"
    fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # a test term's password is in it
    with os.fdopen(fd, "w") as f:
        f.write(CONFIG.format(term=term.to_json(), hub_port=free_port(), proxy_api_port=free_port()))
    return config


def start(term: Term, extra: list[str] = ()) -> None:
    """Replace this process with JupyterHub serving ``term`` (Ctrl-C stops it and every user's server)."""
    config = write_config(term)
    os.chdir(term.state)
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", "jupyterhub", "-f", str(config), *extra])
