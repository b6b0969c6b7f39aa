"""Checks for 08_causality_and_masking: the masks, masked_softmax, is_causal, the bug hunt and the predictions;
:mod:`.targets` holds the last section's (where the targets come from), :mod:`.prefixes` the measurement of the
cheating experiment (prefix_logits), :mod:`.experiments` the predictions asked before the given experiments. :mod:`.cheating` is not a check: it is
the notebook's training experiment, which the notebook imports and no check does."""
from __future__ import annotations

import numpy as np

from ..compare import Case, Comparator, call_with, close, const, describe, equal, fmt, predicate, raises
from ..hints import known_mistakes, numbers
from ..questions import int_in, is_, near, number_in, one_of
from ..toolkit import MATCH, names_row
from .common import A, R, ask, check  # noqa: F401


# ------------------------------------------------------------------- masks

class mask_equal(Comparator):
    """Boolean masks compared exactly: dtype, then shape, then the first row that differs."""

    def __init__(self, row_name=lambda r: f"row {r}", hint=None):
        self.row_name, self.hint = row_name, hint  # row_name(r) names row r for a learner

    def mismatch(self, got, want):
        g, w = np.asarray(got) if isinstance(got, bool) else numbers(got), numbers(want)  # a lone bool: 0-d mask
        if g is None:
            return f"expected a boolean array of shape {w.shape}, got {describe(got)}."
        if g.dtype.kind != "b":
            return (f"expected booleans (True = allowed), got dtype {g.dtype}. Build the mask with a comparison "
                    "or dtype=bool: a float mask would be multiplied, and boolean indexing needs booleans.")
        if g.shape != w.shape:
            msg = f"wrong shape: expected {w.shape}, got {g.shape}."
            if g.shape == w.shape[::-1]:
                msg += " The axes are swapped."
            return msg
        if np.array_equal(g, w):
            return None
        r = int(np.flatnonzero((g != w).any(axis=-1))[0]) if g.ndim == 2 else 0
        gr, wr = (g[r], w[r]) if g.ndim == 2 else (g, w)
        msg = (f"{self.row_name(r)} is True at {fmt(np.flatnonzero(gr))}, "
               f"expected True at {fmt(np.flatnonzero(wr))}.")
        extra = self.hint(g, w) if self.hint else None
        return msg + (" " + extra if extra else "")


def _causal_hint(g, w):
    T = w.shape[0]
    for wrong, message in [
        (np.tril(np.ones((T, T), bool), -1), "The diagonal is missing: a query may read its own position "
                                             "(key <= query, not key < query)."),
        (np.triu(np.ones((T, T), bool)), "That is the upper triangle: rows are queries, columns are keys, and "
                                         "a query reads the keys at or before it (the lower triangle)."),
        (np.triu(np.ones((T, T), bool), 1), "True should mark the allowed keys (key <= query), not the blocked ones."),
        (np.ones((T, T), bool), "Every key is allowed: the future must be blocked."),
    ]:
        if np.array_equal(g, wrong):
            return message
    return None


def _kept_hint(n_past):
    def hint(g, w):
        T = w.shape[0]
        for wrong, message in [
            (np.tril(np.ones(w.shape, bool)), f"Each new token reads as if it stood at the start of the text: the "
                                              f"token in row 0 comes after {n_past} kept ones, so it may read "
                                              "them all, and itself."),
            (np.tril(np.ones(w.shape, bool), n_past - 1), "Each new token misses its own key: it may read itself "
                                                          "as well as every token before it."),
            (np.tril(np.ones(w.shape, bool), -n_past), "The triangle slid the wrong way: a new token that comes "
                                                       "later in the text may read more keys, not fewer."),
            (np.tril(np.ones((T, n_past + T), bool))[:, ::-1], "The columns are in reverse order: column c is the "
                                                               "key of the token at position c of the text."),
        ]:
            if np.array_equal(g, wrong):
                return message
        return None
    return hint


def _kept_case(T, n_past, want=None):
    cmp = mask_equal(lambda r: f"row {r} (the new token at position {n_past + r})", _kept_hint(n_past))
    label = f"causal_mask({T}, n_past={n_past}): {T} new tokens after {n_past} kept ones, shape ({T}, {n_past + T})"
    return Case(label, call_with(T, n_past=n_past),
                want or (lambda: np.arange(n_past + T)[None, :] <= n_past + np.arange(T)[:, None]), cmp)


@check
def causal_mask(hidden, rng):
    cmp = mask_equal(lambda r: f"row {r} (query {r})", _causal_hint)
    if not hidden:
        F, T_ = False, True
        return [
            Case("causal_mask(4): row 2 keeps columns 0, 1, 2", call_with(4),
                 const(np.array([[T_, F, F, F], [T_, T_, F, F], [T_, T_, T_, F], [T_, T_, T_, T_]])), cmp),
            Case("causal_mask(1): one position reads itself", call_with(1), const(np.array([[True]])), cmp),
            _kept_case(2, 3, const(np.array([[T_, T_, T_, T_, F], [T_, T_, T_, T_, T_]]))),
            _kept_case(1, 4, const(np.ones((1, 5), bool))),
        ]
    return ([Case(f"causal_mask({T})", call_with(T), lambda T=T: R("causal_mask")(T), cmp) for T in (2, 7, 33)]
            + [_kept_case(T, n, lambda T=T, n=n: R("causal_mask")(T, n_past=n)) for T, n in ((5, 2), (3, 9))])


def _padding_hint(lengths, T):
    lengths = np.asarray(lengths)
    pos = np.arange(T)

    def hint(g, w):
        for wrong, message in [
            (pos[None] <= lengths[:, None], "Off by one: a sequence of length n has real tokens at positions "
                                            "0 .. n-1, so position n is already padding (t < length)."),
            (pos[None] >= lengths[:, None], "True should mark the real tokens, not the padding."),
            (pos[None] >= T - lengths[:, None], "The real tokens sit at the start (padding at the end): "
                                                "position t is real when t < length."),
        ]:
            if np.array_equal(g, wrong):
                return message
        return None
    return hint


def _padding_case(label, lengths, T, want):
    sizes = [int(n) for n in np.asarray(lengths).ravel()]
    return Case(label, call_with(lengths, T), want,
                mask_equal(lambda r: f"row {r} (sequence {r}, length {sizes[r]})", _padding_hint(lengths, T)))


@check
def padding_mask(hidden, rng):
    if not hidden:
        return [
            _padding_case("padding_mask(np.array([3, 1, 4]), 4)", np.array([3, 1, 4]), 4,
                          const(np.array([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]], dtype=bool))),
            _padding_case("padding_mask([2, 0], 3): a sequence with no real token", [2, 0], 3,
                          const(np.array([[True, True, False], [False, False, False]]))),
        ]
    lengths = rng.integers(0, 13, size=9)
    return [_padding_case("padding_mask of 9 random lengths, T = 12", lengths, 12,
                          lambda: R("padding_mask")(lengths, 12)),
            _padding_case("padding_mask([5], 5)", [5], 5, lambda: R("padding_mask")([5], 5))]


class batch_mask_equal(mask_equal):
    """A (B, T, T) mask compared exactly: dtype and shape as mask_equal, then the first (sequence, query) row."""

    def mismatch(self, got, want):
        g, w = numbers(got), numbers(want)
        if g is None or g.dtype.kind != "b" or g.shape != w.shape:
            return super().mismatch(got, want)
        if np.array_equal(g, w):
            return None
        b, q = (int(i) for i in np.argwhere((g != w).any(axis=-1))[0])
        msg = (f"sequence {b}, query {q} may read the keys {fmt(np.flatnonzero(g[b, q]))}, expected "
               f"{fmt(np.flatnonzero(w[b, q]))}.")
        extra = self.hint(g, w) if self.hint else None
        return msg + (" " + extra if extra else "")


def _batch_hint(lengths, T):
    causal, real = np.tril(np.ones((T, T), bool)), np.arange(T)[None, :] < np.asarray(lengths)[:, None]  # (B, T)

    def hint(g, w):
        for wrong, message in [
            (causal[None] & real[:, :, None], "The padded queries keep no key at all, and masked_softmax refuses a "
                                              "row that keeps no key. The padding says which keys are real: which "
                                              "keys may a padded query read?"),
            (causal[None] | real[:, None, :], "A key is allowed when either table allows it: a real key in the "
                                              "future is read. Both tables must allow a key."),
            (np.broadcast_to(real[:, None, :], w.shape), "Every query reads every real key, its future included: "
                                                         "the causal table is missing."),
            (np.broadcast_to(causal, w.shape), "The padding keys are read: the padding table is missing."),
        ]:
            if np.array_equal(g, wrong):
                return message
        return None
    return hint


def _batch_case(label, lengths, T, want=None):
    lengths = np.asarray(lengths)
    want = want or (lambda: np.tril(np.ones((T, T), bool))[None] & (np.arange(T)[None, :] < lengths[:, None])[:, None])
    return Case(label, call_with(lengths, T), want, batch_mask_equal(hint=_batch_hint(lengths, T)))


@check
def causal_padding_mask(hidden, rng):
    if not hidden:
        T_, F = True, False
        return [
            _batch_case("causal_padding_mask(np.array([1]), 3): one real token, every query reads key 0 only", [1], 3,
                        const(np.array([[[T_, F, F], [T_, F, F], [T_, F, F]]]))),
            _batch_case("causal_padding_mask(np.array([3, 1, 4]), 4), shape (3, 4, 4)", [3, 1, 4], 4),
        ]
    lengths = rng.integers(1, 8, size=5)
    return [_batch_case("causal_padding_mask of 5 random lengths, T = 7", lengths, 7,
                        lambda: R("causal_padding_mask")(lengths, 7)),
            _batch_case("causal_padding_mask([2, 0], 2): a sequence with no real token", [2, 0], 2,
                        lambda: R("causal_padding_mask")(np.array([2, 0]), 2))]


# ----------------------------------------------------------- masked_softmax

def _softmax(z, axis=-1):
    e = np.exp(z - np.max(z, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _masked(scores, allowed, axis=-1):
    allowed = np.broadcast_to(allowed, np.shape(scores))
    return _softmax(np.where(allowed, scores, -np.inf), axis)


def _softmax_hint(scores, allowed):
    scores = np.asarray(scores, dtype=float)
    allowed = np.broadcast_to(np.asarray(allowed, bool), scores.shape)
    return known_mistakes(
        (lambda: _softmax(scores) * allowed, "Masked after the softmax without renormalising: the rows no longer "
                                             "sum to 1. Mask the scores (with -inf) before the softmax."),
        (lambda: _softmax(scores * allowed), "The scores were multiplied by the mask: a blocked score becomes 0, "
                                             "and exp(0) = 1, so before the division the blocked key weighs as "
                                             "much as an allowed score of 0 and keeps a share of the row. Replace "
                                             "blocked scores with -inf instead."),
        (lambda: _softmax(np.where(allowed, -np.inf, scores)), "True means allowed: the blocked keys got the weight."),
        (lambda: _softmax(scores), "The mask is ignored: blocked keys must get weight 0."),
        (lambda: _masked(scores, allowed, axis=-2) if scores.ndim >= 2 and (allowed.any(-2)).all() else np.nan,
         "Softmax over the wrong axis: each row (one query) sums to 1 over the keys, the last axis."),
        **MATCH,
    )


def _softmax_compare(scores, allowed):
    """Values within tolerance, and blocked weights exactly 0."""
    values = close(atol=1e-9, rtol=1e-7, dtype="f")
    blocked = ~np.broadcast_to(np.asarray(allowed, bool), np.shape(scores))

    def test(got, want):
        message = values.mismatch(got, want)
        if message:
            return message
        g = numbers(got)
        leak = g[blocked]
        if (leak != 0).any():
            where = tuple(int(i) for i in np.argwhere(blocked & (g != 0))[0])
            return (f"a blocked key got weight {leak[leak != 0][0]:.3g} at index {list(where)}: blocked weights "
                    "must be exactly 0. Fill blocked scores with -inf (or a huge negative such as -1e9), not a "
                    "small negative number.")
        return None
    return predicate(test)


def _softmax_case(label, scores, allowed, want=None, extra_hint=None):
    hints = [_softmax_hint(scores, allowed)] + ([extra_hint] if extra_hint else [])
    return Case(label, call_with(scores, allowed), want or (lambda: _masked(scores, allowed)),
                _softmax_compare(scores, allowed), hints=hints)


def _nan_hint(message):
    def hint(got, want):
        g = numbers(got)
        return message if g is not None and g.dtype.kind in "fc" and np.isnan(g).any() else None
    return hint


@check
def masked_softmax(hidden, rng):
    if not hidden:
        causal4 = np.tril(np.ones((4, 4), bool))
        scores = rng.normal(size=(2, 3, 4, 4))
        return [
            _softmax_case("masked_softmax([[2, 1, 3]], [[True, True, False]]) = [[0.7311, 0.2689, 0]]",
                          np.array([[2.0, 1.0, 3.0]]), np.array([[True, True, False]]),
                          const(np.array([[np.exp(1) / (np.exp(1) + 1), 1 / (np.exp(1) + 1), 0.0]]))),
            _softmax_case("masked_softmax(np.zeros((4, 4)), causal mask): rows 1, 1/2, 1/3, 1/4", np.zeros((4, 4)),
                          causal4),
            _softmax_case("masked_softmax of scores (2, 3, 4, 4) with a (4, 4) causal mask (broadcast)", scores,
                          causal4),
            _softmax_case("masked_softmax([[1000, 999, -5]], all allowed): large scores", np.array([[1000.0, 999.0, -5.0]]),
                          np.ones((1, 3), bool),
                          extra_hint=_nan_hint("exp overflowed: subtract each row's max before exponentiating.")),
            _softmax_case("masked_softmax([[0, 1, 2000]], [[True, True, False]]): a blocked key with a huge score",
                          np.array([[0.0, 1.0, 2000.0]]), np.array([[True, True, False]]),
                          extra_hint=_nan_hint("Take the row max over the allowed keys only (mask first, then "
                                               "subtract the max): a blocked key's huge score made every allowed "
                                               "exp underflow to 0, or exp overflowed.")),
            Case("masked_softmax(np.zeros((2, 3)), [[True, False, False], [False, False, False]]): row 1 keeps no key",
                 call_with(np.zeros((2, 3)), np.array([[True, False, False], [False, False, False]])),
                 raises("row 1 keeps no key"), close()),
            Case("masked_softmax(np.zeros((3, 4)), mask whose row 2 keeps no key): the error names row 2",
                 call_with(np.zeros((3, 4)), np.array([[True, False, False, False], [True, True, False, False],
                                                       [False, False, False, False]])),
                 raises("row 2 keeps no key"), names_row(2)),
        ]
    B, H, T = 2, 2, 6
    lengths = np.array([6, 3])
    allowed = np.tril(np.ones((T, T), bool))[None, None] & (np.arange(T) < lengths[:, None])[:, None, None, :]
    scores = rng.normal(scale=3.0, size=(B, H, T, T))
    random_allowed = rng.random((5, 7)) < 0.5
    random_allowed[np.arange(5), rng.integers(0, 7, size=5)] = True
    wide = rng.normal(scale=50.0, size=(5, 7))
    return [
        _softmax_case("masked_softmax with a causal & padding mask (B, 1, T, T)", scores, allowed,
                      want=lambda: R("masked_softmax")(scores, allowed)),
        _softmax_case("masked_softmax with a random mask and scores of scale 50", wide, random_allowed,
                      want=lambda: R("masked_softmax")(wide, random_allowed)),
        Case("masked_softmax with a (3,) mask that allows nothing", call_with(np.zeros((2, 3)), np.zeros(3, bool)),
             lambda: R("masked_softmax")(np.zeros((2, 3)), np.zeros(3, bool)), close()),
        # fixed, whatever the seed: scores of scale 50 never reach exp's overflow at 710, and a random mask
        # rarely blocks the row's largest score by enough to make every allowed exp underflow
        _softmax_case("masked_softmax([[900, 899, 0], [5, 4, 3000]], [[True, True, True], [True, True, False]])",
                      np.array([[900.0, 899.0, 0.0], [5.0, 4.0, 3000.0]]),
                      np.array([[True, True, True], [True, True, False]]),
                      extra_hint=_nan_hint("exp overflowed, or a blocked key's huge score made every allowed exp "
                                           "underflow: mask first, then subtract the max over the allowed keys.")),
        Case("masked_softmax(np.zeros((3, 3)), a mask whose row 1 keeps no key): the error names row 1",
             call_with(np.zeros((3, 3)), np.array([[True, False, False], [False, False, False], [True, True, True]])),
             raises("row 1 keeps no key"), names_row(1)),
    ]


# --------------------------------------------------------------- is_causal
# Functions with a known answer; each maps (T, d) to (T, d_out) and is fine to deep-copy.

def _attention(x, fill=-np.inf, causal=True):
    scores = x @ x.T / np.sqrt(x.shape[1])  # (T, T)
    if causal:
        scores = np.where(np.tril(np.ones(scores.shape, bool)), scores, fill)
    return _softmax(scores) @ x


def identity(x):
    return np.array(x, dtype=float)


def running_sum(x):
    return np.cumsum(x, axis=0)


def causal_attention(x):
    return _attention(x)


def full_attention(x):
    return _attention(x, causal=False)


def sum_of_what_follows(x):
    return np.cumsum(x[::-1], axis=0)[::-1]


def row_0_reads_row_1(x):
    out = np.array(x, dtype=float)
    out[0] = out[0] + x[1]
    return out


def second_last_reads_last(x):
    out = np.array(x, dtype=float)
    out[-2] = out[-2] + x[-1]
    return out


def leaky_mask_attention(x):
    """Attention whose mask fills -4 instead of -inf: the future leaks in a little."""
    return _attention(x, fill=-4.0)


def running_mean_projected(x):
    """A causal map to another width: running mean, then a fixed (d, 2) projection."""
    x = np.asarray(x, dtype=float)
    means = np.cumsum(x, axis=0) / np.arange(1, len(x) + 1)[:, None]  # (T, d)
    return means @ np.linspace(-1.0, 1.0, 2 * x.shape[1]).reshape(x.shape[1], 2)  # (T, 2)


_GENERAL = ("Perturb every suffix x[t+1:] for t = 0 .. T-2 with noise that really changes it (adding random "
            "noise does; reordering rows may not), compare row t, and use a tolerance far below any real leak.")
_TRUTH = {  # fn: (causal?, what it is, advice when is_causal gets it wrong)
    identity: (True, "identity (row t is x[t])", ""),
    running_sum: (True, "running sum, np.cumsum(x, axis=0)", ""),
    causal_attention: (True, "self-attention under the causal mask", ""),
    running_mean_projected: (True, "running mean projected to width 2", ""),
    full_attention: (False, "self-attention without a mask", _GENERAL),
    sum_of_what_follows: (False, "sum of x[t:], what follows", _GENERAL),
    row_0_reads_row_1: (False, "a function whose row 0 reads x[1]",
                        "The leak goes from x[1] into row 0: perturb every suffix x[t+1:] from t = 0 on, not "
                        "only the last position, and compare row t. " + _GENERAL),
    second_last_reads_last: (False, "a function whose row T-2 reads x[T-1]",
                             "The leak goes from x[T-1] into row T-2: the last t to test is T-2, so loop over "
                             "range(T - 1). " + _GENERAL),
    leaky_mask_attention: (False, "attention with a weak mask (-4 instead of -inf), a small leak",
                           "The leak is small (weights of about e^-4): use a tolerance far below any real leak, "
                           "such as np.allclose's default or exact equality. " + _GENERAL),
}
_CAUSAL_ADVICE = ("Perturb only the future x[t+1:], never x[t] itself, and compare only the rows up to t: "
                  "later rows may change.")


def _verdict_test(fn):
    expected, _, advice = _TRUTH[fn]

    def test(got, want):
        g = got.data.item() if hasattr(got, "data") and got.data.size == 1 else got
        if not isinstance(g, (bool, np.bool_)):
            return f"is_causal should return True or False, got {describe(got)} {fmt(got)}."
        if bool(g) == expected:
            return None
        if expected:
            return f"this function is causal, but your is_causal says False. {_CAUSAL_ADVICE}"
        return f"this function reads the future, but your is_causal says True. {advice}"
    return test


def _causal_case(fn, x):
    expected, description, _ = _TRUTH[fn]
    return Case(f"is_causal({fn.__name__}, x) with x of shape {x.shape}, {description}",
                lambda student, fn=fn, x=x: student(fn, x.copy()), const(expected), predicate(_verdict_test(fn)))


@check
def is_causal(hidden, rng):
    if not hidden:
        x = rng.normal(size=(6, 3))
        return [_causal_case(fn, x) for fn in _TRUTH]
    cases = [_causal_case(fn, rng.normal(size=(9, 5))) for fn in _TRUTH]
    cases.append(_causal_case(identity, rng.normal(size=(1, 4))))
    cases.append(_causal_case(row_0_reads_row_1, rng.normal(size=(2, 2))))
    return cases


# ------------------------------------------------- the bug hunt: causal_self_attention

HUNT_VARIANTS = ("as_given", "whole_table", "not_normalised", "multiplied", "after_softmax", "small_negative",
                 "inverted", "no_mask")

HUNT_MESSAGES = {  # the symptom each version shows, never the line to write (this is a bug hunt)
    "as_given": "This is what the code as given does: query 0, which may read only key 0, does not output x[0] (on "
                "x = [[1, 0], [0, 1], [1, 1]] it gives [0.665, 0], not [1, 0]), and changing a later row moves the "
                "earlier outputs: row t still depends on the rows after it (is_causal says False). Follow row 0 "
                "through the function from the mask on, on that x and on x with a later row changed: where do the "
                "two first differ?",
    "whole_table": "Not yet: each weight is now a share of the whole table, so row t still depends on the scores of "
                   "the later rows (is_causal says False), and a row sums to far less than 1 (query 0 outputs "
                   "[0.258, 0], about a quarter of x[0]).",
    "not_normalised": "Progress: causal now, nothing reads the future. But a row of weights is not a distribution any "
                      "more: query 1 weighs its two keys 0.135 and 1 (they sum to 1.135), so its output is a sum of "
                      "rows, not a mix of them.",
    "multiplied": "The blocked keys have a weight again: every query reads its future (query 0 outputs [0.667, 0.667], "
                  "not [1, 0]). Follow one blocked key from its score to its weight.",
    "after_softmax": "The blocked weights are exactly 0. But what is left of a row is not a "
                     "distribution (the weights sum to less than 1: on x = [[1, 0], [0, 1], [1, 1]] query 0 outputs "
                     "[0.665, 0], 0.665 times x[0]), and it was computed with the future keys inside the softmax's "
                     "sum, so changing a later row still moves the earlier outputs (is_causal says False).",
    "small_negative": "The future's weights are small, but not 0, so changing a later row still moves "
                      "the earlier outputs a little (on x = [[1, 0], [0, 1], [1, 1]] query 0 outputs [0.982, 0.035], "
                      "not [1, 0]). How small must a blocked score be for its weight to be exactly 0?",
    "inverted": "Each query reads the wrong keys: its future, and neither its past nor itself (the last query, left "
                "with no key at all, outputs nan).",
    "no_mask": "No key is blocked: every query reads every key, its future included (query 0 mixes every row).",
}


def hunt_np(x, variant=None):
    """Causal self-attention of x (T, d) with no projections, scored by minus the squared distance of two rows, in
    float64, or one of its known wrong versions."""
    x = np.asarray(x, dtype=float)
    T = len(x)
    allowed = np.tril(np.ones((T, T), bool))
    scores = -((x[:, None, :] - x[None, :, :]) ** 2).sum(axis=-1)  # (T, T): -|x[t] - x[s]|^2
    fill = {"small_negative": -4.0}.get(variant, -np.inf)
    if variant == "multiplied":
        scores = scores * allowed
    elif variant == "inverted":
        scores = np.where(allowed, -np.inf, scores)
    elif variant not in ("after_softmax", "no_mask"):
        scores = np.where(allowed, scores, fill)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    if variant == "as_given":  # each column divided by its sum: a share over the queries, the later ones too
        weights = e / e.sum(axis=0, keepdims=True)
    elif variant == "whole_table":
        weights = e / e.sum()
    elif variant == "not_normalised":
        weights = e
    else:
        weights = e / e.sum(axis=-1, keepdims=True)
    if variant == "after_softmax":
        weights = weights * allowed
    return weights @ x


def _hunt_case(label, x, want=None):
    hint = known_mistakes(*((lambda v=v: hunt_np(x, v), HUNT_MESSAGES[v]) for v in HUNT_VARIANTS), **MATCH,
                          equal_nan=True)  # the inverted mask leaves the last row no key: NaN there
    return Case(label, call_with(x), want or (lambda: hunt_np(x)), close(atol=1e-9, rtol=1e-7, dtype="f"),
                hints=[hint])


@check
def causal_self_attention(hidden, rng):
    if not hidden:
        x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        return [
            _hunt_case("causal_self_attention(x) with x = [[1, 0], [0, 1], [1, 1]]: query 0 may read only itself, so "
                       "its output is [1, 0]", x),
            _hunt_case("causal_self_attention(x) with x of shape (6, 4)", rng.normal(size=(6, 4))),
        ]
    x = rng.normal(size=(9, 5))
    return [_hunt_case("causal_self_attention(x) with x of shape (9, 5)", x,
                       lambda: R("causal_self_attention")(x)),
            _hunt_case("causal_self_attention(x) with one position, x of shape (1, 3)", np.array([[0.5, -1.0, 2.0]]))]


# ------------------------------------------------------------- predictions

predict_allowed_pairs = ask(
    "predict_allowed_pairs", reason=True, label="predict_allowed_pairs(): the allowed (query, key) pairs of a 6x6 causal mask",
    form=int_in(0, 36), compare=equal(),
    mistakes=[(is_(15), "15 leaves out the diagonal, but a query may read its own position (key <= query): row q "
                        "keeps q + 1 keys, 1 + 2 + ... + 6 = 21."),
              (is_(36), "36 is every cell: the causal mask blocks each key after its query, the 15 cells above the "
                        "diagonal, and keeps 21."),
              (is_(18), "18 is half of 36, but the diagonal belongs to the allowed half: 15 cells below it plus 6 on "
                        "it, 21."),
              (is_(6), "6 counts one key per query, its own; query q also reads the q keys before it: 1 + 2 + ... + "
                       "6 = 21.")],
    otherwise="Row q keeps keys 0 .. q, q + 1 of them: 1 + 2 + ... + 6 = 6 * 7 / 2 = 21.")


predict_multiplied_weight = ask(
    "predict_multiplied_weight", reason=True,
    label="predict_multiplied_weight(): the weight of the blocked middle key when the scores [2, 1, 3] are "
          "multiplied by the mask [1, 0, 1]",
    form=number_in(0, 1), compare=close(atol=5e-3, rtol=0),
    mistakes=[(near(0.0), "Multiplying makes the blocked score 0, not -inf, and exp(0) = 1: the blocked key still gets "
                          "1 / (e^2 + 1 + e^3) = 0.0351 of the weight."),
              (near(0.0900), "0.0900 is the weight of the middle key with no mask at all (score 1). Multiplying by 0 "
                             "turns its score into 0, and exp(0) = 1: 1 / (e^2 + 1 + e^3) = 0.0351."),
              (near(1 / 3), "The scores are not all equal after multiplying: [2, 0, 3] gives the blocked key "
                            "1 / (e^2 + 1 + e^3) = 0.0351.")],
    otherwise="Multiplying gives the scores [2, 0, 3]; the blocked key gets exp(0) / (e^2 + e^0 + e^3) = 0.0351.")


FIRST_POSITION_CHOICES = ("higher", "about the same", "lower")


predict_first_position_loss = ask(
    "predict_first_position_loss", reason=True,
    label="predict_first_position_loss(): the best possible loss at position 0 against the later positions",
    form=one_of(FIRST_POSITION_CHOICES), compare=equal(),
    mistakes=[(is_("higher"), "Position 0 is not without context: it reads its own token x_0, and this source draws "
                              "the next token from x_0's row of P alone. Earlier tokens would not help, so its floor is "
                              "the same 1.42 nats."),
              (is_("lower"), "Every position predicts one token drawn from the row of P of the token it reads, so no "
                             "position can beat 1.42 nats on average, position 0 included.")])


predict_cheat_offset = ask(
    "predict_cheat_offset", reason=True,
    label="predict_cheat_offset(): the offset (key - query) of the key the unmasked model's queries weigh most",
    form=int_in(-9, 9), compare=equal(),
    mistakes=[(is_(0), "0 is the query itself, which a causal model may read. With no mask, position t reads the "
                       "input at t + 1, which is exactly the token it must predict: offset +1."),
              (is_(-1), "-1 is the token before the query, which this source's next token does not depend on: "
                        "it depends only on the query's own token, which position t already holds. Without a "
                        "mask the answer itself, the input at t + 1, is there to read: offset +1.")],
    otherwise="Position t's target is the input at position t + 1 of the same window; without a mask it can read "
              "it and copy it: offset +1.")


from .targets import IGNORE, causal_lm_pairs, masked_lm_pairs, predict_bos_targets  # noqa: E402,F401 (registers them)
from .left_padding import predict_left_pad_empty_rows  # noqa: E402,F401 (registers it)
from .prefixes import prefix_logits  # noqa: E402,F401 (registers it)
from .experiments import (predict_cheat_prefix_loss, predict_empty_row, predict_floor, predict_ids_read,  # noqa: E402,F401
                          predict_which_causal)
