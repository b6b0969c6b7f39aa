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

from ...nbio import NotebookError, is_solution_cell, parse_notebook

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
                sub.problems.extend(overlooked(sub, expected))
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


# --------------------------------------------------------------------------- a copy beside the right name

@dataclass(frozen=True)
class Progress:
    """How far a notebook's work went, read from the file alone: its code, the answer cells changed from the
    release (nbgrader's own test: a cell's checksum no longer that of the cell as released) and cells run."""

    code: tuple[str, ...]  # every code cell's text, to tell a copy that differs from one that does not
    written: int  # answer cells whose text is no longer the released one
    answers: int  # answer cells
    run: int  # code cells with an execution count


def progress(path: Path) -> Progress | None:
    """What :class:`Progress` reads of ``path``; None when it is no notebook that can be read."""
    from nbgrader.utils import compute_checksum  # only when a folder holds a second notebook

    try:
        nb = parse_notebook(read_regular(path).decode("utf-8"), path.name)
    except (OSError, UnicodeDecodeError, NotebookError):
        return None
    code = [c for c in nb.cells if c.cell_type == "code"]
    answers = [c for c in code if is_solution_cell(c)]

    def changed(cell) -> bool:
        try:
            return compute_checksum(cell) != cell.metadata.nbgrader.get("checksum")
        except (AttributeError, KeyError, TypeError, ValueError):
            return False  # no release checksum to compare with: not counted either way
    return Progress(tuple(c.source for c in code), sum(map(changed, answers)), len(answers),
                    sum(1 for c in code if c.get("execution_count")))


def _later(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 1:
        return f"{seconds:.0f} s later"
    if minutes < 120:
        return f"{minutes} min later"
    hours = minutes / 60
    return f"{hours:.0f} h later" if hours < 48 else f"{hours / 24:.0f} days later"


def overlooked(sub: Submission, graded: Path) -> list[Problem]:
    """A notebook beside the right-named one that holds more recent or fuller work (Notebook's "Make a Copy",
    ``NAME-Copy1.ipynb``, worked on after): nbgrader grades the right name, and so does ``grade``, but the
    learner is told which file was graded, which was not and why it may matter, and how to have it graded.
    A copy that holds the graded notebook's code, or is older and no fuller (a backup), is not named."""
    folder = graded.parent
    others = sorted(p for p in folder.iterdir() if p.suffix == ".ipynb" and p != graded and _visible(p)
                    and p.is_file() and not p.is_symlink())
    if not others:
        return []
    mine = progress(graded)
    found = []
    for other in others:
        theirs = progress(other)
        if theirs is None or mine is not None and theirs.code == mine.code:
            continue
        why = [] if mine is not None else [f"can be read as a notebook, and {graded.name} cannot"]
        later = other.lstat().st_mtime - graded.lstat().st_mtime
        if later >= 1:
            why.append(f"was saved {_later(later)}")
        if mine is not None and theirs.written > mine.written:
            why.append(f"has more answers written ({theirs.written} of {theirs.answers}, against {mine.written})")
        if mine is not None and theirs.run > mine.run:
            why.append(f"has more cells run ({theirs.run}, against {mine.run})")
        if not why:
            continue
        found.append(Problem(sub.student_id, sub.assignment_id, "other notebook",
                             f"graded {graded.name}, the name nbgrader grades; {other.name} beside it was not "
                             f"graded, though it {' and '.join(why)}. If your work is in {other.name}, rename it "
                             f"to {graded.name} (in place of the other) and hand it in again"))
    return found


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
