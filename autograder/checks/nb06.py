"""Checks for 06_sinusoids_and_positions."""
from __future__ import annotations

import numpy as np

from ..reference import lazy
from .core import Case, call_with, close, const, exercise, known_mistakes, raises

A = "06_sinusoids_and_positions"
check = exercise(A)
R = lazy(A)

MATCH = dict(atol=1e-9, rtol=1e-7)  # how near a known mistake an answer must be to be named


# ------------------------------------------------------------------- period

def _period_hint(omega):
    w = np.asarray(omega, dtype=float)
    return known_mistakes(
        (lambda: 1 / w, "That is 1 / omega: omega is in radians per token and a full turn is 2 pi radians, "
                        "so the period is 2 pi / omega."),
        (lambda: w / (2 * np.pi), "That is omega / (2 pi), the number of turns per token: the period is its "
                                  "inverse, 2 pi / omega."),
        (lambda: 2 * np.pi * w, "That is 2 pi * omega: divide 2 pi by omega instead."),
        (lambda: 360 / w, "That is 360 / omega, a turn counted in degrees: omega is in radians, use 2 pi."),
        **MATCH,
    )


@check
def period(hidden, rng):
    f = close(dtype="f")
    if not hidden:
        omegas = np.array([1.0, 0.1, 0.01, 0.001])
        return [
            Case("period(0.1): about 62.8 token steps", call_with(0.1), const(2 * np.pi / 0.1), f,
                 hints=[_period_hint(0.1)]),
            Case("period(0.01): about 628 token steps", call_with(0.01), const(2 * np.pi / 0.01), f,
                 hints=[_period_hint(0.01)]),
            Case("period(2 * np.pi): one turn per token", call_with(2 * np.pi), const(1.0), f,
                 hints=[_period_hint(2 * np.pi)]),
            Case("period(np.array([1, 0.1, 0.01, 0.001])) keeps the shape", call_with(omegas),
                 const(2 * np.pi / omegas), f, hints=[_period_hint(omegas)]),
        ]
    omegas = rng.uniform(0.001, 3.0, size=(2, 3))
    return [Case("period of a (2, 3) array of random omegas", call_with(omegas), lambda: R("period")(omegas), f,
                 hints=[_period_hint(omegas)]),
            Case("period(0.5)", call_with(0.5), lambda: R("period")(0.5), f, hints=[_period_hint(0.5)])]


# -------------------------------------------------------- angular_frequencies

def _freq_hint(d, base):
    k = np.arange(d // 2)
    return known_mistakes(
        (lambda: base ** (-k / d), "Those are base ** (-k / d): the exponent is -2k / d (pair k starts at "
                                   "feature 2k)."),
        (lambda: base ** (2.0 * k / d), "The frequencies grow: the exponent is negative, -2k / d, so they "
                                        "fall from 1."),
        (lambda: base ** (-2.0 * (k + 1) / d), "k starts at 0: the first pair turns at base ** 0 = 1 radian "
                                               "per token."),
        (lambda: base ** (-2.0 * k / (d - 2)) if d > 2 else np.ones(1),
         "The last exponent should stay above -1: divide 2k by d, not by d - 2."),
        (lambda: base ** (-np.arange(0, d) / d), "One frequency per pair: d / 2 values, not d."),
        (lambda: 2 * np.pi / base ** (-2.0 * k / d), "Those are periods, not angular frequencies."),
        (lambda: np.ones(d // 2) if d > 2 else np.zeros(1), "Every frequency is 1, so every exponent came out "
                                                            "as 0: an integer division (//) in -2k / d?"),
        **MATCH,
    )


@check
def angular_frequencies(hidden, rng):
    f = close(dtype="f")
    if not hidden:
        return [
            Case("angular_frequencies(8): 1, 0.1, 0.01, 0.001", call_with(8),
                 const(np.array([1.0, 0.1, 0.01, 0.001])), f, hints=[_freq_hint(8, 10000.0)]),
            Case("angular_frequencies(4, base=100.0)", call_with(4, base=100.0), const(np.array([1.0, 0.1])), f,
                 hints=[_freq_hint(4, 100.0)]),
            Case("angular_frequencies(2): a single pair", call_with(2), const(np.array([1.0])), f,
                 hints=[_freq_hint(2, 10000.0)]),
        ]
    d = int(rng.integers(5, 40)) * 2
    base = float(rng.uniform(50, 20000))
    return [Case(f"angular_frequencies({d}, base={base:.1f})", call_with(d, base=base),
                 lambda: R("angular_frequencies")(d, base=base), f, hints=[_freq_hint(d, base)]),
            Case("angular_frequencies(64)", call_with(64), lambda: R("angular_frequencies")(64), f,
                 hints=[_freq_hint(64, 10000.0)])]


# ------------------------------------------------------ sinusoidal_positions

def _pe(T, d, base=10000.0, first=0, step=2.0, blocks=False, swap=False):
    """The encoding and its usual variants, written independently of the reference."""
    angles = np.arange(first, first + T)[:, None] * base ** (-step * np.arange(d // 2) / d)  # (T, d/2)
    a, b = (np.cos(angles), np.sin(angles)) if swap else (np.sin(angles), np.cos(angles))
    if blocks:
        return np.concatenate([a, b], axis=1)  # (T, d)
    return np.stack([a, b], axis=-1).reshape(T, -1)  # (T, d/2, 2) -> (T, d)


def _per_feature(T, d, base):
    angles = np.arange(T)[:, None] * base ** (-np.arange(d) / d)  # (T, d): one frequency per feature
    return np.where(np.arange(d) % 2 == 0, np.sin(angles), np.cos(angles))


def _pe_hint(T, d, base=10000.0):
    return known_mistakes(
        (lambda: _per_feature(T, d, base), "Features 2k and 2k + 1 are one pair and share one angle, "
                                           "p * base ** (-2k / d): do not give each feature its own frequency."),
        (lambda: _pe(T, d, base, blocks=True), "All sines, then all cosines: the pairs are interleaved, "
                                               "sin at feature 2k and cos at feature 2k + 1."),
        (lambda: _pe(T, d, base, swap=True), "Sine and cosine are swapped: sin goes to the even features "
                                             "2k, cos to the odd ones."),
        (lambda: _pe(T, d, base, first=1), "Those are positions 1 .. T: positions start at 0 "
                                           "(row 0 is [0, 1, 0, 1, ...])."),
        (lambda: _pe(T, d, base, step=1.0), "The frequencies use base ** (-k / d): the exponent is -2k / d."),
        (lambda: _pe(T, d, base, blocks=True, step=1.0), "Sines and cosines in blocks, and the exponent "
                                                         "-k / d: interleave them and use -2k / d."),
        **MATCH,
    )


@check
def sinusoidal_positions(hidden, rng):
    f = close(dtype="f")
    if not hidden:
        return [
            Case("sinusoidal_positions(2, 4): rows [0, 1, 0, 1] and [sin 1, cos 1, sin 0.01, cos 0.01]",
                 call_with(2, 4),
                 const(np.array([[0.0, 1.0, 0.0, 1.0], [np.sin(1), np.cos(1), np.sin(0.01), np.cos(0.01)]])), f,
                 hints=[_pe_hint(2, 4)]),
            Case("sinusoidal_positions(5, 8, base=100.0)", call_with(5, 8, base=100.0),
                 lambda: _pe(5, 8, 100.0), f, hints=[_pe_hint(5, 8, 100.0)]),
            Case("sinusoidal_positions(3, 5): d = 5 leaves one feature without a partner", call_with(3, 5),
                 raises("d must be even"), f),
        ]
    cases = []
    for T, d, base in ((50, 16, 10000.0), (7, 2, 100.0), (1, 6, 10000.0), (12, 10, 500.0)):
        cases.append(Case(f"sinusoidal_positions({T}, {d}, base={base})", call_with(T, d, base=base),
                          lambda T=T, d=d, base=base: R("sinusoidal_positions")(T, d, base=base), f,
                          hints=[_pe_hint(T, d, base)]))
    cases.append(Case("sinusoidal_positions(4, 7): odd d", call_with(4, 7), lambda: R("sinusoidal_positions")(4, 7), f))
    return cases
