"""Find the submissions of a class in nbgrader's layout and name what is wrong with the folder itself.

``SUBMISSIONS/<student_id>/<assignment_id>/<assignment_id>.ipynb``; the assignment ids are the
stems of ``solutions/*.ipynb``. A folder with a single, misnamed notebook is still graded.
"""
from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

IGNORED = (".", "_")  # hidden folders and files (.ipynb_checkpoints, .DS_Store, __MACOSX)

# What travels with a submission (see :func:`files_beside`). A student saves small data files beside a
# notebook; anything bigger is a mistake or an attack on the grader's memory and disk.
# A notebook with plots is a few MB, but a loop that printed at every step reaches tens of MB honestly, and
# outputs are never graded (the cells run again): 128 MiB reads in about a second and 1 GB of memory at most.
MAX_NOTEBOOK_BYTES = 128 * 2**20
MAX_FILE_BYTES = 10 * 2**20  # one other file
MAX_FILES_BYTES = 20 * 2**20  # all other files of a folder together
MAX_FILES = 200  # a folder of a million empty files costs the grader time, not the student
MAX_DEPTH = 4  # folders inside the submission folder


@dataclass(frozen=True)
class Problem:
    student_id: str
    assignment_id: str
    problem: str  # short and fixed: "wrong file name", "missing notebook", "not valid JSON", "tampered", ...
    detail: str  # for a person: what exactly, and what was done about it
    fatal: bool = False  # the submission could not be graded at all


@dataclass
class Submission:
    student_id: str
    assignment_id: str
    path: Path | None  # the notebook to grade; None when there is none
    problems: list[Problem] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        return self.student_id, self.assignment_id


def _visible(path: Path) -> bool:
    return not path.name.startswith(IGNORED)


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


def _odd(name: str) -> Submission | None:
    """A folder name no record can carry (not UTF-8): graded as nobody, said in problems.csv."""
    if _utf8(name):
        return None
    shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return Submission(shown, "", None, [Problem(shown, "", "odd folder name",
                                                f"{shown!r} is not a UTF-8 name; rename the folder to grade it",
                                                fatal=True)])


def discover(submissions: Path, assignments: list[str], *, exclude: Path | None = None) -> list[Submission]:
    """Every (student, assignment) folder under ``submissions``, sorted, with its notebook or its problem.

    A symbolic link (a student's or an assignment's folder, or the notebook) is never followed: it is
    named as a fatal problem instead, since its target may be anyone's file."""
    known = set(assignments)
    found: list[Submission] = []
    skip = exclude.resolve() if exclude is not None else None
    for student in sorted(p for p in submissions.iterdir() if _visible(p) and (p.is_dir() or p.is_symlink())):
        if skip is not None and student.resolve() == skip:
            continue
        if (odd := _odd(student.name)) is not None:
            found.append(odd)
            continue
        if student.is_symlink():
            found.append(Submission(student.name, "", None, [Problem(
                student.name, "", "link skipped", f"the folder {student.name!r} is a symbolic link; links are never "
                "followed: copy the work into a real folder", fatal=True)]))
            continue
        for folder in sorted(p for p in student.iterdir() if _visible(p) and (p.is_dir() or p.is_symlink())):
            if (odd := _odd(folder.name)) is not None:
                found.append(Submission(student.name, odd.student_id, None,
                                        [Problem(student.name, odd.student_id, "odd folder name",
                                                 odd.problems[0].detail, fatal=True)]))
                continue
            sub = Submission(student.name, folder.name, None)
            found.append(sub)
            if folder.is_symlink():
                sub.problems.append(Problem(sub.student_id, sub.assignment_id, "link skipped",
                                            f"the folder {student.name}/{folder.name} is a symbolic link; links "
                                            "are never followed: copy the work into a real folder", fatal=True))
                continue
            if folder.name not in known:
                sub.problems.append(Problem(sub.student_id, sub.assignment_id, "unknown assignment",
                                            f"{folder.name!r} is not an assignment of this course "
                                            f"(expected one of: {', '.join(assignments)})", fatal=True))
                continue
            expected = folder / f"{folder.name}.ipynb"
            if expected.is_symlink():
                sub.problems.append(Problem(sub.student_id, sub.assignment_id, "link skipped",
                                            f"{expected.name} is a symbolic link; links are never followed: "
                                            "submit the notebook itself", fatal=True))
                continue
            if expected.is_file():
                sub.path = expected
                continue
            notebooks = sorted(p for p in folder.iterdir() if p.suffix == ".ipynb" and _visible(p)
                               and p.is_file() and not p.is_symlink())
            if len(notebooks) == 1:
                sub.path = notebooks[0]
                sub.problems.append(Problem(sub.student_id, sub.assignment_id, "wrong file name",
                                            f"graded {notebooks[0].name}, but it should be named {expected.name}"))
            elif notebooks:
                sub.path = newest(notebooks)
                sub.problems.append(Problem(sub.student_id, sub.assignment_id, "two notebooks",
                                            f"no {expected.name}, and {len(notebooks)} other notebooks "
                                            f"({', '.join(p.name for p in notebooks)}): graded {sub.path.name}, the "
                                            f"last saved. Hand in one notebook named {expected.name}"))
            else:
                sub.problems.append(Problem(sub.student_id, sub.assignment_id, "missing notebook",
                                            f"the folder has no {expected.name}", fatal=True))
    return found


def newest(notebooks: list[Path]) -> Path:
    """The notebook saved last (the work, next to an older copy or a fresh download); the name breaks a tie."""
    return max(notebooks, key=lambda p: (p.lstat().st_mtime, p.name))


# --------------------------------------------------------------------------- the files that travel

class Refused(OSError):
    """A submission file the grader will not read: a link, not a regular file, or too big. The message says which."""


@dataclass(frozen=True)
class Beside:
    """The files of a submission folder that travel with its notebook, and what was left behind, and why."""

    files: dict[str, bytes]  # path relative to the folder ("data/x.csv") -> content
    skipped: tuple[Problem, ...] = ()  # one "file skipped" problem per link, special or oversized file


_NOFOLLOW = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def read_regular(path: Path, *, limit: int = MAX_NOTEBOOK_BYTES, dir_fd: int | None = None) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes, else :class:`Refused`.

    The file is opened without following a link (O_NOFOLLOW), so a link swapped in after any earlier
    check is refused, not read; O_NONBLOCK keeps a FIFO from hanging the grader, and the open file's
    own fstat decides whether it is a regular file."""
    try:
        fd = os.open(path, _NOFOLLOW, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # what O_NOFOLLOW answers for a link
            raise Refused(f"{path} is a symbolic link; links are never followed") from exc
        raise
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{path} is not a regular file")
        if info.st_size > limit:
            raise Refused(f"{path} is {info.st_size / 2**20:.1f} MiB, more than the {limit / 2**20:g} MiB allowed")
        data = f.read(limit + 1)  # the file may grow after fstat
        if len(data) > limit:
            raise Refused(f"{path} grew past the {limit / 2**20:g} MiB allowed while it was read")
        return data


def files_beside(notebook: Path, *, student_id: str = "", assignment_id: str = "") -> Beside:
    """The one rule for which files travel with a submission (class run, ``validate``, Dask, the copy in
    ``autograded/``): the regular files of the notebook's folder and its subfolders, never another
    notebook, a hidden file, a symbolic link or anything behind one, a FIFO or device, nor more than
    the size caps above. Everything left behind for a reason a person should know is in ``skipped``.

    The walk holds each folder open and opens every entry relative to it without following links,
    so a link swapped in for a file or a folder while grading runs is refused, not followed."""
    files: dict[str, bytes] = {}
    skipped: list[Problem] = []
    total = 0

    def skip(rel: str, why: str) -> None:
        skipped.append(Problem(student_id, assignment_id, "file skipped", f"{rel}: {why}; it was not given to "
                               "the notebook"))

    def walk(fd: int, prefix: str, depth: int) -> None:
        nonlocal total
        with os.scandir(fd) as entries:
            names = sorted(e.name for e in entries)
        for name in names:
            rel = prefix + name
            if name.startswith(IGNORED) or (not prefix and name == notebook.name):
                continue
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:  # bytes that are no UTF-8 name cannot travel as JSON or be named in a CSV
                skip(rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace"), "a file name that is not UTF-8")
                continue
            try:
                info = os.lstat(name, dir_fd=fd)
            except FileNotFoundError:  # gone since the listing
                continue
            if stat.S_ISLNK(info.st_mode):
                skip(rel, "a symbolic link (links are never followed)")
            elif stat.S_ISDIR(info.st_mode):
                if depth >= MAX_DEPTH:
                    skip(rel, f"a folder more than {MAX_DEPTH} levels deep")
                    continue
                try:
                    sub = os.open(name, _NOFOLLOW | os.O_DIRECTORY, dir_fd=fd)
                except OSError:  # swapped for a link or a file since lstat: not followed
                    skip(rel, "a folder that changed while it was read (links are never followed)")
                    continue
                try:
                    walk(sub, rel + "/", depth + 1)
                finally:
                    os.close(sub)
            elif not stat.S_ISREG(info.st_mode):
                skip(rel, "not a regular file")
            elif name.endswith(".ipynb"):
                continue  # another notebook is never graded nor handed to this one
            elif len(files) >= MAX_FILES:
                skip(rel, f"more than {MAX_FILES} files in the folder")
            elif info.st_size > MAX_FILE_BYTES:
                skip(rel, f"{info.st_size / 2**20:.1f} MiB, more than the {MAX_FILE_BYTES / 2**20:g} MiB a file may have")
            elif total + info.st_size > MAX_FILES_BYTES:
                skip(rel, f"the folder's files would pass the {MAX_FILES_BYTES / 2**20:g} MiB allowed together")
            else:
                try:
                    data = read_regular(Path(name), limit=min(MAX_FILE_BYTES, MAX_FILES_BYTES - total), dir_fd=fd)
                except Refused as exc:
                    skip(rel, str(exc).removeprefix(f"{name} ").removeprefix("is "))
                    continue
                except OSError as exc:
                    skip(rel, f"it could not be read ({exc.strerror or exc})")
                    continue
                total += len(data)
                files[rel] = data

    try:
        top = os.open(notebook.parent, _NOFOLLOW | os.O_DIRECTORY)
    except OSError:
        return Beside({}, ())
    try:
        walk(top, "", 0)
    finally:
        os.close(top)
    return Beside(files, tuple(skipped))
