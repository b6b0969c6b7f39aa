"""Inject implementations into a reference notebook's exercise and run its test cells in-process.

No kernel starts: the notebook's set-up and solution cells are executed once into a
namespace per assignment; each injection copies that namespace, defines the
student's version of one exercise in it and runs that exercise's test cells. The
verdict is reached twice, the way a student sees it (local checks raise) and the way
the grader reaches it (evidence judged against the reference's evidence), and the
two must agree.
"""
from __future__ import annotations

import contextlib
import io
import re
import textwrap
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from autograder import paths
from autograder.checks import core
from autograder.nbio import exercise_of, grade_id, is_solution_cell, is_test_cell, read_notebook
from autograder.reference import IMPORTED_TAGS, _runnable

HIDDEN = re.compile(r"### (BEGIN|END) HIDDEN TESTS")


@dataclass(frozen=True)
class Mistake:
    """A realistic wrong implementation of one exercise and a phrase its failure message must contain."""

    exercise: str
    label: str
    source: str
    expect: str = ""

    def __str__(self) -> str:
        return f"fails_{self.exercise}_{self.label}"


def returns(exercise: str, label: str, value: str, expect: str = "") -> Mistake:
    """A wrong answer to a question: ``exercise()`` returns the Python expression ``value``."""
    return Mistake(exercise, label, answer(exercise, value), expect)


def answer(exercise: str, value: str) -> str:
    """The source of a question's answer: ``exercise()`` returning the Python expression ``value``."""
    return f"def {exercise}():\n    return {value}\n"


def indent(text: str, n: int) -> str:
    """``text`` without its surrounding blank lines, each line indented by n spaces (to fill a template)."""
    return "\n".join(" " * n + line if line else line for line in text.strip("\n").splitlines())


@dataclass
class Notebook:
    assignment: str
    base: dict
    tests: dict[str, list[tuple[str, str]]]  # exercise -> [(grade_id, source)]
    exercises: list[str]


@lru_cache(maxsize=None)
def notebook(assignment: str) -> Notebook:
    nb = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    base: dict = {"__name__": "__main__"}
    tests: dict[str, list[tuple[str, str]]] = {}
    exercises = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if IMPORTED_TAGS & set(cell.metadata.get("tags", [])) or is_solution_cell(cell):
            exec(compile(_runnable(cell.source), f"<{assignment}>", "exec"), base)
            if is_solution_cell(cell):
                exercises.append(grade_id(cell))
        elif is_test_cell(cell):
            tests.setdefault(exercise_of(grade_id(cell)), []).append((grade_id(cell), HIDDEN.sub("", cell.source)))
    return Notebook(assignment, base, tests, exercises)


@contextlib.contextmanager
def evidence_mode(sink: list):
    old = core.SETTINGS.mode
    core.SETTINGS.mode = "evidence"
    core.SINKS.append(sink.append)
    try:
        yield
    finally:
        core.SINKS.pop()
        core.SETTINGS.mode = old


def _namespace(nb: Notebook, exercise: str, source: str | None) -> dict:
    ns = dict(nb.base)
    if source is not None:
        exec(compile(textwrap.dedent(source), f"<{nb.assignment}:{exercise}>", "exec"), ns)
    return ns


def defined(assignment: str, exercise: str, source: str):
    """``exercise`` as ``source`` defines it in the notebook's namespace (its set-up and other solutions around it)."""
    return _namespace(notebook(assignment), exercise, source)[exercise]


@dataclass
class Verdict:
    grade_id: str
    local: BaseException | None  # what the student's check raised, None when it passed
    graded: bool  # the grader's judgement from evidence
    grader_message: str
    predictions: tuple = ()  # a question's records (core.Prediction), one per evidence payload


def run_exercise(assignment: str, exercise: str, source: str | None = None) -> list[Verdict]:
    """Each test cell of ``exercise`` with ``source`` in place of the solution (None keeps it)."""
    nb = notebook(assignment)
    if exercise not in nb.tests:
        raise KeyError(f"{assignment} has no tests for {exercise!r}; it has {sorted(nb.tests)}")
    verdicts = []
    for gid, test_source in nb.tests[exercise]:
        ns = _namespace(nb, exercise, source)
        try:
            exec(compile(test_source, f"<{gid}>", "exec"), ns)
            local = None
        except Exception as exc:  # the check's verdict, kept for inspection
            local = exc
        student, reference = [], []
        with evidence_mode(student):
            with contextlib.suppress(Exception):
                exec(compile(test_source, f"<{gid}>", "exec"), _namespace(nb, exercise, source))
        with evidence_mode(reference):
            exec(compile(test_source, f"<{gid}>", "exec"), dict(nb.base))
        results = [core.verdict(s, r) for s, r in zip(student, reference)]
        graded = len(student) == len(reference) > 0 and all(v.ok for v in results)
        message = "; ".join(v.message for v in results if not v.ok) or ("no evidence" if not student else "")
        verdicts.append(Verdict(gid, local, graded, message, tuple(v.prediction for v in results if v.prediction)))
    return verdicts


def is_question(assignment: str, exercise: str) -> bool:
    from autograder.checks.questions import Question

    core.checks_module(assignment)
    return isinstance(core.REGISTRY.get(f"{assignment}:{exercise}"), Question)


def reveal_text(assignment: str, exercise: str, source: str | None) -> str:
    """What the notebook's reveal cell prints for the answer in ``source``, the reference's answer as the truth."""
    nb = notebook(assignment)
    truth = nb.base[exercise]()
    learner = _namespace(nb, exercise, source)[exercise]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        core.REGISTRY[f"{assignment}:{exercise}"].reveal(learner, truth)
    return out.getvalue()


def assert_recorded_wrong(assignment: str, mistake: Mistake) -> None:
    """A wrong prediction of the right form: full points, recorded as wrong, and its reason shown at the reveal."""
    verdicts = run_exercise(assignment, mistake.exercise, mistake.source)
    for v in verdicts:
        assert v.local is None and v.graded, f"{mistake}: a well-formed prediction lost {v.grade_id}'s point"
        assert v.predictions and not any(p.right for p in v.predictions), (
            f"{mistake}: {v.grade_id} recorded {v.predictions} where a wrong prediction was expected")
        if mistake.expect:
            assert all(mistake.expect.lower() in p.why.lower() for p in v.predictions), (
                f"{mistake}: the record should say why ({mistake.expect!r}); it says {v.predictions}")
    shown = reveal_text(assignment, mistake.exercise, mistake.source)
    assert "is wrong" in shown and mistake.expect.lower() in shown.lower(), (
        f"{mistake}: the reveal should say the prediction is wrong and why ({mistake.expect!r}); it says {shown!r}")


def assert_rejected_or_recorded_wrong(assignment: str, mistake: Mistake) -> None:
    """A known mistake of an exercise is rejected; a question's wrong answer of the right form is recorded wrong
    (completion credit), and only a malformed one is rejected."""
    if is_question(assignment, mistake.exercise):
        verdicts = run_exercise(assignment, mistake.exercise, mistake.source)
        if all(v.graded for v in verdicts):
            assert_recorded_wrong(assignment, mistake)
            return
    assert_rejected(assignment, mistake)


def assert_rejected(assignment: str, mistake: Mistake) -> None:
    verdicts = run_exercise(assignment, mistake.exercise, mistake.source)
    failures = [v.local for v in verdicts if v.local is not None]
    assert failures, f"{mistake} passed every check of {mistake.exercise}: the checks miss this mistake"
    for v in verdicts:
        assert (v.local is None) == v.graded, (
            f"{mistake}: the local check and the grader disagree on {v.grade_id} "
            f"(local: {v.local!r}, grader: {v.grader_message})")
    wrong_kind = [f for f in failures if not isinstance(f, core.CheckFailure) or isinstance(f, core.NotAttempted)]
    assert not wrong_kind, f"{mistake}: expected a CheckFailure, got {wrong_kind[0]!r}"
    if mistake.expect:
        messages = " | ".join(str(f) for f in failures)
        assert mistake.expect.lower() in messages.lower(), (
            f"{mistake}: the message should name the likely mistake ({mistake.expect!r}); it says: {messages}")


def assert_rejected_everywhere_each_in_its_own_words(assignment: str, mistakes: list[Mistake]) -> None:
    """Every test cell of each mistake's exercise (the visible and the hidden) rejects it, and no two mistakes of
    one exercise get the same first line from the visible cell: progress shows as a new message."""
    said: dict[str, dict[str, str]] = {}
    for mistake in mistakes:
        verdicts = run_exercise(assignment, mistake.exercise, mistake.source)
        passed = [v.grade_id for v in verdicts if v.local is None]
        assert not passed, f"{mistake} passed {passed}"
        said.setdefault(mistake.exercise, {})[mistake.label] = str(verdicts[0].local).split("\n")[0]
    for exercise, messages in said.items():
        assert len(set(messages.values())) == len(messages), f"two mistakes of {exercise} read alike: {messages}"


def assert_accepted(assignment: str, exercise: str, source: str | None = None) -> None:
    for v in run_exercise(assignment, exercise, source):
        assert v.local is None, f"a correct {exercise} was rejected by {v.grade_id}: {v.local}"
        assert v.graded, f"a correct {exercise} got no points from the grader for {v.grade_id}: {v.grader_message}"


def stub_of(assignment: str, exercise: str) -> str:
    """The exercise as a student first sees it (the released stub)."""
    from autograder.release import student_notebook

    nb = read_notebook(paths.solutions_dir() / f"{assignment}.ipynb")
    student = student_notebook(nb, f"{assignment}.ipynb")
    return next(c.source for c in student.cells if is_solution_cell(c) and grade_id(c) == exercise)


def is_bug_hunt(assignment: str, exercise: str) -> bool:
    """Does the student see ``exercise`` as buggy code to fix rather than a stub (autograder/bug_hunt.py)?"""
    from autograder.bug_hunt import is_bug_hunt as has_bug_region
    from tests.variants import solution_source

    return has_bug_region(solution_source(assignment, exercise))


def assert_stub_not_attempted(assignment: str, exercise: str) -> None:
    """The released stub is "not attempted"; a bug hunt's released code runs and fails its checks."""
    if is_bug_hunt(assignment, exercise):
        assert_rejected(assignment, Mistake(exercise, "the_bug_as_released", stub_of(assignment, exercise)))
        return
    for v in run_exercise(assignment, exercise, stub_of(assignment, exercise)):
        assert isinstance(v.local, core.NotAttempted), f"the stub of {exercise} gave {v.local!r} in {v.grade_id}"
        assert not v.graded, f"the stub of {exercise} earned points from the grader in {v.grade_id}"


@dataclass
class ExerciseSuite:
    """The standard tests of one notebook's checks, for a tests/checks/test_nbNN.py module.

    Every known mistake is rejected with a message naming it, every differently written correct answer
    is accepted, the reference passes and the released stub is "not attempted", and every exercise has
    three mistakes and an alternative. pytest collects a module's own functions only, so the module puts
    them among its globals: ``globals().update(exercise_suite(A, MISTAKES, ALTERNATIVES).tests())``.
    """

    assignment: str
    mistakes: list[Mistake]
    alternatives: dict[str, str]

    @property
    def exercises(self) -> list[str]:
        return notebook(self.assignment).exercises

    def thin(self) -> dict[str, int]:
        """Exercises with fewer than three known-wrong implementations, and how many they have."""
        counts = {e: sum(m.exercise == e for m in self.mistakes) for e in self.exercises}
        return {e: n for e, n in counts.items() if n < 3}

    def tests(self) -> dict[str, Callable]:
        """The four test functions by name, parametrized with the mistakes and alternatives as they are now."""
        import pytest

        assignment, mistakes, alternatives = self.assignment, self.mistakes, self.alternatives

        @pytest.mark.parametrize("mistake", mistakes, ids=str)
        def test_mistake_is_rejected_with_a_message_naming_it(mistake):
            assert_rejected_or_recorded_wrong(assignment, mistake)

        @pytest.mark.parametrize("exercise", sorted(alternatives))
        def test_differently_written_correct_answer_is_accepted(exercise):
            assert_accepted(assignment, exercise, alternatives[exercise])

        @pytest.mark.parametrize("exercise", self.exercises)
        def test_reference_passes_and_stub_is_not_attempted(exercise):  # a bug hunt's bug: rejected
            assert_accepted(assignment, exercise)
            assert_stub_not_attempted(assignment, exercise)

        def test_every_exercise_has_three_mistakes_and_an_alternative():
            thin = self.thin()
            assert not thin, f"exercises with fewer than 3 known-wrong implementations: {thin}"
            missing = set(self.exercises) - set(alternatives)
            assert set(alternatives) == set(self.exercises), f"alternatives missing for {missing}"

        return {f.__name__: f for f in (test_mistake_is_rejected_with_a_message_naming_it,
                                        test_differently_written_correct_answer_is_accepted,
                                        test_reference_passes_and_stub_is_not_attempted,
                                        test_every_exercise_has_three_mistakes_and_an_alternative)}


def exercise_suite(assignment: str, mistakes: list[Mistake], alternatives: dict[str, str]) -> ExerciseSuite:
    """The standard tests of one notebook's checks: see :class:`ExerciseSuite`."""
    return ExerciseSuite(assignment, mistakes, alternatives)
