"""Notebook 09's multi-head self-attention without projections and the backward pass of one causal head, in
NumPy float64, each with the known mistakes a ``variant`` names (the bug hunt's code as given and its half-fixes;
the usual slips of a manual backward pass)."""
from __future__ import annotations

import math

import numpy as np

from ..hints import known_variant
from ..toolkit import causal, stable_softmax

HEADS_VARIANTS = ("as_given", "split_only", "scale_only", "scale_d_model", "scale_by_D", "merge_by_reshape")


def heads_np(x, n_heads, mask=None, variant=None):
    """Self-attention in n_heads heads without projections, in float64, or one of its known wrong versions."""
    known_variant(variant, HEADS_VARIANTS, "heads_np")
    x = np.asarray(x, dtype=np.float64)
    B, T, d = x.shape
    D = d // n_heads
    if variant in ("as_given", "split_only"):
        heads = x.reshape(B, n_heads, T, D)  # (B, H, T, D), positions mixed into heads
    else:
        heads = x.reshape(B, T, n_heads, D).transpose(0, 2, 1, 3)  # (B, H, T, D)
    scale = {"as_given": 1.0, "scale_only": 1.0, "scale_d_model": math.sqrt(d), "scale_by_D": D}.get(variant, math.sqrt(D))
    scores = heads @ np.swapaxes(heads, -1, -2) / scale  # (B, H, T, T)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    out = stable_softmax(scores) @ heads  # (B, H, T, D)
    if variant == "merge_by_reshape":
        return out.reshape(B, T, d)
    return out.transpose(0, 2, 1, 3).reshape(B, T, d)  # (B, T, d_model)


HEAD_VARIANTS = ("no_scale", "diagonal_jacobian", "no_softmax", "x_from_v_only", "x_from_q_only",
                 "repeated_ids_overwrite")


def head_np(ids, E, W_q, W_k, W_v, grad_out, variant=None):
    """The gradients (grad_E, grad_W_q, grad_W_k, grad_W_v) of one causal head, float64, or a known wrong version."""
    known_variant(variant, HEAD_VARIANTS, "head_np")
    ids = np.asarray(ids)
    E, W_q, W_k, W_v, G = (np.asarray(a, dtype=np.float64) for a in (E, W_q, W_k, W_v, grad_out))
    x = E[ids]  # (T, d)
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    T, D = q.shape
    scale = 1.0 if variant == "no_scale" else math.sqrt(D)
    w = stable_softmax(np.where(causal(T), q @ k.T / math.sqrt(D), -np.inf))  # (T, T)
    grad_w, grad_v = G @ v.T, w.T @ G  # out = w @ v
    if variant == "no_softmax":
        grad_s = grad_w
    elif variant == "diagonal_jacobian":
        grad_s = w * (1 - w) * grad_w
    else:
        grad_s = w * (grad_w - (w * grad_w).sum(axis=-1, keepdims=True))  # each row: J(p) @ g, J = diag(p) - p p^T
    grad_q, grad_k = grad_s @ k / scale, grad_s.T @ q / scale
    paths = {"x_from_v_only": (grad_v @ W_v.T,), "x_from_q_only": (grad_q @ W_q.T,)}
    grad_x = sum(paths.get(variant, (grad_q @ W_q.T, grad_k @ W_k.T, grad_v @ W_v.T)))  # (T, d)
    grad_E = np.zeros_like(E)
    if variant == "repeated_ids_overwrite":
        grad_E[ids] = grad_x
    else:
        np.add.at(grad_E, ids, grad_x)
    return grad_E, x.T @ grad_q, x.T @ grad_k, x.T @ grad_v
