"""Notebook 09's attention in NumPy (float64), each with the known mistakes a ``variant`` names: scaled
dot-product attention, the rotary position embedding, and multi-head attention (on which notebook 10's
models and GPT-2's and Llama's are built)."""
from __future__ import annotations

import numpy as np

from ..hints import known_variant
from ..toolkit import stable_softmax

SDPA_VARIANTS = ("no_scale", "scale_d", "query_axis", "inverted_mask", "mask_after_softmax", "mask_zero")
MHA_VARIANTS = ("no_scale", "scale_d_model", "merge_without_transpose", "split_without_transpose", "keys_from_x",
                "wq_for_keys", "inverted_mask", "no_output_projection",
                "rope_v", "rope_before_split", "rope_no_offset", "rope_default_base", "rope_ignored", "rope_q_only",
                "rope_k_only", "rope_half")
ROPE_LAYOUTS = ("interleaved", "half")


def sdpa_np(q, k, v, mask=None, variant=None):
    """Scaled dot-product attention in float64, or one of its known wrong variants."""
    known_variant(variant, SDPA_VARIANTS, "sdpa_np")
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    d = q.shape[-1]
    scale = {"no_scale": 1.0, "scale_d": d}.get(variant, np.sqrt(d))
    s = q @ np.swapaxes(k, -1, -2) / scale
    if mask is not None:
        if variant == "inverted_mask":
            s = np.where(mask, -np.inf, s)
        elif variant == "mask_zero":
            s = np.where(mask, s, 0.0)
        elif variant != "mask_after_softmax":
            s = np.where(mask, s, -np.inf)
    w = stable_softmax(s, axis=-2 if variant == "query_axis" else -1)
    if mask is not None and variant == "mask_after_softmax":
        w = w * mask
    return w @ v, w


def rope_np(x, positions, base=10000.0, layout="interleaved"):
    """Rotary position embedding in float64, written apart from notebook 07 (through complex numbers):
    x (..., T, D), positions (T,); the pair (x[..., 2k], x[..., 2k+1]) turns by p * base ** (-2k / D)."""
    known_variant(layout, ROPE_LAYOUTS, "rope_np's layout")
    x = np.asarray(x, dtype=np.float64)
    D = x.shape[-1]
    angles = np.asarray(positions, dtype=np.float64)[:, None] * base ** (-2.0 * np.arange(D // 2) / D)  # (T, D/2)
    if layout == "interleaved":
        z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * angles)
        out = np.empty_like(x)
        out[..., 0::2], out[..., 1::2] = z.real, z.imag
        return out
    z = (x[..., : D // 2] + 1j * x[..., D // 2:]) * np.exp(1j * angles)  # rotate-half: j pairs with j + D/2
    return np.concatenate([z.real, z.imag], axis=-1)


def mha_np(p, x, context=None, mask=None, variant=None, *, rope=False, q_start=0, base=10000.0):
    """Multi-head attention in float64 from the weights p (nn.Linear layout), or a known wrong variant.
    With rope, q and k are rotated per head: queries at q_start .. q_start + T_q - 1, keys at 0 .. T_k - 1."""
    known_variant(variant, MHA_VARIANTS, "mha_np")
    lin = lambda t, n: t @ p["W" + n].T.astype(np.float64) + (p["b" + n] if "b" + n in p else 0.0)
    c = x if context is None or variant == "keys_from_x" else context
    B, Tq, d = x.shape
    Tk, H = c.shape[1], p["H"]
    D = d // H
    q = lin(x, "q")
    k = lin(c, "q" if variant == "wq_for_keys" else "k")
    v = lin(c, "v")
    q_pos = np.arange(Tq) + (0 if variant == "rope_no_offset" else q_start)
    k_pos = np.arange(Tk)
    if variant == "rope_default_base":
        base = 10000.0
    if rope and variant == "rope_before_split":  # over the whole d_model, before the heads exist
        q, k = rope_np(q, q_pos, base), rope_np(k, k_pos, base)

    def split(t, T):
        if variant == "split_without_transpose":
            return t.reshape(B, H, T, D)  # (B, H, T, D), scrambled
        return t.reshape(B, T, H, D).transpose(0, 2, 1, 3)  # (B, H, T, D)

    q, k, v = split(q, Tq), split(k, Tk), split(v, Tk)
    if rope and variant not in ("rope_before_split", "rope_ignored"):
        layout = "half" if variant == "rope_half" else "interleaved"
        if variant != "rope_k_only":
            q = rope_np(q, q_pos, base, layout)
        if variant != "rope_q_only":
            k = rope_np(k, k_pos, base, layout)
        if variant == "rope_v":
            v = rope_np(v, k_pos, base, layout)
    if variant == "scale_d_model":
        q = q * np.sqrt(D) / np.sqrt(d)
    inner = {"no_scale": "no_scale", "inverted_mask": "inverted_mask"}.get(variant)
    out, _ = sdpa_np(q, k, v, mask, inner)  # (B, H, T, D)
    if variant == "merge_without_transpose":
        out = out.reshape(B, Tq, d)
    else:
        out = out.transpose(0, 2, 1, 3).reshape(B, Tq, d)  # (B, T_q, d_model)
    return out if variant == "no_output_projection" else lin(out, "o")
