"""Does every reveal cell judge the course's own answer right?

A prediction question is answered in its solution cell, and a later cell computes the true value and calls
``check.<question>.reveal(<question>, truth)``, which prints whether the prediction matches (questions.py,
``Question.reveal``). Run on the solutions, the prediction is the course's own answer, so every reveal must say
right: a reveal that passes the wrong truth tells the learner who predicted correctly that they were wrong.

Checked twice: in the outputs stored in solutions/ (read from the files, no kernel), and in a fresh run of each
notebook's cells in this process, where every reveal call's words are caught as it prints them.
"""
from __future__ import annotations

import ast
import contextlib
import io
import os
import re
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from autograder import paths, reference
from autograder.checks.questions import Question
from autograder.nbio import grade_id, is_solution_cell, is_test_cell, read_notebook
from tests.conftest import assignment_params
from tests.harness import answer, is_question, reveal_text

# What Question.reveal prints: one line that says right, or one of these, which say anything else.
RIGHT = re.compile(r"^✔ Your prediction .+ is right\.$", re.M)
NOT_RIGHT = ("✘", "is wrong", "No prediction yet", "cannot be compared")  # and "`name()` raised ...", per question
# A question that asks for a reason prints it on a line of its own after the verdict (or asks for the missing one).
REASON = re.compile(r"^  (Your reason: “.+”\. Does it still hold, now that you have seen the answer\?|You gave no reason\. .+)$")


def verdict_of(text: str) -> str:
    """A reveal's printed words without its reason line: the verdict alone (a reason's words may say anything)."""
    return "\n".join(line for line in text.strip().splitlines() if not REASON.fullmatch(line))

# A fresh run of 10 trains several TinyGPTs and its experiments (about 40 s in this process); each other
# notebook takes under 2 s. 10's reveals are judged in its stored outputs (the test above), and nbval proves a
# fresh run of 10 prints exactly those outputs (tests/test_solutions_nbval.py, strict), so running it a third
# time here proves nothing more: it runs with AUTOGRADER_FRESH_ALL=1.
SLOW_TO_RUN = {"10_decoder_block"}
FRESH = [p for p in assignment_params() if p.id not in SLOW_TO_RUN or os.environ.get("AUTOGRADER_FRESH_ALL") == "1"]


@dataclass(frozen=True)
class Reveal:
    """One call ``check.<question>.reveal(<fn>, <truth>)`` in a cell of a solutions notebook."""

    question: str
    fn: str  # the source of the first argument: the function whose prediction is judged
    truth: str  # the source of the second argument


def reveals_in(source: str) -> list[Reveal]:
    """The reveal calls in one code cell's source, in order."""
    found = []
    for node in ast.walk(ast.parse(reference._runnable(source))):
        f = getattr(node, "func", None)
        if (isinstance(node, ast.Call) and isinstance(f, ast.Attribute) and f.attr == "reveal"
                and isinstance(f.value, ast.Attribute) and isinstance(f.value.value, ast.Name)
                and f.value.value.id == "check"):
            args = [ast.unparse(a) for a in node.args] + ["", ""]
            found.append(Reveal(f.value.attr, args[0], args[1]))
    return found


def questions_of(assignment: str) -> list[str]:
    nb = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    return [grade_id(c) for c in nb.cells if is_solution_cell(c) and is_question(assignment, grade_id(c))]


def printed_text(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream":
            parts.append(out.get("text", ""))
        elif "data" in out:
            parts.append(out["data"].get("text/plain", ""))
    return "".join(parts)


def not_right(text: str, question: str) -> list[str]:
    """The words of ``text`` that only a reveal which did not judge the answer right prints."""
    return [w for w in (*NOT_RIGHT, f"`{question}()` raised") if w in text]


def test_the_words_looked_for_are_what_a_reveal_prints():
    """If questions.py rewords its reveal, this test (not a silent pass of the others) says so."""
    a, q = "01_tokens_and_ids", "predict_param_counts"
    right = reveal_text(a, q, answer(q, "(16000, 80)"))
    assert RIGHT.fullmatch(verdict_of(right)) and not not_right(right, q), right
    assert REASON.fullmatch(right.rstrip().splitlines()[1]), right  # a question that asks a reason asks for it
    reasoned = reveal_text(a, q, answer(q, "(16000, 80), 'V * d numbers'"))
    assert RIGHT.fullmatch(verdict_of(reasoned)) and "Your reason: “V * d numbers”" in reasoned, reasoned
    for wrong in (answer(q, "(80, 80)"), answer(q, "(80,)"), f"def {q}():\n    raise NotImplementedError()\n",
                  f"def {q}():\n    return 1 / 0\n"):
        said = reveal_text(a, q, wrong)
        assert not RIGHT.search(said) and not_right(said, q), said


@pytest.mark.parametrize("assignment", assignment_params())
def test_every_question_has_a_reveal_of_its_own_answer(assignment):
    """Is each question revealed at least once, and does each reveal judge the question's own function?"""
    nb = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    calls = [r for c in nb.cells if c.cell_type == "code" for r in reveals_in(c.source)]
    assert {r.question for r in calls} == set(questions_of(assignment)), f"{assignment}: questions without a reveal"
    for r in calls:
        assert r.fn == r.question, f"{assignment}: check.{r.question}.reveal is given {r.fn}, not {r.question}"


@pytest.mark.parametrize("assignment", assignment_params())
def test_every_stored_reveal_says_the_course_answer_is_right(assignment):
    """What the solutions' reveal cells printed when they were built: one "right" per reveal, nothing else."""
    nb = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    wrong = []
    for i, cell in enumerate(nb.cells):
        calls = reveals_in(cell.source) if cell.cell_type == "code" else []
        if not calls:
            continue
        text = verdict_of(printed_text(cell))
        bad = [w for r in calls for w in not_right(text, r.question)]
        if bad or len(RIGHT.findall(text)) != len(calls):
            given = ", ".join(f"{r.question} against {r.truth}" for r in calls)
            wrong.append(f"cell {i} ({given}): {len(RIGHT.findall(text))} of {len(calls)} reveals say right; it "
                         f"prints {bad or 'no verdict'}:\n{text.strip()}")
    assert not wrong, f"{assignment}: a reveal judges the solution's own answer wrong\n" + "\n".join(wrong)


@contextlib.contextmanager
def process_settings_kept():
    """A notebook run in this process changes what the process keeps (print options, torch's threads and seeds,
    environment variables, open figures); the tests that run here after it get them back as they were."""
    env, np_print, np_rng = dict(os.environ), np.get_printoptions(), np.random.get_state()
    threads, torch_rng = torch.get_num_threads(), torch.get_rng_state()
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(env)
        np.set_printoptions(**np_print)
        np.random.set_state(np_rng)
        torch.set_num_threads(threads)
        torch.set_rng_state(torch_rng)
        torch.set_printoptions(profile="default")
        plt.close("all")


def run_catching_reveals(assignment: str, monkeypatch) -> list[tuple[str, str]]:
    """Every code cell of the solution but the test cells, in order, in one namespace of this process (no kernel);
    returns (question, what its reveal printed) for each reveal call, the solution's own function judged against
    the truth its reveal cell computed."""
    said: list[tuple[str, str]] = []
    original = Question.reveal

    def catching(self, fn, truth):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            original(self, fn, truth)
        said.append((self.name, out.getvalue()))

    monkeypatch.setattr(Question, "reveal", catching)
    nb = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    namespace: dict = {"__name__": "__main__"}
    # The course's notebook stands on the course's earlier pieces (09, 10), never on notebooks found nearby.
    # reference has no public way to say so for a run of every cell, hence its private context.
    with process_settings_kept(), reference._importing(reference.REFERENCE), contextlib.redirect_stdout(io.StringIO()):
        for i, cell in enumerate(nb.cells):
            if cell.cell_type == "code" and not is_test_cell(cell):
                exec(compile(reference._runnable(cell.source), f"<{assignment} cell {i}>", "exec"), namespace)
    return said


@pytest.mark.parametrize("assignment", [pytest.param(*p.values, marks=[*p.marks, *([pytest.mark.slow] if p.id in
                                                                                    SLOW_TO_RUN else [])], id=p.id)
                                        for p in FRESH])
def test_a_fresh_run_reveals_every_course_answer_as_right(assignment, monkeypatch):
    """Run now, each reveal judges the solution's own function against the truth its cell computes: right."""
    said = run_catching_reveals(assignment, monkeypatch)
    assert {q for q, _ in said} == set(questions_of(assignment)), f"{assignment}: a question was never revealed"
    wrong = [f"{q}: {text.strip()}" for q, text in said
             if not RIGHT.fullmatch(verdict_of(text)) or not_right(verdict_of(text), q)]
    unasked = [f"{q}: {text.strip()}" for q, text in said if "You gave no reason" in text]
    assert not unasked, f"{assignment}: the solution answers a question that asks a reason without one:\n" + "\n".join(unasked)
    assert not wrong, f"{assignment}: the reveal judges the solution's own answer wrong\n" + "\n".join(wrong)
