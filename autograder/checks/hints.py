"""Hints: what a wrong answer is recognised as, from the known mistakes a check lists."""
from __future__ import annotations

import warnings
from typing import Any, Callable, Iterable

import numpy as np

from .compare import Hint
from .evidence import Array, Unencodable


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
