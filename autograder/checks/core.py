"""How a verdict is reached: the one place that decides whether an answer is right.

An exercise's check is a list of :class:`Case` objects. Each case calls the
student's function or class on fresh inputs and compares what comes back with
an expected value. Two callers use the same cases and the same comparators:

* In the student's notebook (``mode == "local"``) the expected values come from
  a trusted reference (NumPy, PyTorch, a worked number or the reference
  solution) and a mismatch raises :class:`CheckFailure` with a message written
  for a learner.
* Under the grader (``mode == "evidence"``) expected values never enter the
  student's process. The check only *records* what the student's code returned
  (as plain data) and the grader compares that evidence, in its own process,
  with the evidence of the reference solution (:func:`judge`).

Everything the comparators see has been through :func:`encode` and
:func:`decode` first, so an object that claims to equal everything is just an
unencodable object, and the local verdict is the grader's verdict.
"""
from __future__ import annotations

import base64
import copy
import importlib
import json
import math
import os
import sys
import warnings
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

EVIDENCE_MIME = "application/vnd.autograder.evidence+json"
MODE_ENV = "AUTOGRADER_MODE"  # "local" (default) or "evidence"
SEED_ENV = "AUTOGRADER_SEED"  # the grader picks one per run; hidden inputs follow it
MAX_ELEMENTS = 1_000_000  # evidence larger than this is refused, not shipped


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


class CheckUnavailable(RuntimeError):
    """The check needs the reference solution and this machine does not have it."""


class NotAttempted(CheckFailure):
    """The exercise still holds the stub (it raises NotImplementedError)."""


@dataclass
class Settings:
    """How checks behave in this process, fixed before any student code runs.

    Read once from the environment (when this module is imported in a kernel, or by
    :func:`configure_from_environment` in the grader's child just before the notebook's cells), never
    again at each call: a cell that clears ``os.environ`` or changes directory cannot switch a check
    out of evidence mode or change the hidden inputs by accident.
    """

    mode: str = "local"  # "local": compare with the reference here; "evidence": record results for the grader
    seed: int = 0  # the grader's run seed; hidden inputs follow it


SETTINGS = Settings()


def configure_from_environment(environ: "dict[str, str] | None" = None) -> Settings:
    environ = os.environ if environ is None else environ
    SETTINGS.mode = "evidence" if environ.get(MODE_ENV, "local") == "evidence" else "local"
    try:
        SETTINGS.seed = int(environ.get(SEED_ENV, "0"))
    except ValueError:
        SETTINGS.seed = 0
    return SETTINGS


configure_from_environment()


def mode() -> str:
    return SETTINGS.mode


def seed_for(name: str, seed: int | None = None) -> int:
    """A stable per-check seed, shifted by the run seed (``seed``, else this process's setting)."""
    run_seed = SETTINGS.seed if seed is None else int(seed)
    return (run_seed * 1_000_003 + zlib.crc32(name.encode())) % 2**32


# --------------------------------------------------------------------------- data

def encode(value: Any, _depth: int = 0) -> Any:
    """Turn a return value into plain JSON data; anything else becomes 'unencodable'."""
    if _depth > 20:
        return {"__unencodable__": "nested too deeply"}
    if value is None or type(value) is bool:
        return value
    if isinstance(value, str):  # np.str_ and other subclasses become a plain str
        return str.__str__(value)
    if type(value) is int:
        return value if abs(value) < 2**53 else {"__bigint__": str(value)}
    if type(value) is float:
        return value if math.isfinite(value) else {"__float__": repr(value)}
    if type(value) is complex:
        return {"__complex__": [encode(value.real), encode(value.imag)]}
    if isinstance(value, np.generic) and type(value).__module__ == "numpy":
        return _encode_array(np.asarray(value), "scalar")
    if type(value) is np.ndarray:
        return _encode_array(value, "ndarray")
    torch = _torch()
    if torch is not None and type(value) in (torch.Tensor, torch.nn.Parameter):
        return _encode_array(value.detach().cpu().resolve_conj().numpy(), "tensor")
    if type(value) in (list, tuple):
        items = [encode(v, _depth + 1) for v in value]
        return items if type(value) is list else {"__tuple__": items}
    if type(value) is dict:
        return {"__dict__": [[encode(k, _depth + 1), encode(v, _depth + 1)] for k, v in value.items()]}
    return {"__unencodable__": type(value).__name__}


def _torch():
    """torch if the caller has imported it (a tensor cannot exist otherwise); never import it here."""
    return sys.modules.get("torch")


def _encode_array(a: np.ndarray, kind: str) -> Any:
    if a.dtype.kind not in "biufc":
        return {"__unencodable__": f"array of dtype {a.dtype}"}
    if a.size > MAX_ELEMENTS:
        return {"__unencodable__": f"array with {a.size} elements"}
    a = np.ascontiguousarray(a).reshape(a.shape)  # ascontiguousarray makes a 0-d array 1-d
    return {"__array__": base64.b64encode(a.tobytes()).decode("ascii"),
            "dtype": a.dtype.str, "shape": list(a.shape), "kind": kind}


def decode(data: Any) -> Any:
    """The inverse of :func:`encode`; arrays and tensors come back as NumPy arrays."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "__array__" in data:
        raw = base64.b64decode(data["__array__"])
        a = np.frombuffer(raw, dtype=np.dtype(data["dtype"])).reshape(data["shape"]).copy()
        return Array(a, data["kind"])
    if "__tuple__" in data:
        return tuple(decode(v) for v in data["__tuple__"])
    if "__dict__" in data:
        return {_hashable(decode(k)): decode(v) for k, v in data["__dict__"]}
    if "__float__" in data:
        return float(data["__float__"])
    if "__bigint__" in data:
        return int(data["__bigint__"])
    if "__complex__" in data:
        re, im = (decode(v) for v in data["__complex__"])
        return complex(re, im)
    if "__unencodable__" in data:
        return Unencodable(str(data["__unencodable__"]))
    raise ValueError(f"unknown evidence record: {sorted(data)[:3]}")


def _hashable(k: Any) -> Any:
    return k if not isinstance(k, (list, Array)) else repr(k)


@dataclass(frozen=True)
class Array:
    """A decoded array, remembering whether it was a NumPy array, a scalar or a tensor."""

    data: np.ndarray
    kind: str


@dataclass(frozen=True)
class Unencodable:
    type_name: str


@dataclass
class Outcome:
    """What one call did: returned ``value`` or raised ``raised`` (class names, most specific first)."""

    value: Any = None
    raised: tuple[str, ...] = ()
    message: str = ""

    def to_json(self) -> dict:
        if self.raised:
            return {"raised": list(self.raised), "message": self.message[:500]}
        return {"value": self.value}

    @classmethod
    def from_json(cls, data: Any) -> "Outcome":
        if not isinstance(data, dict) or not ({"value", "raised"} & set(data)):
            raise ValueError("malformed outcome")
        if "raised" in data:
            raised = data["raised"]
            if not (isinstance(raised, list) and all(isinstance(r, str) for r in raised)):
                raise ValueError("malformed outcome")
            return cls(raised=tuple(raised), message=str(data.get("message", "")))
        return cls(value=data["value"])

    @property
    def decoded(self) -> Any:
        return decode(self.value)


def capture(thunk: Callable[[], Any]) -> Outcome:
    """Run one call quietly: the value decides the verdict, and under stock nbgrader a warning
    on stderr (0/0 in a correct np.where, say) would cost the whole test cell its points."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = thunk()
    except Exception as exc:  # a student's error is data, not a crash of the check
        names = tuple(c.__name__ for c in type(exc).__mro__ if c not in (object, BaseException))
        return Outcome(raised=names, message=str(exc))
    return Outcome(value=encode(value))


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


def shape_of(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, Array):
        return tuple(value.data.shape)
    return None


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
            raise NotAttempted("not attempted yet: the function still raises NotImplementedError. "
                               "Replace `raise NotImplementedError()` with your code.")
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
                    self.fail(case, message + " " + extra, mistake=extra)
            self.fail(case, message)

    def mismatch(self, got: Any, want: Any) -> str | None:
        raise NotImplementedError

    @staticmethod
    def fail(case: Case, message: str, mistake: str = "") -> None:
        __tracebackhide__ = True
        raise CheckFailure(f"{case.label}: {message}", mistake=mistake)


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
        if w.ndim == 0:
            return f"expected {fmt(w.item(), 6)}, got {fmt(g.item(), 6)}."
        first = int(np.flatnonzero(~ok)[0])
        where = _where(w.shape, first)
        msg = f"wrong values: {int((~ok).sum())} of {w.size} differ, first at {where} (expected " \
              f"{fmt(w.ravel()[first], 6)}, got {fmt(g.ravel()[first], 6)})."
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


# ------------------------------------------------------------------------- hints

def numbers(value: Any) -> np.ndarray | None:
    """A decoded result as a numeric array (a boolean array too, a mask), a NumPy scalar as 0-d, a plain
    number or a list of numbers as an array; None for anything else, True and False included."""
    if isinstance(value, Array):
        return value.data
    if value is None or isinstance(value, (bool, str, bytes, dict, Unencodable)):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = np.asarray(value)
    except (TypeError, ValueError):  # a ragged list, say
        return None
    return a if a.dtype.kind in "biufc" else None


def same_numbers(got: Any, candidate: Any, atol: float = 1e-8, rtol: float = 1e-6, *,
                 equal_nan: bool = False) -> bool:
    """Does the answer equal the candidate? Shapes first, then values; a tuple candidate item by item.

    A candidate holding inf or nan explains nothing (those have their own hints) unless ``equal_nan``,
    where nan in the same places is the clue (a row of a mask that keeps no key).
    """
    if isinstance(candidate, tuple):
        return (isinstance(got, (tuple, list)) and len(got) == len(candidate)
                and all(same_numbers(g, c, atol, rtol, equal_nan=equal_nan) for g, c in zip(got, candidate)))
    g, c = numbers(got), numbers(candidate)
    if g is None or c is None or g.shape != c.shape:
        return False
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not equal_nan and not np.isfinite(c).all():
            return False
        return bool(np.allclose(g, c, atol=atol, rtol=rtol, equal_nan=equal_nan))


def known_mistakes(*candidates: tuple[Callable[[], Any], str], atol: float = 1e-8, rtol: float = 1e-6,
                   equal_nan: bool = False) -> Hint:
    """A hint naming the mistake whose output the answer equals.

    ``candidates`` are ``(thunk, message)`` pairs, tried in order; a thunk recomputes one wrong answer
    from the case's inputs. A thunk that raises, or whose value the expected answer equals too,
    explains nothing.
    """
    def hint(got: Any, want: Any) -> str | None:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for make, message in candidates:
                try:
                    wrong = make()
                except Exception:
                    continue
                if (same_numbers(got, wrong, atol, rtol, equal_nan=equal_nan)
                        and not same_numbers(want, wrong, atol, rtol, equal_nan=equal_nan)):
                    return message
        return None
    return hint


def known_variant(variant: "str | None", choices: Iterable[str], of: str) -> "str | None":
    """``variant`` if it names one of ``choices``, the known-wrong variants a model ``of`` can compute.

    None (or "") is the correct model. Any other name raises ValueError naming the choices: a misspelled
    variant would otherwise quietly give the correct model, and the hint built on it would explain nothing.
    """
    choices = tuple(choices)
    if variant and variant not in choices:
        raise ValueError(f"{of} has no variant {variant!r}; the choices are {', '.join(sorted(choices))}")
    return variant


# ----------------------------------------------------------------------- running

@dataclass
class Check:
    """A named list of cases for one exercise; called from a notebook's test cell."""

    assignment: str
    name: str
    build: Callable[[bool, np.random.Generator], list[Case]]
    success: str = ""

    def check_id(self, hidden: bool) -> str:
        return f"{self.assignment}:{self.name}:{'hidden' if hidden else 'visible'}"

    def cases(self, hidden: bool, seed: int | None = None) -> list[Case]:
        rng = np.random.default_rng(seed_for(self.check_id(hidden), seed))
        return self.build(hidden, rng)

    def __call__(self, obj: Any, *, hidden: bool = False) -> None:
        __tracebackhide__ = True
        cases = self.cases(hidden)
        outcomes = [capture(lambda c=c: c.call(obj)) for c in cases]
        if mode() == "evidence":
            emit({"check": self.check_id(hidden), "outcomes": [o.to_json() for o in outcomes]})
            print(f"{self.name}: {len(cases)} results recorded for grading.")
            return
        if not callable(obj):
            raise CheckFailure(f"`{self.name}` is not a function or class here (it is {type(obj).__name__}).")
        for case, got in zip(cases, outcomes):
            want = capture(case.want)
            if "ReferenceUnavailable" in want.raised:
                raise CheckUnavailable(f"{case.label}: this check compares with the reference solution, which "
                                       "is not installed here. It runs when your work is graded.")
            case.compare(got, want, case)
        print(self.passed_line(len(cases), hidden))

    def passed_line(self, n: int, hidden: bool) -> str:
        """What a passing call prints (a question says "recorded" instead: its point is for the form)."""
        return (f"✔ {self.name}: {n} {'hidden ' if hidden else ''}check{'s' if n != 1 else ''} passed."
                + (f" {self.success}" if self.success else ""))

    def recorded(self, got: list[Outcome], want: list[Outcome]) -> "Prediction | None":
        """What the grader records beside a passing verdict: a question's :class:`Prediction`, else None."""
        return None


REGISTRY: dict[str, Check] = {}


def exercise(assignment: str, success: str = "") -> Callable:
    """Register ``build(hidden, rng) -> list[Case]`` as the check named after it."""

    def register(build: Callable) -> Check:
        check = Check(assignment, build.__name__, build, success)
        REGISTRY[check.check_id(False).rsplit(":", 1)[0]] = check
        return check

    return register


SINKS: list[Callable[[dict], None]] = []  # tests collect evidence here instead of displaying it


def emit(payload: dict) -> None:
    """Hand evidence to the grader as a display output with our own MIME type."""
    text = json.dumps(payload, allow_nan=False)
    if SINKS:
        SINKS[-1](json.loads(text))
        return
    try:  # imported here: the grader's own process judges evidence and never needs IPython
        from IPython.display import display
        display({EVIDENCE_MIME: json.loads(text)}, raw=True)
    except ImportError:  # pragma: no cover - checks always run under IPython when grading
        print(text)


@dataclass(frozen=True)
class Prediction:
    """A learner's prediction as the grader records it: what they answered and whether it was right.

    Recorded, never scored: a question's points are for a well-formed answer (completion credit), and this
    record feeds the feedback page and the class report. Saved in a result as ``to_json()``.
    """

    answer: str  # the answer as the learner wrote it, formatted for a person (equal answers format equally)
    right: bool
    why: str = ""  # for a wrong answer: the known mistake it matches, else the question's general explanation

    def to_json(self) -> dict:
        return {"answer": self.answer, "right": self.right, "why": self.why}

    @classmethod
    def from_json(cls, data: dict) -> "Prediction":
        return cls(answer=str(data["answer"]), right=bool(data["right"]), why=str(data.get("why", "")))


@dataclass(frozen=True)
class Verdict:
    """The grader's decision on one check call; ``attempted`` is False when the answer is still the stub."""

    ok: bool
    message: str
    attempted: bool = True
    mistake: str = ""  # the known mistake the answer was recognised as, when it was
    prediction: Prediction | None = None  # a question's recorded answer (ok is then about its form only)


def verdict(evidence: dict, reference: dict, *, seed: int | None = None) -> Verdict:
    """The grader's verdict on one check call: the student's evidence against the reference's.

    ``seed`` is the run seed both runs used (their hidden inputs follow it). Runs in the grader's
    process; fails closed on anything missing or malformed.
    """
    try:
        check_id = reference["check"]
        assignment, name, suite = check_id.split(":")
        if evidence.get("check") != check_id:
            return Verdict(False, f"expected results of {check_id}, found {evidence.get('check')!r}")
        check = REGISTRY.get(f"{assignment}:{name}")
        if check is None:
            _load_assignment(assignment)
            check = REGISTRY[f"{assignment}:{name}"]
        cases = check.cases(suite == "hidden", seed)
        got = [Outcome.from_json(o) for o in evidence["outcomes"]]
        want = [Outcome.from_json(o) for o in reference["outcomes"]]
        if not (len(got) == len(want) == len(cases)):
            return Verdict(False, f"expected {len(cases)} results, found {len(got)}")
        for case, g, w in zip(cases, got, want):
            case.compare(g, w, case)
        prediction = check.recorded(got, want)
    except NotAttempted as failure:
        return Verdict(False, str(failure), attempted=False)
    except CheckFailure as failure:
        return Verdict(False, str(failure), mistake=failure.mistake)
    except Exception as exc:  # malformed evidence never earns points
        return Verdict(False, f"unreadable results ({type(exc).__name__}: {exc})")
    if prediction is not None:
        return Verdict(True, f"{name}: prediction recorded ({'right' if prediction.right else 'wrong'})",
                       prediction=prediction)
    return Verdict(True, f"{name}: {len(cases)} checks passed")


def judge(evidence: dict, reference: dict, *, seed: int | None = None) -> tuple[bool, str]:
    """:func:`verdict` as ``(ok, message)``."""
    v = verdict(evidence, reference, seed=seed)
    return v.ok, v.message


def _load_assignment(assignment: str) -> None:
    importlib.import_module(f"autograder.checks.nb{assignment[:2]}")


def run_cases(cases: Iterable[Case], obj: Any) -> None:
    """Compare ``obj`` against each case locally (used by tests and ad-hoc checks)."""
    __tracebackhide__ = True
    for case in cases:
        case.compare(capture(lambda c=case: c.call(obj)), capture(case.want), case)
