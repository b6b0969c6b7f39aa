"""What notebook 01's checks share: the assignment, its decorator ``check``, the reference, ``ask``, and the
helpers that count pairs of ids and name a wrong nested result in a hint (the bug hunt's neighbours and BPE's
checks both use them)."""
from __future__ import annotations

from functools import partial

import numpy as np

from ...reference import lazy
from ..evidence import Array
from ..questions import NB01, as_tuple, question
from ..registry import exercise


A = "01_tokens_and_ids"
check = exercise(A)
R = lazy(A)

# Notebooks 02 and 03 ask theirs the same way: answers worked out by hand count within 1e-3.
ask = partial(question, A, wording=NB01, atol=1e-3, rtol=1e-3, normalize=as_tuple, reason=True)


def _pairs(ids):
    counts: dict = {}
    for p in zip(ids, ids[1:]):
        counts[p] = counts.get(p, 0) + 1
    return counts


def _loose(value):
    """A result as plain lists and numbers, so that a near-miss can be compared with a wrong variant."""
    if isinstance(value, Array):
        return value.data.tolist()
    if isinstance(value, (list, tuple)):
        return [_loose(v) for v in value]
    return value


def known_values(*candidates):
    """Like core.known_mistakes, for nested lists and tuples (a list of merges) rather than arrays."""
    def hint(got, want):
        for make, message in candidates:
            try:
                wrong = _loose(make())
            except Exception:
                continue
            if _same(_loose(got), wrong) and not _same(_loose(want), wrong):
                return message
        return None
    return hint


def _same(a, b, tol=1e-3):
    """Equal plain data; numbers of the same shape equal to within tol (a prediction worked out by hand)."""
    if a == b:
        return True
    try:
        x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    except (TypeError, ValueError):
        return False
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=tol, atol=tol))
