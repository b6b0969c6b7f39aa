"""Checks for 10_decoder_block: compared with PyTorch's own layers, given the same weights.

Weights and inputs are NumPy arrays made when the cases are built (the grader judges
evidence without importing torch); they are copied by parameter name into the learner's
module and into PyTorch's. Hints rerun known wrong variants in NumPy and name the one
an answer matches. The reference models and their variants are in :mod:`autograder.checks.models`;
the attention pieces reuse notebook 09's NumPy models.
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Callable

import numpy as np

from ..compare import Case, close, const, describe, equal, fmt, predicate, raises
from ..evidence import Array
from ..hints import known_mistakes, numbers
from ..models.gpt2 import Gpt2Shape, gpt2_np, gpt2_params
from ..models.llama import halves_np, llama_attention, llama_np, llama_state_np
from ..models.numpy_gpt import block_np, embed_np, ff_np, gpt_np, ln_np, maps_np
from ..models.stand_ins import fake_models, sum_rule
from ..models.torch_gpt import (attention09, cached_variant, check_model, gpt_class, plain_generate, run_torch_block,
                                torch_block, torch_gpt)
from ..models.training import flat_params, reference_step, step_setup
from ..models.weights import block_shapes, gpt_shapes, load, make_params
from ..nb09 import TOL, _torch, causal, diagnose, normal, softmax, tensor
from ..questions import NB06, int_in, is_, near, number_in, one_of, question
from ..registry import exercise

A = "10_decoder_block"
check = exercise(A)
ask = partial(question, A, wording=NB06)


# --------------------------------------------------------------------------- LayerNorm

LN_MESSAGES = {
    "eps_outside": "eps is added outside the square root: divide by torch.sqrt(var + eps).",
    "unbiased": "The variance is the unbiased one, divided by d - 1 (the default of x.var() and x.std()): "
                "use x.var(dim=-1, keepdim=True, unbiased=False), the mean of the squared deviations.",
    "std_default": "x.std() is unbiased by default and eps belongs inside the square root: divide by "
                   "torch.sqrt(x.var(dim=-1, keepdim=True, unbiased=False) + eps).",
    "no_eps": "eps is missing: divide by torch.sqrt(var + eps).",
    "wrong_axis_0": "The statistics are taken over the wrong axis (the batch): normalise each vector over "
                    "its last axis, dim=-1, keepdim=True.",
    "wrong_axis_-2": "The statistics are taken over the wrong axis (the positions): normalise each vector "
                     "over its last axis, dim=-1, keepdim=True.",
    "wrong_axis_all": "The statistics are taken over the whole tensor: normalise each vector over its last "
                      "axis, dim=-1, keepdim=True.",
    "no_affine": "The learned scale and shift are not applied: multiply by self.weight, then add self.bias.",
}


LOOSE = dict(TOL, atol=2e-4, rtol=1e-3)  # rows with a tiny spread: float32 cancellation in x - mean


def _ln_case(label, x, w, b, eps=None, tol=TOL):
    d = x.shape[-1]

    def call(cls):
        torch = _torch()
        module = cls(d) if eps is None else cls(d, eps=eps)
        load(module, {"weight": w, "bias": b})
        with torch.no_grad():
            return module(tensor(x))

    def want():
        torch = _torch()
        ref = torch.nn.LayerNorm(d, eps=1e-5 if eps is None else eps)
        load(ref, {"weight": w, "bias": b})
        with torch.no_grad():
            return ref(tensor(x))

    e = 1e-5 if eps is None else eps
    variants = {n: (lambda n=n: ln_np(x, w, b, e, n)) for n in LN_MESSAGES}
    return Case(label, call, want, close(**tol), hints=[diagnose(variants, LN_MESSAGES)])


@check
def LayerNorm(hidden, rng):
    if not hidden:
        x = np.array([[1.0, 2.0, 3.0, 4.0]], dtype=np.float32)
        return [
            _ln_case("LayerNorm(4) on [[1, 2, 3, 4]] (weight 1, bias 0): about [-1.342, -0.447, 0.447, 1.342]",
                     x, np.ones(4, np.float32), np.zeros(4, np.float32)),
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


# ------------------------------------------------------------------------- FeedForward

FF_MESSAGES = {
    "tanh_gelu": "This is the tanh approximation of GELU: use the exact one, F.gelu(x) (approximate='none').",
    "relu": "This is ReLU: the network uses the exact GELU, F.gelu(x).",
    "no_activation": "There is no activation between fc1 and fc2: apply F.gelu to fc1's output.",
    "activation_after_fc2": "GELU is applied after fc2: it goes between the layers, fc2(gelu(fc1(x))).",
}


GELU_IGNORED = ("gelu='tanh' was asked for and the exact GELU came out: pass the choice on, "
                "F.gelu(h, approximate=self.approximate) ('tanh' is GPT-2's approximation).")
FF_TOL = dict(atol=2e-6, rtol=2e-5)  # the two GELUs differ by up to 4.7e-4: far outside this


def _ff_case(label, p, x, gelu="exact"):
    d_ff, d = p["fc1.weight"].shape

    def call(cls):
        torch = _torch()
        module = load(cls(d, d_ff) if gelu == "exact" else cls(d, d_ff, gelu=gelu), p)
        with torch.no_grad():
            return module(tensor(x))

    def want():
        torch = _torch()
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

BLOCK_MESSAGES = {
    "post_norm": "This is the post-norm block of the 2017 paper, LN(x + f(x)): this course's block is "
                 "pre-norm, x + attn(ln1(x)) then x + ff(ln2(x)).",
    "no_mask": "Every position reads the future: pass the causal mask (torch.tril, True = allowed) to attn.",
    "pytorch_mask": "The mask is PyTorch's (True = not allowed, torch.triu): our MultiHeadAttention wants "
                    "True = allowed, torch.tril.",
    "residual_around_norm": "The residual adds the normalised x: add the sub-layer's output to x itself, "
                            "x + attn(ln1(x)), not ln1(x) + attn(ln1(x)).",
    "no_residual": "The residual connections are missing: x = x + attn(ln1(x)), then x = x + ff(ln2(x)).",
    "one_norm": "ln1 is used twice: the feed-forward sub-layer reads ln2(x).",
    "relu": "The feed-forward network uses ReLU: use FeedForward (exact GELU).",
    "tanh_gelu": "The feed-forward network uses the tanh approximation of GELU: use FeedForward (exact GELU).",
}


def _block_case(label, p, H, x):
    d, d_ff = x.shape[-1], p["ff.fc1.weight"].shape[0]

    def call(cls):
        torch = _torch()
        module = load(cls(d, H, d_ff), p)
        with torch.no_grad(), _empty_rows_explained():
            return module(tensor(x))

    variants = {n: (lambda n=n: block_np(p, x, H, n)) for n in BLOCK_MESSAGES}
    return Case(label, call, lambda: run_torch_block(torch_block(p, d, H, d_ff), tensor(x)), close(**TOL),
                hints=[diagnose(variants, BLOCK_MESSAGES), _uses("LayerNorm and FeedForward")])


@contextmanager
def _empty_rows_explained():
    """09's attention raises on a row with no allowed key (the course's one contract for such rows); in a
    block under a causal mask that only happens with an inverted mask, so say so."""
    try:
        yield
    except ValueError as exc:
        if "no key" not in str(exc) and "keeps no" not in str(exc):
            raise
        raise ValueError(f"{exc}. Under a causal mask every row keeps its own key, so the mask looks inverted: our "
                         "MultiHeadAttention wants True = allowed (torch.tril), the opposite of PyTorch's torch.triu "
                         "mask.") from None


def _uses(parts: str):
    """The last resort hint: a composite is only as right as the parts it is built from."""
    return lambda got, want: f"If {parts} do not pass their own checks yet, fix them first: this class uses them."


def _block_causality_case(p, H, x):
    d, d_ff = x.shape[-1], p["ff.fc1.weight"].shape[0]
    T = x.shape[1]

    def call(cls):
        torch = _torch()
        module = load(cls(d, H, d_ff), p)
        changed = x.copy()
        changed[:, -1] += 1.0
        with torch.no_grad(), _empty_rows_explained():
            a, b = module(tensor(x)), module(tensor(changed))
        return float((a[:, :-1] - b[:, :-1]).abs().max())

    def hint(got, want):
        if isinstance(got, float) and math.isnan(got):
            return ("The output holds NaN: some row of the mask keeps no key. Is the mask inverted? Our "
                    "MultiHeadAttention wants True = allowed (torch.tril), the opposite of PyTorch's torch.triu mask.")
        if isinstance(got, float) and not got < 1e-5:
            return ("Changing only the last position changed the outputs at earlier positions: position t must "
                    "read positions 0..t only. Build the causal mask (torch.tril, True = allowed) and pass it to attn.")
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


# ------------------------------------------------------------------ dropout, where GPT-2 puts it

# GPT-2 drops the embeddings once (embd_pdrop) and each sub-layer's output before the residual addition
# (resid_pdrop); it also drops attention weights (attn_pdrop), which notebook 09's attention has no option
# for, so this course's model leaves that one out. Nothing else: not a sub-layer's input, not the stream.
# The checks watch what each module of the contract (blocks, ln1, attn, ln2, ff, ln_f, head) receives and
# returns in training mode, through forward hooks, so nn.Dropout and F.dropout are judged alike.
DROPPED, UNTOUCHED = "dropped", "untouched"
BLOCK_SITES = {  # site: (what it compares, its rightful kind)
    "the block's input to ln1": UNTOUCHED,
    "the attention's input": UNTOUCHED,
    "the attention's output": DROPPED,
    "the feed-forward's input": UNTOUCHED,
    "the feed-forward's output": DROPPED,
}
GPT_SITES = {"the embeddings": DROPPED, **BLOCK_SITES, "the stream into ln_f": UNTOUCHED,
             "ln_f's output into the head": UNTOUCHED}
DROPOUT_MESSAGES = {  # (site, what was seen) -> the likely mistake
    ("the embeddings", UNTOUCHED): "The embeddings reach the first block without dropout: GPT-2 drops them once, "
                                   "x = self.drop(self.embed(ids)), before the blocks.",
    ("the attention's output", UNTOUCHED): "The attention sub-layer's output is not dropped: GPT-2 drops it before "
                                           "the residual addition, x = x + self.drop(self.attn(self.ln1(x), mask=...)).",
    ("the feed-forward's output", UNTOUCHED): "The feed-forward sub-layer's output is not dropped: GPT-2 drops it "
                                              "before the residual addition, x = x + self.drop(self.ff(self.ln2(x))).",
    ("the attention's input", DROPPED): "Dropout acts on the attention's input, the normalised x: GPT-2 drops the "
                                        "sub-layer's output, x + self.drop(self.attn(self.ln1(x), ...)), never its input.",
    ("the feed-forward's input", DROPPED): "Dropout acts on the feed-forward's input, the normalised x: GPT-2 drops the "
                                           "sub-layer's output, x + self.drop(self.ff(self.ln2(x))), never its input.",
    ("the block's input to ln1", DROPPED): "Dropout acts on the residual stream itself before ln1: drop only each "
                                           "sub-layer's output, then add it to x.",
    ("the stream into ln_f", DROPPED): "Dropout acts on the residual stream after the last block: GPT-2 has none "
                                       "between the blocks and ln_f.",
    ("ln_f's output into the head", DROPPED): "Dropout acts between ln_f and the head: GPT-2 has none after the "
                                              "final LayerNorm.",
}
CHANGED = ("is changed, but not as dropout would change it: {site} should be {want}. If the residual stream itself "
           "goes through dropout (x = self.drop(x + f(x))), drop only the sub-layer's output: x = x + self.drop(f(x)).")
NOT_RESCALED = ("Dropout zeroes entries at {site} but leaves the others as they were: kept entries are scaled by "
                "1 / (1 - p), so the expected value does not change. nn.Dropout (self.drop) does both.")
IN_EVAL = ("In eval mode the output changed with dropout=0.5: dropout must act in training mode only. nn.Dropout "
           "(self.drop) follows model.train() and model.eval(); F.dropout needs training=self.training.")


def _dropout_kind(seen, clean, p) -> str:
    """What happened between two tensors that should be equal or a dropout of each other (rate p)."""
    torch = _torch()
    if seen is None or clean is None:
        return "not seen"
    if seen.shape != clean.shape:
        return "another shape"
    tol = dict(atol=1e-5, rtol=1e-4)
    if torch.allclose(seen, clean, **tol):
        return UNTOUCHED
    zero = seen.abs() <= 1e-7
    if zero.any() and torch.isclose(seen, clean / (1 - p), **tol)[~zero].all():
        return DROPPED
    if zero.any() and torch.isclose(seen, clean, **tol)[~zero].all():
        return "dropped, not rescaled"
    return "changed"


def _watch(modules: dict, run) -> dict:
    """Run ``run()`` and return {name: (first input, output)} of each module in ``modules`` (its last call)."""
    seen, handles = {}, []

    def keep(name):
        def hook(module, args, kwargs, output):
            first = args[0] if args else next(iter(kwargs.values()), None)
            out = output[0] if isinstance(output, tuple) else output
            seen[name] = (first.detach().clone() if hasattr(first, "detach") else None,
                          out.detach().clone() if hasattr(out, "detach") else None)
        return hook

    for name, module in modules.items():
        handles.append(module.register_forward_hook(keep(name), with_kwargs=True))
    try:
        run()
    finally:
        for handle in handles:
            handle.remove()
    return seen


def _block_sites(blocks, seen, p) -> dict:
    """The kind of each block site, the same in every block or listed per block."""
    kinds: dict = {site: [] for site in BLOCK_SITES}
    get = lambda name, i: seen.get(f"{i}.{name}", (None, None))
    for i in range(len(blocks)):
        block_in, block_out = get("block", i)
        ln1_in, ln1_out = get("ln1", i)
        attn_in, attn_out = get("attn", i)
        ln2_in, ln2_out = get("ln2", i)
        ff_in, ff_out = get("ff", i)
        diff = lambda a, b: None if a is None or b is None else a - b
        kinds["the block's input to ln1"].append(_dropout_kind(ln1_in, block_in, p))
        kinds["the attention's input"].append(_dropout_kind(attn_in, ln1_out, p))
        kinds["the attention's output"].append(_dropout_kind(diff(ln2_in, block_in), attn_out, p))
        kinds["the feed-forward's input"].append(_dropout_kind(ff_in, ln2_out, p))
        kinds["the feed-forward's output"].append(_dropout_kind(diff(block_out, ln2_in), ff_out, p))
    return {site: k[0] if len(set(k)) == 1 else "; ".join(f"block {i}: {x}" for i, x in enumerate(k))
            for site, k in kinds.items()}


def _block_modules(blocks) -> dict:
    modules = {}
    for i, block in enumerate(blocks):
        modules[f"{i}.block"] = block
        for part in ("ln1", "attn", "ln2", "ff"):
            if hasattr(block, part):
                modules[f"{i}.{part}"] = getattr(block, part)
    return modules


def _dropout_hint(got, want):
    if not isinstance(got, dict):
        return None
    for site, should in want.items():
        seen = got.get(site)
        if seen == should:
            continue
        if (site, seen) in DROPOUT_MESSAGES:
            return DROPOUT_MESSAGES[site, seen]
        if seen == "dropped, not rescaled":
            return NOT_RESCALED.format(site=site)
        if seen == "not seen":
            return (f"The check could not see {site}: the block must call its modules ln1, attn, ln2 and ff "
                    "(and the model tok_emb, blocks, ln_f and head), as the exercise's code does.")
        return f"{site[0].upper()}{site[1:]} " + CHANGED.format(site=site, want=should)
    return None


def _eval_mode_hint(got, want):
    return IN_EVAL if isinstance(got, float) and not got <= 1e-6 else None


def _block_dropout_case(p, H, x, rate):
    d, d_ff = x.shape[-1], p["ff.fc1.weight"].shape[0]

    def call(cls):
        torch = _torch()
        block = load(cls(d, H, d_ff, dropout=rate), p).train()
        torch.manual_seed(0)
        with torch.no_grad(), _empty_rows_explained():
            seen = _watch(_block_modules([block]), lambda: block(tensor(x)))
        return _block_sites([block], seen, rate)

    return Case(f"DecoderBlock({d}, {H}, {d_ff}, dropout={rate}) in training mode: dropout on each sub-layer's "
                "output, before the residual addition, and nowhere else", call, const(dict(BLOCK_SITES)), equal(),
                hints=[_dropout_hint])


def _block_eval_case(p, H, x, rate):
    d, d_ff = x.shape[-1], p["ff.fc1.weight"].shape[0]

    def call(cls):
        torch = _torch()
        with torch.no_grad(), _empty_rows_explained():
            a = load(cls(d, H, d_ff, dropout=rate), p).eval()(tensor(x))
            b = load(cls(d, H, d_ff), p).eval()(tensor(x))
        return float((a - b).abs().max())

    return Case(f"DecoderBlock({d}, {H}, {d_ff}, dropout={rate}) in eval mode: the output of dropout=0.0 (largest "
                "difference 0)", call, const(0.0), close(atol=1e-6, rtol=0), hints=[_eval_mode_hint])


# ------------------------------------------------------------------ count_block_params

def _count_want(d, d_ff):
    def want():
        torch = _torch()
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


# ------------------------------------------------------------------------------ TinyGPT

GPT_MESSAGES = {
    "no_positions": "The logits ignore the positions: embed adds pos_emb(positions) (learned) or the rows of "
                    "pos_table (sinusoidal) to the token embeddings.",
    "no_final_norm": "The final LayerNorm is missing: apply ln_f before head.",
    "sin_cos_swapped": "The sinusoidal table has cos and sin swapped: build it with sinusoidal_positions "
                       "(sin at even features, cos at odd ones).",
    "rope_ignored": "The rope model's scores ignore the positions: build every block with rope=True "
                    "(DecoderBlock(..., rope=pos == 'rope')), so each attention layer rotates q and k.",
    "embed_no_start": "embed ignores start: the tokens sit at positions start .. start + T - 1, "
                      "torch.arange(start, start + T).",
}
POSITIONS = ("learned", "sinusoidal", "rope")


def _gpt_case(label, cfg, ids, rng, pos="learned"):
    p = make_params(rng, gpt_shapes(cfg[0], cfg[1], cfg[2], cfg[4], cfg[5], pos))

    def call(cls):
        torch = _torch()
        module = load(cls(*cfg) if pos == "learned" else cls(*cfg, pos=pos), p)
        with torch.no_grad():
            return module(torch.tensor(ids))

    variants = {n: (lambda n=n: gpt_np(p, cfg, ids, n, pos)) for n in GPT_MESSAGES if n != "embed_no_start"}
    return Case(label, call, lambda: torch_gpt(p, cfg, ids, pos), close(**TOL),
                hints=[diagnose(variants, GPT_MESSAGES), _uses("LayerNorm and DecoderBlock")])


def _embed_case(label, cfg, ids, start, rng, pos):
    p = make_params(rng, gpt_shapes(cfg[0], cfg[1], cfg[2], cfg[4], cfg[5], pos))

    def call(cls):
        torch = _torch()
        module = load(cls(*cfg, pos=pos), p)
        with torch.no_grad():
            return module.embed(torch.tensor(ids), start)

    variants = {n: (lambda n=n: embed_np(p, cfg, ids, pos, start, n))
                for n in ("embed_no_start", "no_positions", "sin_cos_swapped")}
    return Case(label, call, lambda: tensor(embed_np(p, cfg, ids, pos, start)), close(**TOL),
                hints=[diagnose(variants, GPT_MESSAGES)])


def _param_count_case(cfg, pos):
    V, ctx, d, H, d_ff, L = cfg
    want = sum(int(np.prod(shape)) for shape in gpt_shapes(V, ctx, d, d_ff, L, pos).values())

    def call(cls):
        torch = _torch()
        torch.manual_seed(0)
        return int(sum(p.numel() for p in cls(*cfg, pos=pos).parameters()))

    def hint(got, want):
        if not isinstance(got, int):
            return None
        extra = got - want
        if extra == ctx * d and pos == "sinusoidal":
            return ("The sinusoidal table is a parameter here, so the optimiser would train it: it is fixed, store "
                    "it with self.register_buffer('pos_table', table, persistent=False).")
        if extra == ctx * d and pos == "rope":
            return "The rope model has a position table too: with pos='rope' the positions enter inside attention only."
        if extra == -ctx * d and pos == "learned":
            return "The learned model has no position table: pos_emb = nn.Embedding(context_len, d_model)."
        return None

    return Case(f"TinyGPT{cfg[:6]} with pos={pos!r} has {want:,d} parameters"
                + (" (no position table: its positions are fixed or inside attention)" if pos != "learned" else ""),
                call, lambda: want, equal(), hints=[hint])


def _gpt_too_long(cfg, T):
    def call(cls):
        torch = _torch()
        torch.manual_seed(0)
        with torch.no_grad():
            return cls(*cfg)(torch.zeros(1, T, dtype=torch.long))
    return Case(f"TinyGPT(vocab_size={cfg[0]}, context_len={cfg[1]}, ...) on ids of shape (1, {T}): longer than "
                "context_len", call, raises(f"sequence length {T} exceeds context_len={cfg[1]}"), close(**TOL))


def _bad_pos_case(cfg, pos):
    def call(cls):
        torch = _torch()
        torch.manual_seed(0)
        return cls(*cfg, pos=pos).pos

    return Case(f"TinyGPT(..., pos={pos!r}): a ValueError naming the choices 'learned', 'sinusoidal', 'rope'",
                call, raises(f"pos must be 'learned', 'sinusoidal' or 'rope', got {pos!r}"), _NamesChoices())


class _NamesChoices(close):
    """An expected ValueError whose message names the three choices of pos."""

    def __call__(self, got, want, case):
        __tracebackhide__ = True
        if "ValueError" in got.raised and not all(c in got.message for c in POSITIONS):
            self.fail(case, f"raised ValueError({got.message!r}): name the choices in the message, so the reader "
                            "learns what is allowed: 'learned', 'sinusoidal' or 'rope'.")
        if not got.raised:
            self.fail(case, f"should raise ValueError for an unknown pos, but the model was built (pos = "
                            f"{fmt(got.decoded)}): check pos against the three choices first.")
        super().__call__(got, want, case)


# ------------------------------------------------------------ TinyGPT's options: tie_weights, gelu, dropout

TIED_COPY = ("head.weight is not tok_emb.weight itself but a second table (a copy, at best): the two part at the "
             "first training step, and the model holds V x d_model numbers more. Share the Parameter: "
             "self.head.weight = self.tok_emb.weight.")
TIED_BIAS = ("A tied head has no bias, like GPT-2's: build it with nn.Linear(d_model, vocab_size, "
             "bias=not tie_weights).")
GPT_GELU_IGNORED = ("The logits are those of the exact GELU although gelu='tanh' was asked for: pass gelu on to every "
                    "DecoderBlock (and from there to FeedForward, which hands it to F.gelu as approximate).")
OPTIONS_TOL = dict(atol=1e-5, rtol=1e-5)  # float32 sums in another order; the two GELUs differ by far more here


def _tied_case(cfg):
    V, ctx, d, H, d_ff, L = cfg
    untied = sum(int(np.prod(shape)) for shape in gpt_shapes(V, ctx, d, d_ff, L).values())
    want = {"head.weight is tok_emb.weight": True, "head.bias": None, "parameters": untied - V * d - V}

    def call(cls):
        torch = _torch()
        torch.manual_seed(0)
        m = cls(*cfg, tie_weights=True)
        bias = getattr(m.head, "bias", None)
        return {"head.weight is tok_emb.weight": m.head.weight is m.tok_emb.weight,
                "head.bias": None if bias is None else tuple(bias.shape),
                "parameters": int(sum(q.numel() for q in m.parameters()))}

    def hint(got, want):
        if not isinstance(got, dict):
            return None
        if got.get("head.weight is tok_emb.weight") is False:
            return TIED_COPY
        if got.get("head.bias") is not None:
            return TIED_BIAS
        return None

    return Case(f"TinyGPT{cfg}, tie_weights=True: one (V, d) table, head.weight is tok_emb.weight, no head bias, "
                f"{want['parameters']:,d} parameters (V x d + V fewer)", call, const(want), equal(), hints=[hint])


def _gpt2_options_case(label, cfg, ids, rng, pos="learned"):
    """GPT-2's options together: a tied head and the tanh GELU, against PyTorch's layers with the same weights."""
    V, ctx, d, H, d_ff, L = cfg
    p = make_params(rng, gpt_shapes(V, ctx, d, d_ff, L, pos, tied=True))
    for name in p:
        if name.endswith("ff.fc1.weight"):
            p[name] = p[name] * np.float32(2.0)  # GELU's inputs of order 2, where the two forms differ most

    def call(cls):
        torch = _torch()
        kwargs = dict(tie_weights=True, gelu="tanh", **({} if pos == "learned" else {"pos": pos}))
        module = load(cls(*cfg, **kwargs), p)
        with torch.no_grad():
            return module.eval()(torch.tensor(ids))

    hint = known_mistakes((lambda: gpt_np(p, cfg, ids, pos=pos), GPT_GELU_IGNORED), **OPTIONS_TOL)
    return ModelCase(label, call, lambda: torch_gpt(p, cfg, ids, pos, gelu="tanh"), close(**OPTIONS_TOL, kind="tensor"),
                     hints=[hint, _uses("FeedForward (with gelu='tanh') and DecoderBlock")],
                     right=lambda: gpt_np(p, cfg, ids, pos=pos, gelu="tanh"),
                     variants={"gelu ignored": lambda: gpt_np(p, cfg, ids, pos=pos)})


def _gpt_dropout_case(cfg, ids, rng, rate):
    V, ctx, d, H, d_ff, L = cfg
    p = make_params(rng, gpt_shapes(V, ctx, d, d_ff, L))

    def call(cls):
        torch = _torch()
        model = load(cls(*cfg, dropout=rate), p)
        x = torch.tensor(ids)
        with torch.no_grad():
            clean = model.eval().embed(x)  # the embeddings as they are, dropout asleep
            model.train()
            torch.manual_seed(0)
            modules = {**_block_modules(model.blocks), "ln_f": model.ln_f, "head": model.head}
            seen = _watch(modules, lambda: model(x))
        sites = {"the embeddings": _dropout_kind(seen.get("0.block", (None,))[0], clean, rate)}
        sites.update(_block_sites(model.blocks, seen, rate))
        last = seen.get(f"{len(model.blocks) - 1}.block", (None, None))[1]
        sites["the stream into ln_f"] = _dropout_kind(seen.get("ln_f", (None,))[0], last, rate)
        sites["ln_f's output into the head"] = _dropout_kind(seen.get("head", (None,))[0],
                                                             seen.get("ln_f", (None, None))[1], rate)
        return sites

    return Case(f"TinyGPT{cfg}, dropout={rate}, in training mode on ids {tuple(np.shape(ids))}: dropout on the "
                "embeddings and on each sub-layer's output, nowhere else", call, const(dict(GPT_SITES)), equal(),
                hints=[_dropout_hint])


def _gpt_eval_case(cfg, ids, rng, rate):
    V, ctx, d, H, d_ff, L = cfg
    p = make_params(rng, gpt_shapes(V, ctx, d, d_ff, L))

    def call(cls):
        torch = _torch()
        x = torch.tensor(ids)
        with torch.no_grad():
            a = load(cls(*cfg, dropout=rate), p).eval()(x)
            b = load(cls(*cfg), p).eval()(x)
        return float((a - b).abs().max())

    return Case(f"TinyGPT{cfg}, dropout={rate}, in eval mode: the logits of dropout=0.0 (largest difference 0)", call,
                const(0.0), close(atol=1e-6, rtol=0), hints=[_eval_mode_hint])


@check
def TinyGPT(hidden, rng):
    cfg = (11, 6, 8, 2, 16, 2)  # vocab_size, context_len, d_model, n_heads, d_ff, n_layers
    if not hidden:
        # The stub must meet a value case first: a stub's NotImplementedError where an error is expected
        # would read as a wrong error, not as "not attempted".
        return [
            _gpt_case("TinyGPT(11, 6, 8, 2, 16, 2) on ids (2, 6), against PyTorch's layers with the same weights",
                      cfg, rng.integers(0, 11, size=(2, 6)), rng),
            _gpt_too_long(cfg, 7),
            _gpt_case("TinyGPT(11, 6, 8, 2, 16, 2) on ids (1, 3), shorter than context_len", cfg,
                      rng.integers(0, 11, size=(1, 3)), rng),
            _gpt_case("TinyGPT(11, 6, 8, 2, 16, 2, pos='sinusoidal') on ids (2, 6): notebook 06's table added",
                      cfg, rng.integers(0, 11, size=(2, 6)), rng, "sinusoidal"),
            _gpt_case("TinyGPT(11, 6, 8, 2, 16, 2, pos='rope') on ids (2, 6): q and k rotated in every layer",
                      cfg, rng.integers(0, 11, size=(2, 6)), rng, "rope"),
            _param_count_case(cfg, "sinusoidal"),
            _param_count_case(cfg, "rope"),
            _embed_case("TinyGPT(11, 6, 8, 2, 16, 2).embed(ids (2, 3), start=2): tokens at positions 2, 3, 4",
                        cfg, rng.integers(0, 11, size=(2, 3)), 2, rng, "learned"),
            _bad_pos_case(cfg, "absolute"),
            _tied_case(cfg),
            _gpt2_options_case("TinyGPT(11, 6, 8, 2, 16, 2, tie_weights=True, gelu='tanh') on ids (2, 6): GPT-2's "
                               "head and GELU, against PyTorch's layers", cfg, rng.integers(0, 11, size=(2, 6)), rng),
            _gpt_dropout_case(cfg, rng.integers(0, 11, size=(2, 6)), rng, 0.5),
            _gpt_eval_case(cfg, rng.integers(0, 11, size=(2, 6)), rng, 0.5),
        ]
    other = (13, 8, 12, 3, 24, 3)
    return [
        _gpt_case("TinyGPT(13, 8, 12, 3, 24, 3) on ids (3, 8)", other, rng.integers(0, 13, size=(3, 8)), rng),
        _gpt_too_long(other, 12),
        _gpt_case("TinyGPT(5, 4, 4, 1, 8, 1) on ids (2, 2)", (5, 4, 4, 1, 8, 1), rng.integers(0, 5, size=(2, 2)), rng),
        _gpt_case("TinyGPT(13, 8, 12, 3, 24, 2, pos='sinusoidal') on ids (2, 5)", (13, 8, 12, 3, 24, 2),
                  rng.integers(0, 13, size=(2, 5)), rng, "sinusoidal"),
        _gpt_case("TinyGPT(13, 8, 12, 3, 24, 2, pos='rope') on ids (2, 8)", (13, 8, 12, 3, 24, 2),
                  rng.integers(0, 13, size=(2, 8)), rng, "rope"),
        _param_count_case(other, "learned"),
        _param_count_case(other, "sinusoidal"),
        _embed_case("TinyGPT(13, 8, 12, 3, 24, 3, pos='sinusoidal').embed(ids (1, 2), start=5)", other,
                    rng.integers(0, 13, size=(1, 2)), 5, rng, "sinusoidal"),
        _bad_pos_case(other, "rotary"),
        _tied_case(other),
        _gpt2_options_case("TinyGPT(13, 8, 12, 3, 24, 3, tie_weights=True, gelu='tanh') on ids (2, 8)", other,
                           rng.integers(0, 13, size=(2, 8)), rng),
        _gpt2_options_case("TinyGPT(13, 8, 12, 3, 24, 2, pos='rope', tie_weights=True, gelu='tanh') on ids (1, 6)",
                           (13, 8, 12, 3, 24, 2), rng.integers(0, 13, size=(1, 6)), rng, "rope"),
        _gpt_dropout_case(other, rng.integers(0, 13, size=(2, 8)), rng, 0.25),
        _gpt_eval_case(other, rng.integers(0, 13, size=(1, 8)), rng, 0.25),
    ]


# ------------------------------------------------------------------------------ lm_loss

def _ce_np(logits, targets):
    z = logits.astype(np.float64)
    z = z - z.max(-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    return float(-np.take_along_axis(logp, targets[..., None], -1).mean())


def _loss_hint(logits, targets, grad=False):
    B, T, V = logits.shape

    def softmax_first():
        probs = np.exp(logits - logits.max(-1, keepdims=True))
        return _ce_np(probs / probs.sum(-1, keepdims=True), targets)

    wrong = known_mistakes(
        (lambda: _ce_np(logits[:, :-1], targets[:, 1:]) if T > 1 else math.nan,
         "The targets were shifted again: they are already the next tokens, compare logits[:, t] with "
         "targets[:, t]."),
        (softmax_first,
         "F.cross_entropy takes logits and applies log-softmax itself: do not apply softmax first."),
        (lambda: _ce_np(logits.reshape(-1, V), targets.T.reshape(-1)),
         "The targets were flattened in a different order than the logits: reshape both in the same "
         "(B * T) order, logits.reshape(B * T, V) and targets.reshape(B * T)."),
        atol=0.0, rtol=1e-4)

    def hint(got, want):
        g, w = getattr(got, "data", None), want.data
        if g is None or g.shape != w.shape:
            return None
        for factor, message in [(B * T, _SUMMED), (B, _PER_BATCH), (T, _PER_POSITION)]:
            if factor != 1 and np.allclose(g, w * factor, rtol=1e-3, atol=1e-6):
                return message
        if grad:
            return None
        if not np.isfinite(g).all():
            return "An infinite loss: compute log-softmax stably (F.cross_entropy does), not log(softmax(...))."
        return wrong(got, want)
    return hint


_SUMMED = "The loss is summed over positions: take the mean over all B * T positions."
_PER_BATCH = "The loss is averaged over positions, then summed over the batch: take the mean over all B * T positions."
_PER_POSITION = "The loss is averaged over the batch, then summed over positions: take the mean over all B * T positions."


def _loss_case(label, logits, targets):
    def call(fn):
        torch = _torch()
        return fn(tensor(logits), torch.tensor(targets))

    def want():
        torch = _torch()
        V = logits.shape[-1]
        return torch.nn.functional.cross_entropy(tensor(logits).reshape(-1, V), torch.tensor(targets).reshape(-1))

    return Case(label, call, want, close(**TOL), hints=[_loss_hint(logits, targets)])


def _loss_grad_case(label, logits, targets):
    def grad_of(fn):
        torch = _torch()
        z = tensor(logits).requires_grad_(True)
        fn(z, torch.tensor(targets)).backward()
        return z.grad

    def want():
        torch = _torch()
        V = logits.shape[-1]
        return grad_of(lambda z, t: torch.nn.functional.cross_entropy(z.reshape(-1, V), t.reshape(-1)))

    return Case(label, grad_of, want, close(atol=1e-6, rtol=1e-4, kind="tensor"),
                hints=[_loss_hint(logits, targets, grad=True)])


@check
def lm_loss(hidden, rng):
    if not hidden:
        return [
            _loss_case("lm_loss of uniform logits (2, 4, 27): ln 27 = 3.2958", np.zeros((2, 4, 27), np.float32),
                       rng.integers(0, 27, size=(2, 4))),
            _loss_case("lm_loss(logits (2, 3, 5), targets (2, 3))", normal(rng, 2, 3, 5, scale=2.0),
                       rng.integers(0, 5, size=(2, 3))),
            _loss_grad_case("the gradient of lm_loss with respect to logits (3, 4, 6) (torch.autograd): the loss "
                            "must be a tensor built from the logits", normal(rng, 3, 4, 6), rng.integers(0, 6, size=(3, 4))),
        ]
    return [
        _loss_case("lm_loss(logits (4, 6, 11) with entries up to 100, targets (4, 6))", normal(rng, 4, 6, 11, scale=40.0),
                   rng.integers(0, 11, size=(4, 6))),
        _loss_case("lm_loss(logits (1, 1, 3), targets (1, 1))", normal(rng, 1, 1, 3), rng.integers(0, 3, size=(1, 1))),
        _loss_grad_case("the gradient of lm_loss for logits (2, 5, 7)", normal(rng, 2, 5, 7), rng.integers(0, 7, size=(2, 5))),
    ]


# ------------------------------------------------------------------------------ generate

def _greedy_case(label, prompt, n, V, ctx):
    def call(fn):
        torch = _torch()
        return fn(fake_models()[0](V, ctx), torch.tensor(prompt), n, temperature=0.0)

    def want():
        return _torch().tensor(sum_rule(prompt, n, V, ctx))

    first = [list(map(int, r)) for r in prompt]
    for row in first:
        for _ in range(n):
            row.append(sum(row[:ctx]) % V)

    def hint(got, want):
        g = getattr(got, "data", None)
        if g is None:
            return None
        if g.shape == (len(prompt), n):
            return "Return the whole sequence: the prompt ids followed by the new tokens, (B, T + max_new_tokens)."
        if g.tolist() == first:
            return ("The context keeps the first context_len tokens: keep the last ones, ids[:, -context_len:], "
                    "and predict from the logits of the last position.")
        if g.shape == want.data.shape and g[:, : len(prompt[0])].tolist() == want.data[:, : len(prompt[0])].tolist():
            return ("The new tokens differ: predict from the logits of the last position, logits[:, -1, :], "
                    "and take their argmax when temperature is 0.")
        return None

    return Case(label, call, want, equal(), hints=[hint])


def _argmax_case(label, logits, batch, n):
    def call(fn):
        torch = _torch()
        return fn(fake_models()[1](logits), torch.zeros(batch, 1, dtype=torch.long), n, temperature=0.0,
                  generator=torch.Generator().manual_seed(0))

    def want():
        torch = _torch()
        out = torch.full((batch, n + 1), int(np.argmax(logits)), dtype=torch.long)
        out[:, 0] = 0
        return out

    def hint(got, want):
        g = getattr(got, "data", None)
        if g is not None and g.shape == want.data.shape and len(np.unique(g[:, 1:])) > 1:
            return "At temperature 0 generation is greedy: take the argmax of the logits, do not sample."
        return None

    return Case(label, call, want, equal(), hints=[hint])


def _sampling_case(label, logits, temperature, batch, n, seed):
    z = np.asarray(logits, dtype=np.float64)
    p = np.exp(z / temperature - (z / temperature).max())
    p = p / p.sum()

    def call(fn):
        torch = _torch()
        return fn(fake_models()[1](list(logits)), torch.full((batch, 1), 1, dtype=torch.long), n,
                  temperature=temperature, generator=torch.Generator().manual_seed(seed))

    def test(got, want):
        g = getattr(got, "data", None)
        if g is None or g.shape != (batch, n + 1):
            return f"expected a tensor of shape {(batch, n + 1)}, got {getattr(g, 'shape', type(got).__name__)}."
        if not (g[:, 0] == 1).all():
            return "the prompt ids must stay at the start of the result."
        new = g[:, 1:].ravel().astype(int)
        if new.min() < 0 or new.max() >= len(p):
            return f"generated ids outside [0, {len(p)})."
        freq = np.bincount(new, minlength=len(p)) / new.size
        sigma = np.sqrt(p * (1 - p) / new.size)
        if np.all(np.abs(freq - p) <= 5 * sigma + 1e-9):
            return None
        msg = (f"the sampled frequencies {np.round(freq, 3).tolist()} do not follow softmax(logits / temperature) = "
               f"{np.round(p, 3).tolist()}.")
        if freq.max() == 1.0:
            return msg + " Every sample is the same token: at temperature > 0 sample with torch.multinomial, not argmax."
        raw = np.exp(z - z.max())
        if np.all(np.abs(freq - raw / raw.sum()) <= 5 * sigma + 1e-9):
            return msg + " They follow softmax(logits): divide the logits by the temperature first."
        return msg

    return Case(label, call, lambda: p, predicate(test))


def _reproducible_case(label):
    def call(fn):
        torch = _torch()
        outs = []
        with torch.random.fork_rng(devices=[]):
            for global_seed in (11, 12):
                torch.manual_seed(global_seed)  # a different global state each time
                outs.append(fn(fake_models()[1]([0.0, 0.5, 1.0, 1.5]), torch.zeros(4, 1, dtype=torch.long), 8,
                               temperature=1.0, generator=torch.Generator().manual_seed(5)))
        return tuple(outs)

    def test(got, want):
        if not (isinstance(got, tuple) and len(got) == 2 and all(hasattr(g, "data") for g in got)):
            return "expected a tensor from each call."
        a, b = got[0].data, got[1].data
        if a.shape == b.shape == (4, 9) and np.array_equal(a, b):
            return None
        return ("two calls with generators seeded alike gave different samples: pass generator=generator to "
                "torch.multinomial, so the global random state does not matter.")

    return Case(label, call, lambda: None, predicate(test))


@check
def generate(hidden, rng):
    if not hidden:
        return [
            _greedy_case("generate(model, [[1, 2, 3]], 5, temperature=0) where the model's next token is the sum of "
                         "its context mod 10 and context_len = 4: expected [[1, 2, 3, 6, 2, 3, 4, 5]]",
                         [[1, 2, 3]], 5, 10, 4),
            _greedy_case("generate(model, ids (2, 2), 3, temperature=0), the same model", [[4, 5], [0, 9]], 3, 10, 4),
            _argmax_case("generate at temperature 0 with logits [0, ln 2, ln 0.5] at every step: always token 1",
                         [0.0, math.log(2), math.log(0.5)], 20, 2),
            _sampling_case("generate(model, ids (3000, 1), 2, temperature=1.0, generator=...) with logits "
                           "[0, ln 2, ln 0.5]: frequencies about [0.286, 0.571, 0.143]",
                           (0.0, math.log(2), math.log(0.5)), 1.0, 3000, 2, 0),
            _sampling_case("the same at temperature=0.5: softmax(logits / 0.5), about [0.19, 0.762, 0.048]",
                           (0.0, math.log(2), math.log(0.5)), 0.5, 3000, 2, 1),
            _reproducible_case("two calls with torch.Generator().manual_seed(5) give the same tokens"),
        ]
    return [
        _greedy_case("generate(model, ids (3, 4), 7, temperature=0), vocab 13, context_len 5",
                     rng.integers(0, 13, size=(3, 4)).tolist(), 7, 13, 5),
        _greedy_case("generate(model, ids (1, 6), 2, temperature=0): a prompt longer than context_len 3",
                     rng.integers(0, 7, size=(1, 6)).tolist(), 2, 7, 3),
        _argmax_case("generate at temperature 0, logits [1, 0.2, 1.1, -1]", [1.0, 0.2, 1.1, -1.0], 40, 3),
        _sampling_case("generate(..., temperature=2.0) with logits [1, 0, -1, 0.5]", (1.0, 0.0, -1.0, 0.5), 2.0, 2000, 3,
                       int(rng.integers(1000))),
        _reproducible_case("two calls with equally seeded generators give the same tokens"),
    ]


# ---------------------------------------------------------------------------- questions

def _ffn_share(d, f):
    """The feed-forward network's share of the parameters of a decoder block of width d and inner width f."""
    ff = 2 * d * f + f + d
    return ff / (4 * (d * d + d) + ff + 4 * d)


predict_ffn_share = ask(
    "predict_ffn_share", label="predict_ffn_share(): the share of ff in the parameters of DecoderBlock(768, 12, 3072)",
    form=number_in(0, 1), compare=close(atol=0.02, rtol=0),
    mistakes=[(near(1 / 3, 0.04), "That is attention's share, not the feed-forward network's: attention has four d x d "
                                  "matrices (4 d^2), the network two d x 4d ones (8 d^2), twice as many: about 2/3."),
              (near(0.5, 0.04), "The two are not equal: attention's four matrices are d x d (4 d^2 in all), the "
                                "feed-forward network's two are d x 4d (8 d^2): it holds about 2/3."),
              (lambda got: numbers(got) is not None and float(numbers(got)) < 0.3,
               "Attention is the famous part, not the large one: its four d x d matrices hold 4 d^2 weights, the "
               "feed-forward network's two d x 4d matrices 8 d^2: the network has about 2/3 of the block.")],
    otherwise="Count in units of d^2: attention 4 (four d x d projections), feed-forward 8 (two d x 4d matrices); "
              "biases and norms are O(d). So the feed-forward share is about 8 / 12 = 2/3.")


predict_changed_positions = ask(
    "predict_changed_positions",
    label="predict_changed_positions(): positions (of 8) whose logits change when only the token at "
          "position 5 is replaced",
    form=int_in(0, 8), compare=equal(),
    mistakes=[(is_(8), "Attention mixes positions, but only backwards: under the causal mask positions 0 .. 4 never "
                       "read position 5, so their logits cannot move. Only 5, 6 and 7 change."),
              (is_(1), "Position 5's own logits change, but so do those of positions 6 and 7, which read position 5 "
                       "through attention: 3 positions."),
              (is_(2), "Positions 6 and 7 read position 5, and position 5's own logits change too (its input did): "
                       "3 positions."),
              (is_(5), "Positions 0 .. 4 come before position 5 and cannot read it (causal mask); the ones that change "
                       "are 5, 6 and 7."),
              (is_(6), "Positions 0 .. 5 would be 'up to and including 5', but the mask works the other way: a position "
                       "reads the past, so the change reaches 5 and the positions after it, 6 and 7.")],
    otherwise="Under the causal mask a change at position 5 reaches position 5 and every later position, 6 and 7: 3.")


NO_POSITION_CHOICES = ("bigram", "halfway", "entropy rate")


predict_no_positions = ask(
    "predict_no_positions", label="predict_no_positions(): where the model without positions lands",
    form=one_of(NO_POSITION_CHOICES), compare=equal(),
    mistakes=[(is_("bigram"), "Without positions attention is not a bag of words here: the causal mask breaks its "
                              "symmetry (a position reads exactly the tokens before it, so the size of its context "
                              "leaks into the output), and each word of this grammar shows its role. The model still "
                              "finds the subject for the verb: it lands near the entropy rate."),
              (is_("halfway"), "It does better than that: the causal mask gives a sense of order (each position reads "
                               "only the tokens before it), and in this grammar each word shows its role, so positions "
                               "add little: the model lands near the entropy rate.")])


# --------------------------------------------------------------------------- train_step

STEP_MESSAGES = {
    "no_zero_grad": "The old gradients were not cleared: PyTorch adds new gradients to .grad, so call "
                    "optimizer.zero_grad() before backward.",
    "no_clip": "The step used unclipped gradients: call torch.nn.utils.clip_grad_norm_(model.parameters(), "
               "max_norm) between backward and optimizer.step() (clipping after the step is too late: the step "
               "has already used them).",
    "clip_value": "Each gradient entry was clipped to [-max_norm, max_norm] (clip_grad_value_): clip the global "
                  "norm of all gradients together, clip_grad_norm_, which keeps their direction.",
}


def _step_case(label, seed, max_norm):
    def call(fn):
        model, opt, xb, yb = step_setup(seed)
        loss = fn(model, opt, xb, yb, max_norm)
        return loss, flat_params(model)

    def test(got, want):
        if not (isinstance(got, tuple) and len(got) == 2):
            return f"expected the loss, got {describe_short(got)}."
        loss, params = got
        if isinstance(loss, Array) and loss.kind == "tensor":
            return ("returned the loss as a tensor: return loss.item(), a float (a tensor would keep the whole "
                    "computation graph alive and cannot be averaged with NumPy).")
        if not isinstance(loss, float):
            return f"expected the loss as a float, got {describe_short(loss)}."
        w_loss, w_params = want
        if not math.isclose(loss, w_loss, rel_tol=1e-5, abs_tol=1e-6):
            return f"returned loss {loss:.6f}, expected {w_loss:.6f} (the mean lm_loss of the batch before the step)."
        g, w = numbers(params), numbers(w_params)
        if g is not None and w is not None and g.shape == w.shape and np.allclose(g, w, atol=1e-5, rtol=1e-4):
            return None
        return "the parameters after the step differ from one clipped step."

    hint = known_mistakes(*((lambda n=n: reference_step(seed, max_norm, n)[1], STEP_MESSAGES[n])
                            for n in STEP_MESSAGES), atol=1e-5, rtol=1e-4)
    return Case(label, call, lambda: reference_step(seed, max_norm), predicate(test),
                hints=[lambda got, want: hint(got[1], want[1]) if isinstance(got, tuple) and len(got) == 2 else None])


def describe_short(value):
    return describe(value)


@check
def train_step(hidden, rng):
    if not hidden:
        return [_step_case("train_step on a small model with leftover gradients, SGD lr 0.1, max_norm=0.5 "
                           "(the gradient norm is larger: clipping acts)", 1, 0.5),
                _step_case("train_step with max_norm=1000 (clipping does nothing)", 2, 1000.0)]
    return [_step_case("train_step, max_norm=0.1", int(rng.integers(100, 1000)), 0.1),
            _step_case("train_step, max_norm=2.0", int(rng.integers(1000, 2000)), 2.0)]


# ------------------------------------------------------------------------ kv_cache_bytes

def _kv_case(label, args, kwargs=None):
    kwargs = kwargs or {}
    L, T, d = args
    b, n = kwargs.get("bytes_per_value", 2), kwargs.get("batch", 1)
    right = 2 * L * T * d * b * n
    wrong = [
        (right // 2, "That counts one of the two: the cache holds a key AND a value vector per position and layer."),
        (right // L, "That is one layer's cache: every layer keeps its own keys and values."),
        (right * 8, "That is bits, not bytes: bytes_per_value already counts bytes."),
        (right // b, "bytes_per_value is missing: each number takes bytes_per_value bytes (2 in fp16)."),
        (right // n, "batch is missing: every sequence of the batch has its own cache."),
    ]

    def hint(got, want):
        g = got.data.item() if isinstance(got, Array) and got.data.shape == () else got
        if isinstance(g, float):
            return "Return an int (a number of bytes): no division is needed."
        found = [message for value, message in wrong if isinstance(g, int) and g == value != right]
        return " Or: ".join(found) or None

    return Case(label, lambda fn: fn(*args, **kwargs), lambda: right, equal(), hints=[hint])


@check
def kv_cache_bytes(hidden, rng):
    if not hidden:
        return [_kv_case("kv_cache_bytes(12, 1024, 768): GPT-2 small at 1024 tokens in fp16, 37,748,736 bytes",
                         (12, 1024, 768)),
                _kv_case("kv_cache_bytes(2, 32, 64, bytes_per_value=4, batch=3)", (2, 32, 64),
                         dict(bytes_per_value=4, batch=3))]
    return [_kv_case("kv_cache_bytes(32, 4096, 4096, batch=8)", (32, 4096, 4096), dict(batch=8)),
            _kv_case("kv_cache_bytes(3, 10, 16, bytes_per_value=1)", (3, 10, 16), dict(bytes_per_value=1)),
            _kv_case("kv_cache_bytes(5, 7, 6, 4, 2)", (5, 7, 6), dict(bytes_per_value=4, batch=2))]


# ---------------------------------------------------------------------------- generate_cached

CACHE_MESSAGES = {
    "embed_offset": "The new token was embedded at position 0: embed it at its own position, "
                    "model.embed(new, start) with start = the number of tokens already cached.",
    "rope_offset": "The rotary model's new query and key were rotated as if at position 0: pass start to "
                   "project_heads, so they turn by their real position.",
    "mask_offset": "The mask forgets the offset: query i sits at position start + i and may read every cached key "
                   "up to it, torch.ones(n, start + n, dtype=torch.bool).tril(diagonal=start).",
    "no_cache": "The new token attends only to itself: append its key and value to the block's cache "
                "(torch.cat along the positions axis, dim=2) and attend over all of them.",
}


def _cached_case(label, cfg, pos, prompt, n, temperature, seed):
    def run(fn):
        torch = _torch()
        try:
            return fn(check_model(cfg, pos, seed), torch.tensor(prompt), n, temperature,
                      torch.Generator().manual_seed(seed))
        except RuntimeError as exc:
            if "size" not in str(exc):
                raise
            raise RuntimeError(f"{exc}. The keys and the mask disagree in length: the cache must hold every key so "
                               "far, so append the new key and value to the block's cache (torch.cat along the "
                               "positions axis, dim=2) and build the mask (n, start + n).") from None

    def want():
        torch = _torch()
        return plain_generate(check_model(cfg, pos, seed), torch.tensor(prompt), n, temperature,
                              torch.Generator().manual_seed(seed))

    def hint(got, want):
        g = numbers(got)
        if g is None:
            return None
        if g.shape == (len(prompt), n):
            return "Return the whole sequence: the prompt ids followed by the new tokens, (B, T + max_new_tokens)."
        for name, message in CACHE_MESSAGES.items():
            try:
                wrong = run(lambda *a: cached_variant(*a, variant=name))
            except Exception:
                continue
            w = wrong.numpy()
            if w.shape == g.shape and np.array_equal(w, g) and not np.array_equal(w, want.data):
                return message
        if len(prompt[0]) + n > cfg[1]:
            return ("The sequence runs past context_len: when it would, crop to the last context_len tokens, empty "
                    "the caches and prefill again (positions all shift, so every cached key is stale).")
        return None

    return Case(label, run, want, equal(), hints=[hint])


def _cache_work_case(cfg, prompt, n):
    T = len(prompt[0])

    def run(fn):
        torch = _torch()
        model = check_model(cfg, "learned", 5)
        fn(model, torch.tensor(prompt), n, 0.0)
        return model.embedded // len(prompt)

    def test(got, want):
        if isinstance(got, int) and got <= T + n:
            return None
        return (f"{got} positions per sequence went through the model, where a cache needs at most {T + n} "
                f"(the {T} prompt tokens once, then one per new token): reuse the cached keys and values instead "
                "of running the whole window again.")

    return Case(f"generate_cached(model, ids (2, {T}), {n}): each position is embedded once (prefill {T}, then "
                "one per step)", run, lambda: T + n, predicate(test))


@check
def generate_cached(hidden, rng):
    small = (11, 12, 8, 2, 16, 2)  # vocab_size, context_len, d_model, n_heads, d_ff, n_layers
    if not hidden:
        return [
            _cached_case("generate_cached(model, ids (2, 3), 6, temperature=0), pos='learned': the tokens of generate",
                         small, "learned", [[1, 2, 3], [4, 4, 0]], 6, 0.0, 1),
            _cached_case("the same sampled at temperature 1 with generator seed 2, pos='sinusoidal'",
                         small, "sinusoidal", [[5, 1, 3], [0, 9, 9]], 8, 1.0, 2),
            _cached_case("pos='rope', temperature 1: queries and keys rotated at their positions",
                         small, "rope", [[7, 2], [3, 3]], 9, 1.0, 3),
            _cache_work_case(small, [[1, 2, 3], [4, 5, 6]], 8),
            _cached_case("pos='learned', ids (1, 4) and 20 new tokens: past context_len 12, crop and prefill again",
                         small, "learned", [[1, 5, 2, 7]], 20, 1.0, 4),
        ]
    return [
        _cached_case("generate_cached, pos='rope', ids (3, 4), 7 tokens, greedy", small, "rope",
                     rng.integers(0, 11, size=(3, 4)).tolist(), 7, 0.0, 11),
        _cached_case("generate_cached, pos='sinusoidal', ids (1, 1), 11 tokens, temperature 0.7", small, "sinusoidal",
                     [[3]], 11, 0.7, 12),
        _cached_case("generate_cached, pos='rope', ids (2, 10), 9 tokens, temperature 1: past context_len",
                     small, "rope", rng.integers(0, 11, size=(2, 10)).tolist(), 9, 1.0, 13),
        _cached_case("generate_cached, pos='learned', ids (2, 14): the prompt is longer than context_len",
                     small, "learned", rng.integers(0, 11, size=(2, 14)).tolist(), 3, 1.0, 14),
    ]


# ------------------------------------------------------------------------- attention_maps

MAPS_MESSAGES = {
    "no_mask": "The weights are not causal: apply the causal mask (torch.tril, True = allowed) before the softmax.",
    "no_ln1": "The queries and keys were computed from x itself: the block's attention reads block.ln1(x).",
    "no_advance": "Every layer's weights were computed from the embeddings: move on with x = block(x) after each "
                  "block, since the next layer reads what this one wrote.",
    "rope_ignored": "The rope model's queries and keys were not rotated: project_heads(block.attn, h) rotates them "
                    "when block.attn.rope is set.",
    "no_scale": "The scores were not divided by sqrt(D), D = d_model // n_heads.",
    "query_axis": "Each column sums to 1 instead of each row: the softmax runs over the keys, the last axis.",
}


def _maps_case(label, cfg, pos, ids, rng):
    p = make_params(rng, gpt_shapes(cfg[0], cfg[1], cfg[2], cfg[4], cfg[5], pos))

    def call(fn):
        torch = _torch()
        model = load(gpt_class()(*cfg, pos=pos), p).eval()
        return fn(model, torch.tensor(ids))

    variants = {n: (lambda n=n: maps_np(p, cfg, ids, pos, n)) for n in MAPS_MESSAGES}
    return Case(label, call, lambda: tensor(maps_np(p, cfg, ids, pos)), close(**TOL),
                hints=[diagnose(variants, MAPS_MESSAGES)])


class _RefusesTooLong(close):
    """An expected ValueError for a sequence longer than context_len; anything else is told what to do."""

    def __call__(self, got, want, case):
        __tracebackhide__ = True
        if "ValueError" not in got.raised and "NotImplementedError" not in got.raised:
            did = f"raised {got.raised[0]}: {got.message}" if got.raised else "returned maps"
            self.fail(case, f"{did}. Check T against model.context_len first and raise the ValueError TinyGPT raises "
                            "('sequence length T exceeds context_len=...'), whatever pos is: a rotary model would "
                            "otherwise run silently past the length it was built for.")
        super().__call__(got, want, case)


def _maps_too_long(cfg, pos, T):
    def call(fn):
        torch = _torch()
        return fn(check_model(cfg, pos, 0), torch.zeros(T, dtype=torch.long))

    return Case(f"attention_maps of a TinyGPT with context_len={cfg[1]} and pos={pos!r} on ids ({T},), longer than "
                "context_len: TinyGPT's ValueError", call, raises(f"sequence length {T} exceeds context_len={cfg[1]}"),
                _RefusesTooLong())


@check
def attention_maps(hidden, rng):
    if not hidden:
        return [_maps_case("attention_maps(model, ids (6,)) of TinyGPT(11, 8, 8, 2, 16, 2): shape (2, 2, 6, 6)",
                           (11, 8, 8, 2, 16, 2), "learned", rng.integers(0, 11, size=6), rng),
                _maps_case("attention_maps of a rope TinyGPT(11, 8, 8, 2, 16, 3) on ids (5,)",
                           (11, 8, 8, 2, 16, 3), "rope", rng.integers(0, 11, size=5), rng),
                *(_maps_too_long((11, 6, 8, 2, 16, 1), pos, 7) for pos in POSITIONS)]
    return [*(_maps_too_long((13, 4, 8, 2, 16, 2), pos, 9) for pos in POSITIONS),
            _maps_case("attention_maps, TinyGPT(13, 10, 12, 3, 24, 2, pos='sinusoidal'), ids (9,)",
                       (13, 10, 12, 3, 24, 2), "sinusoidal", rng.integers(0, 13, size=9), rng),
            _maps_case("attention_maps, TinyGPT(7, 4, 4, 1, 8, 1), ids (1,)", (7, 4, 4, 1, 8, 1), "learned",
                       rng.integers(0, 7, size=1), rng),
            _maps_case("attention_maps, rope TinyGPT(9, 12, 16, 4, 32, 2), ids (12,)", (9, 12, 16, 4, 32, 2), "rope",
                       rng.integers(0, 9, size=12), rng)]


# ------------------------------------------------------------------------ agreement_scores

def _agreement_case(label, maps, pairs):
    q = np.array([a for a, _ in pairs])
    k = np.array([b for _, b in pairs])
    wrong = known_mistakes(
        (lambda: maps[:, :, k, q].mean(-1), "The pairs were read as (key, query): maps[l, h, query, key] is how much "
                                           "the query reads the key, and a later key gets weight 0 under the mask."),
        (lambda: maps[:, :, q, k].sum(-1), "That is the sum over the pairs: take the mean, so the score does not "
                                          "grow with the number of sentences."),
        (lambda: maps[:, :, q, k].mean(-1).mean(0), "The layers were averaged together: return one score per head "
                                                    "of every layer, shape (n_layers, n_heads)."),
        (lambda: maps[:, :, q, :].mean(-2)[..., k].mean(-1), "Every query was paired with every key: pair each "
                                                              "query only with its own key."),
        atol=1e-6, rtol=1e-5)
    return Case(label, lambda fn: fn(tensor(maps), list(pairs)), lambda: tensor(maps[:, :, q, k].mean(-1)),
                close(**TOL), hints=[wrong])


def _random_maps(rng, L, H, T):
    s = np.where(causal(T), rng.normal(size=(L, H, T, T)) * 2, -np.inf)
    return softmax(s).astype(np.float32)


@check
def agreement_scores(hidden, rng):
    if not hidden:
        return [_agreement_case("agreement_scores(maps (2, 2, 6, 6), pairs [(4, 1), (5, 2)])",
                                _random_maps(rng, 2, 2, 6), [(4, 1), (5, 2)]),
                _agreement_case("agreement_scores(maps (3, 4, 9, 9), pairs [(3, 1), (8, 5), (7, 2)])",
                                _random_maps(rng, 3, 4, 9), [(3, 1), (8, 5), (7, 2)])]
    return [_agreement_case("agreement_scores(maps (1, 2, 5, 5), pairs [(4, 0)])", _random_maps(rng, 1, 2, 5), [(4, 0)]),
            _agreement_case("agreement_scores(maps (2, 3, 12, 12), four pairs)", _random_maps(rng, 2, 3, 12),
                            [(3, 1), (6, 2), (11, 7), (9, 8)])]


# ------------------------------------------------------------------ your model is GPT-2 (and its attention Llama's)

GPT2_MESSAGES = {
    "not_transposed": "The attention weights were copied without a transpose: GPT-2's Conv1D stores a weight as "
                      "(in, out) and computes x @ W, nn.Linear stores (out, in) and computes x @ W.T, so copy "
                      "W.T (square matrices fit either way, which is why nothing complained).",
    "other_gelu": "The logits are off by about 1e-3, and that is not rounding (float32 agrees to about 1e-6): the "
                  "model uses the other GELU. GPT-2's activation_function 'gelu_new' is the tanh approximation, "
                  "gelu='tanh' (the exact GELU where GPT-2 uses tanh is the usual slip); 'gelu' is the exact one.",
    "positions_after_first_block": "The positions enter after the first block: GPT-2 adds wpe to wte before any "
                                   "block, as embed does; load wpe into pos_emb.",
    **{f"split_{''.join(order)}": "q, k and v were split from c_attn in the wrong order: its output columns hold q, "
                                  "then k, then v (c_attn.weight.split(n_embd, dim=1))."
       for order in ("qvk", "kqv", "kvq", "vqk", "vkq")},
}


@dataclass
class ModelCase(Case):
    """A case whose right answer and known wrong ones are NumPy models: the tests prove, seed by seed, that each
    wrong one lies beyond the case's tolerance."""

    right: "Callable[[], np.ndarray] | None" = None
    variants: "dict[str, Callable[[], np.ndarray]] | None" = None


def _conv1d_explained(exc):
    return RuntimeError(f"{exc}. GPT-2's Conv1D stores each weight as (in, out) (c_fc.weight is (n_embd, 4 n_embd)), "
                        "nn.Linear as (out, in): copy the transposed weight, W.T.")


def _learner_gpt2(fn, c, params):
    """The learner's from_gpt2 applied to a fresh Hugging Face model; shape errors get the Conv1D explanation."""
    hf = c.hf_model(params)
    try:
        model = fn(hf)
    except RuntimeError as exc:
        if "size" not in str(exc) and "shape" not in str(exc):
            raise
        raise _conv1d_explained(exc) from None
    if not callable(getattr(model, "eval", None)):
        raise TypeError(f"from_gpt2 returned {type(model).__name__}: return the TinyGPT it built")
    return model.eval(), hf


def _gpt2_case(label, c: Gpt2Shape, ids, rng):
    p = gpt2_params(rng, c)

    def call(fn):
        torch = _torch()
        model, _ = _learner_gpt2(fn, c, p)
        with torch.no_grad():
            try:
                return model(torch.tensor(ids))
            except RuntimeError as exc:
                if "shape" not in str(exc) and "size" not in str(exc):
                    raise
                raise _conv1d_explained(exc) from None

    def want():
        torch = _torch()
        with torch.no_grad():
            return c.hf_model(p)(torch.tensor(ids)).logits

    variants = {n: (lambda n=n: gpt2_np(p, c, ids, n)) for n in GPT2_MESSAGES}
    hint = known_mistakes(*((make, GPT2_MESSAGES[n]) for n, make in variants.items()), atol=3e-5, rtol=1e-5)
    return ModelCase(label, call, want, close(atol=1e-4, rtol=0, kind="tensor"),
                     hints=[hint, _uses("TinyGPT (with tie_weights and gelu), FeedForward and DecoderBlock")],
                     right=lambda: gpt2_np(p, c, ids), variants=variants)


def _greedy(forward, ids, n, context_len):
    torch = _torch()
    ids = torch.tensor(ids)
    with torch.no_grad():
        for _ in range(n):
            nxt = forward(ids[:, -context_len:])[:, -1].argmax(-1, keepdim=True)  # (B, 1)
            ids = torch.cat([ids, nxt], dim=1)
    return ids


def _gpt2_greedy_case(label, c: Gpt2Shape, ids, n, rng):
    p = gpt2_params(rng, c)

    def call(fn):
        model, _ = _learner_gpt2(fn, c, p)
        return _greedy(model, ids, n, c.n_positions)

    def want():
        hf = c.hf_model(p)
        return _greedy(lambda x: hf(x).logits, ids, n, c.n_positions)

    return Case(label, call, want, equal(), hints=[lambda got, want: "Make the logits equal first (the case above "
                                                   "names the likely cause); equal logits give equal tokens."])


class _NamesField(close):
    """An expected ValueError whose message names the configuration field that cannot be represented."""

    def __init__(self, field):
        super().__init__()
        self.field = field

    def __call__(self, got, want, case):
        __tracebackhide__ = True
        if "ValueError" in got.raised and self.field not in got.message:
            self.fail(case, f"raised ValueError({got.message!r}): name the field, {self.field!r}, so the reader "
                            "knows which setting TinyGPT cannot follow.")
        super().__call__(got, want, case)


def _gpt2_refused_case(c: Gpt2Shape, rng):
    field, value = c.extra[0] if c.extra else ("activation_function", c.activation_function)
    p = gpt2_params(rng, c)

    def call(fn):
        model, _ = _learner_gpt2(fn, c, p)
        return type(model).__name__

    return Case(f"from_gpt2 of a GPT-2 with {field}={value!r}, which a TinyGPT cannot represent: a ValueError "
                f"naming {field!r}", call, raises(f"{field}={value!r} cannot be represented"), _NamesField(field))


@check
def from_gpt2(hidden, rng):
    if not hidden:
        small = Gpt2Shape(vocab_size=23, n_positions=12, n_embd=16, n_head=2, n_layer=2)
        return [
            _gpt2_case("from_gpt2(GPT2LMHeadModel(vocab 23, n_positions 12, n_embd 16, n_head 2, n_layer 2)): "
                       "logits on ids (2, 7) equal within 1e-4", small, rng.integers(0, 23, size=(2, 7)), rng),
            _gpt2_greedy_case("the same model, greedy: 6 new tokens after ids (1, 4), the Hugging Face model's",
                              small, rng.integers(0, 23, size=(1, 4)), 6, rng),
            _gpt2_case("from_gpt2 of a GPT-2 with n_inner=24 and layer_norm_epsilon=1e-3, logits on ids (1, 12)",
                       Gpt2Shape(17, 12, 8, 2, 1, n_inner=24, layer_norm_epsilon=1e-3),
                       rng.integers(0, 17, size=(1, 12)), rng),
            _gpt2_refused_case(Gpt2Shape(11, 8, 8, 2, 1, activation_function="relu"), rng),
        ]
    cases = []
    for i in range(3):  # configurations chosen by the run's seed; widths of 8 or more keep the GELU gap clear
        H = int(rng.choice([1, 2, 4]))
        c = Gpt2Shape(vocab_size=int(rng.integers(5, 40)), n_positions=int(rng.integers(4, 16)),
                      n_embd=H * int(rng.choice([8, 12, 16])) // (2 if H == 4 else 1), n_head=H,
                      n_layer=int(rng.integers(1, 4)), n_inner=None if i != 1 else int(rng.integers(24, 48)),
                      layer_norm_epsilon=float(rng.choice([1e-5, 1e-6, 1e-2])))
        T = int(rng.integers(3, c.n_positions + 1))  # one position would hide a q/k swap: its only weight is 1
        cases.append(_gpt2_case(f"from_gpt2 of a GPT-2 of your own ({c}), ids (2, {T})", c,
                                rng.integers(0, c.vocab_size, size=(2, T)), rng))
    c = Gpt2Shape(13, 10, 12, 3, 2)
    cases.append(_gpt2_greedy_case("from_gpt2, greedy continuation of ids (2, 3) for 7 tokens", c,
                                   rng.integers(0, 13, size=(2, 3)), 7, rng))
    cases.append(_gpt2_case("from_gpt2 of a GPT-2 with activation_function='gelu' (the exact GELU), ids (2, 6)",
                            Gpt2Shape(9, 6, 16, 2, 2, activation_function="gelu"), rng.integers(0, 9, size=(2, 6)), rng))
    cases.append(_gpt2_refused_case(Gpt2Shape(9, 6, 8, 2, 1, extra=(("scale_attn_by_inverse_layer_idx", True),)), rng))
    return cases


# ---------------------------------------------------------- one rotation, two layouts: Llama's attention

HALVES_MESSAGES = {
    "across_heads": "The rows were reordered across the whole matrix as if it were one head: each head's D rows "
                    "are reordered on their own (reshape to (n_heads, D // 2, 2, ...) first).",
    "inverse": "That is the inverse reordering (halves to interleaved): row i of the result is row 2i of w and row "
               "i + D/2 is row 2i + 1.",
    "columns": "The columns were reordered: the rows are the output features that rotate in pairs; the columns "
               "(the inputs) stay where they are.",
}


def _halves_case(label, w, n_heads):
    variants = {n: (lambda n=n: halves_np(w, n_heads, n)) for n in HALVES_MESSAGES}
    return Case(label, lambda fn: fn(tensor(w), n_heads), lambda: tensor(halves_np(w, n_heads)), close(**TOL),
                hints=[diagnose(variants, HALVES_MESSAGES)])


@check
def interleaved_to_halves(hidden, rng):
    if not hidden:
        by_hand = np.arange(8, dtype=np.float32)[:, None] * np.ones((1, 2), np.float32)
        return [_halves_case("interleaved_to_halves(w, 2), w (8, 2) whose row r holds r: rows [0, 2, 1, 3, 4, 6, 5, 7]",
                             by_hand, 2),
                _halves_case("interleaved_to_halves(w (12, 5), n_heads=2): D = 6", normal(rng, 12, 5), 2)]
    return [_halves_case("interleaved_to_halves(w (24, 24), n_heads=3)", normal(rng, 24, 24), 3),
            _halves_case("interleaved_to_halves(w (6, 4), n_heads=1)", normal(rng, 6, 4), 1),
            _halves_case("interleaved_to_halves(w (16, 3), n_heads=2)", normal(rng, 16, 3), 2)]


LLAMA_MESSAGES = {
    "no_permutation": "The weights were copied as they are: Llama rotates feature i with feature i + D/2, 07 rotates "
                      "2i with 2i + 1, so without interleaved_to_halves on q_proj and k_proj Llama turns the wrong "
                      "pairs and the scores are nonsense (a converted checkpoint fails just as silently).",
    "v_permuted": "v_proj was reordered too: values are never rotated, and o_proj reads them in the original "
                  "order; reorder q_proj and k_proj only.",
    "across_heads": "The rows were reordered across all heads at once: each head rotates its own D features, so "
                    "reorder within each head, interleaved_to_halves(w, n_heads).",
}


def _llama_case(label, d, H, base, x, rng):
    W = {n: normal(rng, d, d, scale=2 / np.sqrt(d)) for n in "qkvo"}

    def mha():
        torch = _torch()
        module = attention09().MultiHeadAttention(d, H, bias=False, rope=True, rope_base=base)
        with torch.no_grad():
            for n in "qkvo":
                getattr(module, f"w_{n}").weight.copy_(tensor(W[n]))
        return module

    def call(fn):
        state = fn(mha())
        if not isinstance(state, dict):
            raise TypeError(f"to_llama_attention returned {type(state).__name__}: return a dict of the four weights")
        state = {k: (v.detach() if hasattr(v, "detach") else v) for k, v in state.items()}
        return llama_attention(state, tensor(x), H, base)

    def want():
        torch = _torch()
        T = x.shape[1]
        with torch.no_grad():
            return mha()(tensor(x), mask=torch.ones(T, T, dtype=torch.bool).tril())

    variants = {n: (lambda n=n: llama_np(llama_state_np(W, H, n), x, H, base)) for n in LLAMA_MESSAGES}
    return ModelCase(label, call, want, close(**TOL), hints=[diagnose(variants, LLAMA_MESSAGES)],
                     right=lambda: llama_np(llama_state_np(W, H), x, H, base), variants=variants)


@check
def to_llama_attention(hidden, rng):
    if not hidden:
        return [_llama_case("LlamaAttention with to_llama_attention(MultiHeadAttention(8, 2, bias=False, rope=True)) "
                            "on x (1, 5, 8), causal: the same output", 8, 2, 10000.0, normal(rng, 1, 5, 8), rng),
                _llama_case("the same for MultiHeadAttention(24, 4, bias=False, rope=True, rope_base=100.0) on "
                            "x (2, 9, 24)", 24, 4, 100.0, normal(rng, 2, 9, 24), rng)]
    cases = []
    for _ in range(3):  # Llama attention configurations chosen by the run's seed
        H = int(rng.choice([2, 3, 4]))  # one head would hide a reordering across heads
        d = H * int(rng.choice([4, 6, 8]))  # a head of width 2 has nothing to reorder
        base = float(rng.choice([10.0, 500.0, 10000.0, 500000.0]))
        T = int(rng.integers(3, 10))
        cases.append(_llama_case(f"to_llama_attention, d_model {d}, {H} heads, rope_base {base:g}, x (2, {T}, {d})",
                                 d, H, base, normal(rng, 2, T, d), rng))
    return cases
