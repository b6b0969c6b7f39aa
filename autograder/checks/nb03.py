"""Checks for 03_dot_and_outer_products."""
from __future__ import annotations

from functools import partial

import numpy as np

from ..reference import lazy
from .compare import Case, call_with, close, const, predicate, raises
from .hints import known_mistakes, numbers
from .questions import NB01, NB04, a_number, as_tuple, described, int_tuple, question, scalar_tuple
from .registry import exercise
from .toolkit import import_torch

A = "03_dot_and_outer_products"
check = exercise(A)
R = lazy(A)
MATCH = dict(rtol=1e-5)  # how near a known mistake an answer must be to be named (np.allclose's rtol)


F = np.array  # short for the hand-written vectors below


def fmt_vec(a) -> str:
    """A short vector as it would be typed, a long one by its length (for case labels)."""
    return "[" + ", ".join(f"{x:g}" for x in a) + "]" if len(a) <= 4 else f"a vector of length {len(a)}"


# -------------------------------------------------------------------------- outer

def _outer_hints(a, b):
    return [known_mistakes(
        (lambda: np.outer(b, a), "This is b a^T, the transpose: rows must follow a (the queries) and columns "
                                 "follow b (the keys)."),
        (lambda: a * b, "That is the elementwise product a_i b_i, one number per position; the table pairs every "
                        "a_i with every b_j. What does NumPy do with a column times a row?"),
        (lambda: np.dot(a, b), "That is the dot product, one number; the outer product is the whole table."),
        **MATCH)]


@check
def outer(hidden, rng):
    def case(a, b, note="", want=None):
        label = f"outer({fmt_vec(a)}, {fmt_vec(b)})" + (f": {note}" if note else "")
        return Case(label, call_with(a, b), const(want) if want is not None else (lambda: np.outer(a, b)),
                    close(dtype="f"), hints=_outer_hints(a, b))

    if not hidden:
        return [
            case(F([1.0, 2.0]), F([3.0, 4.0]), "ab^T = [[3, 4], [6, 8]]", F([[3.0, 4.0], [6.0, 8.0]])),
            case(F([1.0, 2.0, 3.0]), F([1.0, -1.0]), "shape (3, 2)", F([[1.0, -1.0], [2.0, -2.0], [3.0, -3.0]])),
        ]
    return [case(rng.normal(size=n), rng.normal(size=m)) for n, m in [(4, 4), (1, 6), (7, 3), (5, 1)]]


# -------------------------------------------------------------------- score tables

Q3 = F([[1.0, 2.0], [0.0, 1.0], [2.0, 0.0]])
K3 = F([[1.0, 0.0], [2.0, 1.0], [0.0, 3.0]])
S3 = F([[1.0, 4.0, 6.0], [0.0, 1.0, 3.0], [2.0, 4.0, 0.0]])


def _dot_table(Q, K):
    """Every query-key dot product, one at a time: the definition of the score table (of each table of a batch)."""
    if Q.ndim > 2:
        return lambda: np.stack([_dot_table(q, k)() for q, k in zip(Q, K)])
    return lambda: np.array([[float(np.dot(q, k)) for k in K] for q in Q]).reshape(len(Q), len(K))


def _shared_keys(Q, K):
    """The key heads the query heads read: query head h reads key head h // (H // G), in consecutive groups."""
    return np.stack([K[..., h * K.shape[-3] // Q.shape[-3], :, :] for h in range(Q.shape[-3])], axis=-3)


def _grouped_hints(Q, K):
    H, G = Q.shape[-3], K.shape[-3]
    tiled = np.tile(K, (1,) * (K.ndim - 3) + (H // G, 1, 1))
    return [known_mistakes(
        (lambda: Q @ np.swapaxes(tiled, -1, -2),
         f"Query heads that should share a key head read different ones: with {H} query heads and {G} key heads, "
         f"the first {H // G} query heads all read key head 0, but your query head 1 reads key head 1 (your groups "
         "interleave)."),
        **MATCH)]


def _batch_hints(Q, K):
    """A mistake that a batch shows as well: each table keys by queries."""
    return [known_mistakes(
        (lambda: K @ np.swapaxes(Q, -1, -2), "Each of your tables is keys by queries: its rows follow the keys, where entry [i, j] must "
                                                      "score key j against query i (rows follow the queries)."),
        **MATCH)]


def _score_hints(Q, K, from_outer=False):
    d = Q.shape[1]
    candidates = [
        (lambda: K @ Q.T, "Your table is keys by queries, the transpose of the score table: entry [i, j] must score "
                          "key j against query i, so rows follow the queries."),
        (lambda: Q @ K.T / np.sqrt(d), "Every score is smaller than its dot product by the same factor sqrt(d): the "
                                       "raw table has no scale (the 1/sqrt(d) of attention comes in notebook 09)."),
    ]
    if from_outer:
        candidates += [
            (lambda: sum(np.outer(Q[i], K[i]) for i in range(len(Q))),
             "That sums outer products of rows (positions), which gives Q.T @ K, a (d, d) table over features, "
             "not the (n_q, n_k) table of scores. Which numbers does one feature touch?"),
            (lambda: np.outer(Q[:, -1], K[:, -1]), "That is only the last feature's table: add up the tables "
                                                   "of all d features."),
            (lambda: np.outer(Q[:, 0], K[:, 0]), "That is only the first feature's table: add up the tables "
                                                 "of all d features."),
        ]
    else:
        candidates.append((lambda: Q.T @ K, "Your table is (d, d), one row and one column per feature: it pairs "
                                            "columns of Q with columns of K. The score table pairs each query (a "
                                            "row of Q) with each key (a row of K): shape (n_q, n_k)."))
    return [known_mistakes(*candidates, **MATCH)]


def _score_cases(name, hidden, rng):
    from_outer = name == "score_table_from_outer"

    def case(Q, K, note="", want=None):
        label = f"{name}(Q, K) with Q {Q.shape}, K {K.shape}" + (f": {note}" if note else "")
        hints = _score_hints(Q, K, from_outer) if Q.ndim == 2 else _batch_hints(Q, K)
        return Case(label, call_with(Q, K), const(want) if want is not None else _dot_table(Q, K),
                    close(dtype="f"), hints=hints)

    def batch(shape_q, shape_k, note):
        return case(rng.normal(size=shape_q), rng.normal(size=shape_k), note)

    def grouped(Q, K, note):
        label = f"{name}(Q, K) with Q {Q.shape}, K {K.shape}: {note}"
        return Case(label, call_with(Q, K), _dot_table(Q, _shared_keys(Q, K)), close(dtype="f"),
                    hints=_grouped_hints(Q, K))

    def uneven(Q, K):
        return Case(f"{name}(Q, K) with Q {Q.shape}, K {K.shape}: {K.shape[-3]} key heads cannot be shared evenly "
                    f"by {Q.shape[-3]} query heads", call_with(Q, K), raises("the heads cannot be shared"), close())

    def mismatch(Q, K):
        return Case(f"{name}(Q, K) with Q {Q.shape}, K {K.shape}: {Q.shape[-1]} features against {K.shape[-1]} "
                    "cannot be scored",
                    call_with(Q, K), raises("the feature sizes differ"), close())

    if not from_outer:  # score_table takes batches, and refuses features that do not match
        if not hidden:
            return _score_cases_2d(case) + [
                case(np.arange(12.0).reshape(2, 3, 2) % 4 - 1, np.arange(16.0).reshape(2, 4, 2) % 3,
                     "a batch of 2 tables, each (3, 4): only K's last two axes trade places"),
                case(np.arange(24.0).reshape(2, 2, 3, 2) % 5 - 2, np.arange(24.0).reshape(2, 2, 3, 2) % 3,
                     "(B, H, T, D) = (2, 2, 3, 2), the shape of notebook 09's heads"),
                grouped(np.arange(24.0).reshape(1, 4, 2, 3) % 5 - 2, np.arange(12.0).reshape(1, 2, 2, 3) % 5 - 1,
                        "4 query heads share 2 key heads, query heads 0 and 1 read key head 0, 2 and 3 key head 1"),
                mismatch(np.ones((3, 2)), np.ones((4, 3))),
                uneven(np.ones((1, 3, 2, 2)), np.ones((1, 2, 2, 2)))]
        return _score_cases_hidden(case, rng) + [
            batch((3, 4, 5), (3, 6, 5), "a batch of 3 tables, each (4, 6)"),
            batch((2, 3, 5, 4), (2, 3, 2, 4), "2 sentences x 3 heads, 5 queries and 2 keys each"),
            grouped(rng.normal(size=(2, 6, 3, 4)), rng.normal(size=(2, 3, 5, 4)), "6 query heads share 3 key heads"),
            grouped(rng.normal(size=(2, 4, 3, 4)), rng.normal(size=(2, 1, 2, 4)), "one key head serves all 4"),
            mismatch(rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 3))),
            uneven(rng.normal(size=(1, 4, 2, 2)), rng.normal(size=(1, 3, 2, 2)))]
    return _score_cases_2d(case) if not hidden else _score_cases_hidden(case, rng)


def _score_cases_2d(case):
    Q5 = np.arange(20.0).reshape(5, 4) % 3 - 1
    K7 = np.arange(28.0).reshape(7, 4) % 5 - 2
    return [
        case(Q3, K3, "the 3x2 example, QK^T = [[1, 4, 6], [0, 1, 3], [2, 4, 0]]", S3),
        case(Q5, K7, "5 queries and 7 keys give a (5, 7) table"),
    ]


def _score_cases_hidden(case, rng):
    cases = [case(rng.normal(size=(nq, d)), rng.normal(size=(nk, d))) for nq, nk, d in [(4, 4, 3), (2, 6, 5), (6, 1, 2)]]
    cases.append(case(rng.normal(size=(3, 1)), rng.normal(size=(4, 1)), "one feature: a single outer product"))
    cases.append(case(rng.normal(size=(3, 8)), rng.normal(size=(3, 8)), "more features than queries and keys"))
    return cases


@check
def score_table(hidden, rng):
    return _score_cases("score_table", hidden, rng)


@check
def score_table_from_outer(hidden, rng):
    return _score_cases("score_table_from_outer", hidden, rng)


# ---------------------------------------------------------------------- geometry

def _cosine_hints(u, v):
    nu, nv = np.linalg.norm(u), np.linalg.norm(v)
    d = float(np.dot(u, v))
    return [known_mistakes(
        (lambda: d / nu, "Only u was normalised: stretching u leaves your answer alone, stretching v still changes "
                         "it."),
        (lambda: d / nv, "Only v was normalised: stretching v leaves your answer alone, stretching u still changes "
                         "it."),
        (lambda: d / (nu * nv) ** 2, "That divides by the squared lengths u.u and v.v: stretching u by 2 now halves "
                                     "your answer, where a cosine must not move."),
        (lambda: np.arccos(np.clip(d / (nu * nv), -1, 1)), "That is the angle (arccos of the cosine); return "
                                                           "the cosine itself."),
        (lambda: 1 - d / (nu * nv), "That is 1 - cosine (the cosine distance); return the cosine itself."),
        (lambda: d, "That is the plain dot product: it still grows when either vector is stretched, and it leaves "
                    "[-1, 1]."),
        **MATCH)]


def _cosines(u, v):
    """Every pair's cosine, one pair at a time: 0 where either vector is zero; a float for two plain vectors."""
    u, v = np.broadcast_arrays(np.asarray(u, dtype=float), np.asarray(v, dtype=float))
    out = np.zeros(u.shape[:-1])
    for at in np.ndindex(*u.shape[:-1]):
        lengths = np.sqrt(np.dot(u[at], u[at]) * np.dot(v[at], v[at]))
        out[at] = 0.0 if lengths == 0 else np.dot(u[at], v[at]) / lengths
    return float(out) if out.ndim == 0 else out


def _batch_cosine_hints(u, v):
    return [known_mistakes(
        (lambda: np.sum(u * v, axis=-1) / (np.linalg.norm(u) * np.linalg.norm(v)),
         "Each pair must be divided by its own two lengths: yours divides every pair by the lengths of the whole "
         "batches (a norm over all the numbers of u and of v), so stretching one row changes the other rows' "
         "answers."),
        **MATCH)]


@check
def cosine_similarity(hidden, rng):
    def case(u, v, note="", want=None):
        label = f"cosine_similarity({fmt_vec(u)}, {fmt_vec(v)})" + (f": {note}" if note else "")
        return Case(label, call_with(u, v), const(want) if want is not None else (lambda: _cosines(u, v)),
                    close(atol=1e-10), hints=_cosine_hints(u, v))

    def batch(u, v, note):
        label = f"cosine_similarity(u, v) with u {u.shape}, v {v.shape}: {note}"
        return Case(label, call_with(u, v), lambda: _cosines(u, v), close(atol=1e-10),
                    hints=_batch_cosine_hints(u, v))

    def zero(u, v):
        return Case(f"cosine_similarity({fmt_vec(u)}, {fmt_vec(v)}): the zero vector has no direction, and its "
                    "cosine with any vector is defined as 0", call_with(u, v), const(0.0), close(atol=1e-10))

    def rounding(u, sign=1.0):
        label = f"cosine_similarity({fmt_vec(u)}, {fmt_vec(sign * u)}): exactly {sign:+g}, never past it by rounding"
        return Case(label, call_with(u, sign * u), const(sign), predicate(partial(_legal_cosine, sign)))

    def rounding_batch(U, sign=1.0):
        label = (f"cosine_similarity(u, {sign:+g} * u) with u {U.shape}: every cosine exactly {sign:+g}, never past "
                 "it by rounding")
        return Case(label, call_with(U, sign * U), const(np.full(len(U), sign)), predicate(partial(_legal_cosines, sign)))

    def mismatch(u, v):
        shown = f"{fmt_vec(u)}, {fmt_vec(v)}" if u.ndim == 1 else f"u {u.shape}, v {v.shape}"
        return Case(f"cosine_similarity({shown}): vectors of {u.shape[-1]} and {v.shape[-1]} "
                    "numbers cannot be compared", call_with(u, v), raises("the lengths differ"), close())

    if not hidden:
        return [
            case(F([3.0, 0.0]), F([1.0, 1.0]), "a 45-degree angle, cos = 1/sqrt(2)", 1 / np.sqrt(2)),
            case(F([1.0, 2.0]), F([3.0, 4.0]), "11 / (sqrt(5) * 5)"),
            case(F([1.0, 2.0]), F([2.0, 4.0]), "same direction", 1.0),
            case(F([1.0, 2.0]), F([-0.5, -1.0]), "opposite directions", -1.0),
            case(F([2.0, 0.0]), F([0.0, 3.0]), "a right angle", 0.0),
            rounding(F([1.0, 1.0, 1.0])),
            zero(F([1.0, 2.0]), F([0.0, 0.0])),
            batch(F([[1.0, 2.0], [0.0, 0.0], [30.0, 0.0]]), F([[3.0, 4.0], [5.0, 5.0], [1.0, 1.0]]),
                  "3 pairs, row i of u against row i of v; row 1 of u is the zero vector (cosines 0.9839, 0, 0.7071)"),
            batch(F([[1.0, 2.0], [-2.0, -4.0], [2.0, 0.0]]), F([3.0, 4.0]),
                  "every row of u against the one vector v"),
            rounding_batch(F([[1.0, 1.0, 1.0], [0.1, 0.7, 0.0]])),
            mismatch(F([1.0, 2.0]), F([1.0, 2.0, 3.0])),
        ]
    cases = [case(rng.normal(size=n), rng.normal(size=n), f"random vectors of length {n}") for n in (2, 7, 50)]
    u, v = rng.normal(size=4), rng.normal(size=4)
    cases.append(case(5.0 * u, 0.2 * v, "scaled vectors: the cosine ignores length"))
    cases += [rounding(F([0.1, 0.7])), rounding(F([1.0, 1.0, 1.0]), -1.0), zero(F([0.0, 0.0, 0.0]), u[:3])]
    U = rng.normal(size=(2, 3, 5)) * np.array([1.0, 100.0, 0.01])[:, None]
    U[1, 2] = 0.0
    cases += [batch(U, rng.normal(size=(2, 3, 5)), "a (2, 3) batch of pairs, lengths far apart, one zero row"),
              rounding_batch(F([[1.0, 1.0, 1.0], [0.1, 0.7, 0.0]]), -1.0),
              mismatch(rng.normal(size=(2, 3)), rng.normal(size=(2, 4)))]
    return cases


def _legal_cosines(sign, got, want):
    """A batch of cosines of vectors with multiples of themselves: each within rounding of ``sign``, none past it."""
    values, wanted = np.asarray(getattr(got, "data", got)), np.shape(getattr(want, "data", want))
    if values.shape != wanted or not np.all(np.isfinite(values)):
        return f"expected {wanted[0]} finite cosines, one per pair, got {values.tolist()}."
    if np.any(np.abs(values) > 1):
        return (f"got {values.tolist()}, outside [-1, 1]: rounding pushed a cosine past {sign:+g}, and np.arccos of it "
                "is nan: no angle between a vector and a multiple of itself.")
    return None if np.all(np.abs(values - sign) <= 1e-12) else f"expected every cosine {sign:+g}, got {values.tolist()}."


def _legal_cosine(sign, got, want):
    """The cosine of a vector with a multiple of itself: within rounding of ``sign``, and never outside [-1, 1]."""
    value = got.data.item() if hasattr(got, "data") else got
    if not isinstance(value, float) or not np.isfinite(value):
        return f"expected a float, got {value!r}."
    if abs(value) > 1:
        return (f"got {value!r}, outside [-1, 1]: rounding pushed the cosine past {sign:+g}, and np.arccos of it "
                "is nan: no angle between a vector and a multiple of itself.")
    return None if abs(value - sign) <= 1e-12 else f"expected {sign:+g}, got {value!r}."


def _project_hints(u, v):
    d, vv = float(np.dot(u, v)), float(np.dot(v, v))
    return [known_mistakes(
        (lambda: d / np.sqrt(vv), "A single number came back, the length of the shadow; the shadow has v's shape."),
        (lambda: d / np.sqrt(vv) * v, "Right direction, wrong length: with v twice as long, your answer doubles, "
                                      "yet the shadow cannot depend on v's length."),
        (lambda: d / vv, "A single number came back, the right amount of v; the projection has v's shape."),
        (lambda: d / float(np.dot(u, u)) * u, "The answer points along u: the shadow of u lies on the line through v."),
        (lambda: u - d / vv * v, "The answer stands at a right angle to v: it is the leftover, not the shadow."),
        (lambda: d * v, "Right direction, wrong length: it grows fourfold when v doubles, yet the shadow cannot "
                        "depend on v's length."),
        **MATCH)]


@check
def project(hidden, rng):
    def case(u, v, note="", want=None):
        label = f"project({fmt_vec(u)}, {fmt_vec(v)})" + (f": {note}" if note else "")
        want_fn = const(want) if want is not None else (lambda: np.dot(u, v) / np.dot(v, v) * v)
        return Case(label, call_with(u, v), want_fn, close(dtype="f"), hints=_project_hints(u, v))

    if not hidden:
        return [
            case(F([2.0, 1.0]), F([3.0, 0.0]), "the shadow worked by hand is [2, 0]", F([2.0, 0.0])),
            case(F([2.0, 1.0]), F([6.0, 0.0]), "a longer v along the same line gives the same [2, 0]", F([2.0, 0.0])),
            case(F([1.0, 2.0]), F([3.0, 4.0]), "a shadow off the axes, [1.32, 1.76]", F([1.32, 1.76])),
            case(F([0.0, 5.0]), F([2.0, 0.0]), "u perpendicular to v projects to 0", F([0.0, 0.0])),
            Case("project([1, 2], [0, 0]): the zero vector spans no line", call_with(F([1.0, 2.0]), F([0.0, 0.0])),
                 raises("cannot project onto the zero vector"), close()),
        ]
    cases = [case(rng.normal(size=n), rng.normal(size=n), f"random vectors of length {n}") for n in (2, 3, 10)]
    v = rng.normal(size=3)
    cases.append(case(3.0 * v, v, "u along v projects to itself"))
    cases.append(case(rng.normal(size=3), -4.0 * v, "a long v pointing the other way"))
    cases.append(Case("project(u, 0): the zero vector spans no line", call_with(v, np.zeros(3)),
                      raises("cannot project onto the zero vector"), close()))
    return cases


# -------------------------------------------------------------------- gradient

def _autograd_weight_grad(g, x):
    """dL/dW from torch.autograd, for y = W x and a loss whose gradient at y is g."""
    def want():
        torch = import_torch()
        W = torch.zeros(len(g), len(x), dtype=torch.float64, requires_grad=True)
        y = W @ torch.from_numpy(x)  # (d_out,)
        (y * torch.from_numpy(g)).sum().backward()  # L = g . y, so dL/dy = g
        return W.grad.numpy()
    return want


def _grad_hints(g, x):
    return [known_mistakes(
        (lambda: np.outer(x, g), "This is the transpose: dL/dW has the shape of W, (d_out, d_in), rows for the "
                                 "outputs and columns for the inputs."),
        (lambda: g * x, "That is the elementwise product, one number per position; the gradient has one entry per "
                        "weight W[i, j], a whole (d_out, d_in) table."),
        (lambda: np.dot(g, x), "That is a dot product, one number; the gradient has one entry per weight, a "
                               "(d_out, d_in) table."),
        **MATCH)]


@check
def linear_weight_grad(hidden, rng):
    def case(g, x, note="", want=None):
        label = f"linear_weight_grad(g={fmt_vec(g)}, x={fmt_vec(x)})" + (f": {note}" if note else "")
        return Case(label, call_with(g, x), const(want) if want is not None else _autograd_weight_grad(g, x),
                    close(dtype="f"), hints=_grad_hints(g, x))

    if not hidden:
        return [
            case(F([1.0, 2.0]), F([3.0, 4.0, 5.0]), "g x^T = [[3, 4, 5], [6, 8, 10]]",
                 F([[3.0, 4.0, 5.0], [6.0, 8.0, 10.0]])),
            case(F([0.5, -1.0]), F([2.0, 1.0]), "against torch.autograd, d_out = d_in = 2"),
        ]
    return [case(rng.normal(size=m), rng.normal(size=n), f"d_out = {m}, d_in = {n}, against torch.autograd")
            for m, n in [(3, 3), (4, 2), (1, 5), (6, 1)]]


# ------------------------------------------------------------- bug hunt: a batch

def _batch_grad_hints(G, X):
    """Symptoms only (which entries, which batch sizes), never the line that fixes it."""
    d_out, d_in, N = G.shape[1], X.shape[1], len(G)
    loop = sum(np.outer(g, x) for g, x in zip(G, X))

    def worst(got):
        """The entry where a wrong table is furthest from the sum of the examples' tables."""
        i, j = np.unravel_index(np.argmax(np.abs(got - loop)), loop.shape)
        return (f"entry [{i}, {j}] is {float(got[i, j]):.4g} where the batch's dL/dW holds "
                f"{float(loop[i, j]):.4g}")

    with np.errstate(all="ignore"):
        of_sums, of_means = np.outer(G.sum(axis=0), X.sum(axis=0)), np.outer(G.mean(axis=0), X.mean(axis=0))
    return [known_mistakes(
        (lambda: of_sums,
         f"Right shape, wrong numbers, and only for a batch of more than one example (N = {N} here; with one "
         f"example yours equals linear_weight_grad(G[0], X[0])): {worst(of_sums)}."),
        (lambda: of_means,
         f"Right shape, still wrong numbers for N = {N}, and not by one common factor (dividing by the batch size "
         f"would scale every entry alike): {worst(of_means)}."),
        (lambda: X.T @ G, f"Your gradient has shape {(d_in, d_out)}, but W, and so dL/dW, has shape "
                          f"(d_out, d_in) = {(d_out, d_in)}." if d_in != d_out else
                          "The shape is W's, and the numbers are the batch's dL/dW, in mirrored places: your "
                          "entry [i, j] holds the gradient's [j, i]."),
        (lambda: (X.T @ G).reshape(d_out, d_in),
         "The shape is W's now, but the numbers still disagree with the batch's dL/dW, on the square layer too, "
         "where the shape was never the problem. A reshape reads the same numbers in another order; it does not "
         "put them where they belong."),
        (lambda: loop / N, f"Every entry is the batch's dL/dW divided by N = {N}: the contract's L is "
                           f"the sum of the N losses, not their mean."),
        (lambda: np.outer(G[0], X[0]), "Equals what the first example's loss alone gives: the other examples add "
                                       "nothing."),
        (lambda: loop - np.outer(G[-1], X[-1]), "Right for every example but the last: the last example's loss adds "
                                                "nothing."),
        **MATCH)]


def _loop_of_outer_products(G, X):
    """The definition: one table g_n x_n^T per example, added up (nothing vectorised to get wrong)."""
    return lambda: sum(np.outer(g, x) for g, x in zip(G, X))


@check
def batch_weight_grad(hidden, rng):
    def case(G, X, note):
        label = f"batch_weight_grad(G, X) with G {G.shape} and X {X.shape}: {note}"
        return Case(label, call_with(G, X), _loop_of_outer_products(G, X), close(dtype="f"),
                    hints=_batch_grad_hints(G, X))

    if not hidden:
        G2 = F([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
        X2 = F([[1.0, 2.0], [3.0, 0.0], [0.0, 1.0]])
        return [case(F([[1.0, 2.0]]), F([[3.0, 4.0, 5.0]]), "one example: linear_weight_grad's [[3, 4, 5], [6, 8, 10]]"),
                case(rng.normal(size=(4, 2)), rng.normal(size=(4, 3)), "4 examples, d_out = 2, d_in = 3"),
                case(G2, X2, "a square layer, d_out = d_in = 2 (expected [[1, 3], [6, 1]])"),
                case(F([[1.0, 0.0], [0.0, 1.0]]), F([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
                     "2 examples, each touching its own output and input (expected [[1, 0, 0], [0, 1, 0]])")]
    return [case(rng.normal(size=(n, m)), rng.normal(size=(n, k)), f"{n} examples, d_out = {m}, d_in = {k}")
            for n, m, k in [(5, 3, 3), (2, 4, 1), (6, 2, 5), (1, 3, 3)]]


# ------------------------------------------------------------------- predictions

ask = partial(question, A, wording=NB01, atol=1e-3, rtol=1e-3, normalize=as_tuple, reason=True)


predict_outer_sum = ask(
    "predict_outer_sum", form=a_number, compare=close(atol=1e-6, rtol=0), mistakes=[
     (11, "11 adds the entries of a and of b (6 + 5). The table's entries are products a_i b_j: row i is a_i b, "
          "which adds up to a_i (1 + 4) = 5 a_i, and the three rows give (1 + 2 + 3) * 5 = 30."),
     (9, "9 is 1 * 1 + 2 * 4, a dot product of the first two entries. The outer product pairs every entry of a "
         "with every entry of b: six products, which add up to (1 + 2 + 3) * (1 + 4) = 30."),
     (6, "6 is the number of entries (3 x 2), not their sum: row i of the table is a_i b, adding up to 5 a_i, "
         "so the whole table adds up to (1 + 2 + 3) * 5 = 30."),
     (12, "12 is the largest entry, 3 * 4, and also (1 + 2 + 3) * 2, the sum of a once per entry of b. The "
          "table adds up all six products a_i b_j: (sum of a) * (sum of b) = 6 * 5 = 30.")],
    otherwise="Row i of a b^T is a_i b, which adds up to a_i (1 + 4) = 5 a_i; the three rows give "
              "(1 + 2 + 3) * 5 = 30: the sum of an outer product is (sum of a) * (sum of b).")

COS_AB = 11 / np.sqrt(125)  # cosine_similarity([1, 2], [3, 4]), the pair printed above the prediction
COS_QK = 4 / 9  # cosine_similarity([2, 1, 2], [1, -2, 2]): a dot product of 4 over two lengths of 3
predict_scaled_scores = ask(
    "predict_scaled_scores",
    form=described("a tuple of two numbers", scalar_tuple(2, (int, float))), compare=close(atol=2e-3, rtol=0), mistakes=[
     ((-20.0, COS_QK), "Right for the dot product. The cosine divides out both lengths, which are never negative: "
                       "the minus sign of -0.5 k survives them, and k now points the other way: -0.444."),
     ((20.0, COS_QK), "Both numbers lost the sign: -0.5 k points the other way, so every product q_i k_i changes "
                      "sign: 10 * (-0.5) * 4 = -20, and the cosine becomes -0.444."),
     ((20.0, -COS_QK), "The dot product lost the sign: every product q_i k_i is multiplied by 10 * (-0.5) = -5, "
                       "so 4 becomes -20."),
     ((-4.0, -COS_QK), "The dot product grows with the lengths: 10 q . (-0.5 k) = 10 * (-0.5) * (q . k) = -20. "
                       "Only the cosine divides the lengths out."),
     ((-20.0, -5 * COS_QK), "The cosine divides by both lengths, which grew by 10 and 0.5 too: only the sign is "
                            "left, -0.444."),
     ((-20.0, -20.0), "The cosine is the dot product divided by both lengths, always between -1 and 1: -0.444."),
     ((-55.0, -COS_AB), "Those are the numbers of a = [1, 2] against b = [3, 4], the pair above. This prediction's "
                        "query and key are q = [2, 1, 2] and k = [1, -2, 2]: start from their own dot product and "
                        "lengths.")])

predict_score_rank = ask(
    "predict_score_rank", form=described("a tuple of two ints, (rank with d = 2, rank with d = 8), bias included",
                                         int_tuple(2)),
    wording=NB04,  # the learner's measurement stands between the prediction and its reveal
    mistakes=[
     ((6, 6), "Each entry is its own dot product plus 1, yet with d = 2 the table is a sum of outer products: one "
              "per feature, each of rank 1, and one more for the bias (a table of ones is an outer product too). "
              "Its rank is at most 3."),
     ((2, 6), "Right for d = 8. With d = 2 the two features give a table of rank 2, but the same 1 added to every "
              "score is another rank-1 table, a column of ones times a row of ones, pointing its own way."),
     ((3, 8), "With d = 8 the features allow rank 8, but a 6 x 6 table has only 6 rows: its rank is at most 6."),
     ((2, 8), "With d = 8 the features allow rank 8, but a 6 x 6 table has only 6 rows: its rank is at most 6. "
              "And with d = 2, count the bias's table of ones too."),
     ((3, 3), "Right for d = 2. With d = 8 the cap from the features is above the table's own size, so the "
              "6 x 6 table of random numbers has full rank, 6."),
     ((1, 1), "Each outer product has rank 1, but a sum of several, pointing different ways, has rank the number "
              "of pieces (up to the table's size): 3 and 6."),
     (lambda got: got[0] != 3, "With d = 2 the scores are a sum of 2 outer products, one per feature, and the bias "
                               "adds a third, ones times ones: rank at most 3, and random numbers reach it.")])


predict_softmax_rank = ask(
    "predict_softmax_rank", form=a_number, compare=close(atol=0, rtol=0),
    wording=NB04,  # the score_rank_by_width exercise stands between the prediction and its reveal
    mistakes=[
     (2, "The softmax does not keep the rank. It exponentiates every score on its own, and e^(s_ij) is no longer a "
         "sum of 2 outer products; dividing each row by its sum keeps whatever rank is left, and that is 6."),
     (1, "Every row of weights sums to 1, but rows with the same sum need not be multiples of one another: the 6 "
         "rows of weights are independent, rank 6."),
     (lambda got: got > 6, "A 6 x 6 table has 6 rows: its rank is at most 6.")],
    otherwise="6: the exponential acts on every score alone, so e^S is no longer a sum of 2 outer products and its "
              "6 rows are independent; dividing each row by its sum keeps that rank.")

# --------------------------------------------------- score_rank_by_width: the learner measures the rank's cap

def _rank_case(label, widths, n_q, n_k, seed, weights=False):
    widths = list(widths)
    scores_law = [min(n_q, n_k, d) for d in widths]
    # a softmax of each row exponentiates every score on its own: the weights reach the table's full rank
    law = [min(n_q, n_k)] * len(widths) if weights else scores_law

    def run(fn):
        rng = np.random.default_rng(seed)
        return fn(list(widths), n_q, n_k, rng, weights=True) if weights else fn(list(widths), n_q, n_k, rng)

    def test(got, want):
        g = numbers(got)
        if g is None or g.shape != (len(widths),):
            return f"score_rank_by_width returned {repr(got)[:80]}; one rank per width is due: {len(widths)} ints."
        if g.dtype.kind not in "biuf" or not np.all(np.isfinite(g)) or not np.all(g == np.round(g)):
            return f"score_rank_by_width returned {np.round(g, 3).tolist()}: a rank is a whole number of directions."
        g = g.astype(int).tolist()
        if g == law:
            return None
        said = f"with {n_q} queries and {n_k} keys, widths {widths} gave ranks {g}"
        if weights:
            said = f"weights=True: {said}"
            if g == scores_law:
                return (f"{said}, the scores' own ranks, capped by the width: the table measured still has the "
                        "scores' rank, so it is not the weights a softmax of each row gives.")
            if g == [min(n_q, n_k, d + 1) for d in widths]:
                return (f"{said}, one more than the width: the scores' table with each row shifted by a number of "
                        "its own has that rank; the weights' table, exponentiated entry by entry, does not.")
            return (f"{said}; the weights of random queries and keys reach {law}, whatever the width: is the table "
                    f"measured of shape ({n_q}, {n_k}), each row a softmax of that row's scores?")
        if g == widths:
            return f"{said}: the rank follows the width past the table's size, {min(n_q, n_k)} rows or columns."
        if g == [min(n_q, d) for d in widths] and n_q != n_k:
            return f"{said}: past {n_k} the ranks keep growing, yet the table has only {n_k} columns."
        if g == [min(n_k, d) for d in widths] and n_q != n_k:
            return f"{said}: past {n_q} the ranks keep growing, yet the table has only {n_q} rows."
        if len(set(g)) == 1:
            return f"{said}: the same rank at every width, as if the width never reached the table."
        if sorted(g) == sorted(law):
            return f"{said}: the ranks random tables reach, {sorted(law)}, but not in the order of the widths given."
        first = next(i for i, (a, b) in enumerate(zip(g, law)) if a != b)
        return (f"{said}; random queries and keys reach {law}, first differing at width {widths[first]}: is the "
                f"table measured there of shape ({n_q}, {n_k}), and drawn with that width?")

    return Case(label, run, lambda: law, predicate(test))


@check
def score_rank_by_width(hidden, rng):
    if not hidden:
        return [
            _rank_case("score_rank_by_width([1, 2, 4, 6, 8], 6, 6, rng)", [1, 2, 4, 6, 8], 6, 6, seed=21),
            _rank_case("score_rank_by_width([8, 3, 12], 10, 4, rng): in the order of the widths given",
                       [8, 3, 12], 10, 4, seed=22),
            _rank_case("score_rank_by_width([2, 4, 8], 6, 6, rng, weights=True): the weights' table",
                       [2, 4, 8], 6, 6, seed=24, weights=True),
        ]
    seeds = [int(s) for s in rng.integers(0, 2**31, size=2)]
    return [
        _rank_case("score_rank_by_width([1, 5, 9, 20], 3, 7, rng)", [1, 5, 9, 20], 3, 7, seeds[0]),
        _rank_case("score_rank_by_width([2, 16], 12, 12, rng)", [2, 16], 12, 12, seeds[1]),
        # fixed: more queries than keys (the keys cap the rank) and widths out of order
        _rank_case("score_rank_by_width([6, 2, 11], 9, 5, rng)", [6, 2, 11], 9, 5, seed=23),
        _rank_case("score_rank_by_width([2, 3, 16], 9, 5, rng, weights=True)", [2, 3, 16], 9, 5, seed=25,
                   weights=True),
        _rank_case("score_rank_by_width([2, 5], 4, 8, rng, weights=True)", [2, 5], 4, 8, seeds[0] + 1,
                   weights=True),
    ]
