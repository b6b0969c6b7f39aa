"""What notebook 10's checks share: the assignment, its decorators, the model case, and two hints of composites.

:class:`ModelCase` is a case whose right answer and known wrong ones are NumPy models (the tests prove each
wrong one lies beyond the tolerance); FeedForward, TinyGPT's options and the GPT-2 and Llama conversions use it.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from ..compare import Case
from ..questions import NB06, question
from ..registry import exercise


A = "10_decoder_block"
check = exercise(A)
ask = partial(question, A, wording=NB06, reason=True)  # every prediction asks the learner's one-line reason


@dataclass
class ModelCase(Case):
    """A case whose right answer and known wrong ones are NumPy models: the tests prove, seed by seed, that each
    wrong one lies beyond the case's tolerance."""

    right: "Callable[[], np.ndarray] | None" = None
    variants: "dict[str, Callable[[], np.ndarray]] | None" = None


@contextmanager
def _empty_rows_explained():
    """09's attention raises on a row with no allowed key (the course's one contract for such rows); in a
    block under a causal mask that only happens with an inverted mask, so say so."""
    try:
        yield
    except ValueError as exc:
        if "no key" not in str(exc) and "keeps no" not in str(exc):
            raise
        raise ValueError(f"{exc}. Under a causal mask every row keeps its own key, so the mask looks inverted: our "
                         "MultiHeadAttention wants True = allowed (torch.tril), the opposite of PyTorch's torch.triu "
                         "mask.") from None


def _uses(parts: str):
    """The last resort hint: a composite is only as right as the parts it is built from."""
    return lambda got, want: f"If {parts} do not pass their own checks yet, fix them first: this class uses them."
