"""Notebook 05's optimiser in NumPy: AdamW as PyTorch computes it, alone and training the bigram table,
each with the usual mistakes a ``variant`` names (for the hints of ``adamw_step`` and ``bigram_train_step``)."""
from __future__ import annotations

import numpy as np

from ..hints import known_variant
from ..toolkit import stable_softmax


ADAMW_VARIANTS = ("no_bias", "l2", "decay_wrong_factor", "decay_after", "eps_inside")


def adamw_numpy(p0, grads, lr, betas, eps, wd, variant=""):
    """AdamW as PyTorch computes it, or one of the usual mistakes (for hints only)."""
    known_variant(variant, ADAMW_VARIANTS, "adamw_numpy")
    p = np.array(p0, dtype=float)
    m, v = np.zeros_like(p), np.zeros_like(p)
    b1, b2 = betas
    out = []
    for t, g in enumerate(grads, start=1):
        g = np.asarray(g, dtype=float)
        if variant == "l2":
            g = g + wd * p
        elif variant == "decay_wrong_factor":
            p = p * (1 - wd)
        elif variant not in ("decay_after",):
            p = p * (1 - lr * wd)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = (m, v) if variant == "no_bias" else (m / (1 - b1 ** t), v / (1 - b2 ** t))
        denom = np.sqrt(v_hat + eps) if variant == "eps_inside" else np.sqrt(v_hat) + eps
        p = p - lr * m_hat / denom
        if variant == "decay_after":
            p = p * (1 - lr * wd)
        out.append(p.copy())
    return np.stack(out), m, v


BIGRAM_VARIANTS = ("swapped", "assigned", "defaults", "t_is_one", "loss_after")


def bigram_numpy(W0, x, y, steps, lr, wd, variant=""):
    """Training of the bigram table as PyTorch does it, or with one usual mistake (for hints only)."""
    known_variant(variant, BIGRAM_VARIANTS, "bigram_numpy")
    W = np.array(W0, dtype=float)
    V = W.shape[0]
    m, v = np.zeros_like(W), np.zeros_like(W)
    losses, trajectory = [], []

    def loss_and_grad(W):
        inp, tgt = (y, x) if variant == "swapped" else (x, y)
        z = W[inp]
        p = stable_softmax(z)
        loss = float(-np.log(p[np.arange(len(tgt)), tgt]).mean())
        g = p.copy()
        g[np.arange(len(tgt)), tgt] -= 1
        g /= len(tgt)
        G = np.zeros_like(W)
        if variant == "assigned":
            G[inp] = g
        else:
            np.add.at(G, inp, g)
        return loss, G

    for t in range(1, steps + 1):
        loss, G = loss_and_grad(W)
        step_lr, step_wd, step_t = lr, wd, t
        if variant == "defaults":
            step_lr, step_wd = 1e-3, 0.01
        if variant == "t_is_one":
            step_t = 1
        W = W * (1 - step_lr * step_wd)
        m = 0.9 * m + 0.1 * G
        v = 0.999 * v + 0.001 * G * G
        W = W - step_lr * (m / (1 - 0.9 ** step_t)) / (np.sqrt(v / (1 - 0.999 ** step_t)) + 1e-8)
        if variant == "loss_after":
            loss = loss_and_grad(W)[0]
        losses.append(loss)
        trajectory.append(W.copy())
    return np.array(losses), np.stack(trajectory), m, v
