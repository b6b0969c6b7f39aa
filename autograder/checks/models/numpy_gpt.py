"""TinyGPT and its parts in NumPy (float64), each with the known mistakes a ``variant`` names.

Weights are NumPy arrays by PyTorch's parameter names (:mod:`.weights`); ``cfg`` is
``(vocab_size, context_len, d_model, n_heads, d_ff, n_layers)``.
"""
from __future__ import annotations

import math

import numpy as np

from ..hints import known_variant
from ..toolkit import causal, stable_softmax
from .numpy_attention import mha_np, rope_np

_erf = np.vectorize(math.erf)

LN_VARIANTS = ("eps_outside", "unbiased", "std_default", "no_eps", "wrong_axis_0", "wrong_axis_-2", "wrong_axis_all",
               "no_affine")
GELU_VARIANTS = ("tanh_gelu", "relu", "no_activation")
FF_VARIANTS = (*GELU_VARIANTS, "activation_after_fc2")
BLOCK_VARIANTS = ("post_norm", "no_mask", "pytorch_mask", "residual_around_norm", "no_residual", "one_norm", "relu",
                  "tanh_gelu")
EMBED_VARIANTS = ("embed_no_start", "no_positions", "sin_cos_swapped")
GPT_VARIANTS = (*EMBED_VARIANTS, "rope_ignored", "no_final_norm")
MAPS_VARIANTS = ("no_mask", "no_ln1", "no_advance", "rope_ignored", "no_scale", "query_axis")


def ln_np(x, w, b, eps=1e-5, variant=None):
    known_variant(variant, LN_VARIANTS, "ln_np")
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
    known_variant(variant, GELU_VARIANTS, "gelu_np")
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
    known_variant(variant, FF_VARIANTS, "ff_np")
    h = linear_np(np.asarray(x, dtype=np.float64), p, prefix + "fc1")
    if variant == "activation_after_fc2":
        return gelu_np(linear_np(h, p, prefix + "fc2"))
    return linear_np(gelu_np(h, variant), p, prefix + "fc2")


def block_np(p, x, H, variant=None, prefix="", rope=False, gelu="exact"):
    known_variant(variant, BLOCK_VARIANTS, "block_np")
    g = lambda n: p[prefix + n]
    x = np.asarray(x, dtype=np.float64)
    T = x.shape[1]
    ln = lambda t, i: ln_np(t, g(f"ln{i}.weight"), g(f"ln{i}.bias"))
    weights = {"H": H, **{f"{k}{n}": g(f"attn.w_{n}.{'weight' if k == 'W' else 'bias'}") for n in "qkvo" for k in "Wb"}}
    mask = {"no_mask": None, "pytorch_mask": ~causal(T)}.get(variant, causal(T))
    attn = lambda t: mha_np(weights, t, None, mask, rope=rope)
    form = variant if variant in GELU_VARIANTS else ("tanh_gelu" if gelu == "tanh" else None)
    ff = lambda t: ff_np(p, t, form, prefix + "ff.")
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


def sinusoids_np(T, d, base=10000.0, start=0):
    """Notebook 06's table for positions start .. start + T - 1: sin at even features, cos at odd ones."""
    angles = np.arange(start, start + T)[:, None] * base ** (-2.0 * np.arange(d // 2) / d)  # (T, d/2)
    pe = np.empty((T, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


def embed_np(p, cfg, ids, pos="learned", start=0, variant=None):
    known_variant(variant, EMBED_VARIANTS, "embed_np")
    d = cfg[2]
    T = ids.shape[1]
    x = p["tok_emb.weight"][ids].astype(np.float64)
    s = 0 if variant == "embed_no_start" else start
    if variant == "no_positions":
        return x
    if pos == "learned":
        return x + p["pos_emb.weight"][s:s + T]
    if pos == "sinusoidal":
        table = sinusoids_np(T, d, start=s)
        if variant == "sin_cos_swapped":
            table = table.reshape(T, d // 2, 2)[..., ::-1].reshape(T, d)
        return x + table
    return x


def gpt_np(p, cfg, ids, variant=None, pos="learned", gelu="exact"):
    """TinyGPT's logits in float64 (a tied model's p has no head: its head is tok_emb), or a known wrong variant."""
    known_variant(variant, GPT_VARIANTS, "gpt_np")
    V, ctx, d, H, d_ff, L = cfg
    x = embed_np(p, cfg, ids, pos, 0, variant if variant in EMBED_VARIANTS else None)
    for i in range(L):
        x = block_np(p, x, H, prefix=f"blocks.{i}.", rope=pos == "rope" and variant != "rope_ignored", gelu=gelu)
    if variant != "no_final_norm":
        x = ln_np(x, p["ln_f.weight"], p["ln_f.bias"])
    if "head.weight" not in p:  # tied
        return x @ p["tok_emb.weight"].T.astype(np.float64)
    return linear_np(x, p, "head")


def maps_np(p, cfg, ids, pos="learned", variant=None):
    """The attention weights (L, H, T, T) of every head on one sequence ids (T,), or a known wrong variant."""
    known_variant(variant, MAPS_VARIANTS, "maps_np")
    V, ctx, d, H, d_ff, L = cfg
    T, D = len(ids), d // H
    x = embed_np(p, cfg, np.asarray(ids)[None], pos)  # (1, T, d)
    x0 = x
    maps = []
    for i in range(L):
        g = lambda n: p[f"blocks.{i}.{n}"]
        src = x0 if variant == "no_advance" else x
        h = src if variant == "no_ln1" else ln_np(src, g("ln1.weight"), g("ln1.bias"))
        q = (h @ g("attn.w_q.weight").T.astype(np.float64) + g("attn.w_q.bias")).reshape(1, T, H, D).transpose(0, 2, 1, 3)
        k = (h @ g("attn.w_k.weight").T.astype(np.float64) + g("attn.w_k.bias")).reshape(1, T, H, D).transpose(0, 2, 1, 3)
        if pos == "rope" and variant != "rope_ignored":
            q, k = rope_np(q, np.arange(T)), rope_np(k, np.arange(T))
        scores = q @ np.swapaxes(k, -1, -2) / (1.0 if variant == "no_scale" else np.sqrt(D))  # (1, H, T, T)
        if variant != "no_mask":
            scores = np.where(causal(T), scores, -np.inf)
        maps.append(stable_softmax(scores, axis=-2 if variant == "query_axis" else -1)[0])
        x = block_np(p, x, H, prefix=f"blocks.{i}.", rope=pos == "rope")
    return np.stack(maps)  # (L, H, T, T)
