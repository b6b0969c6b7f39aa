"""Does discovery find every submission in nbgrader's layout and name what is wrong with a folder?"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograder.grade.submission.discover import discover

pytestmark = pytest.mark.grading
A = "01_tokens_and_ids"


def touch(root: Path, rel: str, text: str = "{}") -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def by_key(subs):
    return {s.key: s for s in subs}


def test_well_named_notebooks_are_found_without_problems(tmp_path):
    touch(tmp_path, f"alice/{A}/{A}.ipynb")
    touch(tmp_path, f"bob/{A}/{A}.ipynb")
    subs = discover(tmp_path, [A])
    assert [s.key for s in subs] == [("alice", A), ("bob", A)]
    assert all(s.path is not None and not s.problems for s in subs)


def test_a_single_misnamed_notebook_is_graded_and_reported(tmp_path):
    touch(tmp_path, f"carol/{A}/{A} (1).ipynb")
    (sub,) = discover(tmp_path, [A])
    assert sub.path.name == f"{A} (1).ipynb"
    assert [p.problem for p in sub.problems] == ["wrong file name"] and not sub.problems[0].fatal


def test_a_folder_without_a_notebook_is_a_fatal_problem(tmp_path):
    (tmp_path / "dan" / A).mkdir(parents=True)
    touch(tmp_path, f"dan/{A}/notes.txt", "hello")
    (sub,) = discover(tmp_path, [A])
    assert sub.path is None and sub.problems[0].problem == "missing notebook" and sub.problems[0].fatal


def test_of_several_misnamed_notebooks_the_last_saved_is_graded_and_all_are_named(tmp_path):
    touch(tmp_path, f"erin/{A}/b.ipynb")  # an old copy, whose name sorts last
    os.utime(tmp_path / f"erin/{A}/b.ipynb", (1_700_000_000, 1_700_000_000))
    touch(tmp_path, f"erin/{A}/a.ipynb")  # the work, saved last
    (sub,) = discover(tmp_path, [A])
    assert sub.path.name == "a.ipynb" and [p.problem for p in sub.problems] == ["two notebooks"]
    detail = sub.problems[0].detail
    assert not sub.problems[0].fatal and "a.ipynb, b.ipynb" in detail and "graded a.ipynb, the last saved" in detail
    assert f"named {A}.ipynb" in detail


def test_an_unknown_assignment_is_reported(tmp_path):
    touch(tmp_path, "fay/99_nothing/99_nothing.ipynb")
    (sub,) = discover(tmp_path, [A])
    assert sub.problems[0].problem == "unknown assignment" and sub.problems[0].fatal


def test_checkpoints_hidden_folders_and_the_output_folder_are_ignored(tmp_path):
    touch(tmp_path, f"gus/{A}/{A}.ipynb")
    touch(tmp_path, f"gus/{A}/.ipynb_checkpoints/{A}-checkpoint.ipynb")
    touch(tmp_path, f".git/{A}/{A}.ipynb")
    touch(tmp_path, f"graded/results/{A}.json")
    subs = discover(tmp_path, [A], exclude=tmp_path / "graded")
    assert [s.key for s in subs] == [("gus", A)] and not subs[0].problems
