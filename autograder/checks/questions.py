"""Prediction questions: the learner commits an answer before a cell reveals it.

A question is an exercise ``name() -> answer`` declared with :func:`question`. Its point is for a
well-formed answer (completion credit, not correctness): both its visible and its hidden check pass
whenever ``form`` accepts the answer. Right or wrong is still recorded, never scored:

* in the notebook, the cell that computes the true value calls :meth:`Question.reveal`, which prints
  whether the prediction was right and why;
* in the grader, :meth:`Question.recorded` compares the learner's answer with the reference run's and
  puts a :class:`~.registry.Prediction` beside the passing verdict, for the feedback page and the class report.

Why a wrong answer is wrong comes from ``mistakes``, ``(wrong value or test, why)`` pairs tried in
order, then ``otherwise``. The right answer is never written in this package (it is installed where
learners can read it): the grader takes it from the reference run, the notebook from its own cell.
A notebook words its questions one way (:class:`Wording`).

**A one-line reason.** A question declared with ``reason=True`` asks the learner why, in their own
words: the prediction returns ``(answer, "the reason, in one line")``. The reason is kept (it is in
the learner's cell, and in the grader's record as :attr:`Prediction.reason`), printed beside the
reveal and shown on the feedback page, and never judged right or wrong: a bare ``answer`` earns the same
point, and the reveal asks for the missing reason. A reason left empty (``(answer, "")``, or only spaces)
earns no point: the check asks for the reason, since a pair with a blank reason says the learner skipped
it. Such a question's evidence is always the pair ``(answer, reason)`` (``""`` for none, :data:`BLANK`
for one given empty), so the grader reads both from one recorded value. A question without
``reason=True`` reads its answer exactly as before.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .compare import Case, Comparator, const, describe, equal, fmt, predicate
from .evidence import Array, Outcome, capture
from .hints import numbers, same_numbers
from .registry import REGISTRY, Check, Prediction, checks_module

Form = Callable[[Any], "str | None"]  # the decoded answer -> what is wrong with its form, None when nothing
# A reason given but empty, as the evidence keeps it: one space, which a stripped reason never is, so the
# check can refuse it while the grader's record (which strips it) still reads "no reason".
BLANK = " "
EMPTY_REASON = ('Your reason is empty. Write why you expect this answer, in one line, beside it: '
                '`return answer, "why, in one line"`. The point is for a prediction with its reason.')
Mistake = tuple[Any, str]  # (a wrong value, or a test of the decoded answer, and why it is wrong)


@dataclass(frozen=True)
class Wording:
    """How a notebook labels a question's cases and what its check prints once the answer is recorded."""

    visible: str  # the visible case's label; {label} is the question's own
    hidden: str
    recorded: str  # printed when an answer of the right form is recorded (never "passed": it earns no more)


# Each notebook keeps the words its learners already see.
NB01 = Wording("{label} (recorded: the cell after next shows the answer)", "{label}",
               "Prediction recorded; the cell after next shows the answer and whether yours was right.")
NB04 = Wording("{label}: your prediction", "{label}: your prediction, recorded for grading",
               "Prediction recorded; a cell below reveals the answer and whether yours was right.")
NB06 = Wording("{label} (the form of your answer; the next cell reveals the value)", "{label}",
               "Prediction recorded: the reveal cell below shows the answer and whether yours was right.")
NB09 = Wording("{label}: your prediction", "{label}: your prediction, recorded for grading",
               "Prediction recorded: the next cell reveals the answer and whether yours was right.")


@dataclass
class Question(Check):
    """A question's check: passes on a well-formed answer and records whether it was right."""

    traceable = False

    form: Form = field(default=lambda got: None, kw_only=True)
    compare: Comparator = field(default_factory=equal, kw_only=True)  # decides right or wrong, never points
    explain: Callable[[Any, Any], "str | None"] = field(default=lambda got, want: None, kw_only=True)
    normalize: Callable[[Any], Any] | None = field(default=None, kw_only=True)
    asks_reason: bool = field(default=False, kw_only=True)  # the answer comes as (answer, "one-line reason")

    def passed_line(self, n: int, hidden: bool) -> str:
        # The hidden cell runs where the learner does not read it (the grader, the instructor's notebook).
        return f"✔ {self.name}: {'Prediction recorded for grading.' if hidden else self.success}"

    def judged(self, answer: Any, truth: Any, reason: str = "") -> Prediction:
        """Right or wrong, and why: a decoded ``answer`` against the decoded ``truth``; ``reason`` is the learner's."""
        try:
            right = self.compare.mismatch(answer, truth) is None
        except Exception:  # an answer the comparison cannot read is not the right one
            right = False
        why = ""
        if not right:
            try:
                why = self.explain(answer, truth) or ""
            except Exception:  # a hint is a guess; it must never hide the verdict
                why = ""
        return Prediction(answer=fmt(plain(answer)), right=right, why=why, reason=reason)

    def recorded(self, got: list[Outcome], want: list[Outcome]) -> Prediction | None:
        """The grader's record: the learner's answer against the reference run's (one case, both well formed)."""
        if len(got) != 1 or len(want) != 1 or got[0].raised or want[0].raised:
            return None
        answer = self.answer_of(got[0].decoded)
        return self.judged(answer.value, self.answer_of(want[0].decoded).value, answer.reason)

    def evidence(self, value: Any) -> Any:
        """What the learner's ``fn()`` returned -> the value recorded: the normalized answer, or for a
        question that asks a reason, the pair ``(normalized answer, reason)``."""
        if not self.asks_reason:
            return self._normal(value)
        given = with_reason(value)
        blank = isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[1], str) and not given.reason
        return (self._normal(given.value), BLANK if blank else given.reason)

    def problem(self, decoded: Any) -> "str | None":
        """What keeps a recorded (decoded) value from its point: a malformed answer, or a reason given empty."""
        problem = _form_problem(self.form, self.answer_of(decoded).value)
        if problem is None and self.asks_reason and isinstance(decoded, (tuple, list)) and decoded[1] == BLANK:
            return EMPTY_REASON
        return problem

    def answer_of(self, decoded: Any) -> "Answer":
        """A recorded (decoded) value -> the answer and the reason (see :meth:`evidence`)."""
        return with_reason(decoded) if self.asks_reason else Answer(decoded)

    def reveal(self, fn: Callable[[], Any], truth: Any) -> None:
        """Print whether the prediction ``fn()`` matches ``truth``, the value the calling cell just computed.

        Called from the notebook's reveal cell, in the learner's kernel: it never raises, so an unanswered
        or malformed prediction cannot stop the notebook; it says what to do instead.
        """
        # the truth as the reveal cell computed it, or as a reference function returns it (with its own reason)
        want = self.answer_of(capture(lambda: self.evidence(truth)).decoded).value
        got = capture(lambda: self.evidence(fn()))
        if "NotImplementedError" in got.raised:
            print(f"No prediction yet: `{self.name}` still raises NotImplementedError. The answer is {fmt(plain(want))}; "
                  "commit your prediction before the next reveal.")
            return
        if got.raised:
            print(f"`{self.name}()` raised {got.raised[0]}: {got.message}. The answer is {fmt(plain(want))}.")
            return
        answer = self.answer_of(got.decoded)
        problem = _form_problem(self.form, answer.value)
        if problem:
            print(f"Your prediction cannot be compared: {problem} The answer is {fmt(plain(want))}.")
            return
        p = self.judged(answer.value, want, answer.reason)
        if p.right:
            print(f"✔ Your prediction {p.answer} is right.")
        else:
            print(f"✘ Your prediction {p.answer} is wrong; the answer is {fmt(plain(want))}."
                  + (f" {p.why}" if p.why else ""))
        if p.reason:
            print(f"  Your reason: “{p.reason}”. Does it still hold, now that you have seen the answer?")
        elif self.asks_reason:
            print('  You gave no reason. Add it to your prediction, `return answer, "why, in one line"`: '
                  "a reason is what you can check against the answer.")

    def _normal(self, value: Any) -> Any:
        return self.normalize(value) if self.normalize else value


@dataclass(frozen=True)
class Answer:
    """A prediction as the learner gave it: the answer, and their one-line reason ("" when none)."""

    value: Any
    reason: str = ""


def with_reason(value: Any) -> Answer:
    """``(answer, "reason")`` (a tuple or list of two, the second a string) -> both; anything else is an
    answer given without a reason. The reason is stripped; it is never judged."""
    if isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[1], str):
        return Answer(value[0], value[1].strip())
    return Answer(value)


def _form_problem(form: Form, answer: Any) -> "str | None":
    try:
        return form(answer)
    except Exception as exc:  # a form that cannot read the answer has found a malformed one
        return f"the answer could not be read ({type(exc).__name__})."


def question(assignment: str, name: str, *, form: Form, wording: Wording, label: str = "",
             compare: "Comparator | None" = None, mistakes: Sequence[Mistake] = (), otherwise: str = "",
             atol: float = 1e-8, rtol: float = 1e-6, normalize: Callable[[Any], Any] | None = None,
             reason: bool = False) -> Question:
    """Register the question ``name()`` of ``assignment`` and return its check.

    Both checks (visible and hidden) pass on an answer ``form`` accepts: that is the point. ``compare``
    judges right or wrong (``equal()`` when left out) for :meth:`Question.reveal` and the grader's record;
    a wrong value in ``mistakes`` is recognised within ``atol``/``rtol``; ``label`` names the question in
    messages (``name()`` when left out); ``normalize`` runs on the learner's value before it is recorded;
    ``reason`` asks for the learner's one-line reason beside the answer (see the module's docstring).
    """
    label = label or f"{name}()"

    def build(hidden: bool, rng: np.random.Generator) -> list[Case]:
        # The form only, for both: no expected value is needed, or shown. The grader's reference run
        # records the right answer as its evidence, and Question.recorded compares with it.
        text = (wording.hidden if hidden else wording.visible).format(label=label)
        return [Case(text, lambda fn: q.evidence(fn()), const(None),
                     predicate(lambda got, want: q.problem(got)))]

    build.__name__ = name
    q = Question(assignment, name, build, wording.recorded, form=form, compare=compare or equal(),
                 explain=known_answers(mistakes, otherwise, atol=atol, rtol=rtol), normalize=normalize,
                 asks_reason=reason)
    REGISTRY[f"{assignment}:{name}"] = q
    return q


def is_question(assignment: str, name: str) -> bool:
    """Is ``name`` a prediction question of ``assignment`` (False for an assignment this course does not have)?"""
    try:
        checks_module(assignment)
    except ImportError:
        return False
    return isinstance(REGISTRY.get(f"{assignment}:{name}"), Question)


def known_answers(mistakes: Sequence[Mistake], otherwise: str = "", *, atol: float = 1e-8,
                  rtol: float = 1e-6) -> Callable[[Any, Any], "str | None"]:
    """A hint: why of the first mistake the answer matches (and the right answer does not), else ``otherwise``."""
    tests = [(m if callable(m) else same_as(m, atol, rtol), why) for m, why in mistakes]

    def hint(got: Any, want: Any) -> "str | None":
        for test, why in tests:
            try:
                if test(got) and not test(want):
                    return why
            except Exception:  # a test is a guess; one that cannot read the answer explains nothing
                continue
        return otherwise or None
    return hint


def same_as(value: Any, atol: float = 1e-8, rtol: float = 1e-6) -> Callable[[Any], bool]:
    """A test: does a decoded answer equal ``value``? Numbers within tolerance, other data exactly."""
    if isinstance(value, str) or numbers(value) is None:
        return lambda got: plain(got) == plain(value)
    return lambda got: same_numbers(got, value, atol, rtol)


def plain(value: Any) -> Any:
    """A decoded answer as plain Python: arrays and NumPy scalars become lists and numbers."""
    if isinstance(value, Array):
        return value.data.tolist() if value.data.ndim else value.data.item()
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    return value


def as_tuple(value: Any) -> Any:
    """A list answer read as the tuple it spells (normalize)."""
    return tuple(value) if type(value) is list else value


# --------------------------------------------------------------------------- forms
# A form reads the decoded answer and says what is wrong with its form, or None.

def described(kind: str, test: Callable[[Any], bool]) -> Form:
    """Any form ``test`` accepts, ``kind`` naming it: "expected {kind} as your prediction"."""
    return lambda got: None if test(got) else f"expected {kind} as your prediction, got {fmt(got)}."


def is_int(v: Any) -> bool:
    return type(v) is int or (isinstance(v, Array) and v.kind == "scalar" and v.data.dtype.kind in "iu")


def int_tuple(n: int | None = None) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, tuple) and (n is None or len(v) == n) and all(is_int(x) for x in v)


def is_scalar(v: Any) -> bool:
    """An int, or a NumPy scalar of any kind."""
    return type(v) is int or (isinstance(v, Array) and v.kind == "scalar")


def scalar_tuple(n: int, types: tuple = (int,)) -> Callable[[Any], bool]:
    """A tuple of n plain numbers of ``types`` or NumPy scalars."""
    return lambda v: (isinstance(v, tuple) and len(v) == n
                      and all(type(x) in types or (isinstance(x, Array) and x.kind == "scalar") for x in v))


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def a_number(got: Any) -> "str | None":
    """One finite int or float."""
    g = plain(got)
    return None if _is_number(g) else f"answer with a number (an int or a float), got {fmt(g)}."


def numbers_tuple(n: int) -> Form:
    """A tuple (or list) of n finite numbers."""
    def form(got):
        g = plain(got)
        ok = isinstance(g, (tuple, list)) and len(g) == n and all(map(_is_number, g))
        return None if ok else f"answer with a tuple of {n} numbers, got {fmt(g)}."
    return form


def one_of(choices: Sequence[str]) -> Form:
    """One of the given strings (a multiple-choice question)."""
    def form(got):
        g = plain(got)
        if not isinstance(g, str) or g not in choices:
            return f"answer with one of {', '.join(map(repr, choices))}; got {fmt(g)}."
        return None
    return form


def number_in(low: float = -np.inf, high: float = np.inf) -> Form:
    """One finite number in [low, high]."""
    def form(got):
        g = numbers(got)
        if g is None or g.dtype.kind == "b" or g.shape != ():
            return f"answer with one number, got {describe(got)} {fmt(got)}."
        if not (np.isfinite(g) and low <= float(np.real(g)) <= high):
            return f"answer with a number between {low:g} and {high:g}, got {fmt(got)}."
        return None
    return form


def int_in(low: int, high: int) -> Form:
    """One whole number in [low, high]."""
    def form(got):
        g = got.data.item() if isinstance(got, Array) and got.data.shape == () else got
        if not isinstance(g, int) or isinstance(g, bool) or not low <= g <= high:
            return f"answer with one int between {low} and {high}, got {describe(got)} {fmt(got)}."
        return None
    return form


def ints(got: Any) -> "str | None":
    """A tuple of whole numbers."""
    if not isinstance(got, tuple) or not all(isinstance(v, int) for v in got):
        return f"answer with a tuple of ints such as (0, 1), got {describe(got)} {fmt(got)}."
    return None


# ------------------------------------------------------------------ mistake tests

def is_(value: Any) -> Callable[[Any], bool]:
    """Does a decoded answer equal ``value`` exactly, type included (a NumPy scalar counts as its plain value)?"""
    def test(got):
        g = got.data.item() if isinstance(got, Array) and got.data.shape == () else got
        return type(g) is type(value) and g == value
    return test


def near(value: Any, atol: float = 1e-3) -> Callable[[Any], bool]:
    """Is a decoded answer one number within ``atol`` of ``value``?"""
    return lambda got: (numbers(got) is not None and numbers(got).shape == ()
                        and bool(np.isclose(complex(numbers(got)), value, atol=atol, rtol=0)))
