"""Does the notebook that runs always hold the source's test cells, once each, after their exercise?"""
from __future__ import annotations

import json

import nbformat
import pytest

from autograder import paths
from autograder.grade.submission.sanitize import plan, reference_plan, source_tests
from autograder.nbio import grade_id, is_solution_cell, is_test_cell, read_notebook
from autograder.release import student_notebook

# one worker runs this module, so its module-scoped fixture is built once (loadgroup splits modules otherwise)
pytestmark = [pytest.mark.grading, pytest.mark.xdist_group("test_sanitize")]
A = "01_tokens_and_ids"


@pytest.fixture(scope="module")
def source():
    return read_notebook(paths.solutions_dir() / f"{A}.ipynb")


@pytest.fixture(scope="module")
def tests(source):
    return source_tests(source, student_notebook(source, f"{A}.ipynb"))


@pytest.fixture(scope="module")
def source_cells() -> dict[str, str]:
    """grade_id -> source of each graded test cell, in order, read from the file's JSON by hand: the
    expectation every plan is held to, built without the module under test."""
    raw = json.loads((paths.solutions_dir() / f"{A}.ipynb").read_text(encoding="utf-8"))
    cells = {}
    for cell in raw["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            text = cell["source"]
            cells[meta["grade_id"]] = "".join(text) if isinstance(text, list) else text
    return cells


@pytest.fixture(scope="module")
def order(source_cells) -> list[str]:
    return list(source_cells)


def ran_tests(p) -> list[str]:
    return [p.tests[i] for i in sorted(p.tests)]


def test_the_source_order_is_what_the_notebook_shows(order, tests):
    assert order[:6] == ["test_build_vocab", "test_build_vocab_hidden", "test_encode", "test_encode_hidden",
                         "test_decode", "test_decode_hidden"]
    assert [t.grade_id for t in tests] == order


def nbgrader_cells(path) -> list[dict]:
    """The cells of a notebook file as JSON, read without the package, with their text joined."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [{**c, "source": "".join(c["source"]) if isinstance(c["source"], list) else c["source"]} for c in cells]


def test_each_test_carries_the_sources_text_points_and_exercise_and_what_the_student_was_given(source):
    # source_tests called here, not through the module's `tests` fixture: mutmut runs a mutant against the
    # tests it saw call the function, and a module fixture calls it once, for whichever test came first
    tests = source_tests(source, student_notebook(source, f"{A}.ipynb"))
    given = {c["metadata"]["nbgrader"]["grade_id"]: c for c in nbgrader_cells(paths.notebooks_dir() / f"{A}.ipynb")
             if c["metadata"].get("nbgrader", {}).get("grade")}
    want, exercise = [], None
    for c in nbgrader_cells(paths.solutions_dir() / f"{A}.ipynb"):
        meta = c["metadata"].get("nbgrader", {})
        if meta.get("solution"):
            exercise = meta["grade_id"]
        elif meta.get("grade"):
            mine = given[meta["grade_id"]]
            want.append((meta["grade_id"], c["id"], c["source"], mine["source"], mine["metadata"]["nbgrader"],
                         float(meta["points"]), exercise))
    assert [(t.grade_id, t.cell_id, t.source, t.released, t.released_meta, t.points, t.anchor) for t in tests] == want
    assert any(t.released != t.source for t in tests), "hidden tests are cleared in what the student was given"


def hand_made(test_source: str) -> nbformat.NotebookNode:
    """A notebook of one exercise, ``f``, and its test cell ``test_f`` holding ``test_source``."""
    solution = nbformat.v4.new_code_cell("def f():\n    return 1\n")
    solution.metadata["nbgrader"] = {"grade": False, "solution": True, "grade_id": "f", "locked": False}
    test = nbformat.v4.new_code_cell(test_source)
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "test_f", "locked": True, "points": 1}
    return nbformat.v4.new_notebook(cells=[solution, test])


def test_a_test_the_student_was_not_given_is_compared_with_the_source():
    source = hand_made("assert f() == 1")
    (only,) = source_tests(source, nbformat.v4.new_notebook())
    assert (only.source, only.released, only.released_meta) == ("assert f() == 1", "assert f() == 1",
                                                                source.cells[1].metadata["nbgrader"])


def test_spaces_at_line_ends_are_not_an_edit_but_indentation_is():
    given = hand_made("for x in [1]:\n    assert f() == x\n")
    tests = source_tests(given, given)
    assert plan(hand_made("for x in [1]:   \n    assert f() == x  \n\n"), tests).tampered == {}
    assert plan(hand_made("for x in [1]:\n  assert f() == x\n"), tests).tampered == {"test_f": "its code was edited"}


def test_a_deleted_test_with_no_exercise_above_it_runs_last():
    """Last, when the most is defined: not after a cell that claims to be a solution without naming one."""
    source = hand_made("assert f() == 1")
    source.cells.reverse()  # the test first, above any exercise
    (test,) = source_tests(source, source)
    assert test.anchor is None
    nameless = nbformat.v4.new_code_cell("def f():\n    return 1\n")
    nameless.metadata["nbgrader"] = {"solution": True}
    student = nbformat.v4.new_notebook(cells=[nameless, nbformat.v4.new_code_cell("x = 1")])
    p = plan(student, [test])
    assert (p.tests, p.tampered) == ({2: "test_f"}, {"test_f": "deleted; restored from the source"})


def test_honest_submission_runs_its_own_cells_with_source_tests_and_no_problem(g, source, tests, order,
                                                                             source_cells):
    nb = g.right_notebook()
    p = plan(nb, tests)
    assert not p.tampered and not p.notes
    assert ran_tests(p) == order
    own = [c for c in nb.cells if c.cell_type == "code" and not is_test_cell(c)]
    expected = [c.source for c in own]
    ran = [i for i in range(len(p.sources)) if i not in p.tests]
    assert [p.sources[i] or expected[k] for k, i in enumerate(ran)] == expected
    blank = {k for k, i in enumerate(ran) if i in p.left_out}
    assert all(p.sources[ran[k]] == "" and not is_solution_cell(own[k]) for k in blank), "only demonstrations"
    assert all(p.sources[i] == source_cells[gid] for i, gid in p.tests.items()), "hidden tests come from the source"
    assert "### BEGIN HIDDEN TESTS" in p.sources[min(i for i, gid in p.tests.items() if gid.endswith("hidden"))]


def test_the_reference_plan_is_the_source_as_it_stands(source, order):
    p = reference_plan(source)
    code = [c for c in source.cells if c.cell_type == "code"]
    assert [s or code[i].source for i, s in enumerate(p.sources)] == [c.source for c in code]
    assert p.left_out and all(p.sources[i] == "" and not is_solution_cell(code[i]) and i not in p.tests
                              for i in p.left_out), "the demonstrations, and only they, are left out"
    assert ran_tests(p) == order


def test_a_deleted_test_cell_is_restored_after_its_exercise_and_flagged(g, tests, order):
    nb = g.right_notebook()
    del nb.cells[g.cell_index(nb, "test_encode_hidden")]
    p = plan(nb, tests)
    assert ran_tests(p) == order
    assert p.tampered["test_encode_hidden"] == "deleted; restored from the source"
    pos = {gid: i for i, gid in p.tests.items()}
    assert pos["test_encode"] < pos["test_encode_hidden"] < pos["test_decode"]
    shown = p.items.index(("test", "test_encode_hidden"))
    assert p.items[shown - 1] == ("test", "test_encode"), "right after it, above the next exercise's text too"


def test_every_deleted_test_of_an_exercise_is_restored_in_the_sources_order(g, tests, order):
    nb = g.right_notebook()
    del nb.cells[g.cell_index(nb, "test_encode_hidden")]
    del nb.cells[g.cell_index(nb, "test_encode")]
    p = plan(nb, tests)
    assert ran_tests(p) == order
    solution = next(i for i, (kind, what) in enumerate(p.items) if kind == "code" and what.source.startswith("def encode"))
    assert p.items[solution + 1:solution + 3] == [("test", "test_encode"), ("test", "test_encode_hidden")]


def test_an_edited_test_cell_runs_the_source_and_is_flagged(g, tests):
    nb = g.right_notebook()
    nb.cells[g.cell_index(nb, "test_encode")].source = "pass  # nothing to see"
    p = plan(nb, tests)
    i = next(i for i, gid in p.tests.items() if gid == "test_encode")
    assert p.sources[i] == "check.encode(encode)"
    assert p.tampered["test_encode"] == "its code was edited"
    assert not any("nothing to see" in s for s in p.sources)


def test_a_duplicated_test_cell_runs_once_and_is_flagged(g, tests, order):
    nb = g.right_notebook()
    nb.cells.insert(g.cell_index(nb, "test_decode") + 3,
                    g.copy_cell(nb, "test_decode", id="my-copy", source="print('my own copy')"))
    p = plan(nb, tests)
    assert ran_tests(p) == order
    assert "copy" in p.tampered["test_decode"]
    assert not any("my own copy" in s for s in p.sources)


def test_a_copy_right_after_the_original_runs_once_and_is_flagged(g, tests, order):
    """Right after it, the copy is in the source's order: only the copy rule can drop it."""
    nb = g.right_notebook()
    nb.cells.insert(g.cell_index(nb, "test_decode") + 1, g.copy_cell(nb, "test_decode", id="my-copy"))
    p = plan(nb, tests)
    assert ran_tests(p) == order
    assert p.tampered == {"test_decode": "a copy of this test cell was removed"}


def test_a_scratch_copy_of_the_exercise_above_does_not_hide_a_moved_test(g, tests, order):
    """A copy of the solution cell that is not marked as a solution is the student's scratch code: a test
    cell moved above the real solution is still moved, even when it comes after that copy."""
    nb = g.right_notebook()
    scratch = g.copy_cell(nb, "one_hot", id="scratch")
    scratch.metadata.nbgrader["solution"] = False
    cell = nb.cells.pop(g.cell_index(nb, "test_one_hot_hidden"))
    nb.cells.insert(1, cell)
    nb.cells.insert(1, scratch)
    p = plan(nb, tests)
    assert ran_tests(p) == order
    assert "moved above its exercise" in p.tampered["test_one_hot_hidden"]


def test_a_deleted_solution_leaves_its_tests_in_place_and_unflagged(g, tests, order):
    """The test cells of an exercise the student deleted run where they stand (and raise NameError there)."""
    nb = g.right_notebook()
    del nb.cells[g.solution_index(nb, "encode")]
    p = plan(nb, tests)
    assert ran_tests(p) == order and not p.tampered
    at = next(i for i, gid in p.tests.items() if gid == "test_encode")
    assert p.tests.get(at - 1) == "test_build_vocab_hidden", "it runs where it stands, not moved to the end"


def test_the_plan_keeps_the_markdown_cells_in_order_for_the_autograded_copy(g, tests):
    nb = g.right_notebook()
    p = plan(nb, tests)
    assert [c for kind, c in p.items if kind == "markdown"] == [c for c in nb.cells if c.cell_type == "markdown"]
    assert [kind for kind, _ in p.items].count("test") == len(p.tests)


def test_a_test_cell_moved_above_its_exercise_is_put_back_and_flagged(g, tests, order):
    nb = g.right_notebook()
    cell = nb.cells.pop(g.cell_index(nb, "test_one_hot_hidden"))
    nb.cells.insert(1, cell)
    p = plan(nb, tests)
    assert ran_tests(p) == order
    assert "moved" in p.tampered["test_one_hot_hidden"]
    pos = {gid: i for i, gid in p.tests.items()}
    solution = next(i for i, s in enumerate(p.sources) if s.startswith("def one_hot"))
    assert solution < pos["test_one_hot"] < pos["test_one_hot_hidden"]


def test_swapped_test_cells_run_in_the_source_order(g, tests, order):
    nb = g.right_notebook()
    a, b = g.cell_index(nb, "test_merge_pair"), g.cell_index(nb, "test_merge_pair_hidden")
    nb.cells[a], nb.cells[b] = nb.cells[b], nb.cells[a]
    p = plan(nb, tests)
    assert ran_tests(p) == order
    assert p.tampered == {"test_merge_pair": "moved out of order; put back in the source's order"}
    assert p.notes == [("tampered", "test cell test_merge_pair: moved out of order; put back in the source's order")]


@pytest.mark.parametrize("key, value", [("points", 100), ("points", "many"), ("grade", False),
                                        ("grade_id", "test_mine"), ("locked", False)])
def test_changed_metadata_is_undone_and_flagged(g, tests, key, value, order):
    nb = g.right_notebook()
    meta = nb.cells[g.cell_index(nb, "test_build_vocab")].metadata.nbgrader
    given, meta[key] = meta[key], value
    p = plan(nb, tests)
    assert ran_tests(p) == order, "the source's test cells run, whatever the metadata says"
    assert p.tampered["test_build_vocab"] == f"metadata {key} changed from {given!r} to {value!r}"


def test_the_same_points_written_as_a_float_or_a_string_are_not_a_change(g, tests):
    nb = g.right_notebook()
    meta = nb.cells[g.cell_index(nb, "test_build_vocab_hidden")].metadata.nbgrader
    meta["points"] = float(meta["points"])
    nb.cells[g.cell_index(nb, "test_encode")].metadata.nbgrader["points"] = "1"
    p = plan(nb, tests)
    assert not p.tampered and not p.notes


def test_a_test_cell_without_points_is_worth_nothing():
    solution = nbformat.v4.new_code_cell("def f():\n    return 1\n")
    solution.metadata["nbgrader"] = {"grade": False, "solution": True, "grade_id": "f", "locked": False}
    test = nbformat.v4.new_code_cell("assert f() == 1")
    test.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "test_f", "locked": True}
    nb = nbformat.v4.new_notebook(cells=[solution, test])
    (only,) = source_tests(nb, nb)
    assert (only.grade_id, only.points, only.anchor, only.source) == ("test_f", 0.0, "f", "assert f() == 1")


def test_a_test_cell_turned_into_markdown_still_runs(g, tests, order):
    nb = g.right_notebook()
    i = g.cell_index(nb, "test_decode_hidden")
    nb.cells[i] = nbformat.v4.new_markdown_cell("gone", metadata=nb.cells[i].metadata, id=nb.cells[i].id)
    p = plan(nb, tests)
    assert ran_tests(p) == order
    assert "markdown" in p.tampered["test_decode_hidden"]


@pytest.mark.parametrize("at", [1, -1], ids=["first", "last"])
def test_a_graded_cell_unknown_to_the_source_never_runs(g, tests, order, at):
    """Removed and noted, and only it: the cells after it are planned as if it were not there."""
    nb = g.right_notebook()
    honest = plan(nb, tests)
    fake = nbformat.v4.new_code_cell("print('free points')")
    fake.metadata["nbgrader"] = {"grade": True, "solution": False, "grade_id": "bonus", "points": 50}
    nb.cells.insert(at if at > 0 else len(nb.cells), fake)
    p = plan(nb, tests)
    assert not any("free points" in s for s in p.sources)
    assert p.notes == [("tampered", "a graded cell 'bonus' that is not in the source was removed")]
    assert (p.sources, p.tests, p.tampered) == (honest.sources, honest.tests, {})


def test_the_submission_object_is_not_modified(g, tests):
    nb = g.right_notebook()
    del nb.cells[g.cell_index(nb, "test_encode")]
    before = nbformat.writes(nb)
    plan(nb, tests)
    assert nbformat.writes(nb) == before


# --------------------------------------------------------------------------- what Jupyter's own commands do (issue 47)

def test_an_answer_turned_into_markdown_runs_as_code_and_is_said(g, tests, order):
    nb = g.right_notebook()
    i = g.cell_index(nb, "encode")
    nb.cells[i] = nbformat.v4.new_markdown_cell(nb.cells[i].source, metadata=nb.cells[i].metadata, id=nb.cells[i].id)
    p = plan(nb, tests)
    assert g.solutions()["encode"] in p.sources and ran_tests(p) == order and not p.missing
    assert [kind for kind, _ in p.notes] == ["cell type changed"] and "grade id encode" in p.notes[0][1]


def test_an_answer_split_inside_its_function_is_joined_and_a_whole_copy_is_not(g, tests):
    nb = g.right_notebook()
    i = g.cell_index(nb, "encode")
    lines = nb.cells[i].source.splitlines(keepends=True)
    second = g.copy_cell(nb, "encode", id="split-half", source="".join(lines[2:]))
    nb.cells[i].source = "".join(lines[:2])
    nb.cells.insert(i + 1, second)
    p = plan(nb, tests)
    assert g.solutions()["encode"] in p.sources and [k for k, _ in p.notes] == ["cell split"]
    copied = g.right_notebook()  # Duplicate: two whole cells that each run alone stay two cells
    copied.cells.insert(i + 1, g.copy_cell(copied, "encode", id="copy"))
    p = plan(copied, tests)
    assert p.sources.count(g.solutions()["encode"]) == 2 and not p.notes


def test_a_deleted_answer_is_named_with_how_to_restore_it(g, tests, order):
    nb = g.right_notebook()
    del nb.cells[g.cell_index(nb, "encode")]
    p = plan(nb, tests)
    assert ran_tests(p) == order and set(p.missing) == {"encode"}
    assert "the cell with grade id encode was deleted" in p.missing["encode"]
    assert "restore it from the released notebook" in p.missing["encode"]
    assert ("missing cell", p.missing["encode"]) in p.notes


def test_a_cell_that_only_shares_a_test_cells_id_is_the_learners_code(g, tests, order):
    """Ids repeated by another tool, or renumbered by a new release: an answer or a learner's cell whose id is a
    test cell's still runs as itself; a test cell stripped of its metadata is still the test."""
    nb = g.right_notebook()
    test_id = nb.cells[g.cell_index(nb, "test_decode")].id
    nb.cells[g.cell_index(nb, "encode")].id = test_id
    g.add_cell(nb, "mine = 1\n")
    nb.cells[g.setup_index(nb) + 1].id = nb.cells[g.cell_index(nb, "test_one_hot")].id
    p = plan(nb, tests)
    assert g.solutions()["encode"] in p.sources and "mine = 1\n" in p.sources
    assert ran_tests(p) == order and not p.tampered
    stripped = g.right_notebook()
    stripped.cells[g.cell_index(stripped, "test_decode")].metadata.pop("nbgrader")
    p = plan(stripped, tests)
    assert ran_tests(p) == order and "metadata grade changed" in p.tampered["test_decode"]
