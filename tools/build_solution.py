"""Author a reference notebook from a py:percent draft, then execute it in place.

    python tools/build_solution.py draft.py solutions/04_softmax_and_probability.ipynb
    python tools/build_solution.py --execute-only solutions/04_softmax_and_probability.ipynb

A draft is jupytext's percent format with four cell markers of ours:

    # %% tags=["setup"]     imports; also run when another notebook imports this one
    # %% solution=true      one exercise: defines one function or class, its grade_id
    # %% test=2             a graded test cell worth 2 points; grade_id from the check it calls
    # %% [markdown] manual=1   a written answer a person grades, worth 1 point: the bug hunt's "why"

A solution cell holds the reference between ``### BEGIN SOLUTION`` and ``### END SOLUTION``; the
student's version has nbgrader's stub there. A **bug hunt** (the learner gets code that runs and is
wrong, and fixes it) follows its solution region at once with a bug region: the lines the learner
sees instead of the stub, each commented out with ``# `` at the region's indentation::

    # %% solution=true
    def head_scores(x, layer):
        # (T, d_in) and an nn.Linear -> (T, d_out)
        ### BEGIN SOLUTION
        return x @ layer.weight.T
        ### END SOLUTION
        ### BEGIN BUG
        # return x @ layer.weight
        ### END BUG

The reference runs the fix; ``python -m autograder release`` and ``nbgrader generate_assignment``
both show the bug, uncommented, where the solution was (autograder/bug_hunt.py).

The learner explains the bug in a **manually graded answer** (nbgrader's markdown cell with ``solution`` and
``grade``), right after the bug hunt's test cells; its grade_id is ``why_`` and the exercise's (here
``why_head_scores``). Its whole text is a solution region holding the model answer and the mark scheme, which
the grader shows the person who scores it in formgrader, and the learner with their feedback; the release says
``YOUR ANSWER HERE`` (the question goes in a plain markdown cell above it)::

    # %% [markdown]
    # **Why was it wrong?** In two or three sentences of your own: what the code did, and the symptom.

    # %% [markdown] manual=1
    # ### BEGIN SOLUTION
    # **Model answer.** ...
    #
    # **Mark scheme (1 point).** 1: names the cause and the symptom. 0.5: one of them. 0: blank.
    # ### END SOLUTION

The ``.ipynb`` is the source of truth once written; review it with
``jupytext --to py:percent --output - solutions/NN_slug.ipynb``.
"""
from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient
from nbconvert.preprocessors import CoalesceStreamsPreprocessor

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def defined_name(source: str) -> str:
    names = [n.name for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    if len(names) != 1:
        raise SystemExit(f"a solution cell must define exactly one function or class, found {names}:\n{source}")
    return names[0]


def test_id(source: str) -> str:
    match = re.search(r"check\.(\w+)\(", source)
    if not match:
        raise SystemExit(f"a test cell must call check.<name>(...):\n{source}")
    hidden = "### BEGIN HIDDEN TESTS" in source
    return f"test_{match.group(1)}" + ("_hidden" if hidden else "")


MANUAL_PREFIX = "why_"  # autograder.grade.submission.manual.PREFIX: the grader knows a written answer by it


def manual_answer(cell: nbformat.NotebookNode, exercise: str | None) -> dict:
    """A ``manual=N`` markdown cell's nbgrader metadata: a written answer worth N points about ``exercise``."""
    points = cell.metadata.pop("manual")
    if exercise is None:
        raise SystemExit(f"a manual=... answer must come after the solution cell it explains:\n{cell.source}")
    if "BEGIN SOLUTION" not in cell.source or "END SOLUTION" not in cell.source:
        raise SystemExit("a manual=... answer holds its model answer and mark scheme between ### BEGIN SOLUTION and "
                         f"### END SOLUTION (the release shows YOUR ANSWER HERE in their place):\n{cell.source}")
    return {"solution": True, "grade": True, "locked": False, "task": False,
            "grade_id": MANUAL_PREFIX + exercise, "points": points}


def build(draft: Path) -> nbformat.NotebookNode:
    nb = jupytext.read(draft, fmt="py:percent")
    seen: set[str] = set()
    exercise = None  # the last solution cell's grade_id: what a manual answer below it explains
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata
        cell.id = f"cell-{i:02d}"
        if cell.cell_type != "code":
            grade = manual_answer(cell, exercise) if "manual" in meta else None
            kept = meta.get("nbgrader")
            if grade is None and isinstance(kept, dict) and kept.get("grade") and kept.get("solution"):
                # a written answer that came back through jupytext (a draft made from an existing notebook):
                # its metadata is kept as it was, or the notebook would silently lose a graded cell
                grade = {k: v for k, v in kept.items() if k != "schema_version"}
            meta.clear()
            if grade:
                if grade["grade_id"] in seen:
                    raise SystemExit(f"duplicate grade_id {grade['grade_id']}")
                seen.add(grade["grade_id"])
                meta["nbgrader"] = {**grade, "schema_version": 3}
                cell.id = grade["grade_id"].replace("_", "-")
            continue
        grade = None
        if meta.pop("solution", False):
            gid = exercise = defined_name(cell.source)
            grade = {"solution": True, "grade": False, "locked": False, "task": False, "grade_id": gid}
        elif "test" in meta:
            points = meta.pop("test")
            gid = meta.pop("grade_id", None) or test_id(cell.source)
            grade = {"solution": False, "grade": True, "locked": True, "task": False,
                     "grade_id": gid, "points": points}
        if grade:
            if grade["grade_id"] in seen:
                raise SystemExit(f"duplicate grade_id {grade['grade_id']}")
            seen.add(grade["grade_id"])
            meta["nbgrader"] = {**grade, "schema_version": 3}
            cell.id = grade["grade_id"].replace("_", "-")
        tags = meta.get("tags", [])
        for key in list(meta):
            if key not in ("nbgrader", "tags"):
                meta.pop(key)
        if tags:
            meta["tags"] = tags
    nb.metadata = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    return nb


def execute(nb: nbformat.NotebookNode, cwd: Path) -> float:
    env_before = dict(os.environ)
    os.environ.pop("NBGRADER_EXECUTION", None)
    os.environ.pop("AUTOGRADER_MODE", None)
    os.environ.pop("MPLBACKEND", None)
    os.environ["PYTHONHASHSEED"] = "0"
    try:
        start = time.perf_counter()
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}).execute()
        return time.perf_counter() - start
    finally:
        os.environ.clear()
        os.environ.update(env_before)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--execute-only", action="store_true", help="re-run existing .ipynb files in place")
    parser.add_argument("--no-execute", action="store_true")
    args = parser.parse_args(argv)
    if args.execute_only:
        targets = [(nbformat.read(p, as_version=4), p) for p in args.paths]
    else:
        if len(args.paths) != 2:
            parser.error("give a draft and a target notebook")
        targets = [(build(args.paths[0]), args.paths[1])]
    for nb, target in targets:
        nbformat.write(nb, target)  # checks of hidden tests import the reference from this very file
        if not args.no_execute:
            seconds = execute(nb, target.resolve().parent)
            print(f"{target}: executed in {seconds:.1f} s", file=sys.stderr)
        for cell in nb.cells:
            cell.metadata.pop("execution", None)
        nb, _ = CoalesceStreamsPreprocessor().preprocess(nb, {})  # byte-stable however output was flushed
        nbformat.write(nb, target)


if __name__ == "__main__":
    main()
