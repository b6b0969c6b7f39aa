"""Notebook 09's scaled attention and its extension ``attention_in_blocks`` (the keys read a block at a time, with a
running softmax, never the whole score table), in NumPy float64, with the known mistakes a ``variant`` names and what
each is told; the watch that measures the widest score array a learner's function builds; and ``largest_weight``'s
statistic (the average largest weight of random queries), judged within a tolerance."""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from ..compare import Case, close, equal, predicate
from ..hints import known_mistakes, known_variant, numbers
from ..questions import NB09, Wording, described, question
from ..toolkit import TENSOR_MATCH, TOL, import_torch, normal, output_of, tensor

SDPA_MESSAGES = {
    "no_scale": "The weights are sharper than they should be: your scores look not scaled at all, too far apart, "
                "and the wider the vectors the sharper the softmax gets. How does the spread of a sum of D "
                "products grow with D?",
    "scale_d": "The weights are flatter than they should be: your scores look shrunk by D, more than the spread of "
               "a sum of D products asks for.",
    "query_axis": "Each column of the weights sums to 1 instead of each row: one query's weights should share "
                  "out 1 over the keys it reads.",
    "inverted_mask": "The mask looks inverted: the weights are 0 exactly where the mask is True, and True "
                     "means allowed.",
    "mask_after_softmax": "The mask looks applied after the softmax: a row's kept weights no longer sum to 1, "
                          "because the blocked keys took their share of the softmax first.",
    "mask_zero": "Blocked keys still get a weight, as much as a score of 0 would earn: a key the mask blocks "
                 "should get a weight of exactly 0.",
}

# predict_weight_total: the largest sum of one column of a (5, 7) cross-attention weight table
WEIGHT_TOTAL_MISTAKES = [
    (1.0, "1 would be right if each column were a distribution. The softmax runs over the keys of each query: a row "
          "sums to 1, a column does not. Each of the 5 queries can give this one source token up to all of its weight, "
          "so its column can gather up to 5."),
    (7.0, "7 counts the source tokens. One column holds one weight per query, 5 of them, each at most 1: the column "
          "can gather up to 5, when every target token reads only this source token."),
    (35.0, "35 counts the weights of the whole table, each of which is at most 1. One column holds 5 of them, one per "
           "query: up to 5."),
    (5 / 7, "5/7 is the average column: the 5 rows sum to 1 each, and 5 spread over 7 columns is 5/7. One column can "
            "take more than its share: up to 5, when every target token reads only this one.")]
WEIGHT_TOTAL_TRUTH = ("Each query's row sums to 1 over the keys; a column gathers one weight from each of the 5 queries, "
                      "each at most 1, so up to 5, reached when every target token reads only this one source token.")

# predict_table_gib: one layer's scores, 12 heads, T = 65,536, float32, in GiB
TABLE_MISTAKES = [
    (16.0, "16 GiB is one head's table: a layer has 12 heads, each with its own T x T scores."),
    (48.0, "48 counts one byte per score; a float32 takes 4."),
    (12 * 65536 * 4 / 2 ** 30, "That is T scores per head, one row of the table: the table has T rows of T scores."),
    (12 * 65536 ** 2 * 4 / 1e9, "206 is in GB (10^9 bytes); in GiB (2^30 bytes) the same table is 192."),
    (96.0, "96 would be float16, 2 bytes a score; a float32 takes 4."),
    (384.0, "384 counts 8 bytes a score (float64); a float32 takes 4.")]
TABLE_TRUTH = "12 heads x 65,536^2 scores x 4 bytes = 206,158,430,208 bytes = 192 GiB, for one layer and one example."

def _pair(a: bool, b: bool):
    """A test: is a decoded answer the pair of booleans (a, b)? (Booleans are not numbers to compare within a tolerance.)"""
    return lambda got: len(got) == 2 and [x is True for x in got] == [a, b] and all(isinstance(x, bool) for x in got)


# predict_causal_shuffles: under the causal mask, (all five shuffled: outputs only shuffled?, first two swapped: outputs
# of tokens 2, 3, 4 unchanged?)
SHUFFLE_MISTAKES = [
    (_pair(True, True), "The mask breaks part of the symmetry: after a shuffle, a token that lands earlier reads fewer "
                   "tokens than before, and one that lands later reads more, so their outputs change, not only "
                   "their places."),
    (_pair(False, False), "Tokens 2, 3 and 4 read tokens 0 and 1 whichever comes first: a weighted sum does not care in "
                     "which order its terms come, so their outputs stay as they were."),
    (_pair(True, False), "Both are the other way round: a shuffle changes which tokens each one may read, while swapping "
                    "the first two changes nothing for the tokens that read both.")]
SHUFFLE_TRUTH = ("(False, True): the mask decides which tokens a token reads, so a shuffle changes outputs; but among "
                 "the tokens it reads, the order is invisible, so the swap leaves tokens 2, 3 and 4 unchanged.")

# predict_jacobian_shrink: (largest |entry| of the softmax Jacobian at [1, 0.5, 0]) / (the same at [4, 2, 0]), about 2.2
JACOBIAN_MISTAKES = [
    (lambda g: g <= 1.2, "The Jacobian shrinks as the row sharpens: at [4, 2, 0] the top weight is 0.87, and the "
                         "largest entry, p(1 - p) for it, is 0.87 * 0.13 = 0.115 against 0.25, so the ratio asked "
                         "for is above 1."),
    (lambda g: 3.5 <= g <= 4.5, "4 treats the Jacobian as shrinking like 1 / factor. Its entries are made of the "
                                "weights: at [4, 2, 0] they are [0.87, 0.12, 0.02], and the largest entry, p(1 - p) "
                                "for the top weight, is 0.115 against 0.25."),
    (lambda g: 6 <= g <= 9, "e^2 = 7.4 treats the runner-up's weight as e^-gap, which holds only when the gap is many "
                            "units: at a gap of 2 the runner-up still keeps 0.12 and the top weight 0.87, so p(1 - p) "
                            "is 0.115, about half of 0.25."),
    (lambda g: g > 9, "Far too much: at [4, 2, 0] no weight is tiny yet, [0.87, 0.12, 0.02], and the largest entry, "
                      "p(1 - p) for the top weight, is 0.115 against 0.25. The shrink by hundreds comes at "
                      "[16, 8, 0], where the runner-up keeps about e^-8.")]
JACOBIAN_TRUTH = ("About 2.2: at [4, 2, 0] the weights are [0.87, 0.12, 0.02], and the largest entry is p(1 - p) for "
                  "the top weight, 0.87 * 0.13 = 0.115, against 0.25 at [1, 0.5, 0]. The gap to the runner-up, 2, is "
                  "not yet wide enough for e^-gap to rule; at [16, 8, 0] it is, and the entry is about 750 times "
                  "smaller.")

BLOCK_MESSAGES = {  # symptoms, and the likely cause in a learner's words; never the line to write
    "no_rescale": "Right when the largest score sits in the first block, wrong otherwise: what was added up before a "
                  "larger score turned up was counted against the old largest score, not the new one.",
    "per_block_softmax": "Each block's keys share out a weight of 1 among themselves, so a block of weak keys weighs "
                         "as much as a block holding the best match: the weights must add up to 1 over all the keys.",
    "last_block_dropped": "The keys of a last, shorter block are left out: the answer is right only when block divides "
                          "the number of keys.",
    "no_scale": "The weights are sharper than scaled attention's: the scores are not divided by sqrt(D).",
}
OVERFLOW = ("The output holds inf or NaN on large scores: e to the power of a score above about 88 is too large for "
            "float32. The softmax is the same if every score of a row has the same number taken away: which "
            "number keeps every exponential at most 1, when you have seen only some of the keys?")


def blocks_np(q, k, v, block, variant=None):
    """softmax(q k^T / sqrt(D)) v, reading the keys ``block`` at a time; or a known-wrong ``variant``."""
    variant = known_variant(variant, BLOCK_MESSAGES, "blocks_np")
    q, k, v = (np.asarray(a, dtype=float) for a in (q, k, v))
    scale = 1.0 if variant == "no_scale" else 1 / math.sqrt(q.shape[-1])
    T_k = k.shape[-2]
    starts = range(0, T_k - block + 1 if variant == "last_block_dropped" else T_k, block)
    if variant == "per_block_softmax":
        parts = []
        for s in starts:
            scores = q @ np.swapaxes(k[..., s:s + block, :], -1, -2) * scale
            w = np.exp(scores - scores.max(axis=-1, keepdims=True))
            parts.append(w / w.sum(axis=-1, keepdims=True) @ v[..., s:s + block, :])
        return np.mean(parts, axis=0)
    top = np.full(q.shape[:-1] + (1,), -np.inf)
    total = np.zeros(q.shape[:-1] + (1,))
    acc = np.zeros(q.shape[:-1] + (v.shape[-1],))
    for s in starts:
        scores = q @ np.swapaxes(k[..., s:s + block, :], -1, -2) * scale  # (..., T_q, <= block)
        new_top = np.maximum(top, scores.max(axis=-1, keepdims=True))
        shrink = 1.0 if variant == "no_rescale" else np.exp(top - new_top)
        p = np.exp(scores - new_top)
        total = total * shrink + p.sum(axis=-1, keepdims=True)  # (..., T_q, 1)
        acc = acc * shrink + p @ v[..., s:s + block, :]  # (..., T_q, D_v)
        top = new_top
    return acc / total


def watched(fn, q, k, v, block):
    """Run fn(q, k, v, block) on tensors; return (its output, the widest score array it built): the largest last
    axis of any tensor it made whose second-to-last axis is the queries' (tensors as wide as D or D_v left out, so
    the cases give T_q, D, D_v and T_k different sizes)."""
    torch = import_torch()
    from torch.overrides import TorchFunctionMode  # late: torch is imported only when a case runs in the kernel

    T_q, widths_of_rows = q.shape[-2], {q.shape[-1], v.shape[-1]}
    widest = [0]

    class Watch(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if "attention" in getattr(func, "__name__", "") and len(args) > 1 and isinstance(args[1], torch.Tensor):
                widest[0] = max(widest[0], int(args[1].shape[-2]))  # a fused attention reads all its keys at once
            for t in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(t, torch.Tensor) and t.dim() >= 2 and t.shape[-2] == T_q \
                        and t.shape[-1] not in widths_of_rows:
                    widest[0] = max(widest[0], int(t.shape[-1]))
            return out

    with Watch():
        out = fn(q, k, v, block)
    return out, widest[0]


def blocks_case(label, q, k, v, block):
    """One case of attention_in_blocks: equal to F.scaled_dot_product_attention, no score array wider than block."""
    def call(fn):
        with import_torch().no_grad():
            return watched(fn, tensor(q), tensor(k), tensor(v), block)  # (the output, the widest score array)

    def judge(got, want):
        out, widest = got
        if widest > block:
            return (f"a score array of {q.shape[-2]} queries x {widest} keys was built, with block = {block}: the keys "
                    "are to be read at most block at a time, so that no score array wider than block ever exists.")
        values = numbers(out)
        return OVERFLOW if values is not None and not np.isfinite(values).all() else close(**TOL).mismatch(out, want[0])

    want = lambda: (import_torch().nn.functional.scaled_dot_product_attention(tensor(q), tensor(k), tensor(v)), block)
    named = known_mistakes(*((lambda n=n: blocks_np(q, k, v, block, n), BLOCK_MESSAGES[n]) for n in BLOCK_MESSAGES),
                           **TENSOR_MATCH)
    return Case(label, call, want, predicate(judge), hints=[lambda got, want: named(output_of(got), output_of(want))])


def blocks_cases(hidden, rng):
    """attention_in_blocks' visible or hidden cases."""
    if not hidden:  # T_q, D, D_v and T_k of different sizes: the watch tells a score array by its shape
        return [blocks_case("attention_in_blocks(q (3, 2), k (10, 2), v (10, 5), block=4): the last block holds 2 keys",
                             normal(rng, 3, 2), normal(rng, 10, 2), normal(rng, 10, 5), 4),
                blocks_case("attention_in_blocks(q (2, 6, 3), k (2, 9, 3), v (2, 9, 4), block=2)", normal(rng, 2, 6, 3),
                             normal(rng, 2, 9, 3), normal(rng, 2, 9, 4), 2),
                blocks_case("attention_in_blocks with large scores (q and k near 10 in every feature: scores near 140, "
                            "e^140 is too large for float32), q (4, 2), k (7, 2), v (7, 3), block=3",
                            normal(rng, 4, 2) + 10, normal(rng, 7, 2) + 10, normal(rng, 7, 3), 3)]
    return [blocks_case("attention_in_blocks(q (2, 3, 5, 4), k (2, 3, 13, 4), v (2, 3, 13, 6), block=5)",
                         normal(rng, 2, 3, 5, 4), normal(rng, 2, 3, 13, 4), normal(rng, 2, 3, 13, 6), 5),
            blocks_case("attention_in_blocks(q (3, 4), k (6, 4), v (6, 2), block=1): one key at a time",
                         normal(rng, 3, 4, scale=3.0), normal(rng, 6, 4, scale=3.0), normal(rng, 6, 2), 1),
            blocks_case("attention_in_blocks(q (5, 3), k (4, 3), v (4, 2), block=8): one block holds every key",
                         normal(rng, 5, 3), normal(rng, 4, 3), normal(rng, 4, 2), 8),
            blocks_case("attention_in_blocks with large scores, q (2, 6, 3) and k (2, 11, 3) near 8 in every feature, "
                        "v (2, 11, 4), block=4", normal(rng, 2, 6, 3) + 8, normal(rng, 2, 11, 3) + 8,
                        normal(rng, 2, 11, 4), 4)]


# largest_weight (09): the average largest weight of random queries, measured by the learner

LARGEST_TOL = 0.03  # 2000 draws against 4000: the two means differ by under 0.01 at 1 sigma (per-draw spread <= 0.22)


def _largest_np(d_k, n_keys, seed, draws=4000):
    """The average largest weight of one query against n_keys keys (N(0, 1) entries), scaled three ways."""
    rng = np.random.default_rng(seed)
    s = np.einsum("nd,nkd->nk", rng.standard_normal((draws, d_k)), rng.standard_normal((draws, n_keys, d_k)))

    def top(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return float((e / e.sum(-1, keepdims=True)).max(-1).mean())
    return {"unscaled": top(s), "scaled": top(s / math.sqrt(d_k)), "by_d": top(s / d_k)}


def _largest_problem(got, want, d_k, scaled, n_keys, seed):
    """What is wrong with a learner's average largest weight, or None when it is within LARGEST_TOL."""
    if abs(got - want) <= LARGEST_TOL:
        return None
    said = (f"gave {got:.3f}, where one query against {n_keys} keys of width {d_k} gives an average largest "
            f"weight of about {want:.3f} (within {LARGEST_TOL}, over 2000 draws).")
    v = _largest_np(d_k, n_keys, seed)
    if abs(got - 1.0) < 0.02:
        return said + (" Every largest weight is 1: the softmax looks taken over an axis with one entry, not over "
                       "each query's keys.")
    if abs(got - 1 / n_keys) < 1e-4:
        return said + (f" That is 1 / n_keys, the mean of all the weights: take each query's largest weight over its "
                       "keys first, then average over the draws.")
    if scaled and abs(got - v["unscaled"]) <= LARGEST_TOL:
        return said + " That is the unscaled value: with scaled=True the weights are your attention's, scaled."
    if not scaled and abs(got - v["scaled"]) <= LARGEST_TOL:
        return said + (" That is the scaled value: with scaled=False the scores must not be scaled at all (your "
                       "scaled_dot_product_attention scales them: what could you feed it to undo that?).")
    if abs(got - v["by_d"]) <= LARGEST_TOL:
        return said + " The scores look divided by d_k: far flatter than attention's, which divides by sqrt(d_k)."
    if n_keys != 8 and abs(got - _largest_np(d_k, 8, seed)["scaled" if scaled else "unscaled"]) <= LARGEST_TOL:
        return said + f" That is the value for 8 keys: each query here has n_keys = {n_keys}."
    return said + (" Draw every entry of the queries and keys standard normal, each query with its own n_keys "
                   "keys, and return one float.")


def largest_case(label, d_k, scaled, n_keys, seed):
    def call(fn):
        torch = import_torch()
        out = fn(d_k, scaled, draws=2000, n_keys=n_keys, gen=torch.Generator().manual_seed(seed))
        try:
            return float(out)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(f"largest_weight should return one number (a float), not {type(out).__name__} of shape "
                            f"{tuple(getattr(out, 'shape', ()))}") from None

    def want():
        return _largest_np(d_k, n_keys, seed)["scaled" if scaled else "unscaled"]
    return Case(label, call, want,
                predicate(partial(_largest_problem, d_k=d_k, scaled=scaled, n_keys=n_keys, seed=seed)))


# ------------------------------------ predict_width_sweep: largest_weight at d_k = 1024 with 64 keys, both ways
WIDTH_MISTAKES = [  # tried in order on the scaled largest weight at d_k = 1024, 64 keys (the unscaled one is stated)
    (lambda g: g > 0.6, "The scaled scores keep a standard deviation of 1 at every width: far from one key taking "
                        "everything, and with 64 keys to share among, further still."),
    (lambda g: g >= 0.2, "About what 8 keys give: here the top score shares with 63 others. Scaled, the scores have "
                         "standard deviation 1, so the 64 exponentials add up to about 64 e^0.5 = 105, and the top "
                         "score, about 2.4 above their mean, brings e^2.4 = 11 of it: about a tenth."),
    (lambda g: g < 0.05, "The scale holds the scores' spread at 1, not at 0: the top of 64 scores of standard "
                         "deviation 1 stands about 2.4 above their mean, so the top key gets several times 1/64."),
]
WIDTH_TRUTH = ("About 0.11: scaled, the scores' standard deviation is 1 at every width, the 64 exponentials add up to "
               "about 64 e^0.5 = 105 and the top one, about 2.4 above their mean, brings e^2.4 = 11: about a tenth. "
               "(Unscaled, the standard deviation at d_k = 1024 is 32 and the top key takes about 0.94.)")


# This prediction stands before the exercise whose function its reveal runs: the reveal is a few cells on.
WIDTH_SWEEP_WORDING = Wording(NB09.visible, NB09.hidden,
                              "Prediction recorded: the sweep after largest_weight reveals the answer and whether "
                              "yours was right.")
predict_width_sweep = question(
    "09_attention", "predict_width_sweep", wording=WIDTH_SWEEP_WORDING, reason=True, compare=close(atol=0.05, rtol=0.0),
    atol=0.01, rtol=0.0, mistakes=WIDTH_MISTAKES, otherwise=WIDTH_TRUTH,
    form=described("a number between 1/64 and 1 (the scaled largest weight)", lambda v: isinstance(v, (int, float))
                   and not isinstance(v, bool) and 0.015 <= v <= 1.0))
