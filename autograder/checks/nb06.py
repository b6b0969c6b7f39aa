"""Checks for 06_sinusoids_and_positions."""
from __future__ import annotations

from functools import partial

import numpy as np

from ..reference import lazy
from .compare import Case, call_with, close, const, equal, fmt, raises
from .hints import known_mistakes, numbers
from .questions import NB06, int_in, is_, one_of, question
from .registry import exercise
from .toolkit import MATCH

A = "06_sinusoids_and_positions"
check = exercise(A)
R = lazy(A)


# -------------------------------------------------------- angular_frequencies

def _freq_hint(d, base):
    k = np.arange(d // 2)
    return known_mistakes(
        (lambda: base ** (-k / d), "Your periods grow too slowly: d / 2 steps of your factor multiply the "
                                   "period by only sqrt(base), not by base. Pair k starts at feature 2k."),
        (lambda: base ** (2.0 * k / d), "Your frequencies grow from pair to pair, so the periods shrink: the "
                                        "pairs must get slower, from 1 radian per token downwards."),
        (lambda: base ** (-2.0 * (k + 1) / d), "Your first pair is already slower than 1 radian per token: pair 0 "
                                               "turns one radian per token (period 2 pi), and k starts at 0."),
        (lambda: base ** (-2.0 * k / (d - 2)) if d > 2 else np.ones(1),
         "Your slowest pair has period 2 pi * base: that is the period one step past the last pair, so your "
         "factor is too large."),
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
            Case("angular_frequencies(5): an odd width has no whole number of pairs", call_with(5),
                 raises("d must be even and >= 2, got d=5")),
        ]
    d = int(rng.integers(5, 40)) * 2
    base = float(rng.uniform(50, 20000))
    return [Case(f"angular_frequencies({d}, base={base:.1f})", call_with(d, base=base),
                 lambda: R("angular_frequencies")(d, base=base), f, hints=[_freq_hint(d, base)]),
            Case("angular_frequencies(64)", call_with(64), lambda: R("angular_frequencies")(64), f,
                 hints=[_freq_hint(64, 10000.0)]),
            Case("angular_frequencies(0): no pairs at all", call_with(0), raises("d must be even and >= 2, got d=0"))]


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
        (lambda: _per_feature(T, d, base), "Features 2k and 2k + 1 are one pair and share one angle (one hand, "
                                           "the k-th of angular_frequencies(d, base)): each feature got a "
                                           "frequency of its own."),
        (lambda: _pe(T, d, base, blocks=True), "All sines, then all cosines: the pairs are interleaved, "
                                               "sin at feature 2k and cos at feature 2k + 1."),
        (lambda: _pe(T, d, base, swap=True), "Sine and cosine are swapped: sin goes to the even features "
                                             "2k, cos to the odd ones."),
        (lambda: _pe(T, d, base, first=1), "Those are positions 1 .. T: positions start at 0 "
                                           "(row 0 is [0, 1, 0, 1, ...])."),
        (lambda: _pe(T, d, base, step=1.0), "The pairs turn at the wrong speeds: pair k must turn at the k-th "
                                            "frequency of angular_frequencies(d, base), which you wrote above."),
        (lambda: _pe(T, d, base, blocks=True, step=1.0), "Sines and cosines in blocks, not interleaved, and the "
                                                         "pairs turn at the wrong speeds (not those of "
                                                         "angular_frequencies(d, base))."),
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


# ------------------------------------------------------------- shift_positions (a bug hunt)
# The learner is given code with two independent slips: it reads each pair's angle with np.arctan of sine over cosine
# (a point and its opposite share that ratio, so every pair whose cosine is negative comes back half a turn off), and
# it turns the pairs at the speeds of the default base whatever base the encoding was made with (only a case at
# another base shows it, and only in the slower pairs). Neither slip undoes the other: each has its own symptom, and
# no single change elsewhere repairs both.

def _pe_at(positions, d, base):
    """Rows of the encoding at any positions (negative too), written independently of the reference."""
    angles = np.asarray(positions, dtype=float)[:, None] * base ** (-2.0 * np.arange(d // 2) / d)  # (T, d/2)
    return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(len(positions), d)


def _turned(pe, k, base, *, half_circle=False, default_speeds=False, turn_sign=1):
    """pe's pairs turned by k steps, the way the given code (or one of its half-fixes) turns them."""
    T, d = pe.shape
    speeds = 10000.0 ** (-2.0 * np.arange(d // 2) / d) if default_speeds else base ** (-2.0 * np.arange(d // 2) / d)
    with np.errstate(all="ignore"):
        angle = np.arctan(pe[:, 0::2] / pe[:, 1::2]) if half_circle else np.arctan2(pe[:, 0::2], pe[:, 1::2])
    out = np.empty_like(pe)
    out[:, 0::2], out[:, 1::2] = np.sin(angle + turn_sign * k * speeds), np.cos(angle + turn_sign * k * speeds)
    return out


def _flip_example(positions, k, d, base):
    """Words for the first pair the half-circle reading flips: where it should land and where it lands."""
    want = _pe_at(positions + k, d, base)
    cos = _pe_at(positions, d, base)[:, 1::2]  # (T, d/2)
    rows, pairs = np.nonzero(cos < 0)
    if not len(rows):
        return ""
    t, j = int(rows[0]), int(pairs[0])
    w = want[t, 2 * j:2 * j + 2]
    return (f" (the row of position {int(positions[t])}, pair {j}: ({-w[0]:.4f}, {-w[1]:.4f}) where position "
            f"{int(positions[t]) + k} has ({w[0]:.4f}, {w[1]:.4f}))")


def _speed_example(k, d, base):
    """Words for what the default speeds do to the slower pairs: the turn, and a factor off that differs by pair."""
    slow = np.arange(1, d // 2)[:3] if d >= 4 else np.zeros(1, dtype=int)  # the first three slower pairs
    got, need = k * 10000.0 ** (-2.0 * slow / d), k * base ** (-2.0 * slow / d)
    factors = ", ".join(f"pair {j} × {n / g:.3g}" for j, g, n in zip(slow, got, need))
    return (f"pair {slow[0]} turned by {got[0]:.4f} radians, where position p + {k} has it {need[0]:.4f} radians "
            f"further round than position p. The turn each slower pair needs, as a multiple of the one it got: "
            f"{factors}")


def _no_candidate():
    raise LookupError("this case cannot show both symptoms at once")  # known_mistakes skips a candidate that raises


def _shift_case(label, positions, k, d, base=10000.0):
    positions = np.asarray(positions)
    pe = _pe_at(positions, d, base)
    call = call_with(pe, k) if base == 10000.0 else call_with(pe, k, base=base)
    flipped = _flip_example(positions, k, d, base)
    hint = known_mistakes(
        (lambda: _turned(pe, k, base, half_circle=True, default_speeds=True) if flipped and base != 10000.0
         else _no_candidate(),
         f"Two different things are off, and they show in different pairs. Some pairs point exactly the opposite "
         f"way from where position p + {k} has them, both numbers with the wrong sign{flipped}. And the slower "
         f"pairs are turned by the wrong angle even where their signs are right: {_speed_example(k, d, base)}. "
         f"Take them one at a time."),
        (lambda: _turned(pe, k, base, half_circle=True),
         f"Some pairs point exactly the opposite way from where position p + {k} has them: both numbers have the "
         f"wrong sign{flipped}. The other pairs are right. Where on the circle did the flipped pairs start, and "
         f"where the right ones?"),
        (lambda: _turned(pe, k, base, default_speeds=True),
         f"Pair 0 is right in every row, but the slower pairs are turned by the wrong angle: "
         f"{_speed_example(k, d, base)}. What sets how far your code turns each pair?"),
        (lambda: _turned(pe, k, base, turn_sign=-1),
         f"Every row is a good encoding, of the wrong position: these are the encodings of positions p - {k}, "
         f"not p + {k}: the rows moved back instead of forward."),
        (lambda: pe, "These are the rows you were given: nothing was turned."),
        (lambda: _pe_at(positions + k, d, base)[:, np.arange(d).reshape(-1, 2)[:, ::-1].ravel()],
         "Right angles, but the two numbers of each pair are in each other's places: the row of position 0 of "
         "an encoding reads [0, 1, 0, 1, ...]."),
        **MATCH,
    )
    return Case(label, call, const(_pe_at(positions + k, d, base)), close(dtype="f"), hints=[hint])


@check
def shift_positions(hidden, rng):
    if not hidden:
        return [
            _shift_case("shift_positions of the row of position 2, k = 1, d = 4, base = 100: the encoding of "
                        "position 3, [sin 3, cos 3, sin 0.3, cos 0.3]", [2], 1, 4, 100.0),
            _shift_case("shift_positions of positions 0 .. 4, k = 3, d = 8: positions 3 .. 7", np.arange(5), 3, 8),
            _shift_case("shift_positions of positions 5, 1, 9, k = 4, d = 6, base = 100", [5, 1, 9], 4, 6, 100.0),
        ]
    d, k = int(rng.integers(2, 9)) * 2, int(rng.integers(2, 40))
    base = float(rng.uniform(50, 2000))
    return [
        _shift_case(f"shift_positions of 6 random positions, k = {k}, d = {d}", rng.integers(0, 500, size=6), k, d),
        _shift_case(f"shift_positions of 6 random positions, k = {k}, d = {d}, base = {base:.1f}",
                    rng.integers(0, 500, size=6), k, d, base),
        _shift_case("shift_positions with k = -5: five tokens back", np.arange(10, 14), -5, 6),
    ]


# ------------------------------------------------------------- predictions

ask = partial(question, A, wording=NB06, reason=True)  # notebooks 07, 08 and 10 word theirs the same way


predict_common_period = ask(
    "predict_common_period",
    label="predict_common_period(): the first position p > 0 where the hands of periods 8 and 12 are both back at 0",
    form=int_in(1, 10**6), compare=equal(),
    mistakes=[(is_(96), "At 96 = 8 * 12 both hands are back, but not for the first time: 24 is already a whole number "
                        "of turns for each (3 of the fast hand, 2 of the slow one)."),
              (is_(12), "At 12 the slow hand is back, but the fast one has made 1.5 turns and points the other way. "
                        "Both are back at a multiple of 8 and of 12: 24."),
              (is_(8), "At 8 the fast hand is back, but the slow one has made two thirds of a turn. Both are back at "
                       "a multiple of 8 and of 12: 24."),
              (is_(20), "Periods do not add: p must be a whole number of turns of each hand, a multiple of 8 and of "
                        "12. The first is 24."),
              (is_(4), "4 divides both periods, but at 4 neither hand is back (half a turn and a third). p must be a "
                       "multiple of both: 24.")],
    otherwise="p must be a multiple of 8 (whole turns of the fast hand) and of 12 (of the slow one): the least common "
              "multiple, 24. Two hands together repeat far later than either alone.")


predict_sine_twin = ask(
    "predict_sine_twin",
    label="predict_sine_twin(): the other position in 0 .. 11 with the sine of position 1 (omega = pi / 6)",
    form=int_in(0, 11), compare=equal(),
    mistakes=[(is_(7), "sin(7 pi / 6) = -0.5: position 7 is the point opposite position 1. The same height is crossed "
                       "twice per turn, going up at position 1 (angle pi / 6) and down at position 5 (5 pi / 6 = pi - "
                       "pi / 6), since sin(pi - a) = sin(a)."),
              (is_(11), "sin(11 pi / 6) = -0.5, the mirror image below the axis. The twin is at pi - pi / 6 = 5 pi / 6, "
                        "position 5, since sin(pi - a) = sin(a)."),
              (is_(1), "Position 1 itself does not count: which other angle in one turn has sine 0.5?")],
    otherwise="Within one turn the same sine comes back at pi - angle: pi - pi / 6 = 5 pi / 6, position 5.")



predict_fast_return = ask(
    "predict_fast_return",
    label="predict_fast_return(): which of positions 1 .. 10 puts a hand turning 1 radian per token nearest to its "
          "point at position 0",
    form=int_in(1, 10), compare=equal(),
    mistakes=[(is_(1), "Position 1 is the neighbour in the text, but its hand has turned 1 radian, about 57 degrees "
                       "(distance 0.96). A full turn is 2 pi = 6.28 radians: position 6 is only 0.28 radian short of "
                       "it, distance 0.28."),
              (is_(3), "3 radians is nearly half a turn (pi = 3.14): position 3 is almost opposite position 0, the "
                       "farthest of all. The hand is back near its start after a full turn, 6.28 radians."),
              (is_(7), "7 radians is 0.72 past a full turn (2 pi = 6.28); 6 radians is only 0.28 short of it, so "
                       "position 6 is nearer.")],
    otherwise="The hand is back near its start after a full turn, 2 pi = 6.28 radians: position 6 is 0.28 radian "
              "short of it, the nearest whole position.")


OFFSET_CHOICES = ("all four", "only PE.PE", "none")


predict_offset_terms = ask(
    "predict_offset_terms",
    label="predict_offset_terms(): which of the four terms of the projected score depend on i and j only "
          "through j - i",
    form=one_of(OFFSET_CHOICES), compare=equal(),
    mistakes=[(is_("only PE.PE"), "Without the projections, PE[i].PE[j] = sum_k cos((j - i) w_k) depends on the offset "
                                  "only. With them the term is PE[i] W_Q W_K^T PE[j]^T: the matrix mixes the sine of one "
                                  "pair with the cosine of another, and sin(a) cos(b) is not a function of a - b. In "
                                  "general it depends on i and j themselves."),
              (is_("all four"), "The terms with a token vector x hold one absolute position each (x_i W_Q W_K^T "
                                "PE[j]^T changes as j moves even when j - i is fixed), and the PE.PE term goes through "
                                "W_Q W_K^T, which breaks the cos((j - i) w) identity.")])


# Learned positions (a table trained on 8-token texts) against the formula, at position 8.
TABLE_ANSWERS = ("both", "only the sinusoidal one", "only the learned table", "neither")

predict_position_eight = ask(
    "predict_position_eight",
    label="predict_position_eight(): which of learned positions trained on 8-token texts and the sinusoidal "
          "formula gives position 8 a vector",
    form=one_of(TABLE_ANSWERS), compare=equal(),
    mistakes=[(is_("both"), "A learned table of context length 8 has rows 0 to 7 only: position 8 has no row, and "
                            "reading it raises IndexError. The formula computes a vector for any p."),
              (is_("only the learned table"), "The table is the one with a fixed number of rows, 0 to 7; the "
                                              "formula sin(p w), cos(p w) is defined for every p."),
              (is_("neither"), "The formula sin(p w), cos(p w) takes any p, 8 or 8000; only the table stops at its "
                               "last row, 7.")],
    otherwise="Only the sinusoidal formula: the table has rows 0 to 7, one per trained position.")


# Reading the angle p back from the fastest pair (sin p, cos p) with arctan of the ratio, at p = 0, 1, ..., 99.
predict_ratio_angles = ask(
    "predict_ratio_angles",
    label="predict_ratio_angles(): for how many of the positions p = 0, 1, ..., 99 does arctan(sin p / cos p) give p "
          "back within a whole number of turns",
    form=int_in(0, 100), compare=close(atol=2, rtol=0.0),
    mistakes=[(lambda v: v >= 90, "arctan answers only between -pi/2 and pi/2, half a turn: wherever cos p is negative "
                                  "(p = 2, 3, 4, 8, ...) the ratio is that of the opposite point, and the angle comes "
                                  "back half a turn off. That happens on half the circle."),
              (lambda v: v <= 10, "Where cos p is positive (p = 0, 1, 5, 6, 7, ..., and p = 7 is 0.72 past a turn) the "
                                  "ratio's arctan is right within a whole turn; only the negative cosines go wrong."),
              (lambda v: 15 <= v <= 35, "A whole turn is allowed: p = 7 is 0.72 past a turn and reads back right. "
                                        "The ratio fails where cos p < 0, on half the circle, not three quarters."),
              (lambda v: 65 <= v <= 85, "The ratio fails wherever cos p < 0: the left half of the circle, not a "
                                        "quarter of it. p = 2, 3 and 4 all land there.")],
    otherwise="Fifty: the positions 0, 1, ..., 99 radians spread evenly round the circle, and the ratio reads right "
              "only on the half where cos p > 0.")


# One pair (omega = 1), three matrices between the encodings: does PE_i M PE_j depend on j - i only?
MATRIX_ANSWERS = ("none", "only M1", "M1 and M3", "all three")

predict_offset_matrices = ask(
    "predict_offset_matrices",
    label="predict_offset_matrices(): which of M1 = 2I, M2 = diag(1, 2), M3 = [[1, 0.5], [0.5, 1]] give the same "
          "PE_i M PE_j for every pair one token apart",
    form=one_of(MATRIX_ANSWERS), compare=equal(),
    mistakes=[(is_("M1 and M3"), "M3 mixes the sine with the cosine: PE_i M3 PE_j = cos(a - b) + 0.5 sin(a + b), and "
                                 "sin(a + b) moves with the positions themselves, not with their offset."),
              (is_("all three"), "M2 weighs the cosine twice and the sine once: sin a sin b + 2 cos a cos b is not "
                                 "cos(a - b) times anything (2 cos 1 = 1.08 at (0, 1), 0.32 at (1, 2)); M3 adds "
                                 "0.5 sin(a + b)."),
              (is_("none"), "M1 = 2I scales sine and cosine alike: 2 (sin a sin b + cos a cos b) = 2 cos(a - b), a "
                            "function of the offset alone.")],
    otherwise="Only M1: 2I scales both alike, 2 cos(a - b); M2 weighs them differently and M3 mixes them.")


# -------------------------------------------------------------- first_repeat

def _first_common(periods, horizon, start=1, atol=1e-6):
    p = np.arange(start, horizon + 1)[:, None]  # (n, 1)
    turns = p / np.atleast_1d(np.asarray(periods, dtype=float))[None, :]  # (n, clocks)
    ok = np.all(np.abs(turns - np.round(turns)) < atol, axis=1)
    return int(p[ok][0, 0]) if ok.any() else None


def _exact_first(periods, horizon):
    periods = np.atleast_1d(np.asarray(periods, dtype=float))
    for p in range(1, horizon + 1):
        if all(p % P == 0 for P in periods):
            return p
    return None


def _repeat_hint(omegas, horizon):
    periods = np.atleast_1d(2 * np.pi / np.asarray(omegas, dtype=float))

    def hint(got, want):
        if got is None:
            if want is not None and _exact_first(periods, horizon) != want:
                return ("A period computed as 2 pi / omega is often not an exact float "
                        f"(here {fmt(periods, 17)}), so p % period == 0 misses the repeat: compare p / period with "
                        "the nearest whole number within a small tolerance.")
            return None
        g = numbers(got)
        if g is None or g.shape != ():
            return None
        g = float(g)
        if g == 0:
            return "Position 0 is where the clocks start: look for the first p > 0."
        candidates = [
            (np.prod(periods), "That is the product of the periods: a common repeat, but not always the first one "
                               "(periods 12 and 8 meet at 24, not 96)."),
            (_first_common(np.round(periods), horizon), "The periods were rounded to whole numbers: a period need not "
                                                        "be whole (2.5 and 4 meet at 20)."),
            (periods.max(), "That is the longest period: every other clock must also have made a whole number of "
                            "turns there."),
            (_first_common(periods[:1], horizon), "Only the first clock is back at the start there: all of them must be."),
        ]
        for value, message in candidates:
            if value is not None and np.isclose(g, value):
                return message
        return None

    return hint


def _repeat_case(label, omegas, horizon=None):
    args = (omegas,) if horizon is None else (omegas, horizon)
    h = 10_000 if horizon is None else horizon
    periods = 2 * np.pi / np.asarray(omegas, dtype=float)
    return Case(label, call_with(*args), lambda: _first_common(periods, h), _none_or_equal(),
                hints=[_horizon_hint(periods, h), _repeat_hint(omegas, h)])


class _none_or_equal(equal):
    """equal(), where None is an answer ("no repeat") rather than a forgotten return."""

    def __call__(self, got, want, case):
        __tracebackhide__ = True
        if not (got.raised or want.raised) and got.decoded is None and want.decoded is not None:
            message = f"returned None (no repeat) where the first repeat is at p = {fmt(want.decoded)}."
            for hint in case.hints:
                extra = hint(None, want.decoded)
                if extra:
                    message += " " + extra
                    break
            self.fail(case, message)
        super().__call__(got, want, case)


def _horizon_hint(periods, horizon):
    def hint(got, want):
        if got is None and want == horizon:
            return f"The repeat is at p = {horizon}, the horizon itself: the horizon is included (p in 1 .. horizon)."
        return None
    return hint


@check
def first_repeat(hidden, rng):
    two_pi = 2 * np.pi
    if not hidden:
        return [
            _repeat_case("first_repeat([2 pi / 12, 2 pi / 8]): periods 12 and 8 meet at 24",
                         np.array([two_pi / 12, two_pi / 8])),
            _repeat_case("first_repeat([2 pi / 12]): one clock repeats after its period", np.array([two_pi / 12])),
            _repeat_case("first_repeat([2 pi / 2.5, 2 pi / 4]): periods 2.5 and 4 meet at 20",
                         np.array([two_pi / 2.5, two_pi / 4])),
            _repeat_case("first_repeat([2 pi / 25, 2 pi / 10]): 2 pi / omega is 24.999999999999996, not 25",
                         np.array([two_pi / 25, two_pi / 10])),
            _repeat_case("first_repeat([2 pi / 12, 2 pi / 8], horizon=24): the horizon is included",
                         np.array([two_pi / 12, two_pi / 8]), 24),
            _repeat_case("first_repeat([2 pi / 12, 2 pi / 8], horizon=23): no repeat in 1 .. 23",
                         np.array([two_pi / 12, two_pi / 8]), 23),
            _repeat_case("first_repeat([1, 0.01]): the frequencies of a d = 4 encoding never repeat exactly",
                         np.array([1.0, 0.01])),
        ]
    periods = rng.integers(2, 16, size=3)
    halves = rng.integers(3, 12, size=2) / 2
    return [
        _repeat_case(f"first_repeat for periods {[int(P) for P in periods]}", two_pi / periods.astype(float)),
        _repeat_case(f"first_repeat for periods {[float(P) for P in halves]}", two_pi / halves),
        _repeat_case("first_repeat for periods 25 and 35", np.array([two_pi / 25, two_pi / 35])),
        _repeat_case("first_repeat for the 4 frequencies of a d = 8 encoding, horizon 3000",
                     10000.0 ** (-np.arange(4) / 4), 3000),
        # fixed, whatever the seed: random periods need not include a half that rounds away, nor a
        # repeat that lands exactly on the horizon
        _repeat_case("first_repeat for periods 3.5 and 6, horizon 42: they meet at 42, the horizon itself",
                     np.array([two_pi / 3.5, two_pi / 6]), 42),
        _repeat_case("first_repeat for periods 4 and 6, horizon 12", np.array([two_pi / 4, two_pi / 6]), 12),
    ]


# ---------------------------------------------------------- nearest_collision

NEAREST_CHOICES = ("below 10", "10 to 99", "100 or more")
WIDER_CHOICES = ("position 1", "a distant one")


predict_nearest_position = ask(
    "predict_nearest_position",
    label="predict_nearest_position(): in a d = 4 encoding, where among positions 1 .. 1999 is the vector nearest "
          "to position 0's",
    form=one_of(NEAREST_CHOICES), compare=equal(),
    mistakes=[(is_("below 10"), "Below 10 the nearest is position 6, 0.289 away: the fast hand is almost a turn "
                                "round, and the slow one has moved 0.06. But over 2000 tokens the fast hand makes about "
                                "318 turns and the slow one about 3, so somewhere the fast hand comes back nearer its "
                                "start while the slow one is near a whole turn too: position 1885 is within 0.044."),
              (is_("10 to 99"), "Below 100 the nearest is position 19, 0.242 away. Over 2000 tokens the fast hand "
                                "makes about 318 turns and the slow one about 3, and at position 1885 both are nearly "
                                "back at their start: 0.044 away.")],
    otherwise="The nearest position is 1885, 0.044 away, while position 1 is 0.959 away and position 6 0.289: far "
              "positions can look almost alike when every hand is nearly back where it started.")


predict_wider_nearest = ask(
    "predict_wider_nearest",
    label="predict_wider_nearest(): in a d = 16 encoding, is the position nearest to position 0 among 1 .. 1999 its "
          "neighbour or a distant one",
    form=one_of(WIDER_CHOICES), compare=equal(),
    mistakes=[(is_("a distant one"), "At d = 4 two hands had to be nearly back at their start at once, and within 2000 "
                                     "tokens they were (position 1885). At d = 16 eight hands must be, and no position "
                                     "up to 1999 manages it: the nearest vector is the neighbour's, 1.015 away.")],
    otherwise="At d = 16 the nearest is position 1, 1.015 away: with eight hands no far position comes back near "
              "position 0 within 2000 tokens.")


def _nearest(pe, min_gap):
    pe = np.asarray(pe, dtype=float)
    dist = np.sqrt(((pe[min_gap:] - pe[0]) ** 2).sum(axis=1))  # (T - min_gap,)
    i = int(np.argmin(dist))
    return min_gap + i, float(dist[i])


def _nearest_hint(pe, min_gap):
    pe = np.asarray(pe, dtype=float)

    def dist(rows):
        return np.sqrt(((rows - pe[0]) ** 2).sum(axis=1))

    def wrong_index():
        p, dd = _nearest(pe, min_gap)
        return p - min_gap, dd

    def squared():
        p, dd = _nearest(pe, min_gap)
        return p, dd ** 2

    def from_one():
        p, dd = _nearest(pe, 1)
        return p, dd

    def farthest():
        dd = dist(pe[min_gap:])
        return min_gap + int(np.argmax(dd)), float(dd.max())

    def city_block():
        dd = np.abs(pe[min_gap:] - pe[0]).sum(axis=1)
        return min_gap + int(np.argmin(dd)), float(dd.min())

    def neighbour_steps():
        dd = np.sqrt(((pe[1:] - pe[:-1]) ** 2).sum(axis=1))  # distance of each row to the row before it
        i = int(np.argmin(dd[min_gap - 1:])) + min_gap - 1
        return i + 1, float(dd[i])

    return known_mistakes(
        ((lambda: (0, 0.0)), "Position 0 itself came back, at distance 0: every vector is nearest to itself. Only "
                             "the positions from min_gap on are candidates."),
        (wrong_index, "The distance is right but the position is min_gap too small: is it an index into the rows "
                      "you searched rather than the row's own position?"),
        (squared, "The position is right but the distance is its square: is a square root missing?"),
        (from_one, "That position is closer to position 0 than min_gap allows: the positions before min_gap are "
                   "not candidates."),
        (farthest, "That is the position farthest from position 0, not the nearest."),
        (city_block, "Your distance adds the absolute differences: use the ordinary (Euclidean) length of the "
                     "difference vector."),
        (neighbour_steps, "Your distances are between each row and the row before it: every candidate must be "
                          "compared with position 0's row."),
    )


def _nearest_case(label, pe, min_gap=None):
    args = (pe,) if min_gap is None else (pe, min_gap)
    g = 1 if min_gap is None else min_gap
    return Case(label, call_with(*args), lambda: _nearest(pe, g), close(), hints=[_nearest_hint(pe, g)])


@check
def nearest_collision(hidden, rng):
    three = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 0.9]])
    if not hidden:
        near_one = np.array([[0.0, 0.0], [0.1, 0.0], [3.0, 0.0], [0.0, 0.5], [2.0, 2.0]])
        tie = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, -1.0]])
        return [
            _nearest_case("nearest_collision([[0, 1], [1, 0], [0, 0.9]]): position 2, at distance 0.1", three),
            _nearest_case("nearest_collision of a 5-row table whose nearest row is position 1, min_gap = 2: "
                          "position 3", near_one, 2),
            _nearest_case("nearest_collision of a table where positions 2, 3 and 4 tie at distance 1: the smallest, 2",
                          tie),
            _nearest_case("nearest_collision(sinusoidal_positions(50, 2)): omega = 1, position 44 is seven turns "
                          "and 0.0177 radians", _pe(50, 2)),
            _nearest_case("nearest_collision(sinusoidal_positions(2000, 4))", _pe(2000, 4)),
            Case("nearest_collision(np.zeros(5)): one vector, not a table", call_with(np.zeros(5)),
                 raises("pe must be a 2-D (T, d) table, got shape (5,)")),
            Case("nearest_collision(table of 3 rows, min_gap=0): position 0 would find itself",
                 call_with(three, 0), raises("min_gap must be in 1 .. T - 1 = 2, got 0")),
            Case("nearest_collision(table of 3 rows, min_gap=3): no row left to search", call_with(three, 3),
                 raises("min_gap must be in 1 .. T - 1 = 2, got 3")),
        ]
    table = rng.normal(size=(int(rng.integers(20, 60)), 6))
    gap = int(rng.integers(2, 10))
    # fixed: the nearest row overall (position 1) lies inside min_gap = 3; the answer is position 3
    inside_gap = np.array([[1.0, 1.0], [1.2, 1.0], [4.0, 0.0], [1.0, 2.0], [-1.0, 3.0], [2.0, 2.0]])
    return [
        _nearest_case("nearest_collision of a 6-row table whose nearest row is position 1, min_gap = 3",
                      inside_gap, 3),
        Case("nearest_collision(np.ones(4)): one vector, not a table", call_with(np.ones(4)),
             raises("pe must be a 2-D (T, d) table, got shape (4,)")),
        Case("nearest_collision(table of 3 rows, min_gap=0)", call_with(three, 0),
             raises("min_gap must be in 1 .. T - 1 = 2, got 0")),
        _nearest_case(f"nearest_collision of a random ({table.shape[0]}, 6) table, min_gap = {gap}", table, gap),
        _nearest_case("nearest_collision(sinusoidal_positions(3000, 6), min_gap=100)", _pe(3000, 6), 100),
        _nearest_case("nearest_collision(sinusoidal_positions(400, 2), min_gap=10)", _pe(400, 2), 10),
        Case("nearest_collision(table of 3 rows, min_gap=5)", call_with(three, 5),
             raises("min_gap must be in 1 .. T - 1 = 2, got 5")),
    ]
