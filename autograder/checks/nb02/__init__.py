"""Checks for 02_shapes_and_matmul: the exercises here, in the notebook's order; its predictions in
:mod:`.predictions`, re-exported below, so a notebook reads every check as ``check.<grade_id>``."""
from __future__ import annotations

import numpy as np

from ..compare import Case, call_with, close, const, equal, predicate, raises
from ..hints import numbers
from ..toolkit import import_torch

from .common import A, R, check


# ------------------------------------------------------------------ matmul_shape

def _numpy_matmul_shape(a_shape, b_shape, problem: str = ""):
    """What NumPy itself says, on zero-stride arrays (no memory); its error replaced by a plain one."""
    def want():
        try:
            return tuple(int(n) for n in np.matmul(np.broadcast_to(0.0, a_shape), np.broadcast_to(0.0, b_shape)).shape)
        except ValueError:
            raise ValueError(problem or f"{a_shape} @ {b_shape} is not defined") from None
    return want


def _matmul_hint(got, want):
    g = got if isinstance(got, tuple) else None
    if g is None or len(want) < 2:
        return None
    if tuple(g[-2:]) != tuple(want[-2:]):
        return "The last two dims of a @ b are (rows of a, columns of b): (n, k) @ (k, m) -> (n, m)."
    return ("The last two dims are right; the batch dims (all but the last two) must broadcast: line them up "
            "from the right, equal dims stay, a 1 stretches to the other, a missing dim counts as 1.")


@check
def matmul_shape(hidden, rng):
    def case(a, b, note="", problem=""):
        label = f"matmul_shape({a}, {b})" + (f": {note}" if note else "")
        return Case(label, call_with(a, b), _numpy_matmul_shape(a, b, problem), equal(), hints=[_matmul_hint])

    if not hidden:
        return [
            case((2, 3), (3, 4)),
            case((5, 4), (4, 7), "Q (5, 4) times K.T (4, 7)"),
            case((2, 3, 4), (4, 5), "one matrix reused for a batch"),
            case((8, 1, 3, 4), (6, 4, 5), "batch dims (8, 1) and (6,) broadcast to (8, 6)"),
            case((2, 3), (4, 5), "inner dims 3 and 4 differ", "inner dims 3 and 4 differ"),
            case((2, 3, 4), (3, 4, 5), "batch dims 2 and 3 cannot broadcast", "batch dims 2 and 3 cannot broadcast"),
        ]
    cases = []
    for _ in range(6):
        k = int(rng.integers(1, 6))
        batch = [int(n) for n in rng.integers(1, 4, size=int(rng.integers(0, 4)))]
        batch_a = [n if rng.random() < 0.6 else 1 for n in batch]
        batch_b = [n if rng.random() < 0.6 else 1 for n in batch][int(rng.integers(0, len(batch) + 1)):]
        a = (*batch_a, int(rng.integers(1, 6)), k)
        b = (*batch_b, k, int(rng.integers(1, 6)))
        cases.append(case(a, b))
    cases += [
        case((1, 1), (1, 1)),
        case((3, 1, 2, 2), (1, 4, 2, 3), "both sides stretch a 1"),
        case((2, 2, 3), (2, 4, 2), "inner dims 3 and 4 differ", "inner dims 3 and 4 differ"),
        case((4, 2, 3), (2, 1, 3, 5), "batch dims (4,) and (2, 1) broadcast to (2, 4)"),
        case((4, 2, 3), (2, 3, 5), "batch dims 4 and 2 cannot broadcast", "batch dims 4 and 2 cannot broadcast"),
        case((5, 2, 6, 2), (3, 2, 2), "batch dims (5, 2) and (3,) cannot broadcast: 2 vs 3",
             "batch dims (5, 2) and (3,) cannot broadcast"),
    ]
    return cases


# ------------------------------------------------------------------------ linear

def _linear_hints(x, W, b):
    def hint(got, want):
        g = numbers(got)
        if g is None:
            return None
        bias = 0 if b is None else b
        if b is not None and g.shape == want.data.shape and np.allclose(g, x @ W):
            return "It equals x @ W without the bias: add b when it is not None."
        if W.shape[0] == W.shape[1] and g.shape == want.data.shape and np.allclose(g, x @ W.T + bias):
            return ("It equals x @ W.T + b: here W has shape (d_in, d_out), so use it as it is "
                    "(nn.Linear stores its weight as (d_out, d_in) and transposes it; we do not).")
        if g.shape == (int(np.prod(x.shape[:-1])), W.shape[1]):
            return "The leading axes of x were flattened: the result keeps them, (..., d_in) -> (..., d_out)."
        return None
    return [hint]


def _torch_linear(x, W, b):
    """nn.Linear with our weights copied in (its weight is (d_out, d_in))."""
    def want():
        torch = import_torch()
        layer = torch.nn.Linear(W.shape[0], W.shape[1], bias=b is not None, dtype=torch.float64)
        with torch.no_grad():
            layer.weight.copy_(torch.from_numpy(W.T))
            if b is not None:
                layer.bias.copy_(torch.from_numpy(b))
            return layer(torch.from_numpy(x)).numpy()
    return want


@check
def linear(hidden, rng):
    f = close(dtype="f")
    if not hidden:
        x = np.array([[1.0, 2.0], [3.0, 4.0]])
        W = np.array([[1.0, 0.0], [1.0, 1.0]])
        b = np.array([10.0, 20.0])
        xb, Wb = np.arange(24.0).reshape(2, 3, 4) / 10, np.arange(20.0).reshape(4, 5) / 10
        bb = np.array([1.0, -1.0, 0.5, 0.0, 2.0])
        return [
            Case("linear([[1, 2], [3, 4]], W=[[1, 0], [1, 1]], b=[10, 20]) (by hand: [[13, 22], [17, 24]])",
                 call_with(x, W, b), const(np.array([[13.0, 22.0], [17.0, 24.0]])), f, hints=_linear_hints(x, W, b)),
            Case("linear(x, W) without a bias, x (2, 2)", call_with(x, W), lambda: x @ W, f,
                 hints=_linear_hints(x, W, None)),
            Case("linear with x (2, 3, 4), W (4, 5), b (5,)", call_with(xb, Wb, bb), lambda: xb @ Wb + bb, f,
                 hints=_linear_hints(xb, Wb, bb)),
        ]
    cases = []
    for shape, d_out, with_bias in [((6, 3), 3, True), ((2, 5, 4), 7, True), ((3, 4), 2, False), ((2, 2, 3, 3), 3, True)]:
        x, W = rng.normal(size=shape), rng.normal(size=(shape[-1], d_out))
        b = rng.normal(size=d_out) if with_bias else None
        cases.append(Case(f"linear with x {shape}, W {W.shape}" + (f", b ({d_out},)" if with_bias else ", b=None")
                          + " against nn.Linear with the same weights",
                          call_with(x, W, b), _torch_linear(x, W, b), f, hints=_linear_hints(x, W, b)))
    # Fixed, whatever the seed: two large inputs that cancel leave 1/3, which float32 (about 7 digits)
    # cannot carry through 10000.33; random inputs rarely land near such a cancellation.
    xc, Wc = np.array([[1e4 + 1 / 3, -1e4]]), np.array([[1.0], [1.0]])
    cases.append(Case("linear(x=[[10000.333..., -10000]], W=[[1], [1]]): large terms that cancel, in float64",
                      call_with(xc, Wc), const(np.array([[1 / 3]])), f, hints=_linear_hints(xc, Wc, None)))
    return cases


# ------------------------------------------------------------- split / merge heads

def _split_slices(x, H):
    """Head h is the slice of features h*D .. (h+1)*D - 1, stacked on axis 1."""
    D = x.shape[-1] // H
    return np.stack([x[..., h * D:(h + 1) * D] for h in range(H)], axis=1)  # (B, H, T, D)


def _origin(x, v):
    """(token, feature) of the number v in the (B, T, d) input x (sequence 0), or None."""
    where = np.argwhere(x[0] == v)
    return tuple(int(i) for i in where[0]) if len(where) else None


class _Traced(np.ndarray):
    """The bug hunt's input, noting which of its methods the learner's split_heads calls: two reshapes in a row
    give exactly the numbers of one, so only this tells the half-fix from the untouched bug."""

    def __array_finalize__(self, obj):
        self.moves = getattr(obj, "moves", None)

    def _note(self, what):
        if self.moves is not None:
            self.moves.append(what)

    def reshape(self, *args, **kwargs):
        self._note("reshape")
        return super().reshape(*args, **kwargs)

    def transpose(self, *args, **kwargs):
        self._note("transpose")
        return super().transpose(*args, **kwargs)

    def swapaxes(self, *args, **kwargs):
        self._note("transpose")
        return super().swapaxes(*args, **kwargs)

    # .T and .mT are attributes, not calls of transpose: without these a swap written `.T` went unseen
    @property
    def T(self):
        self._note("transpose")
        return super().T

    @property
    def mT(self):
        self._note("transpose")
        return super().mT


def _traced_call(x, H):
    """Call split_heads(x, H) on a traced copy of x: (its result as a plain array, the methods it called)."""
    def call(fn):
        t = np.array(x, dtype=float).view(_Traced)
        t.moves = []
        out = fn(t, H)
        if isinstance(out, np.ndarray):
            out = np.array(out).view(np.ndarray)
        return out, tuple(t.moves)
    return call


def _result(got):
    """A traced outcome is (result, moves); any other is the result itself."""
    if isinstance(got, (tuple, list)) and len(got) == 2 and isinstance(got[1], (tuple, list)) \
            and all(isinstance(m, str) for m in got[1]):
        return got[0], tuple(got[1])
    return got, ()


class _traced_close(close):
    """close() on the results alone: the grader's want is the reference's traced outcome, a pair as well."""

    def mismatch(self, got, want):
        return super().mismatch(_result(got)[0], _result(want)[0])


def _split_hint(got, want):
    """Symptoms only: what attention would see in head 0, which input numbers landed there; never the line."""
    got, moves = _result(got)
    g, w = numbers(got), numbers(_result(want)[0])
    if g is None or w.ndim != 4:
        return None
    B, H, T, D = w.shape
    x = w.transpose(0, 2, 1, 3).reshape(B, T, H * D)  # the input, recovered
    if g.shape == (B, T, H, D) and g.shape != w.shape:
        return (f"The shape is {g.shape}; the contract asks for (B, H, T, D) = {w.shape}: axis 1 should count the "
                f"{H} heads, and yours has length {T}, the number of tokens.")
    if g.shape != w.shape or T < 2:
        return None
    got_from = [_origin(x, v) for v in g[0, 0, 1]]  # where head 0's row for position 1 came from
    if any(o is None for o in got_from):
        return None
    said = ", ".join(f"token {t} feature {f}" for t, f in got_from)
    seen = sorted({_origin(x, v)[0] for v in g[0, 0].ravel() if _origin(x, v) is not None})
    unseen = [t for t in range(T) if t not in seen]
    lead = (f"Right shape, wrong numbers. Head 0's row for position 1 should be token 1's features 0..{D - 1}; "
            f"yours holds {said}.")
    if np.array_equal(g, x.reshape(B, H, T, D)):
        symptom = (f"head 0 is built from token{'s' if len(seen) > 1 else ''} {', '.join(map(str, seen))} alone: "
                   f"change token {unseen[-1]} and nothing in head 0 changes, so attention in head 0 would never "
                   f"see it; and head 0's position 1 holds {said}, where it should hold token 1's features "
                   f"0..{D - 1}.") if unseen else lead
        if moves.count("reshape") >= 2 and "transpose" not in moves:
            return (f"Progress in the first step, not yet in the numbers: cutting each token's {H * D} features into "
                    f"{H} pieces of {D} is the right start, but the heads come out exactly as the teammate's did: "
                    f"{symptom} Your second step changed the shape and left every number of every head where the "
                    "teammate's code had it.")
        if "transpose" in moves:
            return (f"Progress: your code swaps axes now, not only reshapes, but the heads come out exactly as the "
                    f"teammate's did: {symptom} Every number sits where a single reshape put it, so whatever your "
                    "swaps did was undone before the result came out (two swaps of the same axes cancel).")
        return ("Right shape, wrong numbers, and attention would notice: " + symptom
                + " Each position t of a head must come from token t alone.")
    if np.array_equal(g, x.transpose(0, 2, 1).reshape(B, H, T, D)):
        return lead + " Each of head 0's rows holds one feature of several tokens, not D features of one token."
    if np.array_equal(g, x.reshape(B, T, D, H).transpose(0, 3, 1, 2)):
        return lead + (f" Each token's row in head 0 holds the right token, but features {H} apart (every H-th "
                       f"feature, H = {H}), not D neighbouring features.")
    return lead


@check
def split_heads(hidden, rng):
    if not hidden:
        x = np.arange(12.0).reshape(1, 3, 4)
        x2 = np.arange(60.0).reshape(2, 5, 6)
        return [
            Case("split_heads(np.arange(12.0).reshape(1, 3, 4), 2): head 0 is [[0, 1], [4, 5], [8, 9]]",
                 _traced_call(x, 2), const(np.array([[[[0.0, 1], [4, 5], [8, 9]], [[2, 3], [6, 7], [10, 11]]]])),
                 _traced_close(), hints=[_split_hint]),
            Case("split_heads(x, 3) with x (2, 5, 6)", _traced_call(x2, 3), lambda: _split_slices(x2, 3),
                 _traced_close(), hints=[_split_hint]),
            Case("split_heads(x, 4) with x (1, 4, 6): 4 heads do not divide d = 6", call_with(np.zeros((1, 4, 6)), 4),
                 raises("4 heads do not divide d = 6")),
        ]
    cases = []
    for shape, H in [((3, 7, 8), 4), ((2, 3, 12), 6), ((1, 5, 6), 1), ((2, 4, 6), 6)]:
        x = rng.normal(size=shape)
        cases.append(Case(f"split_heads(x, {H}) with x {shape}", call_with(x, H),
                          lambda x=x, H=H: _split_slices(x, H), hints=[_split_hint]))
    cases.append(Case("split_heads(x, 5) with x (2, 3, 8)", call_with(rng.normal(size=(2, 3, 8)), 5),
                      raises("5 heads do not divide d = 8")))
    cases.append(Case("split_heads(x, 4) with x (1, 6, 6)", call_with(np.zeros((1, 6, 6)), 4),
                      raises("4 heads do not divide d = 6")))
    return cases


def _merge_concat(x):
    """The heads' outputs for one token side by side: concatenate along the features."""
    return np.concatenate([x[:, h] for h in range(x.shape[1])], axis=-1)  # (B, T, H * D)


def _merge_hints(x):
    B, H, T, D = x.shape

    def hint(got, want):
        g = numbers(got)
        if g is None:
            return None
        if g.shape == want.data.shape and np.array_equal(g, x.reshape(B, T, H * D)):
            return ("Right shape, wrong numbers: token 0's output should be the H heads' vectors of token 0 side "
                    "by side; yours holds head 0's vectors of several tokens in a row (the positions ended up "
                    "among the features), and the round trip merge_heads(split_heads(x, H)) does not give x back.")
        if g.shape == (B, T, D):
            return "The heads were added or averaged; merging puts them side by side: H * D features."
        if g.shape == want.data.shape and np.array_equal(g, x.transpose(0, 2, 3, 1).reshape(B, T, H * D)):
            return ("Right shape, wrong numbers: token 0's output alternates between the heads, feature by feature "
                    "(head 0's first, head 1's first, ..., then head 0's second): the heads' features are interleaved. "
                    f"Head h must fill one block of {D} neighbouring features, h*D .. (h+1)*D - 1.")
        return None
    return [hint]


@check
def merge_heads(hidden, rng):
    if not hidden:
        heads = np.array([[[[0.0, 1], [4, 5], [8, 9]], [[2, 3], [6, 7], [10, 11]]]])  # (1, 2, 3, 2)
        x2 = np.arange(60.0).reshape(2, 3, 5, 2)
        return [
            Case("merge_heads of heads (1, 2, 3, 2), the inverse of the split of np.arange(12.0).reshape(1, 3, 4)",
                 call_with(heads), const(np.arange(12.0).reshape(1, 3, 4)), hints=_merge_hints(heads)),
            Case("merge_heads with x (2, 3, 5, 2)", call_with(x2), lambda: _merge_concat(x2), hints=_merge_hints(x2)),
        ]
    cases = []
    for shape in [(2, 4, 3, 5), (1, 1, 6, 3), (3, 2, 2, 1), (2, 8, 4, 2)]:
        x = rng.normal(size=shape)
        cases.append(Case(f"merge_heads with x {shape}", call_with(x), lambda x=x: _merge_concat(x), hints=_merge_hints(x)))
    return cases


# ------------------------------------------------------------ count_mlp_params

def _torch_param_count(widths, bias):
    def want():  # a stack of two widths or more: the refusals are cases of their own
        torch = import_torch()
        layers = [torch.nn.Linear(a, b, bias=bias, device="meta") for a, b in zip(widths, widths[1:])]  # no memory
        return sum(p.numel() for layer in layers for p in layer.parameters())
    return want


def _count_hints(widths, bias):
    pairs = list(zip(widths, widths[1:]))
    weights = sum(a * b for a, b in pairs)
    biases = sum(b for _, b in pairs) if bias else 0
    wrong = [  # (a wrong count, what it shows); a value equal to the right count is never named
        (weights, "That is the weights alone: with bias=True every layer adds one parameter per output feature."),
        (weights + sum(b for _, b in pairs), "With bias=False no layer has a bias vector: only the weights count."),
        (weights + sum(a for a, _ in pairs), "The biases were counted one per input feature of each layer: a "
         "layer's bias has one entry per output (nn.Linear(3, 2) holds 8, not 9)."),
        (weights + len(pairs), "Each bias was counted as one number: it is a vector, one entry per output."),
        (weights + (widths[-1] if bias else 0), "Only the last layer's bias was counted: each layer has its own."),
        (2 * weights + biases, "The weights were counted twice."),
        (weights + biases + widths[-1] * widths[0] + (widths[0] if bias else 0),
         "One layer too many: the stack ends at the last width; it does not go round back to the first."),
    ]
    first, last = (a * b + (b if bias else 0) for a, b in (pairs[0], pairs[-1]))
    if len(pairs) > 1:
        wrong += [(first, f"Only the first layer was counted: {len(widths)} widths make {len(pairs)} layers."),
                  (weights + biases - last, f"One layer short: {len(widths)} widths make {len(pairs)} layers, one "
                                            "between each two neighbouring widths.")]

    def hint(got, want):
        numeric = isinstance(got, (int, float)) and not isinstance(got, bool)
        return next((message for value, message in wrong if numeric and got == value and value != want), None)
    return [hint]


@check
def count_mlp_params(hidden, rng):
    def case(widths, bias=None, want=None, note=""):
        args = (widths,) if bias is None else (widths, bias)
        label = f"count_mlp_params{args if len(args) > 1 else '(' + repr(widths) + ')'}" + (f": {note}" if note else "")
        b = True if bias is None else bias
        return Case(label, call_with(*args), const(want) if want is not None else _torch_param_count(widths, b),
                    equal(), hints=_count_hints(widths, b))

    if not hidden:
        return [
            case((3, 2), want=8, note="nn.Linear(3, 2)"),
            case((2, 3), want=9, note="nn.Linear(2, 3)"),
            case((4, 8, 4), want=76),
            case((4, 8, 4), False, want=64),
            case((768, 3072, 768), want=4_722_432, note="GPT-2's MLP"),
            Case("count_mlp_params((5,)): one width is no layer", call_with((5,)),
                 raises("a stack needs at least two widths")),
        ]
    cases = [case(tuple(int(w) for w in rng.integers(1, 50, size=int(rng.integers(2, 6)))), bool(rng.random() < 0.5))
             for _ in range(4)]
    # fixed, whatever the seed: widths of 1, a long stack, a large layer without bias, no layer at all
    cases += [case((1, 1)), case((5, 9, 2, 9, 5), True), case((4096, 11008), False), case((7, 3, 8)),
              Case("count_mlp_params(())", call_with(()), raises("a stack needs at least two widths"))]
    return cases


# --------------------------------------------------------------- low_rank_approx

def _svd_truncation(X, r):
    """The first r rank-1 pieces s_i u_i v_i^T of NumPy's SVD."""
    def want():
        if not 1 <= r <= min(X.shape):
            raise ValueError(f"r must be in 1..{min(X.shape)} for X of shape {X.shape}, got {r}")
        U, s, Vt = np.linalg.svd(X, full_matrices=False)
        return sum(s[i] * np.outer(U[:, i], Vt[i]) for i in range(r))
    return want


def _low_rank_hints(X, r):
    def hint(got, want):
        g = numbers(got)
        if g is None or g.shape != X.shape:
            return None
        U, s, Vt = np.linalg.svd(X, full_matrices=False)
        if np.allclose(g, (U[:, -r:] * s[-r:]) @ Vt[-r:]):
            return ("It keeps the r smallest singular values: np.linalg.svd returns s largest first, "
                    "so keep U[:, :r], s[:r] and Vt[:r].")
        if np.allclose(g, U[:, :r] @ Vt[:r]):
            return "The singular values are missing: each piece is s_i * u_i v_i^T, so scale by s[:r]."
        if r < len(s) and np.allclose(g, (U[:, :r + 1] * s[:r + 1]) @ Vt[:r + 1]):
            return "It keeps r + 1 singular values: s[:r] holds exactly r of them."
        if r > 1 and np.allclose(g, (U[:, :r - 1] * s[:r - 1]) @ Vt[:r - 1]):
            return "It keeps r - 1 singular values: s[:r] holds exactly r of them."
        rank = np.linalg.matrix_rank(g)
        if rank != r:
            return f"The result has rank {rank}, not {r}."
        return None
    return [hint]


@check
def low_rank_approx(hidden, rng):
    def case(X, r, note="", want=None):
        label = f"low_rank_approx(X, {r}) with X {X.shape}" + (f": {note}" if note else "")
        return Case(label, call_with(X, r), const(want) if want is not None else _svd_truncation(X, r),
                    close(atol=1e-8, dtype="f"), hints=_low_rank_hints(X, r))

    if not hidden:
        X3 = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 1.0], [2.0, 0.0, 1.0], [1.0, 1.0, 3.0], [0.0, 2.0, 2.0]])
        return [
            Case("low_rank_approx([[3, 0], [0, 1]], 1): keep the singular value 3 (by hand: [[3, 0], [0, 0]])",
                 call_with(np.array([[3.0, 0.0], [0.0, 1.0]]), 1), const(np.array([[3.0, 0.0], [0.0, 0.0]])),
                 close(dtype="f"), hints=_low_rank_hints(np.array([[3.0, 0.0], [0.0, 1.0]]), 1)),
            case(np.array([[1.0, 2.0], [2.0, 4.0]]), 1, "a rank-1 matrix is its own best rank-1 approximation",
                 np.array([[1.0, 2.0], [2.0, 4.0]])),
            case(X3, 2),
            case(X3, 3, "r = min(X.shape) keeps everything", X3),
            case(X3, 0, "r must be at least 1"),
            case(np.ones((4, 2)), 3, "r = 3 is more than min(4, 2) = 2"),
        ]
    cases = []
    for shape in [(6, 4), (3, 7), (5, 5)]:
        X = rng.normal(size=shape)
        for r in sorted({1, int(rng.integers(1, min(shape) + 1)), min(shape)}):
            cases.append(case(X, r))
    cases += [case(rng.normal(size=(2, 6)), 3, "r = 3 is more than min(2, 6) = 2"),
              case(rng.normal(size=(3, 3)), -1, "a negative r"),
              # a tall X too: a bound on the rows alone lets r = 3 through for 6 rows and 2 columns
              case(rng.normal(size=(6, 2)), 3, "r = 3 is more than min(6, 2) = 2")]
    return cases


def _stretch_case(label, A_, n_points=720):
    A_ = np.asarray(A_, dtype=float)
    s = np.linalg.svd(A_, compute_uv=False)
    cols = np.linalg.norm(A_, axis=0)
    rows = np.linalg.norm(A_, axis=1)
    eig = np.sort(np.abs(np.linalg.eigvals(A_)))[::-1]
    # n points around the circle miss the farthest and nearest directions by at most pi / n radians: the shortest
    # radius can then be off by up to s_1 * pi / n (a flat image, s_2 = 0), the longest by far less
    tol = dict(rtol=1e-3, atol=1.05 * s[0] * np.pi / n_points + 1e-6)

    def test(got, want):
        g = numbers(got)
        if g is None or g.shape != (2,) or g.dtype.kind not in "biuf" or not np.all(np.isfinite(g)):
            return f"stretch_of returned {repr(got)[:80]}; return two numbers, (longest, shortest)."
        if np.allclose(g, s, **tol):
            return None
        said = f"for A = {A_.tolist()} you measured (longest, shortest) = {np.round(g, 3).tolist()}"
        if np.allclose(g, s[::-1], **tol):
            return f"{said}: the two radii are right, in the wrong order; the longest comes first."
        if np.allclose(g, s ** 2, **tol):
            return f"{said}: these are the squares of the image's radii: a length is the square root of a sum of squares."
        if np.allclose(np.sort(g), np.sort(cols), **tol):
            return (f"{said}: these are the lengths of A's columns, the images of (1, 0) and (0, 1) only. Points of "
                    "the circle between them can land further out, or closer in.")
        if np.allclose(np.sort(g), np.sort(rows), **tol):
            return (f"{said}: these are the lengths of A's rows. The circle's points p are A's inputs: measure the "
                    "lengths of the outputs A p.")
        if np.allclose(g, eig, **tol):
            return (f"{said}: these are the sizes of A's eigenvalues, how much A stretches the directions it keeps; "
                    "the circle's image is stretched most along a direction A turns.")
        return (f"{said}; the image of the unit circle reaches {s[0]:.3f} at its farthest point and {s[1]:.3f} at "
                f"its nearest. Are the points on the circle (length 1), spread around all of it, and is each "
                "measured after A moves it?")

    return Case(label, call_with(A_, n_points), lambda: (float(s[0]), float(s[1])), predicate(test))


@check
def stretch_of(hidden, rng):
    if not hidden:
        return [
            _stretch_case("stretch_of([[3, 0], [0, 1]], 720): the circle becomes an ellipse of radii 3 and 1",
                          [[3.0, 0.0], [0.0, 1.0]]),
            _stretch_case("stretch_of([[2, 1], [1, 1.5]], 720)", [[2.0, 1.0], [1.0, 1.5]]),
            _stretch_case("stretch_of([[1, 2], [0, 1]], 720): a shear", [[1.0, 2.0], [0.0, 1.0]]),
            _stretch_case("stretch_of([[1, 2], [0.5, 1]], 720): rank 1, the circle flattens to a segment",
                          [[1.0, 2.0], [0.5, 1.0]]),
        ]
    return [
        _stretch_case("stretch_of of a random 2 x 2 matrix, 720 points", rng.normal(size=(2, 2))),
        _stretch_case("stretch_of of a rotation by 0.7 rad: every radius 1",
                      [[np.cos(0.7), -np.sin(0.7)], [np.sin(0.7), np.cos(0.7)]]),
        _stretch_case("stretch_of([[0, -3], [0.5, 0]], 720)", [[0.0, -3.0], [0.5, 0.0]]),
        # fixed: columns, rows and the quarter circle all miss the radii here, whatever the seed
        _stretch_case("stretch_of([[1.2, 1], [0, 0.8]], 720)", [[1.2, 1.0], [0.0, 0.8]]),
    ]


from .predictions import (predict_dog_neighbour, predict_embedding_vs_mlp, predict_lsa_rank,  # noqa: E402, F401
                          predict_merge_by_reshape, predict_rank, predict_score_multiplications,
                          predict_shear_stretch, predict_smallest_stretch, predict_untransposed_copy)
