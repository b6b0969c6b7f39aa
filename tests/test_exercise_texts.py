"""Does every exercise's text leave the solution to the learner, and offer hints before a failure?

For each exercise (a solution cell) of each solutions notebook, its text is the markdown between the previous
exercise's solution cell and its own. That text must hold at least one hint a learner can open before trying
(a collapsed ``<details><summary>Hint ...</summary>``), and must not print a distinctive line of the solution:
a line between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` of at least MIN_CHARS characters, without its
comment, or what it returns or assigns, compared with the text's whitespace ignored.

Round 5's rules, where a program can apply them: the stub's own text (its docstring) states the contract and
prints no solution line; a second hint prints none either, down to HINT_MIN_CHARS; every notebook has a bug
hunt; every prediction asks for a one-line reason.
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass

import nbformat
import pytest

from autograder import paths
from autograder.nbio import grade_id, is_solution_cell, read_notebook
from tests.conftest import assignment_params

MIN_CHARS = 20  # shorter code (`E[ids]`, `Q @ K.T`, `return 2`) is the vocabulary of the text, not a give-away
HINT = re.compile(r"<details>\s*<summary>\s*Hint\b", re.I)
SOLUTION = re.compile(r"^[ \t]*### BEGIN SOLUTION[^\n]*\n(.*?)^[ \t]*### END SOLUTION", re.M | re.S)
# "name = ..." or "a, b[i] += ...": what is assigned, without the name (not "==", "<=", ">=", "!=")
ASSIGNED = re.compile(r"^[\w.\[\], :]+?\s*(?:[-+*/@%]|//|\*\*)?=(?!=)\s*(.+)$")



@dataclass(frozen=True)
class ExerciseText:
    """One exercise: its name, the markdown before its solution cell, and its solution's source."""

    assignment: str
    name: str
    markdown: str
    solution: str


def exercise_texts(nb: nbformat.NotebookNode, assignment: str) -> list[ExerciseText]:
    """Each exercise of ``nb`` with the markdown cells between the previous exercise's solution cell and its own."""
    found, markdown = [], []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            markdown.append(cell.source)
        elif is_solution_cell(cell):
            found.append(ExerciseText(assignment, grade_id(cell), "\n\n".join(markdown), cell.source))
            markdown = []
    return found


def _without_comments(code: str) -> list[str]:
    """The lines of ``code`` with their comments cut off (a "#" inside a string stays)."""
    lines = code.splitlines()
    try:
        comments = [t.start for t in tokenize.generate_tokens(io.StringIO(code).readline) if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return lines
    for row, col in comments:
        lines[row - 1] = lines[row - 1][:col]
    return lines


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


def distinctive_lines(solution: str, min_chars: int = MIN_CHARS) -> list[str]:
    """The lines between the solution markers that only a solution holds, each as a line, without its comment,
    and also as what it returns or assigns: the forms a text could print (``min_chars`` or more, spaces
    ignored)."""
    block = SOLUTION.search(solution)
    if not block:
        return []
    found = []
    for line in _without_comments(block.group(1)):
        code = line.strip()
        forms = {code}
        if code.startswith("return "):
            forms.add(code[len("return "):].strip())
        assigned = ASSIGNED.match(code)
        if assigned:
            forms.add(assigned.group(1).strip())
        found += sorted(f for f in forms if len(_squeezed(f)) >= min_chars and not re.fullmatch(r"[\w.]+", f))
    return found


def has_hint(exercise: ExerciseText) -> bool:
    return bool(HINT.search(exercise.markdown))


def printed_solution_lines(exercise: ExerciseText) -> list[str]:
    """The distinctive lines of the solution that its text prints (spaces ignored)."""
    text = _squeezed(exercise.markdown)
    return [line for line in distinctive_lines(exercise.solution) if _squeezed(line) in text]


def _params():
    """One param per notebook, with its nbNN marker."""
    return assignment_params()


def _exercises(assignment: str) -> list[ExerciseText]:
    return exercise_texts(read_notebook(paths.solutions_dir() / f"{assignment}.ipynb"), assignment)


@pytest.mark.parametrize("assignment", _params())
def test_every_exercise_offers_a_hint_before_its_solution_cell(assignment):
    missing = [e.name for e in _exercises(assignment) if not has_hint(e)]
    assert not missing, (f"{assignment}: no <details><summary>Hint ...</summary> in the markdown before "
                         f"{', '.join(missing)}")


@pytest.mark.parametrize("assignment", _params())
def test_no_exercise_text_prints_its_solution(assignment):
    printed = {e.name: lines for e in _exercises(assignment) if (lines := printed_solution_lines(e))}
    assert not printed, f"{assignment}: the text before an exercise prints its solution: {printed}"


# --------------------------------------------------------------------------- the test itself, on planted notebooks

def planted(markdown: str, solution: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(solution)
    cell.metadata["nbgrader"] = {"grade": False, "grade_id": "cross_entropy", "locked": False, "schema_version": 3,
                                 "solution": True, "task": False}
    nb.cells = [nbformat.v4.new_markdown_cell("**Exercise.** Write `cross_entropy`."),
                nbformat.v4.new_code_cell("check.softmax(softmax)"),  # a previous exercise's test: not markdown
                nbformat.v4.new_markdown_cell(markdown), cell]
    return nb


SOLUTION_CELL = '''def cross_entropy(logits, targets):
    """Mean NLL."""
    ### BEGIN SOLUTION
    m = logits.max(axis=-1, keepdims=True)  # (N, 1)
    log_p = logits - m - np.log(np.exp(logits - m).sum(axis=-1, keepdims=True))  # (N, V)
    return float(-log_p[np.arange(len(targets)), targets].mean())
    ### END SOLUTION
'''
HINTS = "<details><summary>Hint 1: the idea</summary>\n\nPick each row's own target.\n\n</details>"


def test_a_text_that_prints_a_solution_line_is_caught_with_the_line():
    for text in ("Then `return float(-log_p[np.arange(len(targets)), targets].mean())`.",  # the whole line
                 "Then `float(-log_p[np.arange(len(targets)),targets].mean())` ...",  # what it returns, respaced
                 "Use `logits - m - np.log(np.exp(logits - m).sum(axis=-1, keepdims=True))`"):  # what it assigns
        [exercise] = exercise_texts(planted(text + "\n\n" + HINTS, SOLUTION_CELL), "planted")
        assert printed_solution_lines(exercise), text


def test_a_text_that_explains_the_idea_and_hides_its_hints_passes():
    text = "Take the log-probability of each row's own target, shape `(N,)`, and average.\n\n" + HINTS
    [exercise] = exercise_texts(planted(text, SOLUTION_CELL), "planted")
    assert has_hint(exercise) and not printed_solution_lines(exercise)
    # short code and comments are the text's vocabulary, never a give-away
    assert not any("(N, V)" in line or line == "m" for line in distinctive_lines(SOLUTION_CELL))


def test_an_exercise_without_a_hint_before_it_is_caught():
    [exercise] = exercise_texts(planted("Write it.", SOLUTION_CELL), "planted")
    assert not has_hint(exercise)
    # a hint before the previous exercise's solution cell is that exercise's, not the next one's
    nb = planted(HINTS, SOLUTION_CELL)
    second = nbformat.v4.new_code_cell(SOLUTION_CELL.replace("cross_entropy", "nll"))
    second.metadata["nbgrader"] = {**nb.cells[-1].metadata["nbgrader"], "grade_id": "nll"}
    nb.cells.append(second)
    assert [(e.name, has_hint(e)) for e in exercise_texts(nb, "planted")] == [("cross_entropy", True), ("nll", False)]


# --------------------------------------------------------------------------- Round 5: exercises that teach
# Rules a reading by a new learner applies, where a program can apply them too.
HINT_MIN_CHARS = 8  # a second hint holds no solution line of 8 characters or more (`Q @ K.T` is 5: vocabulary)
HINT_2 = re.compile(r"<details>\s*<summary>\s*Hint 2\b[^<]*</summary>(.*?)</details>", re.I | re.S)
BUG_REGION = re.compile(r"^[ \t]*### BEGIN BUG.*?^[ \t]*### END BUG[^\n]*$", re.M | re.S)
# The vocabulary of a contract or a hint, not a give-away: names and tuples of names (`grad_E, grad_W`), and
# one call of a name on names (`list(data)`, `np.zeros_like(x)`).
VOCABULARY = re.compile(r"[\w.,\s]+|[\w.]+\([\w.,\s]*\)")


def telling(lines: list[str]) -> list[str]:
    return [line for line in lines if not VOCABULARY.fullmatch(line)]


def stub_text(exercise: ExerciseText) -> str:
    """What the learner reads in the exercise's own cell: the source without the solution and the bug regions."""
    return BUG_REGION.sub("", SOLUTION.sub("", exercise.solution))


def second_hints(exercise: ExerciseText) -> str:
    return "\n".join(HINT_2.findall(exercise.markdown))


def hint_lines(solution: str) -> list[str]:
    """The solution lines a second hint must not hold: distinctive_lines, down to HINT_MIN_CHARS."""
    return distinctive_lines(solution, HINT_MIN_CHARS)


def printed_lines(assignment: str, solution_lines, text_of) -> dict[str, list[str]]:
    """exercise -> the telling lines of its solution (``solution_lines`` of it) that ``text_of`` it holds."""
    return {e.name: lines for e in _exercises(assignment)
            if (lines := [line for line in telling(solution_lines(e.solution))
                          if _squeezed(line) in _squeezed(text_of(e))])}


@pytest.mark.parametrize("assignment", _params())
def test_no_stub_docstring_prints_its_solution(assignment):
    """The stub states the contract; a docstring that holds the solution's line makes the exercise a copy."""
    printed = printed_lines(assignment, distinctive_lines, stub_text)
    assert not printed, f"{assignment}: the stub's own text (its docstring) prints its solution: {printed}"


@pytest.mark.parametrize("assignment", _params())
def test_no_second_hint_holds_a_solution_line(assignment):
    """Hint 2 names the shape, the axis or the one function to look up, never the line itself."""
    printed = printed_lines(assignment, hint_lines, second_hints)
    assert not printed, f"{assignment}: a second hint holds its solution's line: {printed}"


@pytest.mark.parametrize("assignment", _params())
def test_every_notebook_has_a_bug_hunt(assignment):
    """A bug hunt (autograder/bug_hunt.py): the student cell shows code that runs and is wrong."""
    from autograder.bug_hunt import is_bug_hunt

    assert any(is_bug_hunt(e.solution) for e in _exercises(assignment)), f"{assignment} has no bug hunt"


@pytest.mark.parametrize("assignment", _params())
def test_every_prediction_asks_a_reason(assignment):
    """Each question is declared with reason=True, and the solution's own answer gives one."""
    from autograder.checks.questions import is_question
    from autograder.checks.registry import REGISTRY

    questions = [e.name for e in _exercises(assignment) if is_question(assignment, e.name)]
    silent = [q for q in questions if not REGISTRY[f"{assignment}:{q}"].asks_reason]
    assert not silent, f"{assignment}: predictions that ask no reason (question(..., reason=True)): {silent}"


def test_the_round_5_rules_catch_what_they_name():
    hinted = SOLUTION_CELL.replace('"""Mean NLL."""', '"""Mean NLL: logits.max(axis=-1, keepdims=True) first."""')
    [exercise] = exercise_texts(planted(HINTS, hinted), "planted")
    assert "logits.max(axis=-1,keepdims=True)" in _squeezed(stub_text(exercise))
    assert any(_squeezed(line) in _squeezed(stub_text(exercise)) for line in telling(distinctive_lines(hinted)))
    assert telling(["grad_E, grad_W_q", "list(data)", "np.zeros_like(x)", "x @ W + b"]) == ["x @ W + b"]
    short = "def f(Q, K):\n    ### BEGIN SOLUTION\n    return Q @ K.T / 2.0\n    ### END SOLUTION\n"
    hint2 = "<details><summary>Hint 2: the shape</summary>\n\nDivide: `Q @ K.T / 2.0`.\n\n</details>"
    [exercise] = exercise_texts(planted(HINTS + "\n\n" + hint2, short), "planted")
    assert "Q @ K.T / 2.0" in telling(hint_lines(short)) and "Q@K.T/2.0" in _squeezed(second_hints(exercise))
    assert not _squeezed(hint_lines(short)[0]) in _squeezed(HINTS)  # hint 1 is not hint 2
    bug = "def f(x):\n    ### BEGIN SOLUTION\n    return x + x\n    ### END SOLUTION\n    ### BEGIN BUG\n    # return x * x\n    ### END BUG\n"
    assert "x*x" not in _squeezed(stub_text(ExerciseText("a", "f", "", bug)))


ANY_HINT = re.compile(r"<details>\s*<summary>\s*Hint\b[^<]*</summary>(.*?)</details>", re.I | re.S)


def answer_numbers(solution: str) -> list[float]:
    """The numbers a prediction's solution returns (its reason left out) that a hint could give away: whole numbers
    of 10 or more and fractions (a 2 or a 0.5 is the vocabulary of any hint)."""
    block = SOLUTION.search(solution)
    if not block:
        return []
    body = "def answer():\n" + "\n".join("    " + line for line in block.group(1).splitlines())
    value = next((n.value for n in ast.walk(ast.parse(body)) if isinstance(n, ast.Return) and n.value), None)
    if isinstance(value, ast.Tuple) and len(value.elts) == 2 and isinstance(value.elts[1], ast.Constant) \
            and isinstance(value.elts[1].value, str):
        value = value.elts[0]  # (answer, "reason")
    numbers = [n.value for n in ast.walk(value) if isinstance(n, ast.Constant)] if value else []
    return [x for x in numbers if isinstance(x, (int, float)) and not isinstance(x, bool)
            and (abs(x) >= 10 or not float(x).is_integer())]


def given_away(number: float, text: str) -> bool:
    """Does ``text`` write ``number`` (as 16000, 16,000, 16_000 or 0.9839), not as part of a longer number?"""
    spellings = {repr(number)} | ({str(int(number)), f"{int(number):,}", f"{int(number):_}"}
                                  if float(number).is_integer() else set())
    return any(re.search(r"(?<![\w.])" + re.escape(s) + r"(?![\w])", text) for s in spellings)


@pytest.mark.parametrize("assignment", _params())
def test_no_prediction_hint_holds_its_answer(assignment):
    """A hint to a prediction leads to the answer; it never computes it."""
    from autograder.checks.questions import is_question

    told = {e.name: nums for e in _exercises(assignment) if is_question(assignment, e.name)
            if (nums := [x for x in answer_numbers(e.solution)
                         if given_away(x, "\n".join(ANY_HINT.findall(e.markdown)))])}
    assert not told, f"{assignment}: a hint gives a prediction's answer away: {told}"


def test_a_hint_that_computes_the_answer_is_caught():
    solution = 'def predict():\n    ### BEGIN SOLUTION\n    return (16_000, 80), "V * d and T * d"\n    ### END SOLUTION\n'
    assert answer_numbers(solution) == [16_000, 80]
    assert given_away(16_000, "so the table holds 16,000 numbers") and given_away(80, "5 * 16 = 80.")
    assert not given_away(80, "a table of 800 rows, 0.80 of them") and not given_away(16_000, "160001")
    assert answer_numbers('def p():\n    ### BEGIN SOLUTION\n    return 2\n    ### END SOLUTION\n') == []
