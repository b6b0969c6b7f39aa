"""What notebook 05's checks share: the assignment, its decorators, and float64 tensors in and out of torch."""
from __future__ import annotations

from functools import partial

import numpy as np

from ..questions import NB04, question
from ..registry import exercise
from ..toolkit import import_torch

A = "05_gradients_and_chain_rule"
check = exercise(A)
ask = partial(question, A, wording=NB04, reason=True)  # every prediction asks a one-line reason


def _leaf(a):
    """A float64 tensor of ``a`` that records its gradient."""
    torch = import_torch()
    return torch.tensor(np.asarray(a, dtype=np.float64), dtype=torch.float64, requires_grad=True)


def _np(t) -> np.ndarray:
    """A tensor's values as a NumPy array of its own (a copy: the tensor may change in a later step)."""
    return t.detach().numpy().copy()
