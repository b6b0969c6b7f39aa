"""Notebook 09's multi-head self-attention without projections and the backward pass of one causal head, in
NumPy float64, each with the known mistakes a ``variant`` names (the bug hunt's code as given and its half-fixes;
the usual slips of a manual backward pass)."""
from __future__ import annotations

import math

import numpy as np

from ..hints import known_variant
from ..toolkit import causal, stable_softmax

HEADS_VARIANTS = ("as_given", "split_only", "scale_only", "no_scale", "scale_by_D", "merge_by_reshape")
HEADS_MESSAGES = {  # the bug hunt's: the symptoms each version shows, never the line to write
    "as_given": "This is what the code as given does, and it shows two symptoms with two causes. Under the causal "
                "mask it reads the future: changing a later position moves an earlier row of the output (is_causal "
                "says False). And even with no mask, head 0's output is not what your scaled_dot_product_attention "
                "gives when it runs on head 0's slice of the features alone.",
    "split_only": "Progress: the weights are as sharp as scaled attention's now. But under the causal mask the "
                  "output still reads the future, and row t of a head does not hold position t's features. Follow "
                  "one number, feature 0 of position 1: in which head and which row does it land?",
    "scale_only": "Progress: the output is causal now, and every head reads its own slice of each position. What is "
                  "left: with no mask, one head's output still differs from scaled attention on that head's slice: "
                  "its weights are flatter, the more so the more heads share the width.",
    "no_scale": "The output is causal and the heads are cut right, but the weights are sharper than scaled "
                "attention's on one head's slice: the scores are not shrunk at all. How fast does the spread of "
                "a sum of D products grow with D?",
    "scale_by_D": "The output is causal and the heads are cut right, but the weights are flatter than scaled "
                  "attention's, more so the wider the heads: the scores are shrunk too much. How fast does the "
                  "spread of a sum of D products grow with D?",
    "merge_by_reshape": "The output's rows mix positions and heads after the attention: the heads' outputs no longer "
                        "sit side by side, position by position, as the code as given put them (that line was "
                        "right).",
}


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
    scale = {"as_given": math.sqrt(d), "scale_only": math.sqrt(d), "no_scale": 1.0, "scale_by_D": D}.get(variant, math.sqrt(D))
    scores = heads @ np.swapaxes(heads, -1, -2) / scale  # (B, H, T, T)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    out = stable_softmax(scores) @ heads  # (B, H, T, D)
    if variant == "merge_by_reshape":
        return out.reshape(B, T, d)
    return out.transpose(0, 2, 1, 3).reshape(B, T, d)  # (B, T, d_model)


HEAD_VARIANTS = ("no_scale", "diagonal_jacobian", "no_softmax", "x_from_v_only", "x_from_q_only",
                 "repeated_ids_overwrite")
HEAD_MESSAGES = {  # the slips of a backward pass by hand, each with its advice
    "no_scale": "The gradient on the way back through the scores misses the 1/sqrt(D): the forward pass divided "
                "q @ k.T by sqrt(D), so the gradient that reaches q and k is divided by it too.",
    "diagonal_jacobian": "Each score got only its own weight's slope, p * (1 - p): a softmax weight moves with every "
                         "score of its row, so row t of dL/dscores is the Jacobian of row t (softmax_jacobian) "
                         "applied to row t of dL/dweights.",
    "no_softmax": "The gradient went from the weights to the scores unchanged: the softmax lies between them, and its "
                  "Jacobian (softmax_jacobian, one per row) carries dL/dweights to dL/dscores.",
    "x_from_v_only": "grad_E holds only the path through v: x = E[ids] feeds q, k and v, so its gradient is the sum of "
                     "the three grad_x that linear_backward returns.",
    "x_from_q_only": "grad_E holds only one of the three paths out of x: x feeds q, k and v, so add the three grad_x.",
    "repeated_ids_overwrite": "A repeated id kept only one of its rows' gradients: rows looked up twice add up "
                              "(embedding_backward does it).",
}


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
