"""Which files travel with a submission? One rule (:func:`autograder.grade.submission.discover.files_beside`):
regular files only, never a symbolic link or anything behind one, within size caps, each file left
behind named as a problem. Fast tests of the rule itself; tests/grade/test_links_class.py grades a class."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograder.grade.submission import discover as discover_module
from autograder.grade.submission.discover import Refused, discover, files_beside, read_regular

pytestmark = pytest.mark.grading
A = "01_tokens_and_ids"
SECRET = b"TOP-SECRET-4f1c9"


@pytest.fixture
def folder(tmp_path) -> Path:
    """A submission folder with its notebook and one honest data file, and a secret outside it."""
    sub = tmp_path / "submitted" / "alice" / A
    sub.mkdir(parents=True)
    (sub / f"{A}.ipynb").write_text("{}")
    (sub / "data.csv").write_text("a,b\n1,2\n")
    secret = tmp_path / "home" / "instructor" / "secret.txt"
    secret.parent.mkdir(parents=True)
    secret.write_bytes(SECRET)
    secret.chmod(0o600)
    return sub


def skipped(beside) -> dict[str, str]:
    return {p.detail.split(":")[0]: p.detail for p in beside.skipped}


def test_an_honest_folder_travels_whole_but_not_its_notebooks_or_hidden_files(folder):
    (folder / "sub").mkdir()
    (folder / "sub" / "w.npy").write_bytes(b"\x93NUMPY")
    (folder / "other.ipynb").write_text("{}")
    (folder / ".ipynb_checkpoints").mkdir()
    (folder / ".ipynb_checkpoints" / "x.txt").write_text("old")
    beside = files_beside(folder / f"{A}.ipynb", student_id="alice", assignment_id=A)
    assert beside.files == {"data.csv": b"a,b\n1,2\n", "sub/w.npy": b"\x93NUMPY"}
    assert beside.skipped == ()


@pytest.mark.parametrize("kind", ["absolute", "relative into the course", "to a folder", "dangling",
                                  "inside a subfolder"])
def test_no_kind_of_link_is_followed_and_each_is_named(folder, kind):
    secret = folder.parents[2] / "home" / "instructor" / "secret.txt"
    solutions = folder.parents[2] / "solutions"
    solutions.mkdir()
    (solutions / f"{A}.ipynb").write_bytes(SECRET)
    if kind == "absolute":
        link, target = folder / "notes.txt", secret
    elif kind == "relative into the course":
        link, target = folder / "answers.ipynb.txt", Path("../../../solutions") / f"{A}.ipynb"
    elif kind == "to a folder":
        link, target = folder / "home", secret.parent
    elif kind == "dangling":
        link, target = folder / "gone.txt", folder / "nowhere"
    else:
        (folder / "data").mkdir()
        link, target = folder / "data" / "x.txt", secret
    os.symlink(target, link)
    if kind == "relative into the course":
        assert link.read_bytes() == SECRET  # the link works: following it would leak the solution
    beside = files_beside(folder / f"{A}.ipynb", student_id="alice", assignment_id=A)
    assert all(SECRET not in data for data in beside.files.values())
    rel = str(link.relative_to(folder))
    assert rel not in beside.files and not any(k.startswith(rel + "/") for k in beside.files)
    (problem,) = beside.skipped
    assert (problem.student_id, problem.assignment_id, problem.problem) == ("alice", A, "file skipped")
    assert problem.detail.startswith(rel + ":") and "symbolic link" in problem.detail
    assert "data.csv" in beside.files  # the honest file still travels


def test_a_link_swapped_in_for_a_file_during_the_walk_is_refused_not_followed(folder, monkeypatch):
    """The file is regular when looked at, a link to the secret when opened: O_NOFOLLOW refuses it."""
    secret = folder.parents[2] / "home" / "instructor" / "secret.txt"
    real_lstat = os.lstat

    def lstat_then_swap(name, *args, **kwargs):
        info = real_lstat(name, *args, **kwargs)
        if name == "data.csv":
            os.unlink(folder / "data.csv")
            os.symlink(secret, folder / "data.csv")
        return info

    monkeypatch.setattr(discover_module.os, "lstat", lstat_then_swap)
    beside = files_beside(folder / f"{A}.ipynb", student_id="alice", assignment_id=A)
    monkeypatch.undo()
    assert (folder / "data.csv").read_bytes() == SECRET  # the swap happened
    assert beside.files == {}
    assert "data.csv" in skipped(beside) and "symbolic link" in skipped(beside)["data.csv"]


def test_a_link_swapped_in_for_a_folder_during_the_walk_is_refused_not_followed(folder, monkeypatch):
    secret_dir = folder.parents[2] / "home" / "instructor"
    (folder / "sub").mkdir()
    (folder / "sub" / "ok.txt").write_text("fine")
    real_lstat = os.lstat

    def lstat_then_swap(name, *args, **kwargs):
        info = real_lstat(name, *args, **kwargs)
        if name == "sub":
            (folder / "sub" / "ok.txt").unlink()
            (folder / "sub").rmdir()
            os.symlink(secret_dir, folder / "sub")
        return info

    monkeypatch.setattr(discover_module.os, "lstat", lstat_then_swap)
    beside = files_beside(folder / f"{A}.ipynb")
    monkeypatch.undo()
    assert set(beside.files) == {"data.csv"}
    assert "sub" in skipped(beside) and "links are never followed" in skipped(beside)["sub"]


def test_the_notebook_itself_is_read_only_when_it_is_a_regular_file(folder, tmp_path):
    secret = folder.parents[2] / "home" / "instructor" / "secret.txt"
    link = folder / "linked.ipynb"
    os.symlink(secret, link)
    with pytest.raises(Refused, match="symbolic link"):
        read_regular(link)
    os.mkfifo(folder / "pipe")
    with pytest.raises(Refused, match="not a regular file"):  # and it did not hang on the FIFO
        read_regular(folder / "pipe")
    with pytest.raises(Refused, match="MiB allowed"):
        read_regular(folder / "data.csv", limit=3)
    assert read_regular(folder / "data.csv") == b"a,b\n1,2\n"


def test_special_and_oversized_files_stay_behind_and_are_named(folder, monkeypatch):
    monkeypatch.setattr(discover_module, "MAX_FILE_BYTES", 10)
    monkeypatch.setattr(discover_module, "MAX_FILES_BYTES", 15)
    (folder / "big.bin").write_bytes(b"x" * 11)
    (folder / "eight.txt").write_bytes(b"y" * 8)
    os.mkfifo(folder / "pipe")
    beside = files_beside(folder / f"{A}.ipynb")
    # sorted: big.bin (too big alone), data.csv (8 bytes), eight.txt (8 more would pass 15), pipe
    assert set(beside.files) == {"data.csv"}
    why = skipped(beside)
    assert "more than the" in why["big.bin"] and "together" in why["eight.txt"] and "not a regular" in why["pipe"]


def test_too_many_files_and_odd_names_are_named_not_fatal(folder, monkeypatch):
    monkeypatch.setattr(discover_module, "MAX_FILES", 2)
    for name in ("b.txt", "c.txt", "-rf", "new\nline.txt"):
        (folder / name).write_text(name)
    os.close(os.open(os.fsencode(folder) + b"/\xff\xfe.txt", os.O_CREAT | os.O_WRONLY, 0o644))
    beside = files_beside(folder / f"{A}.ipynb")
    assert len(beside.files) == 2
    details = " | ".join(p.detail for p in beside.skipped)
    assert "not UTF-8" in details and "more than 2 files" in details
    assert all(not p.fatal for p in beside.skipped)


def test_discovery_never_follows_a_linked_folder_or_notebook(tmp_path):
    subs = tmp_path / "submitted"
    elsewhere = tmp_path / "elsewhere" / A
    elsewhere.mkdir(parents=True)
    (elsewhere / f"{A}.ipynb").write_text("{}")
    (subs / "bob").mkdir(parents=True)
    os.symlink(elsewhere, subs / "bob" / A)  # the assignment folder is a link
    os.symlink(elsewhere.parent, subs / "carol")  # the student's folder is a link
    (subs / "dan" / A).mkdir(parents=True)
    os.symlink(elsewhere / f"{A}.ipynb", subs / "dan" / A / f"{A}.ipynb")  # the notebook is a link
    (subs / "erin" / A).mkdir(parents=True)
    os.symlink(elsewhere / f"{A}.ipynb", subs / "erin" / A / "renamed.ipynb")  # a misnamed notebook link
    found = {s.student_id: s for s in discover(subs, [A])}
    for student in ("bob", "carol", "dan"):
        sub = found[student]
        assert sub.path is None and sub.problems[0].problem == "link skipped" and sub.problems[0].fatal, student
    assert found["erin"].path is None and found["erin"].problems[0].problem == "missing notebook"


def test_a_folder_name_that_is_not_utf8_is_named_not_a_crash(tmp_path):
    subs = tmp_path / "submitted"
    subs.mkdir()
    os.makedirs(os.fsencode(subs) + b"/st\xffudent/" + A.encode())
    (sub,) = discover(subs, [A])
    assert sub.path is None and sub.problems[0].problem == "odd folder name" and sub.problems[0].fatal
    sub.student_id.encode("utf-8")  # it can be written to a CSV and a JSON record


def test_a_job_leaving_for_a_dask_worker_carries_the_same_files_and_names_the_skipped(folder):
    from autograder.grade.submission.records import Job, Reference
    from autograder.grade.classrun.schedule import with_data

    secret = folder.parents[2] / "home" / "instructor" / "secret.txt"
    os.symlink(secret, folder / "notes.txt")
    job = Job(student_id="alice", assignment_id=A, path=str(folder / f"{A}.ipynb"),
              reference=Reference(assignment=A, source_path="", source_hash=""), submission_hash="", seed=1)
    travelling = Job.from_json(with_data(job).to_json())  # as it crosses to the worker
    assert travelling.notebook.files == {"data.csv": b"a,b\n1,2\n"}
    assert [(p.problem, p.detail.split(":")[0]) for p in travelling.problems] == [("file skipped", "notes.txt")]
    os.unlink(folder / f"{A}.ipynb")
    os.symlink(secret, folder / f"{A}.ipynb")  # swapped for a link after discovery: not read
    assert with_data(job).notebook is None
