"""Graded prediction questions: the learner commits an answer before a cell reveals it.

A question is an exercise ``name() -> answer`` declared with :func:`question`. Its visible check
records only that an answer of the right form was given (``form``); its hidden check compares the
value with ``answer`` and explains a wrong one through ``mistakes``, ``(wrong value or test, why)``
pairs tried in order, then ``otherwise``. A notebook words its questions one way (:class:`Wording`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..reference import lazy
from .core import (REGISTRY, Array, Case, Check, Comparator, const, describe, equal, fmt, numbers, predicate,
                   same_numbers)

Form = Callable[[Any], "str | None"]  # the decoded answer -> what is wrong with its form, None when nothing
Mistake = tuple[Any, str]  # (a wrong value, or a test of the decoded answer, and why it is wrong)


@dataclass(frozen=True)
class Wording:
    """How a notebook labels a question's cases and what it prints when a check passes."""

    visible: str  # the visible case's label; {label} is the question's own
    hidden: str
    recorded: str  # printed when the visible check passes
    right: str = ""  # printed when the hidden check passes; "" prints `recorded` again


# Each notebook keeps the words its learners already see.
NB01 = Wording("{label} (recorded: the cell after next shows the answer)", "{label}", "Prediction recorded.")
NB04 = Wording("{label}: your prediction", "{label}: is the prediction right?",
               "Prediction recorded; a cell below reveals the answer.", "Your prediction is right.")
NB06 = Wording("{label} (the form of your answer; the next cell reveals the value)", "{label}",
               "Prediction recorded: run the next cell to see the answer.")
NB09 = Wording("{label}: your prediction", "{label}: is the prediction right?",
               "Prediction recorded: the next cell reveals the answer.", "Your prediction is right.")


@dataclass
class Question(Check):
    """A question's check: a :class:`Check` whose success line says whether the answer was graded."""

    right: str = ""

    def success_line(self, hidden: bool) -> str:
        return self.right if hidden and self.right else self.success


def question(assignment: str, name: str, *, form: Form, wording: Wording, label: str = "",
             compare: "Comparator | None" = None, mistakes: Sequence[Mistake] = (), otherwise: str = "",
             atol: float = 1e-8, rtol: float = 1e-6, normalize: Callable[[Any], Any] | None = None) -> Question:
    """Register the question ``name()`` of ``assignment`` and return its check.

    The right answer is never written here: this package is installed where learners can read it.
    It is what the reference solution's ``name()`` returns, in the grader (the reference run's
    evidence) and in the solution notebook. ``label`` names it in messages (``name()`` when left out);
    ``compare`` judges the hidden value (``equal()`` when left out); a wrong value in ``mistakes`` is
    recognised within ``atol``/``rtol``; ``normalize`` runs on the learner's value before it is recorded.
    """
    label = label or f"{name}()"
    compare = compare or equal()
    reference = lazy(assignment)

    def call(fn):
        value = fn()
        return normalize(value) if normalize else value

    def build(hidden: bool, rng: np.random.Generator) -> list[Case]:
        if not hidden:  # the form only: no expected value is needed, or shown
            return [Case(wording.visible.format(label=label), call, const(None),
                         predicate(lambda got, want: form(got)))]
        return [Case(wording.hidden.format(label=label), call, lambda: call(lambda: reference(name)()), compare,
                     hints=[known_answers(mistakes, otherwise, atol=atol, rtol=rtol)])]

    build.__name__ = name
    q = Question(assignment, name, build, wording.recorded, wording.right)
    REGISTRY[f"{assignment}:{name}"] = q
    return q


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
