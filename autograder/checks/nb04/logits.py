"""Notebook 04's checks of logits: softmax, softmax_temperature, cross_entropy, next_token_loss (a bug hunt),
greedy_token and sample_token."""
from __future__ import annotations

import math

import numpy as np

from ..compare import Case, call_with, close, const, equal, predicate, raises
from ..hints import known_mistakes
from ..toolkit import import_torch, nonfinite_hint, stable_softmax
from .common import LN2, _log_sm, _np, _t, check, sign_hint


# -------------------------------------------------------------------------------- softmax

def _softmax_hints(z, axis=-1):
    z = np.asarray(z, dtype=float)
    ax = axis % z.ndim

    def global_max():
        e = np.exp(z - z.max())
        return e / e.sum(axis=axis, keepdims=True)

    candidates = [(lambda k=k: stable_softmax(z, k), f"This is the softmax over axis {k}, but with axis={axis} "
                                                     f"every slice along axis {ax} must sum to 1.")
                  for k in range(z.ndim) if k != ax]
    candidates.append((lambda: np.exp(z - z.max()) / np.exp(z - z.max()).sum(),
                       "You normalized over the whole array: the whole array sums to 1, not each slice "
                       "along the axis."))
    return [
        # its 0 / 0 in the slices far below the global max is the clue, so nan must match nan
        known_mistakes((global_max, "You subtracted the max of the whole array: a slice far below it underflows "
                                    "to 0 / 0 (nan). Each slice along the axis is its own distribution."),
                       rtol=1e-5, equal_nan=True),
        known_mistakes(*candidates),
        nonfinite_hint("Did you subtract the max? exp(1000) overflows to inf, and inf / inf is nan.",
                       np.abs(z).max() > 700),
    ]


def _torch_softmax(z, axis=-1):
    def want():
        return _np(import_torch().softmax(_t(z), dim=axis))

    return want


def _softmax_case(label, z, axis=None):
    z = np.asarray(z, dtype=float)
    call = call_with(z) if axis is None else call_with(z, axis=axis)
    return Case(label, call, _torch_softmax(z, -1 if axis is None else axis), close(dtype="f"),
                hints=_softmax_hints(z, -1 if axis is None else axis))


@check
def softmax(hidden, rng):
    if not hidden:
        z2 = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
        return [
            _softmax_case("softmax(np.array([0, ln 2])) is [1/3, 2/3]", [0.0, LN2]),
            _softmax_case("softmax(np.array([[1, 2, 3], [1, 1, 1]])): each row sums to 1", z2),
            _softmax_case("softmax(z, axis=0) with z of shape (2, 3): each column sums to 1", z2, axis=0),
            _softmax_case("softmax(np.array([1000, 999, 998])) must be finite", [1000.0, 999.0, 998.0]),
            _softmax_case("softmax(np.array([[1000, 999], [0, -1]])): rows far apart",
                          [[1000.0, 999.0], [0.0, -1.0]]),
        ]
    z3 = rng.normal(size=(3, 4, 5)) * 3
    return [
        _softmax_case("softmax of shape (3, 4, 5), axis=-1", z3),
        _softmax_case("softmax of shape (3, 4, 5), axis=0", z3, axis=0),
        _softmax_case("softmax of shape (3, 4, 5), axis=1", z3, axis=1),
        _softmax_case("softmax of logits around +-1e4, shape (4, 6)", rng.normal(size=(4, 6)) * 1e4),
        _softmax_case("softmax with rows shifted by 0, 800 and -800", rng.normal(size=(3, 4)) + [[0.0], [800.0], [-800.0]]),
        _softmax_case("softmax of a single logit", [7.5]),
    ]


# --------------------------------------------------------------------- softmax_temperature

def _temperature_case(label, z, tau):
    z = np.asarray(z, dtype=float)

    hint = known_mistakes(
        (lambda: stable_softmax(z * tau), "This is softmax(z * tau): the temperature acts the wrong way round "
                                           "(below 1 must sharpen, above 1 flatten)."),
        (lambda: stable_softmax(z), "This is the plain softmax(z): the temperature was ignored."),
    )
    return Case(label, call_with(z, tau), lambda: _torch_softmax(z / tau)(), close(dtype="f"), hints=[hint])


@check
def softmax_temperature(hidden, rng):
    z = np.array([2.0, 1.0, 0.0])
    if not hidden:
        return [
            _temperature_case("softmax_temperature([2, 1, 0], 1.0) is the plain softmax", z, 1.0),
            _temperature_case("softmax_temperature([2, 1, 0], 0.5): sharper", z, 0.5),
            _temperature_case("softmax_temperature([2, 1, 0], 2.0): flatter", z, 2.0),
            Case("softmax_temperature([2, 1, 0], 0.0): tau must be > 0", call_with(z, 0.0),
                 raises("tau must be > 0, got 0.0")),
        ]
    zz = rng.normal(size=(4, 5)) * 2
    return [
        _temperature_case("softmax_temperature of shape (4, 5), tau=0.1", zz, 0.1),
        _temperature_case("softmax_temperature of shape (4, 5), tau=3.0", zz, 3.0),
        _temperature_case("softmax_temperature([1000, 999, 998], 0.5)", [1000.0, 999.0, 998.0], 0.5),
        Case("softmax_temperature(z, -1.0): tau must be > 0", call_with(zz, -1.0), raises("tau must be > 0, got -1.0")),
    ]


# --------------------------------------------------------------------------- cross_entropy

def _cross_entropy_case(label, logits, targets):
    logits = np.asarray(logits, dtype=float)
    targets = np.asarray(targets)
    n = len(targets)
    rows = np.arange(n)

    def want():
        torch = import_torch()
        return torch.nn.functional.cross_entropy(_t(logits), torch.as_tensor(targets)).item()

    hints = [
        known_mistakes(
            (lambda: -_log_sm(logits)[rows, targets].sum(),
             f"That is the sum over the {n} positions: cross_entropy is the mean."),
            (lambda: -_log_sm(logits)[rows, targets],
             "Return one number, the mean over the positions, not one loss per row."),
            (lambda: -_log_sm(logits)[:, targets].mean(),
             "This averages a whole (N, N) table: every row scored at every row's target. Each row's loss "
             "reads its own target only, one entry per row."),
            (lambda: -_log_sm(logits)[targets].mean(),
             "This reads whole rows picked by the target ids, not one entry per row: row n's loss is "
             "the entry of row n at column targets[n], its own target."),
            (lambda: -np.log2(stable_softmax(logits)[rows, targets]).mean(),
             "Nats use the natural log (np.log), not log2."),
        ),
        nonfinite_hint("Not finite for extreme logits, although the true loss is finite (2000 nats for "
                       "[1000, 0, -1000] at target 2): a probability underflowed to 0 before its log was taken, "
                       "and log 0 = -inf. Never form the probability; simplify its log on paper first "
                       "(the log-sum-exp form)."),
        sign_hint("The sign is flipped: the loss is -log p, positive."),
    ]
    return Case(label, call_with(logits, targets), want, close(), hints=hints)


@check
def cross_entropy(hidden, rng):
    if not hidden:
        return [
            _cross_entropy_case("cross_entropy(np.log([[0.8, 0.2]]), [0]) is -ln 0.8 = 0.223 nats",
                                np.log([[0.8, 0.2]]), [0]),
            _cross_entropy_case("cross_entropy(np.log([[0.1, 0.9]]), [0]) is -ln 0.1 = 2.303 nats",
                                np.log([[0.1, 0.9]]), [0]),
            _cross_entropy_case("cross_entropy of logits [[2, 1, 0], [0, 3, 1]], targets [1, 2]: the mean of two rows",
                                [[2.0, 1.0, 0.0], [0.0, 3.0, 1.0]], [1, 2]),
            _cross_entropy_case("cross_entropy([[1000, 0], [0, 1000]], [1, 0]) is 1000, not inf",
                                [[1000.0, 0.0], [0.0, 1000.0]], [1, 0]),
        ]
    n, v = 7, 5
    return [
        _cross_entropy_case(f"cross_entropy of random logits ({n}, {v})", rng.normal(size=(n, v)) * 2,
                            rng.integers(0, v, size=n)),
        _cross_entropy_case("cross_entropy of one row", rng.normal(size=(1, v)), [v - 1]),
        _cross_entropy_case("cross_entropy of logits around +-500, shape (4, 3)", rng.normal(size=(4, 3)) * 500,
                            [0, 1, 2, 0]),
        # fixed, whatever the seed: each target sits 800 or more below its row's largest logit, so
        # softmax underflows to 0 there and log(softmax(z)) is -inf (random logits need not do that)
        _cross_entropy_case("cross_entropy([[900, 0, 100], [-400, 400, 0]], [1, 0]) is 850",
                            [[900.0, 0.0, 100.0], [-400.0, 400.0, 0.0]], [1, 0]),
    ]


# --------------------------------------------------------------- next_token_loss (a bug hunt)
# The learner is given F.cross_entropy fed with probabilities (the bug) and fixes it. The symptoms, computed
# with NumPy from the case's own numbers, name what the learner's code still does.

def _ce_of(log_p, targets):
    """Mean NLL of (N, V) log-probabilities at (N,) targets."""
    return float(-np.asarray(log_p)[np.arange(len(targets)), targets].mean())


def _loss_hints(logits, targets):
    """Symptoms, never the fix: what the learner's loss did on this case, in the words of what it measures. The
    untouched bug and each half-fix (log of the probabilities; nll_loss of the probabilities) get their own."""
    flat, t = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
    p = stable_softmax(flat)
    v = flat.shape[-1]
    floor = math.log(1 + (v - 1) / math.e)
    return [
        known_mistakes(
            (lambda: _ce_of(_log_sm(p), t),
             f"This loss disagrees with your cross_entropy on these logits. Every row it scores looks "
             f"almost uniform to it: even a model that is right and sure of every token would cost "
             f"ln(1 + {v - 1}/e) = {floor:.3f} nats or more here, never about 0: however large k, a row "
             f"[k, -k, -k] with target 0 is not charged less than that floor."),
            (lambda: -float(p[np.arange(len(t)), t].mean()),
             "The loss is negative: minus the average probability of the targets. A loss in nats is a mean of "
             "-log p, never below 0; what reached the final function is not what it expects."),
            (lambda: -float(_log_sm(flat)[np.arange(len(t)), t].sum()),
             f"That is {len(t)} times the right loss: the sum over the {len(t)} positions, not their mean."),
        ),
        nonfinite_hint("Right on moderate logits now, but infinite for a target far below its row's top logit, "
                       "where your cross_entropy gives a finite loss: a probability below the smallest float64 "
                       "became exactly 0 on the way, and its log -inf.",
                       np.ptp(flat) > 700),
    ]


def _loss_case(label, logits, targets):
    logits, targets = np.asarray(logits, dtype=float), np.asarray(targets)

    def call(fn):
        torch = import_torch()
        return fn(_t(logits), torch.as_tensor(targets, dtype=torch.int64))

    return Case(label, call, const(_ce_of(_log_sm(logits.reshape(-1, logits.shape[-1])), targets.reshape(-1))),
                close(), hints=_loss_hints(logits, targets))


def _loss_grad_case(label, logits, targets):
    """The gradient the loss sends back to the logits: (softmax - onehot) / N; nothing if the graph was cut."""
    logits, targets = np.asarray(logits, dtype=float), np.asarray(targets)

    def call(fn):
        torch = import_torch()
        z = _t(logits).requires_grad_(True)
        loss = fn(z, torch.as_tensor(targets, dtype=torch.int64))
        if not isinstance(loss, torch.Tensor) or loss.grad_fn is None:
            raise TypeError("the loss is not connected to the logits: backward() cannot reach them, so nothing "
                            "would train (an .item(), a .detach() or a trip through NumPy cuts the graph)")
        loss.backward()
        return z.grad

    flat, t = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
    want = stable_softmax(flat)
    want[np.arange(len(t)), t] -= 1.0
    return Case(label, call, const((want / len(t)).reshape(logits.shape)), close(),
                hints=[known_mistakes((lambda: _probs_twice_grad(flat, t).reshape(logits.shape),
                                       "The gradient that reaches the logits is several times smaller than "
                                       "(softmax(logits) - onehot) / N: this loss barely responds to the "
                                       "logits, so a model trained on it learns slowly, towards the wrong "
                                       "place."))])


def _probs_twice_grad(flat, t):
    torch = import_torch()
    z = _t(flat).requires_grad_(True)
    torch.nn.functional.cross_entropy(torch.softmax(z, dim=-1), torch.as_tensor(t)).backward()
    return _np(z.grad)


@check
def next_token_loss(hidden, rng):
    if not hidden:
        return [
            _loss_case("next_token_loss([[[10, -10, -10]]], [[0]]): a confident right model scores near 0",
                       [[[10.0, -10.0, -10.0]]], [[0]]),
            _loss_case("next_token_loss of logits (1, 2, 3) [[[2, 1, 0], [0, 3, 1]]], targets [[0, 2]]",
                       [[[2.0, 1.0, 0.0], [0.0, 3.0, 1.0]]], [[0, 2]]),
            _loss_case("next_token_loss([[[1000, 0, -1000]]], [[2]]) is 2000 nats, not inf",
                       [[[1000.0, 0.0, -1000.0]]], [[2]]),
            _loss_grad_case("the gradient of next_token_loss with respect to logits [[[2, 1, 0], [0, 3, 1]]]",
                            [[[2.0, 1.0, 0.0], [0.0, 3.0, 1.0]]], [[0, 2]]),
        ]
    b, t, v = 2, 3, 5
    return [
        _loss_case(f"next_token_loss of random logits ({b}, {t}, {v})", rng.normal(size=(b, t, v)) * 2,
                   rng.integers(0, v, size=(b, t))),
        # fixed, whatever the seed: targets 900 below their row's top, where log(softmax) is -inf
        _loss_case("next_token_loss([[[900, 0, 100], [-400, 500, 0]]], [[1, 0]]) is 900",
                   [[[900.0, 0.0, 100.0], [-400.0, 500.0, 0.0]]], [[1, 0]]),
        _loss_grad_case(f"the gradient of next_token_loss for random logits ({b}, {t}, {v})",
                        rng.normal(size=(b, t, v)), rng.integers(0, v, size=(b, t))),
    ]


# ------------------------------------------------------------------------------ decoding

def _greedy_case(label, logits):
    logits = np.asarray(logits, dtype=float)

    def hint(got, want):
        g = getattr(got, "data", got)
        if isinstance(g, (float, np.ndarray)) and np.isclose(np.max(logits), g):
            return "That is the largest logit itself; greedy decoding returns its position, a token id."
        if g == int(np.argmin(logits)):
            return "That is the position of the smallest logit: greedy picks the largest."
        if 0 <= g < len(logits) and logits[int(g)] == logits.max():
            return "That logit ties for the largest, but a tie goes to the first position (as np.argmax does)."
        return None

    return Case(label, call_with(logits), lambda: int(np.argmax(logits)), equal(), hints=[hint])


def _nan_case(label, logits):
    """Logits with a NaN: no token is the most likely, so greedy decoding must stop (np.argmax would name the
    NaN's position, np.nanargmax a token as if nothing were wrong)."""
    return Case(label, call_with(np.asarray(logits, dtype=float)), raises("logits hold NaN"))


@check
def greedy_token(hidden, rng):
    if not hidden:
        return [_greedy_case("greedy_token([2, 1, 0]), largest logit at index 0", [2.0, 1.0, 0.0]),
                _greedy_case("greedy_token([0.1, 3.5, -2.0]), largest logit at index 1", [0.1, 3.5, -2.0]),
                _greedy_case("greedy_token([1, 5, 5]): a tie goes to the first", [1.0, 5.0, 5.0]),
                _nan_case("greedy_token([1, nan, 2]): a broken model's logits must stop decoding with a ValueError, "
                          "not yield a token", [1.0, np.nan, 2.0])]
    cases = [_greedy_case(f"greedy_token of {v} random logits", rng.normal(size=v)) for v in (3, 10, 50)]
    # fixed, whatever the seed: random logits never tie
    ties = rng.normal(size=8)
    ties[[2, 6]] = ties.max() + 1.0
    broken = rng.normal(size=6)
    broken[[0, 4]] = np.nan  # first and later: a loop comparing with > skips a NaN anywhere but at 0
    return cases + [_greedy_case("greedy_token of 8 logits whose largest value sits at positions 2 and 6", ties),
                    _nan_case("greedy_token of 6 logits with NaN at positions 0 and 4: must raise ValueError",
                              broken)]


CHI2_LIMIT = 45.0  # chi-square statistic with at most 5 degrees of freedom; a correct sampler exceeds it with p < 1e-7


def _draws(logits, seed, n, temperature):
    """Call the student's sampler n times with one seeded Generator; return the token counts."""
    v = len(logits)

    def run(fn):
        gen = np.random.default_rng(seed)
        counts = [0] * v
        for _ in range(n):
            k = fn(np.array(logits, dtype=float), gen) if temperature is None else \
                fn(np.array(logits, dtype=float), gen, temperature=temperature)
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
                shape = f" of shape {k.shape}" if isinstance(k, np.ndarray) else ""
                raise TypeError(f"sample_token returned {k!r} (a {type(k).__name__}{shape}); "
                                "return one token id, an int")
            if not 0 <= k < v:
                raise ValueError(f"sample_token returned {k}, which is not a token id in [0, {v})")
            counts[int(k)] += 1
        return counts

    return run


def _chi2(counts, p) -> float:
    counts, p = np.asarray(counts, dtype=float), np.asarray(p, dtype=float)
    expected = counts.sum() * p
    if np.any((expected == 0) & (counts > 0)):
        return math.inf
    keep = expected > 0
    return float(np.sum((counts[keep] - expected[keep]) ** 2 / expected[keep]))


def _sample_case(label, logits, seed, n=2000, temperature=None):
    tau = 1.0 if temperature is None else temperature
    z = np.asarray(logits, dtype=float)
    p = stable_softmax(z / tau)

    def test(got, want):
        counts = np.asarray(got, dtype=float)
        stat = _chi2(counts, p)
        if stat <= CHI2_LIMIT:
            return None
        freq = counts / counts.sum()
        msg = (f"the frequencies of {n} draws, {np.round(freq, 3).tolist()}, do not follow the softmax "
               f"{np.round(p, 3).tolist()} (chi-square {stat:.1f} > {CHI2_LIMIT:g}).")
        if counts.max() == counts.sum():
            msg += (" Every draw gave the same token: that is greedy decoding, not a draw at random with the "
                    "softmax's probabilities.")
        elif tau != 1.0 and _chi2(counts, stable_softmax(z)) <= CHI2_LIMIT:
            msg += " They follow softmax(z) at temperature 1: the temperature was ignored."
        elif tau != 1.0 and _chi2(counts, stable_softmax(z * tau)) <= CHI2_LIMIT:
            msg += " They follow softmax(z * temperature): the temperature acts the wrong way round."
        return msg

    def want():
        gen = np.random.default_rng(seed)
        return np.bincount(gen.choice(len(z), size=n, p=p), minlength=len(z)).tolist()

    return Case(label, _draws(z, seed, n, temperature), want, predicate(test))


def _same_stream_case(label, logits, seed, n=40):
    def run(fn):
        out = []
        for _ in range(2):
            gen = np.random.default_rng(seed)
            out.append([int(fn(np.array(logits, dtype=float), gen)) for _ in range(n)])
        return out

    def test(got, want):
        if got[0] == got[1]:
            return None
        return ("two runs with identically seeded generators gave different tokens: draw from the rng "
                "argument (rng.choice, rng.random), not from np.random.")

    def want():
        gen = np.random.default_rng(seed)
        draws = gen.choice(len(logits), size=n, p=stable_softmax(logits)).tolist()
        return [draws, draws]

    return Case(label, run, want, predicate(test))


@check
def sample_token(hidden, rng):
    z = [2.0, 1.0, 0.0]
    if not hidden:
        return [
            _sample_case("2000 draws of sample_token([2, 1, 0], rng)", z, seed=1),
            _sample_case("2000 draws of sample_token([2, 1, 0], rng, temperature=2.0)", z, seed=2, temperature=2.0),
            _sample_case("2000 draws of sample_token([1, 1, 1, 1], rng, temperature=0.5): still uniform",
                         [1.0] * 4, seed=3, temperature=0.5),
            _same_stream_case("sample_token with the same seed twice gives the same tokens", z, seed=4),
        ]
    seeds = [int(s) for s in rng.integers(0, 2**31, size=4)]
    zz = rng.normal(size=5) * 1.5
    return [
        _sample_case("2000 draws of sample_token over 5 random logits, temperature 0.7", zz, seeds[0], temperature=0.7),
        _sample_case("2000 draws of sample_token over 5 random logits, temperature 3.0", zz, seeds[1], temperature=3.0),
        _sample_case("2000 draws of sample_token([1000, 999, 998], rng)", [1000.0, 999.0, 998.0], seeds[2]),
        _same_stream_case("sample_token with the same seed twice gives the same tokens", list(zz), seeds[3]),
    ]
