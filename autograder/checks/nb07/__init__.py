"""Checks for 07_complex_rotations_and_rope; :mod:`.angles` holds rotation_angle's (a turn read back from its
matrix)."""
from __future__ import annotations

import numpy as np

from ..compare import Case, call_with, close, const, describe, equal, fmt, predicate, raises
from ..hints import known_mistakes, numbers
from ..questions import int_in, is_, near, number_in, numbers_tuple, one_of
from ..toolkit import MATCH
from .common import A, R, ask, check, rotation_matrix_of as _matrix  # noqa: F401


# ------------------------------------------------------------ rotate_complex

def _rotate_hint(z, theta):
    z, theta = np.asarray(z), np.asarray(theta, dtype=float)
    return known_mistakes(
        (lambda: z * np.exp(-1j * theta), "It turns clockwise: 1 turned by pi / 2 must land on i, above 0, and yours "
                                          "lands on -i. Your multiplier sits at angle -theta on the unit circle."),
        (lambda: z * np.exp(1j * np.radians(theta)), "theta is already in radians: do not convert it from degrees."),
        (lambda: z + np.exp(1j * theta), "That adds the point of the unit circle to z, which moves z instead of turning "
                                         "it: a turn must keep |z|, and only a product can (lengths multiply)."),
        (lambda: z * np.exp(theta), "Your multiplier is a real number, so it stretches z without turning it: the "
                                    "point of the unit circle at angle theta has two coordinates."),
        (lambda: z * (np.cos(theta) + np.sin(theta)),
         "Your multiplier cos(theta) + sin(theta) is a real number (the i is missing), so it stretches z without "
         "turning it: its second coordinate is the imaginary part."),
        **MATCH,
    )


def _rotate_case(label, z, theta, want):
    return Case(label, call_with(z, theta), want, close(), hints=[_rotate_hint(z, theta)])


@check
def rotate_complex(hidden, rng):
    if not hidden:
        zs = np.array([1.0, 1j, -1.0, 3 - 2j])
        return [
            _rotate_case("rotate_complex(1, np.pi / 2): a quarter turn gives i", 1 + 0j, np.pi / 2, const(1j)),
            _rotate_case("rotate_complex(2 + 1j, np.pi / 2) = -1 + 2j", 2 + 1j, np.pi / 2, const(-1 + 2j)),
            _rotate_case("rotate_complex(1 + 1j, np.pi) = -1 - 1j", 1 + 1j, np.pi, const(-1 - 1j)),
            _rotate_case("rotate_complex(np.array([1, 1j, -1, 3 - 2j]), 0.3)", zs, 0.3,
                         lambda: zs * (np.cos(0.3) + 1j * np.sin(0.3))),
            Case("rotate_complex(1, [0, np.pi / 2, np.pi]): one point, three angles given as a list -> [1, 1j, -1]",
                 call_with(1 + 0j, [0.0, np.pi / 2, np.pi]), const(np.array([1.0, 1j, -1.0])), close(atol=1e-12),
                 hints=[_rotate_hint(1 + 0j, [0.0, np.pi / 2, np.pi])]),
            Case("rotate_complex(rotate_complex(2 + 1j, 0.3), 0.5): angles add to 0.8",
                 lambda fn: fn(fn(2 + 1j, 0.3), 0.5), const((2 + 1j) * (np.cos(0.8) + 1j * np.sin(0.8))), close()),
        ]
    z = rng.normal(size=6) + 1j * rng.normal(size=6)
    theta = rng.uniform(-np.pi, np.pi, size=6)
    return [_rotate_case("rotate_complex of 6 random points by 6 random angles", z, theta,
                         lambda: R("rotate_complex")(z, theta)),
            _rotate_case("rotate_complex of a (2, 3) array by one angle", z.reshape(2, 3), 2.5,
                         lambda: R("rotate_complex")(z.reshape(2, 3), 2.5)),
            # fixed, whatever the seed: angles given as a Python list, which does not multiply by 1j
            _rotate_case("rotate_complex(2 - 1j, [0.5, -1.0]): two angles as a list", 2 - 1j, [0.5, -1.0],
                         lambda: R("rotate_complex")(2 - 1j, [0.5, -1.0]))]


# ------------------------------------------------------ rotation_matrix and rotation_angle

def _matrix_hint(theta):
    return known_mistakes(
        (lambda: np.swapaxes(_matrix(theta), -1, -2), "That matrix turns clockwise (it is the rotation by -theta): "
                                   "it sends (1, 0) below the axis for a small theta. Look again at which term of "
                                   "the product became real through i * i = -1, and its sign."),
        (lambda: _matrix(np.radians(theta)), "theta is already in radians: do not convert it from degrees."),
        (lambda: np.array([[np.sin(theta), -np.cos(theta)], [np.cos(theta), np.sin(theta)]]),
         "sin and cos are swapped: at theta = 0 your matrix is not the identity, so it moves points that a turn by 0 "
         "leaves where they are."),
        (lambda: np.array([[np.cos(theta), np.sin(theta)], [np.sin(theta), np.cos(theta)]]),
         "That matrix is not a rotation: it sends (1, 0) to (cos, sin) but (0, 1) to (sin, cos), where a turn sends "
         "it a quarter turn ahead, to (-sin, cos); at theta = pi/2 yours swaps x and y, a mirror. A sign got lost "
         "where i * i = -1 made a term real."),
        (lambda: np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]]) if np.ndim(theta) else None,
         "The matrices came out with their axes first, (2, 2, ...): np.array of nested lists puts the new axes in "
         "front. One matrix per angle means the angles' axes first and each matrix in the last two axes."),
        **MATCH,
    )


class matrices_close(close):
    """close, and a result shaped (2, 2, ...) for many angles said in words: the axes are in the wrong place."""

    def mismatch(self, got, want):
        message = super().mismatch(got, want)
        g, w = numbers(got), numbers(want)
        if message and g is not None and w is not None and w.ndim > 2 and g.shape == (2, 2) + w.shape[:-2]:
            return (f"{message} The two matrix axes came first: np.array of nested lists of arrays stacks them in "
                    "front. Put the angles' axes first and the matrix in the last two, (..., 2, 2) (np.stack with "
                    "axis=-1, then axis=-2).")
        return message


@check
def rotation_matrix(hidden, rng):
    f = matrices_close(dtype="f")
    if not hidden:
        angles = np.array([0.0, np.pi / 2, np.pi])
        return [
            Case("rotation_matrix(np.pi / 2) = [[0, -1], [1, 0]]", call_with(np.pi / 2),
                 const(np.array([[0.0, -1.0], [1.0, 0.0]])), f, hints=[_matrix_hint(np.pi / 2)]),
            Case("rotation_matrix(0) is the identity", call_with(0.0), const(np.eye(2)), f, hints=[_matrix_hint(0.0)]),
            Case("rotation_matrix(0.7) @ [2, 1] equals (2 + 1j) * exp(0.7j)", lambda fn: fn(0.7) @ np.array([2.0, 1.0]),
                 lambda: np.array([((2 + 1j) * np.exp(0.7j)).real, ((2 + 1j) * np.exp(0.7j)).imag]), f,
                 hints=[known_mistakes((lambda: _matrix(-0.7) @ [2.0, 1.0],
                                        "That point is turned clockwise: check the sign of the sines."), **MATCH)]),
            Case("rotation_matrix(np.array([0, np.pi / 2, np.pi])): three angles, three matrices, shape (3, 2, 2)",
                 call_with(angles), const(_matrix(angles)), f, hints=[_matrix_hint(angles)]),
        ]
    thetas = rng.uniform(-np.pi, np.pi, size=3)
    grid = rng.uniform(-np.pi, np.pi, size=(2, 3))
    # Fixed, whatever the seed: at a half turn sin is 0 to float64 precision (1e-16); an angle rounded to
    # float32 leaves about 1e-7 there, which random angles, with no entry near 0, do not expose.
    return [Case(f"rotation_matrix({t:.4f})", call_with(float(t)), lambda t=t: R("rotation_matrix")(float(t)), f,
                 hints=[_matrix_hint(float(t))]) for t in thetas] + [
        Case("rotation_matrix(np.pi): a half turn, [[-1, 0], [0, -1]] in float64", call_with(np.pi),
             lambda: R("rotation_matrix")(np.pi), f, hints=[_matrix_hint(np.pi)]),
        Case("rotation_matrix of a (2, 3) array of angles: shape (2, 3, 2, 2)", call_with(grid),
             lambda: R("rotation_matrix")(grid), f, hints=[_matrix_hint(grid)])]


# --------------------------------------------------------------- apply_rope

def _rope(x, positions=None, base=10000.0, *, step=2.0, sign=1.0, first=0, layout="interleaved", scale=1.0):
    """RoPE through complex numbers (written apart from the reference), and its usual variants."""
    x = np.asarray(x, dtype=float)
    T, D = x.shape[-2:]
    p = (np.arange(T) if positions is None else np.asarray(positions, dtype=float)) + first
    angles = scale * p[..., None] * base ** (-step * np.arange(D // 2) / D)  # (T, D/2)
    if layout == "interleaved":
        z = x[..., 0::2] + 1j * x[..., 1::2]  # (..., T, D/2): pair k as one complex number
    else:
        z = x[..., : D // 2] + 1j * x[..., D // 2:]  # rotate-half: feature j pairs with j + D/2
    z = z * np.exp(sign * 1j * angles)
    out = np.empty_like(x)
    if layout == "interleaved":
        out[..., 0::2], out[..., 1::2] = z.real, z.imag
    else:
        out[..., : D // 2], out[..., D // 2:] = z.real, z.imag
    return out


def _rope_hint(x, positions=None, base=10000.0):
    candidates = [
        (lambda: _rope(x, positions, base, layout="half"),
         "That is the rotate-half layout (feature j paired with j + D/2): this notebook pairs neighbours, "
         "(x[..., 2k], x[..., 2k+1])."),
        (lambda: _rope(x, positions, base, sign=-1.0),
         "Each pair turns clockwise: the pair (1, 0) at position 1 lands at (cos 1, -sin 1), below the axis, where a "
         "counter-clockwise turn puts it at (cos 1, +sin 1). Compare your two lines with your rotation_matrix."),
        (lambda: _rope(x, positions, base, step=1.0),
         "Your pairs after the first turn too fast: your pair k turns at the speed notebook 06 gives pair k / 2 "
         "(with D = 4 and base 10000, your pair 1 turns 0.1 per position; 06's angular_frequencies(4) give it "
         "0.01). Compare your angles for one position with angular_frequencies(D)."),
        (lambda: _rope(x, positions, base, first=1), "Those are positions starting at 1: positions start at 0."),
        (lambda: _rope(x, positions, base, scale=np.pi / 180),
         "The angles were treated as degrees: p * omega_k is already in radians."),
        (lambda: _rope(x, positions, base, layout="half", sign=-1.0),
         "That is the rotate-half layout (feature j paired with j + D/2), and each pair turns clockwise: this "
         "notebook pairs neighbours, and the pair (1, 0) at position 1 must land at (cos 1, +sin 1)."),
    ]
    if positions is not None:
        candidates.append((lambda: _rope(x, None, base), "It ignores the positions argument and uses 0 .. T-1."))
    return known_mistakes(*candidates, **MATCH)


def _rope_case(label, x, positions=None, base=None, want=None):
    kwargs = {} if base is None else {"base": base}
    if positions is not None:
        kwargs["positions"] = positions
    want = want or (lambda: _rope(x, positions, 10000.0 if base is None else base))
    return Case(label, call_with(x, **kwargs), want, close(atol=1e-8, dtype="f"),
                hints=[_rope_hint(x, positions, 10000.0 if base is None else base)])


def _relative_scores(q, k, T, base=10000.0):
    """The student's RoPE on q and k repeated at every position: the (T, T) table of scores."""
    def call(fn):
        rq = np.asarray(fn(np.tile(q, (T, 1)), base=base), dtype=float)  # (T, D)
        rk = np.asarray(fn(np.tile(k, (T, 1)), base=base), dtype=float)  # (T, D)
        return rq @ rk.T  # (T, T)
    return call


def _depends_on_difference(got, want):
    g = numbers(got)
    w = numbers(want)
    if g is None or w is None or g.shape != w.shape:
        return f"expected a score table of shape {None if w is None else w.shape}."
    T = g.shape[0]
    for off in range(-T + 1, T):
        diag = np.diagonal(g, off)
        if not np.allclose(diag, diag[0], atol=1e-8, rtol=1e-8):
            m = int(np.argmax(~np.isclose(diag, diag[0], atol=1e-8, rtol=1e-8)))
            i, j = (0, off) if off >= 0 else (-off, 0)
            return (f"the same query and key vectors score {diag[0]:.6f} at positions (m={i}, n={j}) but "
                    f"{diag[m]:.6f} at (m={i + m}, n={j + m}): after RoPE the score must depend only on m - n. "
                    "Rotate every pair by an angle (a rotation keeps lengths), with the same rule for queries "
                    "and keys.")
    return None


@check
def apply_rope(hidden, rng):
    if not hidden:
        one_pair = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
        x4 = np.array([[1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 3.0, 4.0]])
        batch = rng.normal(size=(2, 3, 5, 8))
        q, k = rng.normal(size=8), rng.normal(size=8)
        return [
            Case("scores of one query and one key vector placed at every position 0 .. 9",
                 _relative_scores(q, k, 10), lambda: _rope(np.tile(q, (10, 1))) @ _rope(np.tile(k, (10, 1))).T,
                 predicate(_depends_on_difference)),
            _rope_case("apply_rope of (1, 0) at positions 0, 1, 2 (D = 2): (1, 0), (cos 1, sin 1), (cos 2, sin 2)",
                       one_pair, want=const(np.array([[1.0, 0.0], [np.cos(1), np.sin(1)], [np.cos(2), np.sin(2)]]))),
            _rope_case("apply_rope(x, base=100.0) with x rows [1, 2, 3, 4] (omega = 1, 0.1)", x4, base=100.0),
            _rope_case("apply_rope on x of shape (B, H, T, D) = (2, 3, 5, 8)", batch),
            _rope_case("apply_rope(x, positions=np.array([7, 3, 10])) for x of shape (3, 6)",
                       rng.normal(size=(3, 6)), positions=np.array([7, 3, 10])),
            Case("apply_rope of x with shape (4, 5): D = 5 cannot be split into pairs", call_with(np.ones((4, 5))),
                 raises("D must be even"), close()),
        ]
    x = rng.normal(size=(2, 2, 16, 32))
    pos = rng.integers(0, 5000, size=7)
    y = rng.normal(size=(7, 12))
    q, k = rng.normal(size=16), rng.normal(size=16)
    return [
        _rope_case("apply_rope on x of shape (2, 2, 16, 32)", x, want=lambda: R("apply_rope")(x)),
        _rope_case("apply_rope with random positions and base=500.0", y, positions=pos, base=500.0,
                   want=lambda: R("apply_rope")(y, positions=pos, base=500.0)),
        _rope_case("apply_rope of a single position", y[:1], want=lambda: R("apply_rope")(y[:1])),
        Case("scores of one query and one key at every position 0 .. 15, base=100.0",
             _relative_scores(q, k, 16, base=100.0),
             lambda: R("apply_rope")(np.tile(q, (16, 1)), base=100.0) @ R("apply_rope")(np.tile(k, (16, 1)), base=100.0).T,
             predicate(_depends_on_difference)),
        Case("apply_rope of x with shape (2, 3, 7)", call_with(np.ones((2, 3, 7))),
             lambda: R("apply_rope")(np.ones((2, 3, 7))), close()),
    ]


# ------------------------------------------------------------------ pair_score

def _pair_score(q, k, m, n, omega):
    """The dot product of the points q and k (complex numbers) after turning them by m * omega and n * omega."""
    a = np.asarray(q) * np.exp(1j * m * omega)
    b = np.asarray(k) * np.exp(1j * n * omega)
    return a.real * b.real + a.imag * b.imag


def _pair_hint(q, k, m, n, omega):
    zq, zk = np.asarray(q) * np.exp(1j * m * omega), np.asarray(k) * np.exp(1j * n * omega)
    return known_mistakes(
        (lambda: np.real(zq * zk), "That is the real part of the product of the two turned points: for points (a, b) "
                                   "and (c, d) it is ac - bd, and the dot product is ac + bd (pair_score(2 + 1j, "
                                   "1 + 3j, 0, 0, 0.5) gives -1 instead of 5)."),
        (lambda: np.real(np.asarray(q) * np.conj(k)), "That is the score of the two points as given, unturned: the "
                                                      "query sits at position m and the key at position n, and each "
                                                      "is turned by its own position times omega first."),
        (lambda: np.imag(zq * np.conj(zk)), "That is ad - bc for the points (a, b) and (c, d), the 2-D cross product "
                                            "(perpendicular points do not score 0 with it): the dot product is "
                                            "ac + bd."),
        (lambda: np.abs(zq * np.conj(zk)), "That is the product of the two lengths, |q| |k|: the angle between the two "
                                           "points is lost, so perpendicular points do not score 0."),
        (lambda: _pair_score(q, k, n, m, omega), "q and k were turned by each other's angles: q sits at position m, "
                                                 "k at position n."),
        **MATCH,
    )


def _pair_case(label, q, k, m, n, omega, want=None):
    return Case(label, call_with(q, k, m, n, omega), want or (lambda: _pair_score(q, k, m, n, omega)),
                close(atol=1e-9, rtol=1e-7, dtype="f"), hints=[_pair_hint(q, k, m, n, omega)])


def _offset_test(got, want):
    g = numbers(got)
    if g is None or g.shape != (3,):
        return f"expected three scores, got {describe(got)}."
    if not np.allclose(g, g[0], atol=1e-9):
        return (f"the same pair scores {fmt(g)} at positions (5, 2), (105, 102) and (1005, 1002): two points turned "
                "by the same extra angle keep the angle between them, so these three scores are equal for points "
                "turned as RoPE turns them.")
    return None


@check
def pair_score(hidden, rng):
    if not hidden:
        return [
            _pair_case("pair_score(1, 1, 0, 0, 1.0): the same point, no turn: 1", 1 + 0j, 1 + 0j, 0, 0, 1.0, const(1.0)),
            _pair_case("pair_score(1, 1j, 0, 0, 1.0): perpendicular points score 0", 1 + 0j, 1j, 0, 0, 1.0, const(0.0)),
            _pair_case("pair_score(1, 1, 1, 0, np.pi / 2): q turned a quarter turn is perpendicular to k", 1 + 0j,
                       1 + 0j, 1, 0, np.pi / 2, const(0.0)),
            _pair_case("pair_score(2 + 1j, 1 + 3j, 0, 0, 0.5): unturned, (2, 1) . (1, 3) = 5", 2 + 1j, 1 + 3j, 0, 0, 0.5,
                       const(5.0)),
            _pair_case("pair_score(2 + 1j, 1 + 3j, 5, 2, 0.5)", 2 + 1j, 1 + 3j, 5, 2, 0.5),
        ]
    q, k = complex(*rng.normal(size=2)), complex(*rng.normal(size=2))
    m, n = (int(v) for v in rng.integers(0, 500, size=2))
    omega = float(rng.uniform(0.001, 2.0))
    return [_pair_case(f"pair_score of two random points at positions {m} and {n}, omega = {omega:.4f}",
                       q, k, m, n, omega, lambda: R("pair_score")(q, k, m, n, omega)),
            _pair_case("pair_score(3 - 1j, -2 + 2j, 0, 7, 0.1)", 3 - 1j, -2 + 2j, 0, 7, 0.1,
                       lambda: R("pair_score")(3 - 1j, -2 + 2j, 0, 7, 0.1)),
            # hidden, not visible: the visible check runs before prediction 1, which asks exactly this
            Case("pair_score(2 + 1j, 1 + 3j, m, m - 3, 0.5) for m = 5, 105, 1005",
                 lambda fn: np.array([float(fn(2 + 1j, 1 + 3j, m, m - 3, 0.5)) for m in (5, 105, 1005)]),
                 lambda: np.full(3, _pair_score(2 + 1j, 1 + 3j, 5, 2, 0.5)), predicate(_offset_test))]


# ------------------------------------------------------------- predictions

def _pair_example(m, n):
    """The score of the notebook's single pair, q = 2 + i and k = 1 + 3i at omega = 0.5, at positions m and n."""
    return float(_pair_score(2 + 1j, 1 + 3j, m, n, 0.5))


SWAP_CHOICES = ("same", "different")


predict_shifted_score = ask(
    "predict_shifted_score", reason=True,
    label="predict_shifted_score(): pair_score of q = 2 + i and k = 1 + 3i at positions 1005 and 1002, omega = 0.5",
    form=number_in(-1e6, 1e6), compare=close(atol=1e-3, rtol=0),
    mistakes=[(near(0.0), "Far-away positions do not make the score vanish: both points turn by 1000 * 0.5 more, so the "
                          "angle between them, (m - n) * omega = 1.5, is the same as at positions 5 and 2."),
              (near(_pair_example(0, 0)), "That is Re(q conj(k)) = 5, the score at offset 0: the query is still 3 "
                                          "tokens after the key, so the score is the one at positions 5 and 2."),
              (near(_pair_example(2, 5)), "That is the score with the offset reversed (query 3 before the key): here "
                                          "the query is 3 after, as at positions 5 and 2.")],
    otherwise="The positions enter only through m - n = 3: both points turn by the same 500 radians more, and the score "
              "equals the one at positions 5 and 2.")


predict_swapped_score = ask(
    "predict_swapped_score", reason=True, label="predict_swapped_score(): is the score at (m, n) = (2, 5) the same as at (5, 2)?",
    form=one_of(SWAP_CHOICES), compare=equal(),
    mistakes=[(is_("same"), "The score is q^T R((n - m) w) k: at (5, 2) that is R(-3 w), at (2, 5) R(+3 w), the turn the "
                            "other way. A rotation is not its own inverse, so the two differ unless q and k happen to be "
                            "aligned: RoPE knows whether the key comes before or after the query.")])


predict_four_speeds = ask(
    "predict_four_speeds", reason=True,
    label="predict_four_speeds(): queries turned at base 10000, keys at base 100; how many of the four pairs' parts "
          "of the score change from positions (5, 2) to (105, 102)",
    form=int_in(0, 4), compare=equal(),
    mistakes=[(is_(0), "The offset is still 3, but a pair's part keeps its value only when its query arrow and its key "
                       "arrow turn by the same extra angle. Under two bases pairs 1 to 3 turn at one speed for the "
                       "queries and another for the keys (pair 1: 0.1 against 0.316 radian per position), so 100 "
                       "positions more turn their two arrows by different angles."),
              (is_(4), "Pair 0 turns at base^0 = 1 radian per position under any base: its query arrow and its key "
                       "arrow both turn 100 radians more, and its part stays."),
              (is_(1), "Pair 0 is the one pair whose speed is the same for queries and keys (base^0 = 1 under any "
                       "base), so its part stays; pairs 1 to 3 turn at two speeds each, and their parts change.")],
    otherwise="Pair 0 turns at base^0 = 1 radian per position under both bases: its two arrows turn by the same 100 "
              "radians and its part stays. Pairs 1 to 3 turn faster for the keys (0.316, 0.1, 0.032 radian per "
              "position at base 100) than for the queries (0.1, 0.01, 0.001): their arrows turn by different "
              "angles, and their parts change. Three of the four.")


STORAGE_CHOICES = ("0.7", "-0.7", "ValueError")


predict_storage_angle = ask(
    "predict_storage_angle", reason=True,
    label="predict_storage_angle(): rotation_angle of the step of 0.7 written for pairs stored (sin, cos)",
    form=one_of(STORAGE_CHOICES), compare=equal(),
    mistakes=[(is_("ValueError"), "Its columns are perpendicular unit vectors and its determinant is cos^2 + sin^2 = +1: "
                                  "it is a turn. It sends (1, 0) to its first column, (cos 0.7, -sin 0.7)."),
              (is_("0.7"), "It sends (1, 0) to its first column, (cos 0.7, -sin 0.7), below the axis: a turn by -0.7. "
                           "Read in the other order, a step forward in (sin, cos) is a step backward in (cos, sin).")])


predict_half_scores = ask(
    "predict_half_scores", reason=True,
    label="predict_half_scores(): do apply_rope and rope_rotate_half give the same score table on the same features?",
    form=one_of(SWAP_CHOICES), compare=equal(),
    mistakes=[(is_("same"), "Both turn pairs at the same speeds, but not the same pairs: rope_rotate_half turns feature "
                            "0 with a feature of the second half, apply_rope with feature 1. Other numbers turn "
                            "together, so the scores differ.")])


predict_quarter_turn = ask(
    "predict_quarter_turn", reason=True,
    label="predict_quarter_turn(): the pair (2, 1) turned by theta = -pi / 2, as (first, second)",
    form=numbers_tuple(2), compare=close(atol=0.01, rtol=0.0), atol=0.01, rtol=0.0,
    mistakes=[((-1, 2), "That is the turn by +pi / 2, counter-clockwise (multiplying by i). A negative angle turns "
                        "the other way, clockwise: (2, 1) goes down to the right, to (1, -2)."),
              ((-2, -1), "That is half a turn (pi): the arrow would point the opposite way. A quarter turn moves it "
                         "only 90 degrees, and a negative one clockwise."),
              ((1, 2), "The coordinates swapped places but no sign changed: that is a mirror in the diagonal, not "
                       "a turn. A quarter turn also flips the sign of one coordinate."),
              ((2, 1), "A quarter turn moves the arrow 90 degrees: the pair changes.")],
    otherwise="The multiplier for -pi / 2 is cos(-pi / 2) + i sin(-pi / 2) = -i, and (a + bi)(-i) = b - ai: a quarter "
              "turn clockwise sends (a, b) to (b, -a), so (2, 1) to (1, -2).")


# ------------------------------------------------------------------ the score table: diagonal_spread

CELL_CHOICES = ("each row", "each column", "each diagonal", "each anti-diagonal")

predict_equal_cells = ask(
    "predict_equal_cells", reason=True,
    label="predict_equal_cells(): which lines of cells of the RoPE score table (query at m, key at n) share one value",
    form=one_of(CELL_CHOICES), compare=equal(),
    mistakes=[(is_("each row"), "Along a row the query stays at m but the key moves, so m - n changes from cell to cell."),
              (is_("each column"), "Along a column the key stays at n but the query moves, so m - n changes."),
              (is_("each anti-diagonal"), "Along an anti-diagonal m + n is fixed: the positions move in opposite "
                                          "directions and their difference changes by 2 at each step.")],
    otherwise="The score is q^T R((n - m) w) k: it depends on m - n only, which is fixed along each diagonal.")


def _spread(table):
    T = table.shape[0]
    m, n = np.indices(table.shape)
    return np.array([np.ptp(table[m - n == o]) for o in range(-(T - 1), T)])  # (2T - 1,)


def _spread_hint(table):
    T = table.shape[0]
    m, n = np.indices(table.shape)
    offsets = range(-(T - 1), T)
    return known_mistakes(
        (lambda: _spread(table)[::-1], "Your spreads come in the reverse order: entry 0 is the line with m - n = -(T - 1), "
                                        "the single cell at the top right (query at 0, key at T - 1)."),
        (lambda: _spread(table[:, ::-1]), "Those are the spreads along the anti-diagonals (m + n fixed), running from "
                                          "top left to bottom left: a diagonal runs down and to the right."),
        (lambda: np.array([np.std(table[m - n == o]) for o in offsets]), "Those are standard deviations: the spread "
                                                                         "is the largest value minus the smallest."),
        (lambda: np.array([np.mean(table[m - n == o]) for o in offsets]), "Those are the lines' means: the spread is "
                                                                          "the largest value minus the smallest."),
        (lambda: _spread(table)[T - 1:], "Only the lines with m - n >= 0: the table has 2T - 1 diagonals, the ones above "
                                         "the main diagonal too."),
        **MATCH)


def _spread_case(label, table):
    return Case(label, call_with(table), lambda: _spread(table), close(dtype="f"), hints=[_spread_hint(table)])


@check
def diagonal_spread(hidden, rng):
    if not hidden:
        small = np.array([[0.0, 5.0, 1.0], [2.0, 0.0, 7.0], [4.0, 3.0, 0.0]])
        toeplitz = np.array([[float(abs(i - j) + (i > j)) for j in range(5)] for i in range(5)])
        return [
            _spread_case("diagonal_spread([[0, 5, 1], [2, 0, 7], [4, 3, 0]]): [0, 2, 0, 1, 0]", small),
            _spread_case("diagonal_spread of a 5 x 5 table that is constant along each diagonal: all 0", toeplitz),
            _spread_case("diagonal_spread of np.arange(16.0).reshape(4, 4) ** 2", np.arange(16.0).reshape(4, 4) ** 2),
            _spread_case("diagonal_spread([[3.0]]): one cell, one line", np.array([[3.0]])),
            Case("diagonal_spread(np.zeros((2, 3))): a table of 2 queries and 3 keys is not square",
                 call_with(np.zeros((2, 3))), raises("table must be square (T, T), got shape (2, 3)")),
            Case("diagonal_spread(np.zeros(4)): one row, not a table", call_with(np.zeros(4)),
                 raises("table must be square (T, T), got shape (4,)")),
        ]
    T = int(rng.integers(6, 12))
    return [_spread_case(f"diagonal_spread of a random ({T}, {T}) table", rng.normal(size=(T, T))),
            _spread_case("diagonal_spread of a random (2, 2) table", rng.normal(size=(2, 2))),
            Case("diagonal_spread(np.zeros((4, 3)))", call_with(np.zeros((4, 3))),
                 raises("table must be square (T, T), got shape (4, 3)")),
            # fixed: fewer rows than columns, where an unchecked np.diagonal raises nothing
            Case("diagonal_spread(np.zeros((3, 5)))", call_with(np.zeros((3, 5))),
                 raises("table must be square (T, T), got shape (3, 5)"))]


# ------------------------------------------------------------- the bug hunt: new_token_scores

HUNT_VARIANTS = ("one_early", "at_zero", "one_late", "before_the_text", "keys_turned_again", "keys_turned_instead")

HUNT_MESSAGES = {
    "one_early": "This is still the code as given. The new token's scores are not row T of the whole sequence's "
                 "table, yet they are true scores of this very query against these keys: the ones it gets when it "
                 "stands somewhere else in the text. Where does it stand for them, and where should it stand?",
    "at_zero": "Further off: the scores now come from a query at position 0, the start of the text, with every kept "
               "key but the first after it instead of before it.",
    "one_late": "Not yet: the scores now come from a query one position past the new token: every offset to a kept key "
                "is one too long.",
    "before_the_text": "The scores now come from a query standing before the text, as far before key 0 as the new "
                       "token stands after key 0: every key counts as ahead of the query instead of "
                       "behind it, and the later keys come out further away from it, not closer.",
    "keys_turned_again": "The new query is now turned where it stands, but the kept keys are off: they were turned a "
                         "second time, on top of the turn they got when they were kept, so key s scores as if it stood "
                         "at position 2s.",
    "keys_turned_instead": "The kept keys were turned a second time (key s scores as if it stood at 2s) and the new "
                           "query scores as if it stood at the start of the text.",
}


def _hunt(q_new, cached_keys, variant=None):
    """The new token's scores (float64), or one of the known wrong versions."""
    T = len(cached_keys)
    keys = np.asarray(cached_keys, dtype=float)
    position = {"at_zero": 0, "one_early": T - 1, "one_late": T + 1, "before_the_text": -T,
                "keys_turned_instead": 0}.get(variant, T)
    turned = _rope(np.asarray(q_new, dtype=float)[None], np.array([position]))[0]
    if variant in ("keys_turned_again", "keys_turned_instead"):
        keys = _rope(keys)
    return keys @ turned


def _hunt_case(label, q_new, cached_keys, want=None):
    hint = known_mistakes(*((lambda v=v: _hunt(q_new, cached_keys, v), HUNT_MESSAGES[v]) for v in HUNT_VARIANTS),
                          **MATCH)
    return Case(label, call_with(q_new, cached_keys), want or (lambda: _hunt(q_new, cached_keys)),
                close(atol=1e-9, rtol=1e-7, dtype="f"), hints=[hint])


@check
def new_token_scores(hidden, rng):
    if not hidden:
        unit_keys = _rope(np.tile([1.0, 0.0], (3, 1)))  # (3, 2): the pair (1, 0) kept at positions 0, 1, 2
        keys = rng.normal(size=(5, 8))
        return [
            _hunt_case("new_token_scores(q_new = [1, 0], the keys (1, 0) kept at positions 0, 1, 2): row 3 of the whole "
                       "sequence's table", np.array([1.0, 0.0]), unit_keys, const(np.cos([3.0, 2.0, 1.0]))),
            _hunt_case("new_token_scores with D = 8 and 5 kept keys: row 5 of the whole sequence's table",
                       rng.normal(size=8), _rope(keys)),
        ]
    keys = rng.normal(size=(9, 16))
    q_new = rng.normal(size=16)
    return [_hunt_case("new_token_scores with D = 16 and 9 kept keys", q_new, _rope(keys),
                       lambda: R("new_token_scores")(q_new, _rope(keys))),
            _hunt_case("new_token_scores with one kept key, D = 4",
                       np.array([0.5, -1.0, 2.0, 1.0]), _rope(np.array([[1.0, 2.0, -1.0, 0.5]])))]


# ------------------------------------------------------------- half_layout_permutation

def _half_perm(D):
    """Evens first, then odds: where rotate-half looks for the interleaved pair k, (k, k + D/2)."""
    return np.concatenate([np.arange(0, D, 2), np.arange(1, D, 2)])


def _perm_hint(D):
    right = _half_perm(D)
    return known_mistakes(
        (lambda: np.argsort(right), "That is the reordering the other way round: it takes the rotate-half layout "
                                    "back to neighbours. x[..., perm] puts at place j the feature number perm[j], so "
                                    "perm[j] must be the feature that rotate-half expects at place j."),
        (lambda: np.concatenate([np.arange(1, D, 2), np.arange(0, D, 2)]),
         "The right pairs, but each turns the wrong way: rotate-half takes the first half of the places as the pairs' "
         "first members (the cosine part), and your first members are the even features."),
        (lambda: np.arange(D), "That leaves the features where they are: rotate-half then turns features j and "
                               "j + D/2 together, which apply_rope never pairs, and the scores differ."),
        (lambda: np.arange(D)[::-1], "That reverses the features: rotate-half then pairs features that apply_rope "
                                     "never pairs, and the frequencies come in the wrong order."),
        **MATCH,
    )


def _same_rotation(D):
    """The student's perm used as the notebook uses it: rotate-half of the reordered x against RoPE reordered."""
    x = np.random.default_rng(D).normal(size=(5, D))

    def call(fn):
        perm = np.asarray(fn(D))
        return _rope(x[..., perm], layout="half") - _rope(x)[..., perm]  # all zeros for the right perm
    return call


def _all_zero(got, want):
    g, w = numbers(got), numbers(want)
    if g is None or w is None or g.shape != w.shape:
        return f"expected a difference of shape {None if w is None else w.shape}, got {describe(got)}."
    if not np.allclose(g, 0.0, atol=1e-9):
        rows = int(np.sum(~np.all(np.isclose(g, 0.0, atol=1e-9), axis=-1)))
        return (f"with your perm the two layouts disagree on {rows} of the 5 positions (largest difference "
                f"{np.max(np.abs(g)):.4f}; position 0, where nothing turns, always agrees): rope_rotate_half turns "
                "other features together than apply_rope, or turns a pair the other way.")
    return None


@check
def half_layout_permutation(hidden, rng):
    ints = close(atol=0, rtol=0, dtype="iu")
    if not hidden:
        return [
            Case("half_layout_permutation(2): one pair, nothing to reorder", call_with(2), const(np.array([0, 1])), ints,
                 hints=[_perm_hint(2)]),
            Case("half_layout_permutation(8), then rope_rotate_half(x[..., perm]) - apply_rope(x)[..., perm] for x of "
                 "shape (5, 8): all zeros", _same_rotation(8), const(np.zeros((5, 8))), predicate(_all_zero)),
            Case("half_layout_permutation(8)", call_with(8), const(_half_perm(8)), ints, hints=[_perm_hint(8)]),
            Case("half_layout_permutation(5): D = 5 cannot be split into pairs", call_with(5),
                 raises("D must be even"), close()),
        ]
    D = int(rng.choice([6, 12, 64]))
    return [Case(f"half_layout_permutation({D})", call_with(D), lambda: R("half_layout_permutation")(D), ints,
                 hints=[_perm_hint(D)]),
            Case("half_layout_permutation(16) used on x of shape (5, 16): the same rotation", _same_rotation(16),
                 const(np.zeros((5, 16))), predicate(_all_zero)),
            Case("half_layout_permutation(7): odd", call_with(7), lambda: R("half_layout_permutation")(7), close())]


from .angles import rotation_angle  # noqa: E402,F401 (registers its check)
