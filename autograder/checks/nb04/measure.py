"""Notebook 04's measurement the learner writes: score_variance_by_width, the spread of attention's raw
scores q . k at several widths, measured by drawing pairs from the learner's generator.

The answer is random, so a case does not compare numbers: it reads the measurement against the law the
notebook is after (the variance of q . k is the width d) with room for sampling noise, and each wrong law a
learner's code can follow (sqrt(d), 1, 0, 2d, d^2) gets its own symptom. Everything here is NumPy: building
the cases imports no torch.
"""
from __future__ import annotations

import numpy as np

from ..compare import Case, predicate
from ..hints import numbers
from .common import check

# 20,000 pairs put the sampling noise of a measured variance at about 1% (2% at d = 1, where one product's
# fourth moment is 9): a 12% band is more than 5 standard errors wide, and every wrong law sits outside it.
N_PAIRS = 20_000
BAND = 0.12


def _reference(widths, n, seed):
    gen = np.random.default_rng(seed)
    out = []
    for d in widths:
        q, k = gen.normal(size=(n, d)), gen.normal(size=(n, d))
        out.append(float(np.var(np.sum(q * k, axis=-1))))
    return np.array(out)


def _as_measurement(got, widths) -> tuple[np.ndarray | None, str | None]:
    arr = numbers(got)
    if arr is None or arr.dtype.kind not in "biuf":
        return None, (f"score_variance_by_width returned {type(got).__name__}; return one number per width, "
                      f"e.g. a NumPy array of shape ({len(widths)},)")
    arr = arr.astype(float)
    if arr.shape != (len(widths),):
        return None, (f"score_variance_by_width returned shape {arr.shape} for {len(widths)} widths; return one "
                      f"variance per width, in the order of the widths: shape ({len(widths)},)")
    if not np.all(np.isfinite(arr)):
        return None, f"score_variance_by_width returned {np.round(arr, 3).tolist()}: not every value is finite"
    return arr, None


def _law_case(label, widths, seed, n=N_PAIRS):
    widths = list(widths)
    d = np.array(widths, dtype=float)

    def run(fn):
        return fn(list(widths), n, np.random.default_rng(seed))

    def test(got, want):
        arr, problem = _as_measurement(got, widths)
        if problem:
            return problem
        ratio = arr / d
        if np.all(np.abs(ratio - 1.0) <= BAND):
            return None
        shown = f"for widths {widths} you measured {np.round(arr, 2).tolist()}"

        def near(law):
            return bool(np.all(np.abs(arr / law - 1.0) <= BAND))

        if np.all(np.abs(arr) <= 0.1 * np.sqrt(d)):
            why = ("every value is close to 0. The scores' average is 0, but they spread around it: is this their "
                   "mean rather than their spread, or a variance of something that does not vary?")
        elif near(np.sqrt(d)):
            why = ("the values grow like the square root of the width. That is how far a typical score lies from "
                   "0 (a standard deviation); the question asks for the variance, its square.")
        elif near(np.ones_like(d)):
            why = ("the values stay near 1 at every width: the measurement does not see the width. Is each score "
                   "the sum of all d products of one pair, and is it left unscaled?")
        elif near(2.0 * d):
            why = ("the values are about twice what independent q and k give. A score of a vector with itself, "
                   "q . q, is a sum of squares and spreads twice as much: are q and k two separate draws?")
        elif near(d * d):
            why = ("the values grow like the square of the width. A score adds the d products q_i k_i of matching "
                   "entries, not the product of two sums.")
        else:
            worst = int(np.argmax(np.abs(ratio - 1.0)))
            why = (f"at width {widths[worst]} the measured variance is {arr[worst]:.2f}, off by more than sampling "
                   f"noise explains with {n} pairs, and it follows none of the usual wrong laws (sqrt(d), 1, 0, 2d, "
                   "d^2). Print that width's scores: are there n_pairs of them, each one query with one key of that "
                   "width, drawn as the docstring says, and is their variance what you return there?")
        return f"{shown}: {why}"

    # what is due is the law itself, one variance d per width (the verdict reads the measurement against it);
    # measuring a reference too would double the cost every learner's grading pays, for a number nobody reads
    return Case(label, run, lambda: d.copy(), predicate(test))


def _uses_rng_case(label, widths, seeds, n=2000):
    widths = list(widths)

    def run(fn):
        return [fn(list(widths), n, np.random.default_rng(s)) for s in seeds]

    def test(got, want):
        arrs = []
        for g in got:
            arr, problem = _as_measurement(g, widths)
            if problem:
                return problem
            arrs.append(arr)
        if not np.array_equal(arrs[0], arrs[1]):
            return ("two calls with identically seeded generators measured different values: some of the draws "
                    "do not come from the rng argument, so nobody can repeat the measurement.")
        if np.array_equal(arrs[0], arrs[2]):
            return (f"two different seeds gave exactly the same values, {np.round(arrs[0], 3).tolist()}: a "
                    "measurement of random draws moves a little with the draws, and these did not move at all.")
        return None

    return Case(label, run, lambda: [_reference(widths, n, s) for s in seeds], predicate(test))


@check
def score_variance_by_width(hidden, rng):
    if not hidden:
        return [
            _law_case(f"score_variance_by_width([1, 4, 16, 64], {N_PAIRS}, rng): one variance per width", [1, 4, 16, 64],
                      seed=11),
            _law_case(f"score_variance_by_width([64, 4, 32], {N_PAIRS}, rng): in the order of the widths given",
                      [64, 4, 32], seed=12),
            _uses_rng_case("score_variance_by_width with the same seed twice, then another seed", [4, 16],
                           seeds=(13, 13, 14)),
        ]
    seeds = [int(s) for s in rng.integers(0, 2**31, size=4)]
    # Widths up to 32: the sampling noise of a variance hardly depends on the width (relative error about
    # sqrt((2 + 6/d) / n)), while the cost grows with it, so wider vectors would only make grading slower;
    # every wrong law is already a factor of 1.4 or more away from d at d >= 2.
    widths = sorted(int(w) for w in rng.choice(np.arange(2, 33), size=3, replace=False))
    return [
        _law_case(f"score_variance_by_width({widths}, {N_PAIRS}, rng)", widths, seeds[0]),
        _law_case(f"score_variance_by_width([24, 2], {N_PAIRS}, rng)", [24, 2], seeds[1]),
        _uses_rng_case("score_variance_by_width with the same seed twice, then another seed", [8, 3],
                       seeds=(seeds[2], seeds[2], seeds[3])),
    ]
