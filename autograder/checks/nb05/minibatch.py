"""Notebook 05's checks of minibatches: predict_batch_spread (how the spread of a minibatch gradient changes with
the batch size) and gradient_spread, the learner's measurement of it.

A measurement from random draws has many right values, so the check compares with the law, not with one run:
the standard deviation of the mean of B different values drawn from N, whose spread is ``sigma``, is
``sigma / sqrt(B) * sqrt((N - B) / (N - 1))`` (drawn without putting back), and ``sigma / sqrt(B)`` with putting
back. A right measurement lands within ``TOLERANCE`` of that band (the cases draw enough times that a right one
is many of its own standard errors inside); each usual mistake lands far outside it, and the message says what
came out.
"""
from __future__ import annotations

import numpy as np

from ..compare import Case, close, predicate
from ..hints import numbers
from ..questions import a_number, plain
from .common import ask, check

TOLERANCE = 0.12  # relative; with 1000 draws a right spread is within about 2.3% (one standard error)


def law(per_pair: np.ndarray, batch_size: int) -> tuple[float, float]:
    """The band a right spread of the minibatch mean falls in: (drawn without putting back, with putting back)."""
    n, sigma = len(per_pair), float(np.std(per_pair))
    without = sigma / np.sqrt(batch_size) * np.sqrt((n - batch_size) / (n - 1)) if n > 1 else 0.0
    return without, sigma / np.sqrt(batch_size)


def _spread_case(label, per_pair, batch_sizes, n_draws, seed):
    per_pair = np.asarray(per_pair, dtype=float)
    batch_sizes = list(batch_sizes)
    # a batch of all the pairs is the whole set, one value whatever the draw: with putting back it would not be
    bands = [law(per_pair, b) if b < len(per_pair) else (0.0, 0.0) for b in batch_sizes]
    sigma = float(np.std(per_pair))

    def run(fn):
        return fn(per_pair.copy(), list(batch_sizes), n_draws, np.random.default_rng(seed))

    def inside(value, band, power=1):
        low, high = band
        return low ** power * (1 - TOLERANCE) - 1e-9 <= value <= high ** power * (1 + TOLERANCE) + 1e-9

    def test(got, want):
        g = numbers(plain(got))  # a list of NumPy scalars reads as an array too
        if g is None or g.shape != (len(batch_sizes),) or g.dtype.kind not in "iuf":
            return (f"gradient_spread returned {repr(got)[:80]}; return one spread per batch size, in the order of "
                    f"batch_sizes: an array of {len(batch_sizes)} numbers.")
        if not np.all(np.isfinite(g)):
            return f"gradient_spread returned {g.tolist()}: a spread is a finite number."
        if all(inside(v, band) for v, band in zip(g, bands)):
            return None
        said = (f"on {len(per_pair)} per-pair gradients whose own spread is {sigma:.3g}, batch sizes {batch_sizes} "
                f"gave spreads {np.round(g, 4).tolist()}")
        expected = f"a right measurement gives about {np.round([b[0] for b in bands], 4).tolist()}"
        whole = [b == len(per_pair) for b in batch_sizes]
        if any(w and v > 1e-9 for w, v in zip(whole, g)) and all(
                inside(v, band) for v, band, w in zip(g, bands, whole) if not w):
            return (f"{said}: a batch of all {len(per_pair)} pairs still varies from draw to draw. Can one batch "
                    "hold the same pair twice?")
        if np.all(np.abs(g) < 1e-12):
            return (f"{said}: no spread at all, at every batch size. Did each draw's minibatch gradient come out "
                    "the same? Then every draw read the same batch.")
        if all(inside(v, band, power=2) for v, band in zip(g, bands)):
            return (f"{said}: these are about the squares of the right spreads ({expected}). A spread is in the "
                    "gradient's own units.")
        single = [v for v, band, b in zip(g, bands, batch_sizes) if b == 1 and band[0] > 1e-12]
        if single and abs(single[0]) < 1e-12:
            return (f"{said}: at batch size 1 the spread is 0, yet single pairs' gradients differ ({sigma:.3g}). Is "
                    "the spread taken across the draws, over one minibatch gradient per draw, or within one batch?")
        batches = [(v, band) for v, band, b, w in zip(g, bands, batch_sizes, whole) if b >= 4 and not w]
        if batches and all(abs(v - sigma) < 0.3 * sigma for v, _ in batches):
            return (f"{said}: about the spread of single pairs, whatever the batch size. Is the spread taken across "
                    "the draws, over one minibatch gradient per draw, or within one batch?")
        if len(g) > 1 and g[int(np.argmax(batch_sizes))] > 1.5 * g[int(np.argmin(batch_sizes))]:
            return (f"{said}: the spread grows with the batch size; {expected}. A minibatch's gradient is the gradient "
                    "of the batch's mean loss: does yours grow with the number of pairs in it?")
        ratio = [v / band[0] for v, band in zip(g, bands) if band[0] > 1e-12]
        if ratio and all(0.7 < r < 0.88 for r in ratio):
            return (f"{said}: every spread is about 0.8 of the right one ({expected}). Is it the standard deviation "
                    "of the minibatch gradients, or another average distance from their mean?")
        return f"{said}; {expected}."

    return Case(label, run, lambda: [round(b[0], 4) for b in bands], predicate(test))


def _standardised(rng, n, mean, sigma):
    v = rng.normal(size=n)
    return mean + sigma * (v - v.mean()) / v.std()


@check
def gradient_spread(hidden, rng):
    if not hidden:
        data = _standardised(np.random.default_rng(5), 1000, 0.5, 3.0)
        return [
            _spread_case("gradient_spread([0, 0, 0, 4], [1, 4], 1000, rng): a batch of all 4 pairs is the whole set",
                         [0.0, 0.0, 0.0, 4.0], [1, 4], 1000, seed=11),
            _spread_case("gradient_spread on 1000 per-pair gradients of mean 0.5 and spread 3, "
                         "batch sizes [1, 4, 16, 64, 256], 1000 draws", data, [1, 4, 16, 64, 256], 1000, seed=12),
        ]
    seeds = [int(s) for s in rng.integers(0, 2**31, size=2)]
    n = int(rng.integers(600, 1500))
    data = _standardised(rng, n, float(rng.normal()), float(rng.uniform(1.5, 4.0)))
    return [
        _spread_case(f"gradient_spread on {n} per-pair gradients, batch sizes [2, 8, 32, 128], 1000 draws",
                     data, [2, 8, 32, 128], 1000, seeds[0]),
        # fixed: half the gradients 0 (as a bigram table's entry is for pairs that do not start with its
        # character) and batch sizes out of order
        _spread_case("gradient_spread on 800 per-pair gradients, half of them 0, batch sizes [25, 1, 100], 1000 draws",
                     np.where(np.arange(800) % 2 == 0, np.tile([-1.5, 0.5], 400), 0.0), [25, 1, 100], 1000,
                     seed=13),
        _spread_case("gradient_spread([1, 2, 3, 4, 5], [5, 2], 1000, rng): all 5 pairs are the whole set",
                     [1.0, 2.0, 3.0, 4.0, 5.0], [5, 2], 1000, seeds[1]),
    ]


# ------------------------------------------------------------------------ predict_batch_spread

predict_batch_spread = ask(
    "predict_batch_spread", form=a_number, compare=close(atol=0.6, rtol=0.0), atol=0.6, rtol=0.0, mistakes=[
        (16.0, "16 is how much the variance shrinks, the square of the spread: averaging B independent pairs "
               "divides the variance by B, so the spread, its square root, shrinks by sqrt(16) = 4."),
        (1.0, "A bigger batch averages more pairs, and their independent errors partly cancel: the spread shrinks, "
              "by sqrt(16) = 4."),
        (lambda v: v < 1, "A bigger batch gives a steadier gradient, not a noisier one: the spread shrinks, by 4."),
        (8.0, "Averaging B independent pairs divides the variance by B; the spread, its square root, shrinks by "
              "sqrt(16) = 4.")],
    otherwise="Averaging B independent pairs divides the variance by B, so the spread shrinks as 1/sqrt(B): "
              "16 times the pairs, a quarter of the spread.")
