"""Notebook 09's two task heads on one backbone, in NumPy float64: a classifier (one label per sequence: the mean of
the sequence's real tokens, then a linear map) and a tagger (one label per token: a linear map at every position),
and the known mistakes a ``variant`` names."""
from __future__ import annotations

import numpy as np

from ..hints import known_variant, numbers
from ..toolkit import normal

TASK_MESSAGES = {  # the symptom first, then the likely cause in a learner's words; never the line to write
    "pool_padding": "A short sequence's class scores are not what its own tokens give: they change with the padding "
                    "after it. The classifier's pool took in positions that are padding, not the sequence.",
    "divide_by_T": "A short sequence's pooled vector comes out too small, the more so the more padding follows it: "
                   "the real tokens are summed, but divided as if every position were real.",
    "sum_pool": "The class scores grow with the sequence's length: a sequence of the same tokens twice as long "
                "should pool to the same vector, not one twice as large.",
    "first_token": "The class scores follow the first token alone: the pool should take every real token of the "
                   "sequence into account.",
    "last_position": "The class scores come from one position, the last one, which is padding in every sequence "
                     "shorter than T.",
    "pool_over_batch": "The classifier gives one row per position, not one per sequence: its pool ran along the "
                       "batch axis, mixing different sequences.",
    "per_token_classes": "The classifier gives a row of class scores for every token, (B, T, C): a sequence has one "
                         "label, so its tokens must become one vector first.",
    "tags_from_pool": "The tagger gives one row per sequence: every token needs tag scores of its own, (B, T, K), "
                      "from its own vector.",
}


def real_tokens(lengths, T):
    """(B, T) booleans, True at the real tokens (lengths (B,), every sequence padded at its end)."""
    return np.arange(T)[None, :] < np.asarray(lengths)[:, None]


def padded_outputs(rng, lengths, T, d, fill=5.0):
    """(B, T, d) float32 backbone outputs whose padded positions hold ``fill``: what sits there is not the sequence,
    so a pool that takes it in shows."""
    h = normal(rng, len(lengths), T, d)
    h[~real_tokens(lengths, T)] = fill
    return h


def shape_hint(B, T):
    """A hint naming the mistake behind a wrongly shaped answer, whatever its values: class scores one row per
    position (T, C) or per token (B, T, C), tag scores one row per sequence (B, K)."""
    def hint(got, want):
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return None
        classes, tags = numbers(got[0]), numbers(got[1])
        if classes is not None and classes.ndim == 3:
            return TASK_MESSAGES["per_token_classes"]
        if classes is not None and classes.ndim == 2 and classes.shape[0] == T != B:
            return TASK_MESSAGES["pool_over_batch"]
        if tags is not None and tags.ndim == 2:
            return TASK_MESSAGES["tags_from_pool"]
        return None
    return hint


def task_heads_np(h, lengths, W_c, b_c, W_t, b_t, variant=None):
    """(class scores (B, C), tag scores (B, T, K)) from the backbone's output h (B, T, d), in float64; W_c (C, d) and
    W_t (K, d) as nn.Linear stores them. ``variant`` names a known mistake (TASK_MESSAGES' keys)."""
    variant = known_variant(variant, TASK_MESSAGES, "task_heads_np")
    h = np.asarray(h, dtype=float)
    W_c, b_c, W_t, b_t = (np.asarray(a, dtype=float) for a in (W_c, b_c, W_t, b_t))
    B, T, _ = h.shape
    real = real_tokens(lengths, T)[..., None]  # (B, T, 1)
    n = real.sum(axis=1)  # (B, 1)
    pooled = {"pool_padding": lambda: h.mean(axis=1), "divide_by_T": lambda: (h * real).sum(axis=1) / T,
              "sum_pool": lambda: (h * real).sum(axis=1), "first_token": lambda: h[:, 0],
              "last_position": lambda: h[:, -1], "pool_over_batch": lambda: h.mean(axis=0),
              "per_token_classes": lambda: h}.get(variant, lambda: (h * real).sum(axis=1) / n)()
    tags = h @ W_t.T + b_t  # (B, T, K)
    if variant == "tags_from_pool":
        tags = pooled @ W_t.T + b_t  # (B, K)
    return pooled @ W_c.T + b_c, tags


# predict_label_counts: a batch of 4 sequences of lengths 7, 5, 3 and 2, padded to T = 7; how many labels each head's
# loss compares its scores with: (classifier, tagger)
LABEL_COUNT_MISTAKES = [
    ((4, 28), "The padded positions have no tag: they are filler, not words, so the tagger's loss leaves them out and "
              "counts the real tokens only, 7 + 5 + 3 + 2 = 17."),
    ((28, 28), "The classifier gives one label per sequence, not per position: 4 labels, one for each sequence of the "
               "batch. The tagger's are the real tokens, 17."),
    ((4, 4), "The tagger gives one label per token, not per sequence: its loss counts the real tokens, 7 + 5 + 3 + 2 = "
             "17."),
    ((17, 17), "A sequence has one label however long it is: the classifier's loss compares 4 rows of scores, one per "
               "sequence; the tagger's compares one per real token, 17."),
    ((1, 17), "The classifier gives one label per sequence and there are 4 sequences in the batch: 4.")]
LABEL_COUNT_TRUTH = ("One label per sequence for the classifier, 4; one per real token for the tagger, 7 + 5 + 3 + 2 = "
                     "17: the 11 padded positions are filler, and the loss leaves them out.")
