"""What notebook 04's checks share: the assignment, its decorators, float64 tensors, and the NumPy models of
mistakes that several exercises' hints use."""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from ..hints import numbers
from ..questions import NB04, question
from ..registry import exercise
from ..toolkit import import_torch

A = "04_softmax_and_probability"
check = exercise(A)
ask = partial(question, A, wording=NB04, reason=True)  # every prediction asks a one-line reason
LN2 = math.log(2.0)


# ------------------------------------------------------------------------------- helpers

def _t(a):
    return import_torch().as_tensor(np.asarray(a, dtype=np.float64))


def _np(x) -> np.ndarray:
    return x.detach().numpy()


# ------------------------------------------------------------------- numpy models of mistakes (hints only)

def _log_sm(z):
    z = np.asarray(z, dtype=float)
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


def sign_hint(message: str):
    """A hint for a scalar result that is the expected one negated (core names this only for arrays)."""
    def hint(got, want):
        g, w = numbers(got), numbers(want)
        return message if g.shape == w.shape and w.any() and np.allclose(-g, w) else None
    return hint
