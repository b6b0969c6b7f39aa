"""How an answer is compared, and what a learner reads when it is wrong.

An exercise's check is a list of :class:`Case` objects. Each case calls the student's function or
class on fresh inputs, and its comparator (:class:`close`, :class:`equal` or :class:`predicate`)
compares what came back with the expected value: the reference's, in the student's notebook, or the
reference's evidence, in the grader (:mod:`autograder.checks.verdict`). Both sides use the same
cases and comparators on decoded outcomes (:mod:`autograder.checks.evidence`), so a mismatch raises
:class:`CheckFailure` with the same message in both places.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .evidence import Array, Outcome, Unencodable


class ShownAsMessage:
    """An error a learner should read as a sentence, not as our frames: IPython shows the traceback that
    ``_render_traceback_`` returns instead of its own (``__tracebackhide__`` hides a frame from pytest only).
    The cell still ends in an error, so Run All stops there and nbgrader still sees a failed test."""

    def _render_traceback_(self) -> list[str]:
        red, plain = "\x1b[0;31m", "\x1b[0m"  # the colour IPython gives an exception's name
        return [f"{red}{type(self).__name__}{plain}: {self}"]


class CheckFailure(ShownAsMessage, AssertionError):
    """An answer is wrong; the message says what and, when we can tell, why.

    ``mistake`` is the known mistake the answer was recognised as (a hint's text), "" when none was.
    """

    def __init__(self, message: str = "", mistake: str = ""):
        super().__init__(message)
        self.mistake = mistake


class CheckUnavailable(ShownAsMessage, RuntimeError):
    """The check needs the reference solution and this machine does not have it (a students' image): said in
    a sentence, as every message a learner meets from the course's own code."""


class NotAttempted(CheckFailure):
    """The exercise still holds the stub (it raises NotImplementedError)."""

# ---------------------------------------------------------------------- messages

def fmt(value: Any, precision: int = 4) -> str:
    if isinstance(value, Array):
        value = value.data
    if isinstance(value, np.generic):  # NumPy 2 would print np.float32(0.99...)
        value = value.item()
    if isinstance(value, np.ndarray):
        if value.ndim == 0:
            value = value.item()
        else:
            return np.array2string(value, precision=precision, suppress_small=True, threshold=40,
                                   separator=", ").replace("\n", " ")
    if isinstance(value, float):
        return f"{value:.{precision}g}"
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def _where(shape: tuple[int, ...], flat_index: int) -> str:
    idx = np.unravel_index(flat_index, shape)
    if len(shape) == 1:
        return f"position {idx[0]}"
    if len(shape) == 2:
        return f"row {idx[0]}, column {idx[1]}"
    return "index [" + ", ".join(str(int(i)) for i in idx) + "]"


Hint = Callable[[Any, Any], "str | None"]


@dataclass
class Case:
    """One call of the student's object and what it must give back.

    ``call`` receives the student's function or class; ``want`` computes the
    expected value from a trusted reference (raise from it to demand an error).
    ``compare(got, want, case)`` raises :class:`CheckFailure` on a mismatch.
    """

    label: str
    call: Callable[[Any], Any]
    want: Callable[[], Any]
    compare: "Comparator" = None  # filled with close() when left out
    hints: Sequence[Hint] = ()

    def __post_init__(self) -> None:
        if self.compare is None:
            self.compare = close()


def const(value: Any) -> Callable[[], Any]:
    """An expected value known in advance (a worked number a learner can check by hand)."""
    return lambda: value


def raises(message: str, error: type[Exception] = ValueError) -> Callable[[], Any]:
    """An expected outcome that is an error: the student's code must raise ``error`` too."""
    def want():
        raise error(message)
    return want


def call_with(*args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    """Call the student's function with fresh copies, so an in-place edit cannot leak."""
    return lambda fn: fn(*copy.deepcopy(args), **copy.deepcopy(kwargs))


class Comparator:
    def __call__(self, got: Outcome, want: Outcome, case: Case) -> None:
        __tracebackhide__ = True
        if "NotImplementedError" in got.raised and "NotImplementedError" not in want.raised:
            # what to do first: nbgrader's Validate shows about 100 characters of "NotAttempted: ..."
            raise NotAttempted("not attempted yet: replace `raise NotImplementedError()` with your code "
                               "(the function still raises NotImplementedError).")
        if want.raised:
            expected = want.raised[0]
            if got.raised and expected in got.raised:
                return
            if got.raised:
                self.fail(case, f"should raise {expected}, but raised {got.raised[0]}: {got.message}")
            self.fail(case, f"should raise {expected} ({want.message}), but it returned "
                            f"{fmt(got.decoded)}. Check the input before computing.")
        if got.raised:
            self.fail(case, f"raised {got.raised[0]}: {got.message}")
        g, w = got.decoded, want.decoded
        if isinstance(g, Unencodable):
            self.fail(case, f"returned a {g.type_name} object, which is not a value the check can read; "
                            f"expected {describe(w)}.")
        if g is None and w is not None:
            self.fail(case, "returned None. Did you forget the `return` statement?")
        message = self.mismatch(g, w)
        if message:
            for hint in case.hints:
                try:
                    extra = hint(g, w)
                except Exception:  # a hint is a guess; it must never hide the verdict
                    extra = None
                if extra:
                    self.fail(case, message, mistake=extra)
            self.fail(case, message)

    def mismatch(self, got: Any, want: Any) -> str | None:
        raise NotImplementedError

    @staticmethod
    def fail(case: Case, message: str, mistake: str = "") -> None:
        """A known mistake goes first, on a line of its own: nbgrader's Validate button shows about the first
        100 characters of a message, and the likely cause is what a learner needs most."""
        __tracebackhide__ = True
        raise CheckFailure(f"{mistake}\n{case.label}: {message}" if mistake else f"{case.label}: {message}",
                           mistake=mistake)


def describe(value: Any) -> str:
    if isinstance(value, Array):
        noun = {"tensor": "a tensor", "ndarray": "an array", "scalar": "a number"}[value.kind]
        return f"{noun} of shape {tuple(value.data.shape)}" if value.data.ndim else "a number"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


class close(Comparator):
    """Numbers and arrays equal up to tolerance, checked shape first, then values."""

    def __init__(self, atol: float = 1e-8, rtol: float = 1e-6, kind: str | None = None,
                 dtype: str | None = None):
        # kind="tensor" demands a torch tensor; dtype is the allowed NumPy dtype kinds, "f" floats, "iu" ints
        self.atol, self.rtol, self.kind, self.dtype = atol, rtol, kind, dtype

    def mismatch(self, got: Any, want: Any) -> str | None:
        if isinstance(want, (tuple, list)):
            if not isinstance(got, (tuple, list)) or len(got) != len(want):
                return f"expected {len(want)} values (a {type(want).__name__}), got {describe(got)}."
            for i, (g, w) in enumerate(zip(got, want)):
                msg = self.mismatch(g, w)
                if msg:
                    return f"item {i} of the result: {msg}"
            return None
        if self.kind == "tensor" and not (isinstance(got, Array) and got.kind == "tensor"):
            return f"expected a torch tensor, got {describe(got)}."
        w = _as_array(want)
        if w is None:
            # nothing numeric is due (None from a function that only changes its input, a text, a record): no
            # tolerance applies, so the answer must be exactly that (comparing numbers with it raised AttributeError)
            if want is None:
                return None if got is None else f"expected no value (None), got {describe(got)} ({fmt(got)})."
            return equal().mismatch(got, want)
        g = _as_array(got)
        if g is None:
            return f"expected {describe(want)}, got {describe(got)} ({fmt(got)})."
        if g.dtype.kind == "b" and w.dtype.kind != "b":
            return f"expected numbers, got booleans {fmt(g)}."
        if self.dtype and g.dtype.kind not in self.dtype:
            wanted = {"f": "floats", "iu": "integers", "b": "booleans", "c": "complex numbers"}.get(self.dtype, self.dtype)
            return f"expected {wanted}, got dtype {g.dtype}."
        if g.shape != w.shape:
            msg = f"wrong shape: expected {w.shape}, got {g.shape}."
            if g.ndim == 2 and g.shape == w.shape[::-1]:
                msg += " The axes look swapped: is something transposed?"
            elif g.size == w.size:
                msg += " Same number of elements: check the order of a reshape or transpose."
            return msg
        if w.dtype.kind in "fc" and g.dtype.kind in "iub" and not np.array_equal(g, w):
            return (f"got integers {fmt(g)} where {fmt(w)} was expected: "
                    "an integer division or an integer dtype?")
        if np.iscomplexobj(w) != np.iscomplexobj(g) and not np.allclose(g, w, atol=self.atol, rtol=self.rtol):
            return f"expected {fmt(w)}, got {fmt(g)}."
        bad_nan = ~np.isfinite(g) & np.isfinite(w)
        if bad_nan.any():
            at = _where(w.shape, int(np.flatnonzero(bad_nan)[0])) if w.ndim else "the result"
            return (f"got {fmt(g[bad_nan].ravel()[0])} at {at} where {fmt(w[bad_nan].ravel()[0])} was "
                    "expected: an overflow, a division by zero, or the log of 0?")
        ok = np.isclose(g, w, atol=self.atol, rtol=self.rtol, equal_nan=True)
        if ok.all():
            return None
        worst, gap, allowed = self.largest_difference(g, w, ok)
        if w.ndim == 0:
            return f"expected {fmt(w.item(), 6)}, got {fmt(g.item(), 6)} (a difference of {fmt(gap)}; {allowed})."
        first = int(np.flatnonzero(~ok)[0])
        where = _where(w.shape, first)
        msg = f"wrong values: {int((~ok).sum())} of {w.size} differ, first at {where} (expected " \
              f"{fmt(w.ravel()[first], 6)}, got {fmt(g.ravel()[first], 6)}); the largest difference is " \
              f"{fmt(gap)}, at {_where(w.shape, worst)} ({allowed} there)."
        if w.ndim == 2 and w.shape[0] > 1:
            r = int(np.unravel_index(first, w.shape)[0])
            msg += f" Row {r}: expected {fmt(w[r])}, got {fmt(g[r])}."
        elif w.ndim == 1 and w.size <= 12:
            msg += f" Expected {fmt(w)}, got {fmt(g)}."
        if w.ndim >= 2 and w.shape[-1] == w.shape[-2] and np.allclose(np.swapaxes(g, -1, -2), w, atol=self.atol, rtol=self.rtol):
            msg += " It equals the expected result transposed: are the last two axes swapped?"
        elif np.allclose(-g, w, atol=self.atol, rtol=self.rtol):
            msg += " It is the expected result with the sign flipped."
        return msg

    def largest_difference(self, g: np.ndarray, w: np.ndarray, ok: np.ndarray) -> tuple[int, float, str]:
        """Where the values that differ differ most (a flat index), by how much, and what the tolerance allows
        there: an instructor can tell a near miss from a wrong formula."""
        kind = np.result_type(g.dtype, w.dtype, np.float64)  # float64 or complex128: no unsigned wrap-around
        with np.errstate(all="ignore"):
            gap = np.abs(g.astype(kind) - w.astype(kind)).ravel()
        rank = np.where(ok.ravel(), -1.0, np.where(np.isnan(gap), np.inf, gap))  # nan: as bad as it gets
        worst = int(np.argmax(rank))
        expected = abs(w.ravel()[worst])
        allowed = f"atol {fmt(self.atol)} + rtol {fmt(self.rtol)} × |expected| allows " \
                  f"{fmt(float(self.atol + self.rtol * expected))}"
        return worst, float(gap[worst]), allowed


def _as_array(value: Any) -> np.ndarray | None:
    if isinstance(value, Array):
        return value.data
    if isinstance(value, (bool, int, float, complex)) and not isinstance(value, Unencodable):
        return np.asarray(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, float, bool)) for v in value):
        return np.asarray(value)
    return None


class equal(Comparator):
    """Exactly equal plain data (ints, strings, lists, dicts, tuples of them, bool arrays)."""

    def __init__(self, hint_order: bool = True):
        self.hint_order = hint_order

    def mismatch(self, got: Any, want: Any) -> str | None:
        g, w = _plain(got), _plain(want)
        if g == w and _types(g) == _types(w):
            return None
        if type(g) is not type(w) and not (isinstance(g, (list, tuple)) and isinstance(w, (list, tuple))):
            return f"expected {describe(want)} {fmt(w)}, got {describe(got)} {fmt(g)}."
        if isinstance(w, (list, tuple)) and isinstance(g, (list, tuple)):
            if type(g) is not type(w):
                return f"expected a {type(w).__name__}, got a {type(g).__name__}."
            if isinstance(want, Array) and np.shape(g) != np.shape(w):
                return f"wrong shape: expected {np.shape(w)}, got {np.shape(g)}."
            if len(g) != len(w):
                return f"expected {len(w)} items, got {len(g)}: expected {fmt(w)}, got {fmt(g)}."
            i = next(i for i, (a, b) in enumerate(zip(g, w)) if a != b or _types(a) != _types(b))
            msg = f"item {i} differs (expected {fmt(w[i])}, got {fmt(g[i])}); expected {fmt(w)}, got {fmt(g)}."
            if self.hint_order and sorted(map(repr, g)) == sorted(map(repr, w)):
                msg += " The right items in the wrong order."
            return msg
        if isinstance(w, dict):
            missing = [k for k in w if k not in g]
            extra = [k for k in g if k not in w]
            if missing:
                return f"missing key {fmt(missing[0])} (expected {fmt(w)}, got {fmt(g)})."
            if extra:
                return f"unexpected key {fmt(extra[0])} (expected {fmt(w)}, got {fmt(g)})."
            k = next(k for k in w if w[k] != g[k] or _types(w[k]) != _types(g[k]))
            return f"{fmt(k)} maps to {fmt(g[k])}, expected {fmt(w[k])}."
        return f"expected {fmt(w)}, got {fmt(g)}."


def _plain(value: Any) -> Any:
    if isinstance(value, Array):
        if value.kind == "scalar":
            return value.data.item()
        return value.data.tolist()
    if isinstance(value, tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _types(value: Any) -> Any:
    """Type structure, so that True is not accepted for 1 nor 1.0 for 1."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_types(v) for v in value))
    if isinstance(value, dict):
        return tuple((k, _types(v)) for k, v in value.items())
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    return type(value).__name__


class predicate(Comparator):
    """For answers with many right values (a sample): ``test(got, want)`` returns a message or None."""

    def __init__(self, test: Callable[[Any, Any], "str | None"]):
        self.test = test

    def mismatch(self, got: Any, want: Any) -> str | None:
        return self.test(got, want)
