"""Every way a notebook comes back broken, built from one right notebook of the course (issue 47).

Each :class:`Damage` takes a correct submission of ``assignment`` and writes it, damaged one way, into a
student's folder in nbgrader's layout (``SUBMISSIONS/<student>/<assignment>/``): cells whose type changed,
deleted, duplicated, moved, split or merged; grade cells whose nbgrader metadata was removed or
duplicated; duplicated or missing cell ids; old nbformat minors (4.0-4.4) and a newer one; 50 MB of
printed output; invalid JSON; a UTF-8 byte-order mark; the metadata jupytext, VS Code and Colab write (and a
Colab save that dropped nbgrader's); a renamed file; two notebooks for one assignment; the work in a copy
beside the right-named notebook (issue 55).

What each must come to is said beside it: whether it may cost the answer it touches (:attr:`Damage.lost`,
then every test lost says why), whether nothing of the file can be read (:attr:`Damage.fatal`), and the
problem the submission's problems.csv names. Every other damage keeps every point. Beside the damages:
:func:`several` (ten damages in one notebook), :func:`kernel_meets` (input(), sys.exit(), %%time, a widget
that waits) and the course's kinds of student (:data:`PLAIN`). tests/test_mangled.py grades them all as one
class and holds ``validate`` to the grade's pass/fail.
"""
from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import nbformat

from autograder.nbio import grade_id, is_solution_cell
from tests import builders

A = "01_tokens_and_ids"  # a light kernel (no torch): validate runs notebooks of it in the test
BIG_OUTPUT_BYTES = 50 * 10**6


@dataclass(frozen=True)
class Target:
    """The notebook damaged and the two answers the damages touch (each with a visible and a hidden test)."""

    assignment: str
    exercise: str  # the answer most damages touch
    next: str  # the answer after it, for a merge of two answers

    def gid(self, role: str) -> str:
        """The grade id a damage names by role: "answer", "next", "test" (its visible test), "hidden"."""
        return {"answer": self.exercise, "next": self.next, "test": f"test_{self.exercise}",
                "hidden": f"test_{self.exercise}_hidden"}[role]

    @property
    def file(self) -> str:
        return f"{self.assignment}.ipynb"


TARGETS = {"01_tokens_and_ids": Target("01_tokens_and_ids", "encode", "decode"),
           "04_softmax_and_probability": Target("04_softmax_and_probability", "softmax", "softmax_temperature")}


@dataclass(frozen=True)
class Damage:
    name: str  # the student folder's name, and how the damage is called in figures
    what: str  # in words, for a failing test's message
    write: Callable[[Path, nbformat.NotebookNode, Target], None]  # (the assignment's folder, a right notebook)
    lost: bool = False  # it may cost the touched answer (and what calls it): each test lost says why
    # where a lost point is explained: "answer" (each lost test of the touched answer says the cell was deleted,
    # and how to restore it) or "file" (the work is in a file that was not graded: the problem row says which)
    lost_in: str = "answer"
    fatal: bool = False  # nothing of the notebook can be read: every exercise 0, the reason in problems.csv
    problem: str = ""  # a word the submission's problems.csv rows must hold ("" when no row is needed)
    # the damage done to a notebook in memory (None when it is in the file: its bytes, name or JSON); these
    # are what :func:`several` combines in one notebook
    change: "Change | None" = None


Change = Callable[[nbformat.NotebookNode, Target], object]


def edit(name: str, what: str, change: Change, **kw) -> Damage:
    """A damage done to the notebook's cells, saved under the notebook's own name."""
    return Damage(name, what, _changed(change), change=change, **kw)


# --------------------------------------------------------------------------- helpers

Writer = Callable[[Path, nbformat.NotebookNode, Target], None]


def _at(nb, gid: str) -> int:
    return builders.cell_index(nb, gid)


def _save(folder: Path, nb, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(nbformat.writes(nb), encoding="utf-8")


def _save_json(folder: Path, data: dict, name: str, *, prefix: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(prefix + json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")


def _json(nb) -> dict:
    return json.loads(nbformat.writes(nb))


def _changed(change: Callable[[nbformat.NotebookNode, Target], object]) -> Writer:
    """A damage that changes the notebook in place and saves it under its own name."""
    def write(folder: Path, nb, t: Target) -> None:
        change(nb, t)
        _save(folder, nb, t.file)
    return write


def _retyped(role: str, kind: str) -> Change:
    def change(nb, t: Target) -> None:
        at = _at(nb, t.gid(role))
        cell = nb.cells[at]
        new = (nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_raw_cell)(cell.source)
        new.metadata, new.id = cell.metadata, cell.id  # what JupyterLab keeps when a cell's type is changed
        nb.cells[at] = new
    return change


def _deleted(role: str) -> Change:
    return lambda nb, t: nb.cells.pop(_at(nb, t.gid(role)))


def _duplicated(role: str) -> Change:
    """The cell copied right after itself (JupyterLab's Duplicate: metadata kept, a new id)."""
    def change(nb, t: Target) -> None:
        at = _at(nb, t.gid(role))
        nb.cells.insert(at + 1, builders.copy_cell(nb, t.gid(role), id=f"copy-of-{nb.cells[at].id}"))
    return change


def _moved(role: str, to: str, *, after: bool = True) -> Change:
    def change(nb, t: Target) -> None:
        cell = nb.cells.pop(_at(nb, t.gid(role)))
        nb.cells.insert(_at(nb, t.gid(to)) + (1 if after else 0), cell)
    return change


def _split(nb, t: Target) -> None:
    """JupyterLab's Split Cell inside the answer: both halves keep the cell's metadata (its grade id twice), the
    second gets a new id; neither half runs alone (the cut is inside the function)."""
    at = _at(nb, t.exercise)
    cell = nb.cells[at]
    lines = cell.source.splitlines(keepends=True)
    cut = max(1, len(lines) // 2)
    second = copy.deepcopy(cell)
    cell.source, second.source = "".join(lines[:cut]), "".join(lines[cut:])
    second.id = f"{cell.id}-split"
    nb.cells.insert(at + 1, second)


def _split_unmarked(nb, t: Target) -> None:
    """The answer split inside its function, the second part with no nbgrader metadata (what a split gives in
    an editor that does not copy it, or after another tool dropped it): the first half alone defines a
    function that returns None, and its tests fail unless the parts are joined."""
    _split(nb, t)
    nb.cells[_at(nb, t.exercise) + 1].metadata.pop("nbgrader")


def _merged(nb, t: Target) -> None:
    """JupyterLab's Merge Cells on two answers: one cell, the first's metadata, both sources."""
    keep = nb.cells[_at(nb, t.exercise)]
    other = nb.cells.pop(_at(nb, t.next))
    keep.source = keep.source.rstrip("\n") + "\n\n" + other.source


def _merged_with_demo(nb, t: Target) -> None:
    """The answer merged with the first plain code cell below its tests."""
    at = _at(nb, t.exercise)
    below = next(i for i in range(at + 1, len(nb.cells))
                 if nb.cells[i].cell_type == "code" and "nbgrader" not in nb.cells[i].metadata)
    nb.cells[at].source = nb.cells[at].source.rstrip("\n") + "\n\n" + nb.cells.pop(below).source


def _no_metadata(role: str) -> Change:
    return lambda nb, t: nb.cells[_at(nb, t.gid(role))].metadata.pop("nbgrader")


def _metadata_on_demo(role: str) -> Change:
    """The nbgrader metadata of a cell pasted onto the first plain code cell after the answer's tests."""
    def change(nb, t: Target) -> None:
        meta = copy.deepcopy(nb.cells[_at(nb, t.gid(role))].metadata["nbgrader"])
        after = _at(nb, t.gid("hidden"))
        target = next(c for c in nb.cells[after + 1:] if c.cell_type == "code" and "nbgrader" not in c.metadata)
        target.metadata["nbgrader"] = meta
    return change


def _ids(how: str) -> Writer:
    def write(folder: Path, nb, t: Target) -> None:
        data = _json(nb)
        answer = next(c for c in data["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == t.exercise)
        for cell in data["cells"]:
            if how == "missing":
                cell.pop("id", None)
            elif cell["cell_type"] == "code" and "nbgrader" not in cell["metadata"]:
                cell["id"] = answer["id"]  # every plain code cell takes the answer's id
        _save_json(folder, data, t.file)
    return write


def _nbformat(minor: int) -> Writer:
    """The notebook as an older (or newer) nbformat 4 minor writes it: cell ids only from 4.5."""
    def write(folder: Path, nb, t: Target) -> None:
        data = _json(nb)
        data["nbformat_minor"] = minor
        if minor < 5:
            for cell in data["cells"]:
                cell.pop("id", None)
        _save_json(folder, data, t.file)
    return write


def _big_output(folder: Path, nb, t: Target) -> None:
    """A demonstration cell that printed 50 MB (a loop printing a matrix at every step)."""
    cell = next(c for c in nb.cells[_at(nb, t.gid("hidden")) + 1:] if c.cell_type == "code")
    line = "0.1 " * 24 + "\n"
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=line * (BIG_OUTPUT_BYTES // len(line)))]
    cell.execution_count = 7
    _save(folder, nb, t.file)


def _invalid_json(folder: Path, nb, t: Target) -> None:
    text = nbformat.writes(nb)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / t.file).write_text(text[: len(text) // 2], encoding="utf-8")  # a save cut off half-way


def _bom(folder: Path, nb, t: Target) -> None:
    _save_json(folder, _json(nb), t.file, prefix="\ufeff")  # Windows editors (Notepad) write one


def _tool(tool: str) -> Writer:
    """The metadata another tool writes when it saves the notebook."""
    def write(folder: Path, nb, t: Target) -> None:
        data = _json(nb)
        meta = data["metadata"]
        if tool == "jupytext":
            meta["jupytext"] = {"formats": "ipynb,py:percent", "text_representation": {
                "extension": ".py", "format_name": "percent", "format_version": "1.3", "jupytext_version": "1.19.6"}}
        elif tool == "vscode":
            meta["vscode"] = {"interpreter": {"hash": "3f8a" * 16}}
            meta["language_info"]["version"] = "3.12.3"
            for cell in data["cells"]:
                if cell["cell_type"] == "code":
                    cell["metadata"]["vscode"] = {"languageId": "python"}
        else:  # Colab: nbformat 4.0, its own cell ids in the metadata, no top-level ids
            meta.update({"colab": {"provenance": [], "toc_visible": True}, "accelerator": "GPU",
                         "kernelspec": {"name": "python3", "display_name": "Python 3"}})
            data["nbformat_minor"] = 0
            for cell in data["cells"]:
                cell["metadata"]["id"] = cell.pop("id")
                if tool == "colab_dropped":  # a Colab save keeps only its own cell metadata: nbgrader's is gone
                    cell["metadata"].pop("nbgrader", None)
                if cell["cell_type"] == "code":
                    cell["metadata"]["colab"] = {"base_uri": "https://localhost/", "height": 35}
                    cell["metadata"]["outputId"] = "0f" * 8
        _save_json(folder, data, t.file)
    return write


def _renamed(folder: Path, nb, t: Target) -> None:
    _save(folder, nb, f"{t.assignment} (1).ipynb")  # what a browser names a second download


def _copy_beside(folder: Path, nb, t: Target) -> None:
    """Classic Notebook's File > Make a Copy right after opening the assignment, and all the work done in the
    copy: the right name holds the notebook as released (saved first), ``NAME-Copy1.ipynb`` the work (saved
    later). The right name is graded, as nbgrader grades it; the copy is named, with how to have it graded."""
    _save(folder, builders.blank_notebook(t.assignment), t.file)
    os.utime(folder / t.file, (1_700_000_000, 1_700_000_000))
    _save(folder, nb, f"{t.assignment}-Copy1.ipynb")


def _two_notebooks(folder: Path, nb, t: Target) -> None:
    """Two misnamed copies, the older one blank: the newer (the work) is graded, and both are named."""
    old = f"Copy of {t.file}"
    _save(folder, builders.blank_notebook(t.assignment), old)
    os.utime(folder / old, (1_700_000_000, 1_700_000_000))
    _save(folder, nb, f"{t.assignment}-final.ipynb")


# --------------------------------------------------------------------------- the corpus

DAMAGES: tuple[Damage, ...] = (
    edit("solution_to_markdown", "the answer cell turned into markdown", _retyped("answer", "markdown"),
         problem="cell type changed"),
    edit("solution_to_raw", "the answer cell turned into a raw cell", _retyped("answer", "raw"),
         problem="cell type changed"),
    edit("test_to_markdown", "a visible test cell turned into markdown", _retyped("test", "markdown"),
         problem="tampered"),
    edit("solution_deleted", "the answer cell deleted", _deleted("answer"), lost=True, problem="missing cell"),
    edit("test_deleted", "a visible test cell deleted", _deleted("test"), problem="tampered"),
    edit("hidden_test_deleted", "a hidden test cell deleted", _deleted("hidden"), problem="tampered"),
    edit("solution_duplicated", "the answer cell duplicated", _duplicated("answer")),
    edit("test_duplicated", "a test cell duplicated", _duplicated("test"), problem="tampered"),
    edit("solution_moved_below_tests", "the answer cell moved below its tests", _moved("answer", "hidden"),
         problem="tampered"),
    edit("test_moved_up", "a test cell moved above its answer", _moved("test", "answer", after=False),
         problem="tampered"),
    edit("solution_split", "the answer cell split in two inside its function", _split,
         problem="cell split"),
    edit("solution_split_unmarked", "the answer split in two, the second part without nbgrader metadata",
         _split_unmarked, problem="cell split"),
    edit("solutions_merged", "two answer cells merged into one", _merged, problem="missing cell"),
    edit("solution_merged_with_demo", "the answer merged with a demonstration cell", _merged_with_demo),
    edit("solution_metadata_removed", "the answer cell's nbgrader metadata removed", _no_metadata("answer"),
         problem="missing cell"),
    edit("test_metadata_removed", "a test cell's nbgrader metadata removed", _no_metadata("test"),
         problem="tampered"),
    edit("solution_metadata_on_demo", "the answer's metadata pasted onto a demonstration cell",
         _metadata_on_demo("answer")),
    edit("test_metadata_on_demo", "a test cell's metadata pasted onto a demonstration cell",
         _metadata_on_demo("test"), problem="tampered"),
    Damage("cell_ids_duplicated", "plain code cells sharing the answer's cell id", _ids("duplicated")),
    Damage("cell_ids_missing", "no cell ids in an nbformat 4.5 file", _ids("missing")),
    *(Damage(f"nbformat_4_{minor}", f"saved as nbformat 4.{minor}", _nbformat(minor)) for minor in range(5)),
    Damage("nbformat_4_9", "saved by a newer Jupyter, nbformat 4.9", _nbformat(9)),
    Damage("output_50mb", "50 MB of printed output", _big_output),
    Damage("invalid_json", "a save cut off half-way: invalid JSON", _invalid_json, fatal=True,
           problem="not valid JSON"),
    Damage("utf8_bom", "a UTF-8 byte-order mark before the JSON", _bom),
    Damage("saved_by_jupytext", "saved by jupytext (paired with a .py)", _tool("jupytext")),
    Damage("saved_by_vscode", "saved by VS Code", _tool("vscode")),
    Damage("saved_by_colab", "saved by Colab (nbformat 4.0, its metadata)", _tool("colab")),
    Damage("saved_by_colab_without_nbgrader", "saved by Colab, which dropped every cell's nbgrader metadata",
           _tool("colab_dropped"), problem="metadata lost"),
    Damage("file_renamed", "the file renamed by a second download", _renamed, problem="wrong file name"),
    Damage("two_notebooks", "two notebooks for one assignment, neither named right", _two_notebooks,
           problem="two notebooks"),
    Damage("work_in_a_copy", "the work in NAME-Copy1.ipynb beside the right name as released", _copy_beside,
           lost=True, lost_in="file", problem="other notebook"),
)


def damage(name: str) -> Damage:
    """The damage called ``name``; a name not in the corpus raises ValueError naming the choices."""
    builders.one_of(name, [d.name for d in DAMAGES], "a damage of tests/mangled.py")
    return next(d for d in DAMAGES if d.name == name)


def write_class(submissions: Path, assignment: str = A, damages: tuple[Damage, ...] = DAMAGES) -> dict[str, Damage]:
    """One student per damage under ``submissions`` (each a right notebook of ``assignment``, damaged its way);
    returns student -> damage."""
    target = TARGETS[assignment]
    right = builders.right_notebook(assignment, markers=False)
    for d in damages:
        d.write(submissions / d.name / assignment, copy.deepcopy(right), target)
    return {d.name: d for d in damages}


def notebook(submissions: Path, student: str, assignment: str = A) -> Path:
    """The notebook ``grade`` grades of a student of :func:`write_class`: the one named right, else the last
    saved (of two misnamed ones)."""
    folder = submissions / student / assignment
    if (right := folder / f"{assignment}.ipynb").is_file():
        return right
    return sorted(folder.glob("*.ipynb"), key=lambda p: p.stat().st_mtime)[-1]


# --------------------------------------------------------------------------- several at once, for validate

# Where :func:`several` does each damage that changes what a local run executes, each on its own answers of 01
# (chosen so that no two touch the same cells): one notebook, one kernel for validate.
SEVERAL = {
    "solution_deleted": ("encode", "decode"),
    "test_deleted": ("build_vocab", "encode"),
    "solution_duplicated": ("one_hot", "embedding_lookup"),
    "test_moved_up": ("embedding_lookup", "predict_param_counts"),
    "solution_merged_with_demo": ("make_lm_pairs", "most_frequent_pair"),
    "solutions_merged": ("most_frequent_pair", "merge_pair"),
    "test_metadata_removed": ("train_bpe", "bpe_encode"),
    "solution_split": ("bpe_encode", "bpe_decode"),
    "test_metadata_on_demo": ("bpe_decode", "predict_bpe_tokens"),
    "solution_to_markdown": ("predict_utf8_length", "train_bpe"),
}


def several(assignment: str = A) -> nbformat.NotebookNode:
    """A right notebook of 01 damaged in every way of :data:`SEVERAL` at once, each on its own answers."""
    nb = builders.right_notebook(assignment, markers=False)
    for name, (exercise, next_) in SEVERAL.items():
        damage(name).change(nb, Target(assignment, exercise, next_))
    return nb


# What a kernel meets, in one notebook (each after its own answer's tests): input() with no one to answer,
# sys.exit(), the answer timed with %%time, a widget that waits for a click until the cell's time is up.
# validate's --timeout, its one limit for every cell: the widget's wait meets it, and an honest cell (the set-up
# cell's imports on a busy machine) has room. grade gets --timeout-floor TIMEOUT_FLOOR instead: each course cell
# may take that or 100 times the course's own time for it on this machine, and the widget's cell, the learner's
# own, has no course time and waits out the cap (stock nbgrader's 30 s), as every cell a learner adds does.
WAIT_SECONDS = 20
TIMEOUT_FLOOR = 4
KERNEL_CELLS = {
    "build_vocab": 'name = input("Your name? ")\nprint("hello", name)\n',
    "encode": 'import sys\nsys.exit("stop here")\n',
    "decode": "import time\nimport ipywidgets as widgets\nslider = widgets.IntSlider()\ndisplay(slider)\n"
              "while slider.value == 0:\n    time.sleep(0.1)\n",
}
TIMED = "one_hot"  # the answer whose cell starts with %%time


def kernel_meets(assignment: str = A) -> nbformat.NotebookNode:
    nb = builders.right_notebook(assignment, markers=False)
    for exercise, source in KERNEL_CELLS.items():
        nb.cells.insert(_at(nb, f"test_{exercise}_hidden") + 1, nbformat.v4.new_code_cell(source))
    cell = nb.cells[_at(nb, TIMED)]
    cell.source = "%%time\n" + cell.source
    return nb


def partial(assignment: str = A) -> nbformat.NotebookNode:
    """The first half of the answers written, the first of them a known mistake (tests/builders.py's wrong
    notebook), the rest as released: a wrong, a right and a not attempted answer in one kernel."""
    nb = builders.wrong_notebook(assignment)
    blank = builders.blank_notebook(assignment)
    answers = [c for c in nb.cells if is_solution_cell(c)]
    for cell in answers[len(answers) // 2:]:
        cell.source = blank.cells[_at(blank, grade_id(cell))].source
    return nb


# The course's test corpus beside the damages: student -> notebook (tests/builders.py's kinds)
PLAIN = {"full": lambda a: builders.right_notebook(a, markers=False), "blank": builders.blank_notebook,
         "wrong_and_partial": partial, "several_damages": several, "kernel_meets": kernel_meets}


def write_plain(submissions: Path, assignment: str = A) -> list[str]:
    """The students of :data:`PLAIN` under ``submissions``; returns their names."""
    for student, make in PLAIN.items():
        _save(submissions / student / assignment, make(assignment), TARGETS[assignment].file)
    return list(PLAIN)
