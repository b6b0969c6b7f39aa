"""What the notebooks' checks modules share: the rules each of them follows, and the helpers more than one uses.

The rules
---------

1. **One checks module per notebook, importing downward only.** ``nbNN`` (a package when it is large:
   ``nb05/``, ``nb10/``) is found by :func:`.registry.checks_module` from the assignment's number. It imports
   the core (:mod:`.compare`, :mod:`.hints`, :mod:`.registry`, :mod:`.questions`, ...), this toolkit and the
   reference models (:mod:`.models`), never another ``nbNN`` module; the models import no ``nbNN`` module
   either. Whatever two notebooks share lives here (helpers) or in :mod:`.models` (reference models).
   ``tests/test_structure.py`` holds them to it.

2. **A check's function name is its exercise's grade_id** (the name of the solution cell's function or
   class, e.g. ``softmax``; its test cells are ``test_softmax_visible`` and ``test_softmax_hidden``). The
   registry relies on it: :func:`.registry.exercise` names a check after its function (``build.__name__``),
   and that name is looked up as an exercise's name in :meth:`.registry.Check.failing_callee` (the names a
   learner's function calls, as checks of the same notebook), in :func:`.questions.is_question` (the exercise
   of a test cell's grade_id, for the validator and the feedback pages) and in :mod:`autograder.pieces`
   (``getattr(checks_module(assignment), name)``, an earlier piece's check). A package's ``__init__`` therefore
   re-exports every check under its own name.

3. **``want`` is lazy, and the grader never runs ``want()``.** A :class:`.compare.Case` holds ``call`` (what
   to do with the learner's function) and ``want``, a function of no arguments giving the expected value, run
   only by a learner's check cell (:meth:`.registry.Check.__call__`). The grader rebuilds the cases in its own
   process (:mod:`.verdict`) and compares the student's evidence with the reference solution's, both recorded
   from ``call``. So building the cases, and their hints (which the grader runs too), must not import torch:
   torch comes only inside ``want`` or ``call``, through :func:`import_torch`
   (``tests/grade/test_judge.py::test_every_checks_cases_are_built_without_torch``).

This module imports no ``nbNN`` module and no reference model.
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from .compare import close
from .hints import known_mistakes, numbers

# ------------------------------------------------------------------------ torch, and tensors from NumPy


def import_torch():
    """torch, imported when a case runs in a learner's kernel (rule 3: the grader judges evidence without it)."""
    import torch  # late on purpose: rule 3 of this module's docstring

    return torch


def tensor(a):
    """A float32 (or bool) tensor from a NumPy array, made fresh for every call."""
    torch = import_torch()
    a = np.asarray(a)
    return torch.tensor(a) if a.dtype == bool else torch.tensor(a, dtype=torch.float32)


def normal(rng, *shape, scale=1.0):
    """float32 normal draws of ``shape`` from ``rng``, times ``scale``."""
    return (rng.normal(size=shape) * scale).astype(np.float32)


def causal(T):
    """The causal mask (T, T), True = allowed: query i reads the keys 0 .. i."""
    return np.tril(np.ones((T, T), dtype=bool))


# ------------------------------------------------------------------------------------- tolerances

TOL = dict(atol=1e-5, rtol=1e-4, kind="tensor")  # float32 arithmetic, summed in different orders
MATCH = dict(atol=1e-9, rtol=1e-7)  # how near a known mistake a float64 answer must be to be named
# how near a known wrong variant a float32 answer must be; NaN rows (a mask keeping no key) must agree
TENSOR_MATCH = dict(atol=1e-4, rtol=1e-3, equal_nan=True)


# ------------------------------------------------------------------------------- NumPy arithmetic

def stable_softmax(z, axis=-1):
    """The softmax along ``axis`` in float64, the max subtracted first; a row of -inf gives NaN, quietly."""
    z = np.asarray(z, dtype=float)
    with np.errstate(invalid="ignore"):
        e = np.exp(z - np.max(z, axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


# ------------------------------------------------------------------------------- hints, comparators

def nonfinite_hint(message: str, applies: bool = True):
    """A hint for an answer holding inf or nan, which no known mistake explains."""
    def hint(got, want):
        g = numbers(got)
        return message if applies and g is not None and not np.isfinite(g).all() else None
    return hint


class names_row(close):
    """An expected ValueError whose message must name the row that keeps no key (the contract of 08, 09, 10)."""

    def __init__(self, row):
        super().__init__()
        self.row = row

    def __call__(self, got, want, case):
        __tracebackhide__ = True
        super().__call__(got, want, case)
        if want.raised and not re.search(rf"(?<![\d.]){self.row}(?![\d.])", got.message):
            self.fail(case, f"the ValueError says {got.message!r}: name the row that keeps no key (here row "
                            f"{self.row}, its index over the leading axes) so the user can find it in the mask, and "
                            "say what to do (allow at least one key in that row).")


def diagnose(variants: dict, messages: dict):
    """A hint: the message of the first known wrong variant (name -> thunk) the answer matches. An answer
    shaped unlike the expected one (the output alone, or with extras) is judged by its output."""
    whole = known_mistakes(*((make, messages[name]) for name, make in variants.items()), **TENSOR_MATCH)
    output = known_mistakes(*((lambda make=make: output_of(make()), messages[name])
                              for name, make in variants.items()), **TENSOR_MATCH)

    def hint(got, want):
        return whole(got, want) or (None if _alike(got, want) else output(output_of(got), output_of(want)))
    return hint


def output_of(value):
    """The output of a result: the first item of a tuple or list (attention returns (output, weights))."""
    return value[0] if isinstance(value, (tuple, list)) and value else value


def _alike(got, want) -> bool:
    """Has the answer the expected answer's structure and shapes?"""
    if isinstance(want, tuple):
        return isinstance(got, (tuple, list)) and len(got) == len(want) and all(map(_alike, got, want))
    g, w = numbers(got), numbers(want)
    return g is not None and w is not None and g.shape == w.shape


# ---------------------------------------------------------------- the learner's earlier pieces

_HANDED_DOWN: dict[str, Callable[..., Any]] = {}  # "use_pieces": autograder.pieces.use_pieces, once it is imported


def hand_down_use_pieces(use_pieces: Callable[..., Any]) -> None:
    """Called by :mod:`autograder.pieces` as it is imported. The checks may not import it (it imports them, to
    judge a learner's pieces by their checks), so it hands its ``use_pieces`` down here for
    :func:`learner_pieces`."""
    _HANDED_DOWN["use_pieces"] = use_pieces


def learner_pieces(notebook: str):
    """``autograder.pieces.use_pieces(notebook, quiet=True)``: the earlier pieces ``notebook`` builds on, the
    learner's where found and passing their checks, else the course's, else stand-ins. For the checks' own
    models where the course's solutions are not installed (notebook 10's are built on notebook 09's attention);
    every notebook that builds on earlier pieces imports :mod:`autograder.pieces` in its set-up cell."""
    if "use_pieces" not in _HANDED_DOWN:
        raise RuntimeError(f"this check needs the earlier pieces {notebook} builds on, and autograder.pieces, which "
                           "finds them, is not imported: run the notebook's set-up cell first")
    return _HANDED_DOWN["use_pieces"](notebook, quiet=True)
