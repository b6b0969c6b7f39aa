"""nbgrader's Validate button and Assignment List, as a student meets them in JupyterLab 4 and Notebook 7.

nbgrader's own issues say these break when Jupyter moves (#1866 and #1883: Validate on Notebook 7; #1948: the
extension on JupyterLab 4.3+). One Jupyter server (the versions requirements.txt pins) serves both front ends
over a student's home: 01 fetched, its first two answers written (build_vocab with a known mistake, encode
right) and the rest of the file cut, to keep each Validate cheap; 02 released in the course's exchange. In each
front end Validate must name exactly the check the grade fails (the same pass/fail as ``grade`` and
``autograder validate``, tests/test_mangled.py), and the Assignment List, opened from the Nbgrader menu as
tests/course/test_hub.py opens it, must offer 02 to fetch and 01 to submit. The nbgrader parts of the page are
held to axe-core's critical and serious rules (tests/browser/axe.py). About 21 core-seconds.
"""
from __future__ import annotations

import importlib.metadata
import os
import re
import shutil

import nbformat
import pytest

from autograder import paths
from autograder.nbio import is_solution_cell, is_test_cell
from tests import builders

from .axe import SEVERE, TAGS, axe_source
from .conftest import jupyterlab, keep_shot, require_chromium

pytestmark = pytest.mark.browser

COURSE = "transformer-math"
FETCHED, RELEASED = "01_tokens_and_ids", "02_shapes_and_matmul"
MISTAKE = builders.mistakes(FETCHED)[0]  # a known wrong build_vocab (tests/checks/test_nb01.py): its check fails
KEPT = 2  # answers of 01 the student's file keeps (the mistake's and one right): Validate runs these, not 14
# nbgrader 0.9.6's own markup: its fetched list has role="list" around rows that are not list items. Any other
# critical or serious finding fails the test; this one goes when nbgrader fixes it (then this list empties).
NBGRADER_OWN = ["critical aria-required-children (Certain ARIA roles must contain particular children): "
                "['#fetched_assignments_list']"]
FRONT_ENDS = {"JupyterLab 4": "lab/tree", "Notebook 7": "notebooks"}
TIMEOUT_MS = 120_000
POLL_MS = 250  # a wait checks four times a second, not at every frame (a core-second per wait of 10 s)
AXE_IN = """async ([selector, tags]) => {
  const found = await axe.run(document.querySelector(selector), {runOnly: {type: 'tag', values: tags},
                                                               resultTypes: ['violations']});
  return found.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                     nodes: v.nodes.map(n => n.target.join(' '))}));
}"""


def pinned(package: str) -> str:
    text = (paths.root() / "requirements.txt").read_text(encoding="utf-8")
    found = re.search(rf"^{re.escape(package)}==(\S+)", text, re.M)
    assert found, f"requirements.txt pins no {package}"
    return found.group(1)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """Jupyter over a student's home, with the course's exchange: 01 fetched (answered, one mistake), 02 released."""
    require_chromium()
    base = tmp_path_factory.mktemp("student")
    home, exchange = base / "home", base / "exchange"
    for assignment in (FETCHED, RELEASED):
        outbound = exchange / COURSE / "outbound" / assignment
        outbound.mkdir(parents=True)
        shutil.copy(paths.notebooks_dir() / f"{assignment}.ipynb", outbound)
    (exchange / COURSE / "inbound").mkdir()
    (home / FETCHED).mkdir(parents=True)
    nbformat.write(trimmed(builders.wrong_notebook(FETCHED, mistake=MISTAKE)), home / FETCHED / f"{FETCHED}.ipynb")
    (base / "config").mkdir()
    (base / "config" / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.course_id = {COURSE!r}\nc.Exchange.root = {str(exchange)!r}\n")
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)
    with jupyterlab(home, base, env=env) as running:
        yield running


def trimmed(nb):
    """``nb`` up to the tests of its KEPT-th answer: what Validate runs is the set-up, one wrong answer and one
    right, not all fourteen with their plots (some 5 core-seconds a run, twice)."""
    answers = [i for i, c in enumerate(nb.cells) if is_solution_cell(c)]
    last = answers[KEPT - 1]
    end = next(i for i in range(last + 1, len(nb.cells)) if not is_test_cell(nb.cells[i]))
    nb.cells = nb.cells[:end]
    return nb


def nbgrader_violations(page, selector: str) -> list[str]:
    """axe-core's critical and serious findings inside ``selector`` (nbgrader's part of the page, not Jupyter's)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source())
    return [f"{v['impact']} {v['id']} ({v['help']}): {v['nodes'][:3]}"
            for v in page.evaluate(AXE_IN, [selector, TAGS]) if v["impact"] in SEVERE]


def test_the_front_ends_are_the_pinned_versions():
    for package in ("jupyterlab", "notebook", "nbgrader"):
        assert importlib.metadata.version(package) == pinned(package), package


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_validate_names_the_one_check_the_grade_fails_and_the_assignment_list_offers_both(server, page, shots,
                                                                                          front_end):
    page.goto(f"{server.url}/{FRONT_ENDS[front_end]}/{FETCHED}/{FETCHED}.ipynb")
    button = page.get_by_role("button", name="Validate").first
    button.wait_for(timeout=TIMEOUT_MS)
    button.click()
    dialog = page.locator(".jp-Dialog")
    dialog.wait_for(timeout=TIMEOUT_MS)
    page.wait_for_function("() => !document.querySelector('.jp-Dialog').innerText.includes('Validating')",
                           timeout=TIMEOUT_MS, polling=POLL_MS)
    keep_shot(page, shots / "validate.png")
    said = dialog.inner_text()
    assert re.findall(r"^check\.(\w+)\(", said, re.M) == [MISTAKE.exercise], said  # that check, and no other
    assert nbgrader_violations(page, ".jp-Dialog") == []
    dialog.get_by_role("button").last.click()

    if front_end == "Notebook 7":  # its notebook page's Nbgrader menu only creates assignments; the list is here
        page.goto(f"{server.url}/tree")
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Nbgrader$")).click(timeout=TIMEOUT_MS)
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Assignment List$")).click()  # a tab, in both
    page.locator("#nbgrader-assignment-list").wait_for(timeout=TIMEOUT_MS)
    released = page.locator("#released_assignments_list .list_item", has_text=RELEASED).first
    fetched = page.locator("#fetched_assignments_list .list_item", has_text=FETCHED).first  # then its notebooks
    released.wait_for(timeout=TIMEOUT_MS)
    fetched.wait_for(timeout=TIMEOUT_MS)
    keep_shot(page, shots / "assignment-list.png")
    assert released.get_by_role("button", name="Fetch").count() == 1
    assert fetched.get_by_role("button", name="Submit").count() == 1
    assert nbgrader_violations(page, "#nbgrader-assignment-list") == NBGRADER_OWN
