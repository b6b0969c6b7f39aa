"""Notebook 09's copy task, measured by the learner: accuracy_by_length(model, max_len, n_symbols, seed) gives the
share of output tokens right at each source length. The cases hand it a model whose right positions are known (it
copies the source at some output positions and writes the next symbol at the others), so the shares do not depend
on which sources are drawn; the known mistakes a ``variant`` names are computed from the same positions."""
from __future__ import annotations

import numpy as np

from ..compare import Case, close
from ..toolkit import diagnose, import_torch

LENGTH_MESSAGES = {  # the symptom first, then the likely cause in a learner's words; never the line to write
    "whole_source": "Your shares drop to 0 once a source is longer than the part the model copies right: a source "
                    "was counted right only when every one of its tokens is, while the share asked for counts tokens.",
    "last_token": "Your shares jump between 0 and 1 from one length to the next: only one output position of each "
                  "source was compared, not all n of them.",
    "first_token": "Your shares do not move with the length although the model gets later positions wrong: only the "
                   "first output token of each source was compared.",
    "lengths_from_zero": "Your first share is not the share at length 1: the lengths start at 0 (a source with no "
                         "token, whose share is 0/0) and stop at max_len - 1.",
}


def shares_np(right, max_len, variant=None):
    """The shares by length 1 .. max_len of a model right exactly at the output positions in ``right``."""
    if variant is not None and variant not in LENGTH_MESSAGES:
        raise ValueError(f"shares_np has no variant {variant!r}; the choices are {sorted(LENGTH_MESSAGES)}")
    ok = np.array([j in right for j in range(max_len)], dtype=float)  # (max_len,): is output position j right?
    with np.errstate(invalid="ignore"):
        per_length = {"whole_source": lambda n: ok[:n].all(), "last_token": lambda n: ok[n - 1],
                      "first_token": lambda n: ok[0], "lengths_from_zero": lambda n: ok[:n - 1].mean() if n > 1
                      else np.nan}.get(variant, lambda n: ok[:n].mean())
        return np.array([float(per_length(n)) for n in range(1, max_len + 1)])


def _model(right, n_symbols):
    """A copy model that writes the source token at the output positions in ``right`` and the next symbol elsewhere:
    sources (B, n) int64 -> logits (B, n, n_symbols)."""
    torch = import_torch()

    def model(src):
        n = src.shape[-1]
        wrong = torch.tensor([j not in right for j in range(n)], dtype=src.dtype)  # (n,)
        return torch.nn.functional.one_hot((src + wrong) % n_symbols, n_symbols).float() * 3.0
    return model


def _length_case(label, right, max_len, n_symbols, seed):
    def call(fn):
        return fn(_model(right, n_symbols), max_len, n_symbols, seed)

    variants = {n: (lambda n=n: shares_np(right, max_len, n)) for n in LENGTH_MESSAGES}
    return Case(label, call, lambda: shares_np(right, max_len), close(atol=1e-6, rtol=0.0),
                hints=[diagnose(variants, LENGTH_MESSAGES)])


def length_cases(hidden, rng):
    """accuracy_by_length's cases: models right at known output positions, so every length's share is known."""
    if not hidden:
        return [_length_case("accuracy_by_length(model, 8, 5, seed=0), a model right at output positions 0, 1, 2 and 5 "
                             "only: [1, 1, 1, 0.75, 0.6, 0.67, 0.57, 0.5]", {0, 1, 2, 5}, 8, 5, 0)]
    return [_length_case("accuracy_by_length(model, 6, 7, seed=3), a model right at output positions 0, 3 and 4",
                         {0, 3, 4}, 6, 7, 3),
            _length_case("accuracy_by_length(model, 4, 3, seed=9), a model right at output position 1 only", {1}, 4, 3,
                         9)]
