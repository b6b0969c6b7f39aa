"""Notebook 09's decoder step that reads the encoder, in NumPy float64: the context of a fixed-vector decoder (the
encoder's last state) or of cross-attention (every state, weighted by the query), and the known mistakes a
``variant`` names."""
from __future__ import annotations

import math

import numpy as np

READ_MESSAGES = {
    "first_state": "With attend=False you returned the encoder's first state: the fixed-vector decoder sees only the "
                   "state after the whole source was read, the last one.",
    "mean_state": "Your context is the plain average of the encoder's states, whatever the query: with attend=True the "
                  "query decides which states weigh most; with attend=False only the last state is read.",
    "no_scale": "Your attention weights are too sharp: the scores of the query against the states are not divided "
                "by sqrt(d), as scaled dot-product attention does.",
    "softmax_over_features": "Your weights do not sum to 1 over the source positions: the softmax ran along another "
                             "axis.",
    "always_last": "With attend=True you returned the last state anyway: cross-attention reads every state of the "
                   "encoder, weighted by how well each matches the query.",
    "always_attends": "With attend=False your context depends on every state: the fixed-vector decoder must read the "
                      "last state only, or the comparison with attention means nothing.",
}


def read_context_np(query, H, attend, variant=None):
    """The context a decoder step reads, in NumPy: the last state (fixed vector) or attention over H; or a
    known-wrong variant (``READ_MESSAGES``' keys)."""
    query, H = np.asarray(query, dtype=float), np.asarray(H, dtype=float)
    d = H.shape[-1]
    attended = (variant == "always_attends") or (attend and variant != "always_last")
    if not attended:
        return H[:, 0] if variant == "first_state" else (H.mean(axis=1) if variant == "mean_state" else H[:, -1])
    if variant == "mean_state":
        return H.mean(axis=1)
    scores = np.einsum("bnd,bd->bn", H, query) / (1.0 if variant == "no_scale" else math.sqrt(d))
    if variant == "softmax_over_features":
        w = np.exp(scores - scores.max(axis=0, keepdims=True))
        w = w / w.sum(axis=0, keepdims=True)
    else:
        w = np.exp(scores - scores.max(axis=1, keepdims=True))
        w = w / w.sum(axis=1, keepdims=True)
    return np.einsum("bn,bnd->bd", w, H)
