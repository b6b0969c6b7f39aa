"""Checks for 10_decoder_block: compared with PyTorch's own layers, given the same weights.

Weights and inputs are NumPy arrays made when the cases are built (the grader judges
evidence without importing torch); they are copied by parameter name into the learner's
module and into PyTorch's. Hints rerun known wrong variants in NumPy and name the one
an answer matches. The attention pieces reuse notebook 09's NumPy models.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .core import Case, close, equal, exercise, known_mistakes, predicate, raises
from .nb09 import TOL, _torch, causal, diagnose, mha_np, normal, tensor

A = "10_decoder_block"
check = exercise(A)
_erf = np.vectorize(math.erf)


# ------------------------------------------------------------------ weights, by parameter name

def block_shapes(d, d_ff, prefix=""):
    shapes = {}
    for n in "qkvo":
        shapes[f"attn.w_{n}.weight"], shapes[f"attn.w_{n}.bias"] = (d, d), (d,)
    shapes.update({"ff.fc1.weight": (d_ff, d), "ff.fc1.bias": (d_ff,), "ff.fc2.weight": (d, d_ff),
                   "ff.fc2.bias": (d,), "ln1.weight": (d,), "ln1.bias": (d,), "ln2.weight": (d,), "ln2.bias": (d,)})
    return {prefix + k: v for k, v in shapes.items()}


def gpt_shapes(V, ctx, d, d_ff, L):
    shapes = {"tok_emb.weight": (V, d), "pos_emb.weight": (ctx, d)}
    for i in range(L):
        shapes.update(block_shapes(d, d_ff, f"blocks.{i}."))
    shapes.update({"ln_f.weight": (d,), "ln_f.bias": (d,), "head.weight": (V, d), "head.bias": (V,)})
    return shapes


def make_params(rng, shapes):
    """Random weights at sensible scales: LayerNorm gains near 1, matrices ~ 1/sqrt(fan_in)."""
    params = {}
    for name, shape in shapes.items():
        owner = name.split(".")[-2]
        if name.endswith("emb.weight"):
            params[name] = normal(rng, *shape)
        elif len(shape) == 2:
            params[name] = normal(rng, *shape, scale=1 / np.sqrt(shape[1]))
        elif owner.startswith("ln") and name.endswith("weight"):
            params[name] = (1 + normal(rng, *shape, scale=0.3)).astype(np.float32)
        else:
            params[name] = normal(rng, *shape, scale=0.2)
    return params


def load(module, params):
    """Copy the NumPy weights into the module's parameters of the same names."""
    torch = _torch()
    with torch.no_grad():
        for name, value in params.items():
            module.get_parameter(name).copy_(tensor(value))
    return module


# ------------------------------------------------------------------------ NumPy models

def ln_np(x, w, b, eps=1e-5, variant=None):
    x = np.asarray(x, dtype=np.float64)
    if variant == "wrong_axis_0":
        axes = 0
    elif variant == "wrong_axis_all":
        axes = tuple(range(x.ndim))
    elif variant == "wrong_axis_-2":
        axes = -2
    else:
        axes = -1
    mu = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True, ddof=1 if variant in ("unbiased", "std_default") else 0)
    if variant in ("eps_outside", "std_default"):
        y = (x - mu) / (np.sqrt(var) + eps)
    elif variant == "no_eps":
        y = (x - mu) / np.sqrt(var)
    else:
        y = (x - mu) / np.sqrt(var + eps)
    return y if variant == "no_affine" else y * w + b


def gelu_np(x, variant=None):
    if variant == "tanh_gelu":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    if variant == "relu":
        return np.maximum(x, 0)
    if variant == "no_activation":
        return x
    return 0.5 * x * (1 + _erf(x / np.sqrt(2)))


def linear_np(x, p, name):
    return x @ p[name + ".weight"].T.astype(np.float64) + p[name + ".bias"]


def ff_np(p, x, variant=None, prefix=""):
    h = linear_np(np.asarray(x, dtype=np.float64), p, prefix + "fc1")
    if variant == "activation_after_fc2":
        return gelu_np(linear_np(h, p, prefix + "fc2"))
    return linear_np(gelu_np(h, variant), p, prefix + "fc2")


def block_np(p, x, H, variant=None, prefix=""):
    g = lambda n: p[prefix + n]
    x = np.asarray(x, dtype=np.float64)
    T = x.shape[1]
    ln = lambda t, i: ln_np(t, g(f"ln{i}.weight"), g(f"ln{i}.bias"))
    weights = {"H": H, **{f"{k}{n}": g(f"attn.w_{n}.{'weight' if k == 'W' else 'bias'}") for n in "qkvo" for k in "Wb"}}
    mask = {"no_mask": None, "pytorch_mask": ~causal(T)}.get(variant, causal(T))
    attn = lambda t: mha_np(weights, t, None, mask)
    ff = lambda t: ff_np(p, t, variant if variant in ("relu", "tanh_gelu") else None, prefix + "ff.")
    if variant == "post_norm":
        x = ln(x + attn(x), 1)
        return ln(x + ff(x), 2)
    if variant == "residual_around_norm":
        h = ln(x, 1)
        x = h + attn(h)
        h = ln(x, 2)
        return h + ff(h)
    if variant == "no_residual":
        return ff(ln(attn(ln(x, 1)), 2))
    if variant == "one_norm":
        x = x + attn(ln(x, 1))
        return x + ff(ln(x, 1))
    x = x + attn(ln(x, 1))
    return x + ff(ln(x, 2))


def gpt_np(p, cfg, ids, variant=None):
    V, ctx, d, H, d_ff, L = cfg
    T = ids.shape[1]
    x = p["tok_emb.weight"][ids].astype(np.float64)
    if variant != "no_positions":
        x = x + p["pos_emb.weight"][:T]
    for i in range(L):
        x = block_np(p, x, H, prefix=f"blocks.{i}.")
    if variant != "no_final_norm":
        x = ln_np(x, p["ln_f.weight"], p["ln_f.bias"])
    return linear_np(x, p, "head")


# ------------------------------------------------------------------ PyTorch references

def torch_block(p, d, H, d_ff, prefix=""):
    """nn.TransformerEncoderLayer(norm_first=True, GELU, no dropout) holding the weights p."""
    torch = _torch()
    layer = torch.nn.TransformerEncoderLayer(d, H, d_ff, dropout=0.0, activation="gelu", batch_first=True,
                                             norm_first=True)
    g = lambda n: tensor(p[prefix + n])
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(torch.cat([g(f"attn.w_{n}.weight") for n in "qkv"]))  # (3 d, d)
        layer.self_attn.in_proj_bias.copy_(torch.cat([g(f"attn.w_{n}.bias") for n in "qkv"]))
        for theirs, ours in [("self_attn.out_proj", "attn.w_o"), ("linear1", "ff.fc1"), ("linear2", "ff.fc2"),
                             ("norm1", "ln1"), ("norm2", "ln2")]:
            layer.get_parameter(theirs + ".weight").copy_(g(ours + ".weight"))
            layer.get_parameter(theirs + ".bias").copy_(g(ours + ".bias"))
    return layer.eval()


def run_torch_block(layer, x):
    torch = _torch()
    T = x.shape[1]
    not_allowed = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # PyTorch: True = NOT allowed
    with torch.no_grad():
        return layer(x, src_mask=not_allowed)


def torch_gpt(p, cfg, ids):
    torch = _torch()
    F = torch.nn.functional
    V, ctx, d, H, d_ff, L = cfg
    ids = torch.tensor(ids)
    x = F.embedding(ids, tensor(p["tok_emb.weight"])) + tensor(p["pos_emb.weight"])[: ids.shape[1]]
    for i in range(L):
        x = run_torch_block(torch_block(p, d, H, d_ff, f"blocks.{i}."), x)
    x = F.layer_norm(x, (d,), tensor(p["ln_f.weight"]), tensor(p["ln_f.bias"]), 1e-5)
    return F.linear(x, tensor(p["head.weight"]), tensor(p["head.bias"]))


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


def _ff_case(label, p, x):
    d_ff, d = p["fc1.weight"].shape

    def call(cls):
        torch = _torch()
        module = load(cls(d, d_ff), p)
        with torch.no_grad():
            return module(tensor(x))

    def want():
        torch = _torch()
        F = torch.nn.functional
        h = F.gelu(F.linear(tensor(x), tensor(p["fc1.weight"]), tensor(p["fc1.bias"])))  # exact GELU
        return F.linear(h, tensor(p["fc2.weight"]), tensor(p["fc2.bias"]))

    variants = {n: (lambda n=n: ff_np(p, x, n)) for n in FF_MESSAGES}
    return Case(label, call, want, close(atol=2e-6, rtol=2e-5, kind="tensor"),
                hints=[diagnose(variants, FF_MESSAGES)])


def ff_params(rng, d, d_ff):
    return {"fc1.weight": normal(rng, d_ff, d, scale=2 / np.sqrt(d)), "fc1.bias": normal(rng, d_ff, scale=0.5),
            "fc2.weight": normal(rng, d, d_ff, scale=2 / np.sqrt(d_ff)), "fc2.bias": normal(rng, d, scale=0.5)}


@check
def FeedForward(hidden, rng):
    if not hidden:
        return [_ff_case("FeedForward(4, 16) on x (2, 3, 4)", ff_params(rng, 4, 16), normal(rng, 2, 3, 4)),
                _ff_case("FeedForward(6, 8) on x (5, 6)", ff_params(rng, 6, 8), normal(rng, 5, 6))]
    return [_ff_case("FeedForward(8, 32) on x (2, 4, 8)", ff_params(rng, 8, 32), normal(rng, 2, 4, 8)),
            _ff_case("FeedForward(3, 5) on x (1, 1, 3)", ff_params(rng, 3, 5), normal(rng, 1, 1, 3))]


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
        with torch.no_grad():
            return module(tensor(x))

    variants = {n: (lambda n=n: block_np(p, x, H, n)) for n in BLOCK_MESSAGES}
    return Case(label, call, lambda: run_torch_block(torch_block(p, d, H, d_ff), tensor(x)), close(**TOL),
                hints=[diagnose(variants, BLOCK_MESSAGES), _uses("LayerNorm and FeedForward")])


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
        with torch.no_grad():
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
        ]
    return [
        _block_case("DecoderBlock(12, 3, 20) on x (3, 7, 12)", make_params(rng, block_shapes(12, 20)), 3,
                    normal(rng, 3, 7, 12)),
        _block_case("DecoderBlock(4, 1, 8) on x (1, 1, 4): one position", make_params(rng, block_shapes(4, 8)), 1,
                    normal(rng, 1, 1, 4)),
        _block_case("DecoderBlock(16, 4, 64) on x (2, 9, 16)", make_params(rng, block_shapes(16, 64)), 4,
                    normal(rng, 2, 9, 16)),
    ]


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
    "no_positions": "The logits ignore the position embeddings: add pos_emb(torch.arange(T)) to the token "
                    "embeddings.",
    "no_final_norm": "The final LayerNorm is missing: apply ln_f before head.",
}


def _gpt_case(label, cfg, ids, rng):
    p = make_params(rng, gpt_shapes(cfg[0], cfg[1], cfg[2], cfg[4], cfg[5]))

    def call(cls):
        torch = _torch()
        module = load(cls(*cfg), p)
        with torch.no_grad():
            return module(torch.tensor(ids))

    variants = {n: (lambda n=n: gpt_np(p, cfg, ids, n)) for n in GPT_MESSAGES}
    return Case(label, call, lambda: torch_gpt(p, cfg, ids), close(**TOL),
                hints=[diagnose(variants, GPT_MESSAGES), _uses("LayerNorm and DecoderBlock")])


def _gpt_too_long(cfg, T):
    def call(cls):
        torch = _torch()
        torch.manual_seed(0)
        with torch.no_grad():
            return cls(*cfg)(torch.zeros(1, T, dtype=torch.long))
    return Case(f"TinyGPT(vocab_size={cfg[0]}, context_len={cfg[1]}, ...) on ids of shape (1, {T}): longer than "
                "context_len", call, raises(f"sequence length {T} exceeds context_len={cfg[1]}"), close(**TOL))


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
        ]
    other = (13, 8, 12, 3, 24, 3)
    return [
        _gpt_case("TinyGPT(13, 8, 12, 3, 24, 3) on ids (3, 8)", other, rng.integers(0, 13, size=(3, 8)), rng),
        _gpt_too_long(other, 12),
        _gpt_case("TinyGPT(5, 4, 4, 1, 8, 1) on ids (2, 2)", (5, 4, 4, 1, 8, 1), rng.integers(0, 5, size=(2, 2)), rng),
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

@lru_cache(maxsize=None)
def fake_models():
    """Two stand-ins for a TinyGPT whose next token is known, built when torch is at hand."""
    torch = _torch()

    class Window(torch.nn.Module):
        def __init__(self, vocab_size, context_len):
            super().__init__()
            self.vocab_size, self.context_len = vocab_size, context_len

        def check(self, ids):
            if ids.shape[1] > self.context_len:
                raise ValueError(f"the model got {ids.shape[1]} positions, more than its context_len="
                                 f"{self.context_len}: crop ids to their last context_len tokens")

    class SumModel(Window):
        """At every position, one sure logit (20) on (sum of the tokens so far) mod vocab_size."""

        def forward(self, ids):
            self.check(ids)
            return torch.nn.functional.one_hot(ids.cumsum(1) % self.vocab_size, self.vocab_size).float() * 20.0

    class FixedModel(Window):
        """The same logits at every position, whatever the tokens."""

        def __init__(self, logits, context_len=8):
            super().__init__(len(logits), context_len)
            self.logits = torch.tensor(logits, dtype=torch.float32)

        def forward(self, ids):
            self.check(ids)
            return self.logits.expand(*ids.shape, self.vocab_size).clone()

    return SumModel, FixedModel


def sum_rule(prompt, n, V, ctx):
    rows = [list(map(int, r)) for r in prompt]
    for row in rows:
        for _ in range(n):
            row.append(sum(row[-ctx:]) % V)
    return rows


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
