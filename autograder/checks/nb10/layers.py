"""Notebook 10's layers: LayerNorm (and the prediction that it is not softmax), FeedForward, DecoderBlock
and count_block_params.

Each is compared with PyTorch's own layer given the same weights; hints rerun the known wrong variants in
NumPy (:mod:`autograder.checks.models.numpy_gpt`) and name the one an answer matches. The block's dropout
cases are in :mod:`.dropout`.
"""
from __future__ import annotations

import math

import numpy as np

from ..compare import Case, close, equal, fmt
from ..hints import known_mistakes
from ..models.numpy_gpt import block_np, ff_np, ln_np
from ..models.torch_gpt import run_torch_block, torch_block
from ..models.weights import block_shapes, load, make_params
from ..toolkit import TOL, diagnose, import_torch, normal, tensor
from .common import ModelCase, _empty_rows_explained, _uses, ask, check
from .dropout import _block_dropout_case, _block_eval_case


# --------------------------------------------------------------------------- LayerNorm

LN_MESSAGES = {  # what each known bug does to the output: the symptom, never the fix (LayerNorm is a bug hunt)
    "std_default": "The output differs from nn.LayerNorm's in two ways (the code as given does both): every row "
                   "with a clear spread comes out smaller by one factor that depends on d alone (0.866 at d = 4, "
                   "0.968 at d = 16), and a row whose features are nearly equal comes out larger (on [1.002, 1.0, "
                   "0.998, 1.0]: 1.217 where nn.LayerNorm gives 0.577).",
    "eps_outside": "Progress: rows with a clear spread match nn.LayerNorm now. A row whose features are nearly "
                   "equal still comes out too large (on [1.002, 1.0, 0.998, 1.0]: 1.404 where nn.LayerNorm gives "
                   "0.577): nn.LayerNorm damps a spread as small as sqrt(eps), and this code blows it up to about 1. "
                   "What decides the output when the spread is that small?",
    "unbiased": "Progress: a row whose features are nearly equal is close to nn.LayerNorm's now (on [1.002, 1.0, "
                "0.998, 1.0]: 0.562 where nn.LayerNorm gives 0.577), but every row with a clear spread still comes "
                "out smaller by one factor that depends on d alone (0.866 at d = 4, 0.968 at d = 16).",
    "no_eps": "Rows with a clear spread are right, but a row whose features are nearly equal comes out with a "
              "spread of 1 (on [1.002, 1.0, 0.998, 1.0]: 1.414 where nn.LayerNorm gives 0.577), and a row of equal "
              "features would give 0 / 0 = nan: nothing keeps a tiny spread from being blown up.",
    "wrong_axis_0": "Each output row depends on the other rows of the batch: the statistics mix different vectors "
                    "(along the batch axis), where each vector should be normalised by its own d features alone.",
    "wrong_axis_-2": "Each output row depends on the other positions: the statistics mix different vectors (along "
                     "the positions), where each vector should be normalised by its own d features alone.",
    "wrong_axis_all": "Each output row depends on every other number of the tensor: the statistics are taken over "
                      "the whole tensor, where each vector should be normalised by its own d features alone.",
    "no_affine": "The output ignores weight and bias: it is right when weight is 1 and bias 0, and wrong for any "
                 "other.",
}
# Where the case has no row of nearly equal features, the code as given and the half-fix that mends only eps give
# the same numbers: the message for either then says only what both do.
LN_CLEAR_SPREAD_ONLY = ("Every row comes out smaller than nn.LayerNorm's by one factor that depends on d alone "
                        "(0.866 at d = 4, 0.968 at d = 16).")


LOOSE = dict(TOL, atol=2e-4, rtol=1e-3)  # rows with a tiny spread: float32 cancellation in x - mean


def _ln_case(label, x, w, b, eps=None, tol=TOL):
    d = x.shape[-1]

    def call(cls):
        torch = import_torch()
        module = cls(d) if eps is None else cls(d, eps=eps)
        load(module, {"weight": w, "bias": b})
        with torch.no_grad():
            return module(tensor(x))

    def want():
        torch = import_torch()
        ref = torch.nn.LayerNorm(d, eps=1e-5 if eps is None else eps)
        load(ref, {"weight": w, "bias": b})
        with torch.no_grad():
            return ref(tensor(x))

    e = 1e-5 if eps is None else eps
    variants = {n: (lambda n=n: ln_np(x, w, b, e, n)) for n in LN_MESSAGES}
    messages = dict(LN_MESSAGES)
    if np.allclose(ln_np(x, w, b, e, "std_default"), ln_np(x, w, b, e, "unbiased"), atol=1e-4, rtol=1e-3):
        messages["std_default"] = messages["unbiased"] = LN_CLEAR_SPREAD_ONLY  # no row tells them apart
    return Case(label, call, want, close(**tol), hints=[diagnose(variants, messages)])


@check
def LayerNorm(hidden, rng):
    if not hidden:
        x = np.array([[1.0, 2.0, 3.0, 4.0], [1.002, 1.0, 0.998, 1.0]], dtype=np.float32)
        return [
            _ln_case("LayerNorm(4) on [[1, 2, 3, 4], [1.002, 1.0, 0.998, 1.0]] (weight 1, bias 0): about "
                     "[[-1.342, -0.447, 0.447, 1.342], [0.577, 0, -0.577, 0]]; the second row's features are nearly "
                     "equal", x, np.ones(4, np.float32), np.zeros(4, np.float32), tol=LOOSE),
            _ln_case("LayerNorm(6) with weight and bias, x of shape (2, 3, 6)",
                     normal(rng, 2, 3, 6, scale=2.0) + 1, *_affine(rng, 6)),
            _ln_case("LayerNorm(5) on x (3, 5) whose rows vary by only about 0.003 (eps matters here)",
                     (normal(rng, 3, 5, scale=0.003) + 0.5).astype(np.float32), *_affine(rng, 5), tol=LOOSE),
        ]
    return [
        _ln_case("LayerNorm(8, eps=0.01) on x (4, 8)", normal(rng, 4, 8, scale=0.2), *_affine(rng, 8), eps=0.01),
        _ln_case("LayerNorm(16) on x (2, 2, 3, 16) centred at 5", normal(rng, 2, 2, 3, 16) + 5,
                 *_affine(rng, 16)),
        _ln_case("LayerNorm(3) on x (5, 3) with a tiny spread", (normal(rng, 5, 3, scale=0.002) - 1).astype(np.float32),
                 *_affine(rng, 3), tol=LOOSE),
        _ln_case("LayerNorm(7) on x (3, 7)", normal(rng, 3, 7), *_affine(rng, 7)),
    ]


def _affine(rng, d):
    return (1 + normal(rng, d, scale=0.3)).astype(np.float32), normal(rng, d, scale=0.5)


# ------------------------------------------------------------- LayerNorm is not softmax (a prediction)

NORM_PROPERTIES = ("sums to 1", "mean 0 and variance 1", "unchanged by x + c", "unchanged by 2 * x")
NORM_CHOICES = ("softmax", "LayerNorm", "both", "neither")
_SPELLINGS = {c.lower(): c for c in NORM_CHOICES} | {"layer norm": "LayerNorm", "ln": "LayerNorm"}

# why a part is wrong: (property, the wrong answer's test, why), every wrong part of an answer said in turn
NORM_WHY = (
    ("sums to 1", lambda a: a in ("LayerNorm", "both"),
     "LayerNorm's outputs sum to 0, not 1: it takes the mean away, so they are centred (on [0, 2, 1, 1]: -1.414, "
     "1.414, 0, 0). Only softmax divides by a total."),
    ("sums to 1", lambda a: a == "neither",
     "Softmax sums to 1 on any row: each exponential is divided by the total of them all."),
    ("mean 0 and variance 1", lambda a: a in ("softmax", "both"),
     "Softmax's outputs are all positive and sum to 1, so their mean is 1/d (0.25 here), never 0."),
    ("mean 0 and variance 1", lambda a: a == "neither",
     "LayerNorm (no affine) gives mean 0 and variance 1, up to eps: it takes the row's mean away and divides by "
     "the row's own spread."),
    ("unchanged by x + c", lambda a: a in ("LayerNorm", "neither"),
     "Softmax is unchanged by x + c too: adding c multiplies every exponential by e^c, and dividing by their total "
     "cancels it (which is why notebook 04's softmax may subtract the maximum first)."),
    ("unchanged by x + c", lambda a: a in ("softmax", "neither"),
     "LayerNorm is unchanged by x + c too: the row's mean goes up by c and is taken away, and the spread does not "
     "move."),
    ("unchanged by 2 * x", lambda a: a in ("softmax", "both"),
     "Softmax is not unchanged by 2 * x: doubling the scores is a temperature of 1/2, a sharper distribution "
     "(the largest weight is 0.534 for [0, 2, 1, 1] and 0.776 for [0, 4, 2, 2])."),
    ("unchanged by 2 * x", lambda a: a == "neither",
     "LayerNorm is unchanged by 2 * x, up to eps: the deviations from the mean double, and so does the spread they "
     "are divided by."),
)


def _norm_answers(value):
    """A dict of the four properties, its choices read without regard to case or surrounding spaces."""
    if not isinstance(value, dict):
        return value
    return {k: _SPELLINGS.get(v.strip().lower(), v) if isinstance(v, str) else v for k, v in value.items()}


def _norm_form(got):
    if not isinstance(got, dict) or set(got) != set(NORM_PROPERTIES):
        keys = ", ".join(repr(k) for k in NORM_PROPERTIES)
        return (f"answer with a dict of exactly these four keys: {keys}; got {fmt(got)}. Each value is one of "
                + ", ".join(map(repr, NORM_CHOICES)) + ".")
    bad = [k for k in NORM_PROPERTIES if got[k] not in NORM_CHOICES]
    if bad:
        return (f"the value of {bad[0]!r} is {fmt(got[bad[0]])}; answer each property with one of "
                + ", ".join(map(repr, NORM_CHOICES)) + ".")
    return None


def _norm_why(got, want):
    """Why each wrong part is wrong, in the order the question asks them."""
    if not isinstance(got, dict) or not isinstance(want, dict):
        return None
    return " ".join(why for key, test, why in NORM_WHY
                    if got.get(key) != want.get(key) and test(got.get(key))) or None


predict_norm_vs_softmax = ask(
    "predict_norm_vs_softmax",
    label="predict_norm_vs_softmax(): softmax and LayerNorm (no affine) on the row [0, 2, 1, 1]",
    form=_norm_form, compare=equal(), normalize=_norm_answers)
predict_norm_vs_softmax.explain = _norm_why  # every wrong part said, not only the first


# ------------------------------------------------------------------------- FeedForward

FF_MESSAGES = {  # symptoms and their likely cause, never the line to write
    "tanh_gelu": "The outputs are off by at most a few 1e-4, the size of the gap between GELU and its tanh "
                 "approximation: the default network (gelu='exact') is computing GPT-2's approximation.",
    "relu": "Where a hidden feature is negative it contributes exactly nothing, where GELU lets a little "
            "through: this is ReLU's shape, not GELU's.",
    "no_activation": "The output is a linear function of x (plus a constant): nothing bends between the two "
                     "layers, so the two are no more than one.",
    "activation_after_fc2": "Every output lies on GELU's curve (none below about -0.17): the bend is applied to "
                            "the output instead of to the wide hidden features.",
}


GELU_IGNORED = ("gelu='tanh' was asked for and the exact GELU came out (the two differ by up to 5e-4): the choice "
                "kept in __init__ never reaches the non-linearity.")
FF_TOL = dict(atol=2e-6, rtol=2e-5)  # the two GELUs differ by up to 4.7e-4: far outside this


def _ff_case(label, p, x, gelu="exact"):
    d_ff, d = p["fc1.weight"].shape

    def call(cls):
        torch = import_torch()
        module = load(cls(d, d_ff) if gelu == "exact" else cls(d, d_ff, gelu=gelu), p)
        with torch.no_grad():
            return module(tensor(x))

    def want():
        torch = import_torch()
        F = torch.nn.functional
        h = F.linear(tensor(x), tensor(p["fc1.weight"]), tensor(p["fc1.bias"]))
        h = F.gelu(h, approximate="none" if gelu == "exact" else "tanh")
        return F.linear(h, tensor(p["fc2.weight"]), tensor(p["fc2.bias"]))

    if gelu == "tanh":  # the two forms are too close for diagnose's loose match: compare at the case's tolerance
        return ModelCase(label, call, want, close(**FF_TOL, kind="tensor"),
                         hints=[known_mistakes((lambda: ff_np(p, x), GELU_IGNORED), **FF_TOL)],
                         right=lambda: ff_np(p, x, "tanh_gelu"), variants={"gelu ignored": lambda: ff_np(p, x)})
    hint = diagnose({n: (lambda n=n: ff_np(p, x, n)) for n in FF_MESSAGES}, FF_MESSAGES)
    return Case(label, call, want, close(**FF_TOL, kind="tensor"), hints=[hint])


def ff_params(rng, d, d_ff):
    return {"fc1.weight": normal(rng, d_ff, d, scale=2 / np.sqrt(d)), "fc1.bias": normal(rng, d_ff, scale=0.5),
            "fc2.weight": normal(rng, d, d_ff, scale=2 / np.sqrt(d_ff)), "fc2.bias": normal(rng, d, scale=0.5)}


@check
def FeedForward(hidden, rng):
    if not hidden:
        return [_ff_case("FeedForward(4, 16) on x (2, 3, 4)", ff_params(rng, 4, 16), normal(rng, 2, 3, 4)),
                _ff_case("FeedForward(6, 8) on x (5, 6)", ff_params(rng, 6, 8), normal(rng, 5, 6)),
                _ff_case("FeedForward(6, 12, gelu='tanh') on x (3, 6): GPT-2's approximation", ff_params(rng, 6, 12),
                         normal(rng, 3, 6), gelu="tanh")]
    return [_ff_case("FeedForward(8, 32) on x (2, 4, 8)", ff_params(rng, 8, 32), normal(rng, 2, 4, 8)),
            _ff_case("FeedForward(3, 5) on x (1, 1, 3)", ff_params(rng, 3, 5), normal(rng, 1, 1, 3)),
            _ff_case("FeedForward(8, 16, gelu='tanh') on x (2, 3, 8)", ff_params(rng, 8, 16), normal(rng, 2, 3, 8),
                     gelu="tanh")]


# ------------------------------------------------------------------------ DecoderBlock

BLOCK_MESSAGES = {  # symptoms: what the output shows, not the line that mends it
    "post_norm": "Your output matches a post-norm block (the 2017 paper's order): what leaves your block has been "
                 "through a LayerNorm after the residual sum, so every row comes out normalised. Which order did the "
                 "pre- against post-norm experiment above favour, and which one does this block follow?",
    "no_mask": "Every position reads the future: the output at position t changes when a later token changes.",
    "pytorch_mask": "Each position reads only the positions after it, never itself or its past: the mask is the wrong "
                    "way round for the attention layer it is given to. What does 09's MultiHeadAttention read True as?",
    "residual_around_norm": "The residual adds the normalised x: the block's own input never reaches its output, "
                            "so the stream is renormalised at every block instead of carried through it.",
    "no_residual": "The residual connections are missing: your output no longer carries the block's input at all, "
                   "only what the sub-layers computed from it (stack a few such blocks and the input is lost).",
    "one_norm": "Your output does not depend on ln2's weight and bias: the feed-forward sub-layer reads its input "
                "through ln1.",
    "relu": "The feed-forward network bends with ReLU's shape, not GELU's: is it your FeedForward that the block calls?",
    "tanh_gelu": "The feed-forward network bends with the tanh approximation of GELU, not the exact one: is it your "
                 "FeedForward, as built by default, that the block calls?",
}


def _block_case(label, p, H, x):
    d, d_ff = x.shape[-1], p["ff.fc1.weight"].shape[0]

    def call(cls):
        torch = import_torch()
        module = load(cls(d, H, d_ff), p)
        with torch.no_grad(), _empty_rows_explained():
            return module(tensor(x))

    variants = {n: (lambda n=n: block_np(p, x, H, n)) for n in BLOCK_MESSAGES}
    return Case(label, call, lambda: run_torch_block(torch_block(p, d, H, d_ff), tensor(x)), close(**TOL),
                hints=[diagnose(variants, BLOCK_MESSAGES), _uses("LayerNorm and FeedForward")])


def _block_causality_case(p, H, x):
    d, d_ff = x.shape[-1], p["ff.fc1.weight"].shape[0]
    T = x.shape[1]

    def call(cls):
        torch = import_torch()
        module = load(cls(d, H, d_ff), p)
        changed = x.copy()
        changed[:, -1] += 1.0
        with torch.no_grad(), _empty_rows_explained():
            a, b = module(tensor(x)), module(tensor(changed))
        return float((a[:, :-1] - b[:, :-1]).abs().max())

    def hint(got, want):
        if isinstance(got, float) and math.isnan(got):
            return ("The output holds NaN: some row of the mask lets its position read no key at all, so its "
                    "softmax divides 0 by 0. Print your mask for T = 3: which entries are True, and what does 09's "
                    "MultiHeadAttention read True as?")
        if isinstance(got, float) and not got < 1e-5:
            return ("Changing only the last position changed the outputs at earlier positions: position t read "
                    "tokens after it. Which argument of the attention decides what each position may read?")
        return None

    return Case(f"DecoderBlock({d}, {H}, {d_ff}): changing x[:, {T - 1}] must not change the outputs at "
                f"positions 0..{T - 2}", call, lambda: 0.0, close(atol=1e-5), hints=[hint])


@check
def DecoderBlock(hidden, rng):
    if not hidden:
        p = make_params(rng, block_shapes(8, 16))
        x = normal(rng, 2, 5, 8)
        return [
            _block_causality_case(p, 2, x),
            _block_case("DecoderBlock(8, 2, 16) on x (2, 5, 8), against nn.TransformerEncoderLayer(norm_first=True) "
                        "with a causal mask", p, 2, x),
            _block_dropout_case(p, 2, x, 0.5),
            _block_eval_case(p, 2, x, 0.5),
        ]
    return [
        _block_case("DecoderBlock(12, 3, 20) on x (3, 7, 12)", make_params(rng, block_shapes(12, 20)), 3,
                    normal(rng, 3, 7, 12)),
        _block_case("DecoderBlock(4, 1, 8) on x (1, 1, 4): one position", make_params(rng, block_shapes(4, 8)), 1,
                    normal(rng, 1, 1, 4)),
        _block_case("DecoderBlock(16, 4, 64) on x (2, 9, 16)", make_params(rng, block_shapes(16, 64)), 4,
                    normal(rng, 2, 9, 16)),
        _block_dropout_case(make_params(rng, block_shapes(12, 24)), 3, normal(rng, 2, 6, 12), 0.3),
        _block_eval_case(make_params(rng, block_shapes(8, 16)), 2, normal(rng, 1, 4, 8), 0.3),
    ]


# ------------------------------------------------------------------ count_block_params

def _count_want(d, d_ff):
    def want():
        torch = import_torch()
        layer = torch.nn.TransformerEncoderLayer(d, 1, d_ff, dropout=0.0, batch_first=True, norm_first=True)
        return int(sum(p.numel() for p in layer.parameters()))
    return want


def _count_hint(d, f):
    total = 4 * (d * d + d) + 2 * d * f + f + d + 4 * d
    wrong = {
        total - 4 * d: "The LayerNorm parameters are missing: ln1 and ln2 each have a weight and a bias of "
                       "d_model numbers (4 * d_model in all).",
        total - 2 * d: "Only one LayerNorm is counted: the block has two, ln1 and ln2, each with weight and bias.",
        total - (4 * d + f + d): "The biases of the linear layers are missing: w_q, w_k, w_v, w_o, fc1 and fc2 "
                                 "each have one.",
        total - (4 * d + f + d) - 2 * d: "The biases are missing (linear layers and LayerNorms).",
        total - (d * d + d): "Only three attention projections are counted: w_o, the output projection, has "
                             "d_model * d_model + d_model parameters too.",
        total - (d * f + d): "fc2 is missing: the feed-forward network has two layers, d_model -> d_ff -> d_model.",
    }

    def hint(got, want):
        return wrong.get(got) if isinstance(got, int) else None

    assert len(wrong) == 6, f"two known mistakes give the same count for ({d}, {f}): pick other sizes"
    return hint


@check
def count_block_params(hidden, rng):
    sizes = [(8, 24), (768, 3072)] if not hidden else [(12, 20), (64, 256), (5, 7)]
    return [Case(f"count_block_params({d}, {f})" + (": GPT-2 small's block has 7,087,872" if d == 768 else ""),
                 lambda fn, d=d, f=f: fn(d, f), _count_want(d, f), equal(), hints=[_count_hint(d, f)])
            for d, f in sizes]
