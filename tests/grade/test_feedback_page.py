"""Does a learner's feedback page carry the notebook's title, say where a timed-out test was stopped, and keep
every link inside the page (JupyterLab's HTML viewer shows it in a sandboxed frame)?

Fast: built from records (tests/builders.py's broken class of 04) and from a traceback as the engine keeps it.
The whole path, a real loop interrupted by the real engine, is in tests/grade/test_broken_class.py.
"""
from __future__ import annotations

import dataclasses
import re
from html.parser import HTMLParser

import nbformat

from autograder import paths
from autograder.grade.output import feedback
from autograder.grade.submission import judge
from autograder.engine import CellResult, RunResult
from autograder.grade.submission.interrupted import StoppedAt, stopped_at
from autograder.grade.submission.results import SubmissionResult
from autograder.grade.submission.sanitize import Plan, SourceTest
from autograder.nbio import ANSI, notebook_title, read_notebook
from tests import builders

A = builders.NB04
LOOP = "def greedy_token(logits):\n    n = 0\n    while True:\n        n += 1\n"
# What the engine kept of a real time-out (engine/child.py's SIGINT, IPython's traceback): the check cell (In[3])
# called greedy_token (In[2]); the innermost frame is the engine's own handler.
INTERRUPTED = {"output_type": "error", "ename": "KeyboardInterrupt", "evalue": "", "traceback": [
    "---------------------------------------------------------------------------",
    "KeyboardInterrupt                         Traceback (most recent call last)",
    "Cell In[3], line 4\n      2 def check(f):\n      3     return f(np.zeros(3))\n----> 4 check(greedy_token)\n",
    "Cell In[3], line 3, in check(f)\n      2 def check(f):\n----> 3     return f(np.zeros(3))\n",
    "Cell In[2], line 3, in greedy_token(logits)\n      1 def greedy_token(logits):\n      2     n = 0\n"
    "----> 3     while True:\n      4         n += 1\n",
    "File /srv/autograder/engine/child.py:132, in cell_runner.<locals>.interrupt(signum, frame)\n"
    "    130 if in_cell[0]:\n    131     interrupted[0] = True\n--> 132     raise KeyboardInterrupt\n",
    "KeyboardInterrupt: "]}
CELLS = {0: ("", "import numpy as np"), 1: ("greedy_token", LOOP)}  # the test cell (position 2) is not the learner's
WHILE = StoppedAt(cell="greedy_token", line=3, code="while True:", function="greedy_token(logits)")


def records() -> dict[str, SubmissionResult]:
    return {r.student_id: r for r in builders.broken_04_records()}


# --------------------------------------------------------------------------- the title

def test_the_page_is_titled_by_the_notebooks_heading_not_its_id():
    page = feedback.page(records()["endless_loop"])
    title = notebook_title(read_notebook(paths.solutions_dir() / f"{A}.ipynb"))
    assert title.startswith("04 · "), title
    assert f"<h1>{title}</h1>" in page and f"<title>{title}: feedback for endless_loop</title>" in page
    assert f"<h1>{A}" not in page and f"<title>{A}" not in page
    unknown = dataclasses.replace(records()["blank"], assignment_id="99_not_a_notebook")
    assert "<h1>99_not_a_notebook</h1>" in feedback.page(unknown), "no notebook: its id, never an empty title"


# --------------------------------------------------------------------------- where a time-out was stopped

def test_the_interrupted_traceback_names_the_learners_line_that_was_running():
    assert stopped_at([INTERRUPTED], CELLS) == WHILE, "the innermost frame in a cell of the learner's"
    colored = dict(INTERRUPTED, traceback=[f"\x1b[0;31m{t}\x1b[0m" if t.startswith("Cell") else t
                                           for t in INTERRUPTED["traceback"]])
    assert ANSI.search(colored["traceback"][2]) and stopped_at([colored], CELLS) == WHILE, "nbclient's colours"
    # a cell skipped after a crash shifts the execution counts: the cell is found by its code, not by In[N]
    assert stopped_at([INTERRUPTED], {0: ("", "x = 1"), 1: ("", "import numpy as np"), 2: ("greedy_token", LOOP)}) \
        == WHILE


def test_a_frame_of_a_test_cell_or_a_library_is_never_named():
    """A hidden test's code must stay hidden: with only test cells and libraries in the traceback, nothing is said."""
    assert stopped_at([INTERRUPTED], {0: ("", "import numpy as np")}) is None
    assert stopped_at([INTERRUPTED], {1: ("greedy_token", "def greedy_token(logits):\n    return 0\n")}) is None, (
        "a cell whose line differs from the traceback's is not the frame's cell")
    assert stopped_at([{"output_type": "error", "ename": "KeyboardInterrupt", "evalue": "", "traceback": []}],
                      CELLS) is None, "an interrupt that landed outside the cell's code has no traceback"
    assert stopped_at([dict(INTERRUPTED, ename="ValueError")], CELLS) is None, "only the interrupt's traceback"


def test_the_grader_records_where_a_timed_out_test_was_stopped_and_keeps_it():
    """judge.score puts the line in the test's score, and the saved result keeps it through JSON."""
    setup = nbformat.from_dict({"cell_type": "code", "source": "import numpy as np", "metadata": {}})
    solution = nbformat.from_dict({"cell_type": "code", "source": LOOP, "metadata": {
        "nbgrader": {"solution": True, "grade": False, "grade_id": "greedy_token"}}})
    check = "check.greedy_token(greedy_token)"
    plan = Plan(sources=["import numpy as np", LOOP, check], tests={2: "test_greedy_token"},
                items=[("code", setup), ("code", solution), ("test", "test_greedy_token")])
    test = SourceTest("test_greedy_token", "c", check, check, {}, 1.0, "greedy_token")
    run = RunResult(cells=[CellResult(0, "ok", [], 0.1), CellResult(1, "ok", [], 0.1),
                           CellResult(2, "timeout", [INTERRUPTED], 6.0, "interrupted after 6 s")], isolation="")
    [score] = judge.score(run, plan, [test], {"test_greedy_token": [{}]}, seed=1)
    assert score.status == "timeout" and score.stopped == WHILE
    assert judge.TestScore.from_json(score.to_json()) == score
    assert "stopped" not in judge.TestScore("test_x", 1.0, 1.0, "passed").to_json(), "only a time-out carries it"


def test_a_time_out_on_the_page_names_the_line_once_per_exercise():
    page = feedback.page(records()["endless_loop"])
    section = re.search(r'<section aria-label="greedy_token">.*?</section>', page, re.S).group(0)
    assert section.count('class="stopped"') == 1, "said once, not once per timed-out test"
    assert "line 3 of your <code>greedy_token</code> cell" in section and "<code>greedy_token(logits)</code>" in section
    assert "3 | while True:" in section
    assert 'class="stopped"' not in re.search(r'<section aria-label="softmax">.*?</section>|$', page, re.S).group(0)


# --------------------------------------------------------------------------- links

class Links(HTMLParser):
    def __init__(self, page: str):
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()
        self.other: list[str] = []  # src, base, target, action: anything that leaves or loads from elsewhere
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if "href" in a:
            self.hrefs.append(a["href"])
        self.other += [f"{tag} {k}" for k in ("src", "target", "action", "formaction") if k in a]
        if tag in ("base", "iframe", "form", "link", "script"):
            self.other.append(tag)


def test_every_link_on_a_feedback_page_stays_in_the_page():
    """In JupyterLab's sandboxed HTML viewer only an in-page anchor works: every href is #id of an element on the
    page, and nothing is loaded from, or sent to, another file."""
    results = [*records().values(), *builders.made_up_class(40, seed=3)[0]]
    linked = 0
    for r in results:
        seen = Links(feedback.page(r))
        outside = [h for h in seen.hrefs if not h.startswith("#")]
        assert not outside, f"{r.student_id}: a link out of the page: {outside}"
        missing = [h for h in seen.hrefs if h[1:] not in seen.ids]
        assert not missing, f"{r.student_id}: a link to no element of the page: {missing}"
        assert not seen.other, f"{r.student_id}: {seen.other}"
        linked += len(seen.hrefs)
    assert linked > 10, "the pages link their exercises from the summary of the points lost"


def test_the_problems_list_says_each_timed_out_exercise_once():
    page = feedback.page(records()["endless_loop"])
    listed = re.search(r"<h2>Problems with this submission</h2><ul>(.*?)</ul>", page, re.S).group(1)
    items = re.findall(r"<li>(.*?)</li>", listed, re.S)
    assert len(items) == 2 and sum("interrupted after 6 s" in i for i in items) == 2, items
    assert items[0] == "<b>timed out</b>: the check and the hidden tests of greedy_token: interrupted after 6 s", items
    assert sum("sample_token" in i for i in items) == 1, "one line per exercise, whose tests both timed out"
