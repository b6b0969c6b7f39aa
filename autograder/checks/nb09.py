"""Checks for 09_attention: compared with PyTorch's own attention and autograd, given the same inputs and weights.

Cases are built from NumPy arrays (the grader judges evidence without importing torch);
torch is imported only when a case runs in the student's kernel. Hints rerun the known
wrong variants in NumPy (:mod:`autograder.checks.models.numpy_attention`, and
:mod:`autograder.checks.models.numpy_heads` for the bug hunt ``heads_self_attention`` and the manual
backward pass ``head_backward``) on the same inputs and name the one the answer matches.
"""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from .compare import Case, call_with, close, describe, equal, predicate, raises
from .hints import known_mistakes, numbers
from .models.attention_blocks import (JACOBIAN_MISTAKES, JACOBIAN_TRUTH, SDPA_MESSAGES, SHUFFLE_MISTAKES, SHUFFLE_TRUTH,
                                      TABLE_MISTAKES, TABLE_TRUTH, WEIGHT_TOTAL_MISTAKES, WEIGHT_TOTAL_TRUTH, blocks_cases,
                                      largest_case, predict_width_sweep)
from .models.attention_order import (EMPTY_ROW_MISTAKES, EMPTY_ROW_TRUTH, ROPE_ORDER_MISTAKES, ROPE_ORDER_TRUTH,
                                     empty_row_pair)
from .models.numpy_attention import mha_np, sdpa_np
from .models.numpy_context import READ_MESSAGES, read_context_np
from .models.numpy_heads import HEAD_MESSAGES, HEAD_VARIANTS, HEADS_MESSAGES, HEADS_VARIANTS, head_np, heads_np
from .models.numpy_tasks import LABEL_COUNT_MISTAKES, LABEL_COUNT_TRUTH
from .models.copy_measure import length_cases
from .models.two_tasks import accuracy_cases, task_heads_cases
from .models.recurrence_limits import (COPY_MISTAKES, COPY_TRUTH, FIRST_TOKEN_CHOICES, FIRST_TOKEN_MISTAKES,
                                       FIRST_TOKEN_TRUTH, FIXES, JOBS, LANGUAGE_MISTAKES, LANGUAGE_TRUTH,
                                       PATH_STEP_MISTAKES, PATH_STEP_TRUTH, STEP_MISTAKES, STEP_TRUTH, fixes_problem)
from .questions import NB09, a_number, as_tuple, described, is_int, numbers_tuple, one_of, plain, question
from .registry import exercise
from .toolkit import MATCH, TOL, causal, diagnose, import_torch, names_row, normal, output_of, tensor

A = "09_attention"
check = exercise(A)


# -------------------------------------------------------------------------- attention

class close_or_inverted(close):
    """close; and an error raised for a mask whose every row keeps a key reads as a mask turned around."""

    def __call__(self, got, want, case):
        __tracebackhide__ = True
        if "ValueError" in got.raised and not want.raised:
            self.fail(case, f"raised ValueError: {got.message}. But every row of this mask keeps at least one key, "
                            "so no error is due: look at each row (one query, over the keys), not each column "
                            "(a key no query may read, like padding, is fine). Or the mask looks inverted: True = "
                            "allowed here, as in F.scaled_dot_product_attention (nn.MultiheadAttention's attn_mask "
                            "is the one where True = not allowed).")
        super().__call__(got, want, case)


def _sdpa_case(label, q, k, v, mask=None):
    def call(fn):
        args = [tensor(q), tensor(k), tensor(v)]
        return fn(*args) if mask is None else fn(*args, mask=tensor(mask))

    def want():
        torch = import_torch()
        F = torch.nn.functional
        tq, tk, tv = tensor(q), tensor(k), tensor(v)
        m = None if mask is None else tensor(mask)
        out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=m)
        # The weights are the output for values = the identity: row i of softmax(...) @ I.
        eye = torch.eye(tk.shape[-2]).expand(*tk.shape[:-1], tk.shape[-2])
        weights = F.scaled_dot_product_attention(tq, tk, eye, attn_mask=m)
        return out, weights

    variants = {n: (lambda n=n: sdpa_np(q, k, v, mask, n)) for n in SDPA_MESSAGES
                if mask is not None or "mask" not in n}
    return Case(label, call, want, close_or_inverted(**TOL), hints=[diagnose(variants, SDPA_MESSAGES)])


EMPTY_ROW = ("keeps no key: its softmax would be 0/0 = NaN. "
             "Raise ValueError naming the row, as 08's masked_softmax does; a mask may be smaller than the "
             "scores, so look for the empty row once it has the scores' shape")


def _empty_row_case(label, q, k, v, mask, row):
    """A mask with a row that keeps no key: the contract of 08, 09 and 10 is a ValueError naming that row."""
    def call(fn):
        return fn(tensor(q), tensor(k), tensor(v), mask=tensor(mask))
    return Case(label, call, raises(f"row {row} {EMPTY_ROW}"), empty_row(row))


class empty_row(names_row):
    """A ValueError naming the row is due; a result returned instead is described by what is in it."""

    def __call__(self, got, want, case):
        __tracebackhide__ = True
        if want.raised and not got.raised:
            out = numbers(output_of(got.decoded))
            found = ""
            if out is not None and out.dtype.kind in "fc":
                found = (" (it holds NaN: the softmax of a row of -inf is 0/0)" if np.isnan(out).any()
                         else " (with no NaN: the empty row was filled with something)")
            self.fail(case, f"returned a result{found} instead of raising ValueError. Row {self.row} {EMPTY_ROW}.")
        super().__call__(got, want, case)


@check
def scaled_dot_product_attention(hidden, rng):
    if not hidden:
        return [
            _sdpa_case("scaled_dot_product_attention(q, k, v) with q = [[1, 0]], k = [[1, 0], [0, 1]], "
                       "v = [[1, 2], [3, 4]]: the weights are softmax([1, 0] / sqrt(2)) = [0.6698, 0.3302]",
                       np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 2.0], [3.0, 4.0]])),
            _sdpa_case("q (2, 3, 4), k (2, 5, 4), v (2, 5, 6): 3 queries, 5 keys, no mask",
                       normal(rng, 2, 3, 4), normal(rng, 2, 5, 4), normal(rng, 2, 5, 6)),
            _sdpa_case("q, k, v (1, 4, 8) with the causal mask torch.tril(torch.ones(4, 4, dtype=torch.bool)) "
                       "(True = allowed)", normal(rng, 1, 4, 8), normal(rng, 1, 4, 8), normal(rng, 1, 4, 8), causal(4)),
            _sdpa_case("q (3, 4), k and v (4, 4), mask (1, 4) = [[True, True, True, False]]: key 3 is padding, a "
                       "column no query may read, but every row keeps a key, so there is no error",
                       normal(rng, 3, 4), normal(rng, 4, 4), normal(rng, 4, 4), np.array([[True, True, True, False]])),
            _empty_row_case("q, k, v (4, 4) with a mask (4, 4) whose row 2 is all False: row 2", normal(rng, 4, 4),
                            normal(rng, 4, 4), normal(rng, 4, 4), causal(4) & (np.arange(4) != 2)[:, None], 2),
        ]
    lengths = np.array([6, 2])
    padding = (np.arange(6) < lengths[:, None])[:, None, None, :]  # (2, 1, 1, 6)
    return [
        _sdpa_case("q, k, v (2, 3, 5, 8), causal mask (5, 5) broadcast over batch and heads",
                   normal(rng, 2, 3, 5, 8), normal(rng, 2, 3, 5, 8), normal(rng, 2, 3, 5, 8), causal(5)),
        _sdpa_case("q (2, 2, 4, 16), k and v (2, 2, 6, 16), a padding mask (2, 1, 1, 6)",
                   normal(rng, 2, 2, 4, 16), normal(rng, 2, 2, 6, 16), normal(rng, 2, 2, 6, 3), padding),
        _sdpa_case("q (5, 64), k (7, 64), v (7, 4): a wide head", normal(rng, 5, 64, scale=0.3),
                   normal(rng, 7, 64, scale=0.3), normal(rng, 7, 4)),
        _sdpa_case("q (3, 6, 2), k (3, 6, 2), v (3, 6, 2), causal mask", normal(rng, 3, 6, 2, scale=2.0),
                   normal(rng, 3, 6, 2, scale=2.0), normal(rng, 3, 6, 2), causal(6)),
        _empty_row_case("q, k, v (2, 5, 4) with a mask (2, 5, 5) whose row 3 of example 1 is all False: row (1, 3)",
                        normal(rng, 2, 5, 4), normal(rng, 2, 5, 4), normal(rng, 2, 5, 4),
                        np.stack([causal(5), causal(5) & (np.arange(5) != 3)[:, None]]), 3),
    ]


# ------------------------------------------------------ largest_weight: the scale, measured by the learner

@check
def largest_weight(hidden, rng):
    """A statistic of random draws: the learner's draws are their own, so the answer is judged within a tolerance."""
    if not hidden:
        return [largest_case(f"largest_weight({d_k}, scaled={scaled}, draws=2000, n_keys={n})", d_k, scaled, n, seed)
                for d_k, scaled, n, seed in [(4, False, 8, 1), (64, False, 8, 2), (64, True, 8, 3), (16, True, 2, 4)]]
    return [largest_case(f"largest_weight({d_k}, scaled={scaled}, draws=2000, n_keys={n})", d_k, scaled, n, seed)
            for d_k, scaled, n, seed in [(32, False, 4, 11), (8, True, 16, 12), (128, True, 8, 13)]]


# --------------------------------------------------------------------- multi-head attention

MHA_MESSAGES = {
    "no_scale": "The weights are sharper than nn.MultiheadAttention's: the scores look not scaled at all.",
    "scale_d_model": "The weights are flatter than nn.MultiheadAttention's: the scores look shrunk by sqrt(d_model), "
                     "where one head's dot product sums only D = d_model // n_heads products: the square root of "
                     "the head width is the spread to undo.",
    "merge_without_transpose": "Each output row mixes several positions: the heads look merged without the transpose "
                               "back, so the (B, H, T, D) outputs were read as if they were laid out (B, T, H, D).",
    "split_without_transpose": "Each head's rows mix several positions: the heads look split by reshaping straight "
                               "to (B, H, T, D), cutting (B, T, d_model) in the order the positions come, not the "
                               "features. Which axis holds one head's D features?",
    "keys_from_x": "Keys and values come from x, not from context: for cross-attention they must be "
                   "projections of context.",
    "wq_for_keys": "The keys look projected with w_q: the scores match keys made by the query layer, not w_k.",
    "inverted_mask": "The mask looks inverted: in this course True = allowed, as in F.scaled_dot_product_attention "
                     "(it is nn.MultiheadAttention's attn_mask that uses True = not allowed).",
    "no_output_projection": "The output projection is missing: pass the merged heads through w_o.",
}

ROPE_MESSAGES = {
    "rope_v": "The positions reach what is read, not only where it is read from: the output moves even where "
              "every query scores every key alike, so something besides the scores q . k has been turned.",
    "rope_before_split": "Head 0 and the last head do not turn their pairs at the same speeds: one head of this "
                         "layer differs from a one-head layer of width D = d_model // n_heads on its slice.",
    "rope_no_offset": "The queries and keys stand q_start positions too close: with q_start, the layer's answer "
                      "for a sequence's newest token is not the last row of its run on the whole sequence (RoPE "
                      "sees only the difference of the positions, so moving both by q_start changes nothing "
                      "either).",
    "rope_default_base": "The frequencies ignore rope_base: they are the default 10000's, whatever the layer was "
                         "built with.",
    "rope_ignored": "rope=True changed nothing: the scores do not depend on the positions at all.",
    "rope_q_only": "A score depends on the query's position and not on the key's: moving every key to another "
                   "position changes nothing.",
    "rope_k_only": "A score depends on the key's position and not on the query's: q_start changes nothing, and "
                   "moving the query changes nothing.",
    "rope_half": "That is the rotate-half layout (feature j paired with j + D/2): notebook 07's apply_rope pairs "
                 "neighbours (x[..., 2k], x[..., 2k+1]).",
}


def mha_params(rng, d, H, bias=True):
    p = {"H": H}
    for n in "qkvo":
        p["W" + n] = normal(rng, d, d, scale=1 / np.sqrt(d))
        if bias:
            p["b" + n] = normal(rng, d, scale=0.1)
    return p


def load_mha(module, p):
    """Copy the weights p into a module with w_q, w_k, w_v, w_o (nn.Linear)."""
    torch = import_torch()
    with torch.no_grad():
        for n in "qkvo":
            lin = getattr(module, "w_" + n)
            lin.weight.copy_(tensor(p["W" + n]))
            if "b" + n in p:
                lin.bias.copy_(tensor(p["b" + n]))
    return module


def torch_mha(p, x, context=None, mask=None):
    """nn.MultiheadAttention(batch_first=True) with the weights p; mask True = allowed."""
    torch = import_torch()
    d, H = x.shape[-1], p["H"]
    bias = "bq" in p
    ref = torch.nn.MultiheadAttention(d, H, bias=bias, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(tensor(np.concatenate([p["Wq"], p["Wk"], p["Wv"]])))  # (3 d, d)
        ref.out_proj.weight.copy_(tensor(p["Wo"]))
        if bias:
            ref.in_proj_bias.copy_(tensor(np.concatenate([p["bq"], p["bk"], p["bv"]])))
            ref.out_proj.bias.copy_(tensor(p["bo"]))
    c = x if context is None else context
    kwargs = {}
    if mask is not None:
        B, Tq, Tk = x.shape[0], x.shape[1], c.shape[1]
        if mask.ndim == 2:
            kwargs["attn_mask"] = tensor(~mask)  # PyTorch: True = not allowed
        elif mask.shape[2] == 1:
            kwargs["key_padding_mask"] = tensor(~mask[:, 0, 0, :])  # (B, T_k)
        else:
            full = np.broadcast_to(~mask, (B, H, Tq, Tk)).reshape(B * H, Tq, Tk)  # batch-major, as nn wants
            kwargs["attn_mask"] = tensor(full)
    with torch.no_grad():
        out, _ = ref(tensor(x), tensor(c), tensor(c), need_weights=False, **kwargs)
    return out


def _mha_case(label, p, x, context=None, mask=None, rope=None, q_start=None):
    """rope None: MultiHeadAttention(d, H[, bias=False]); a number: rope=True with that rope_base.
    q_start None: forward without it. Without rope the reference is nn.MultiheadAttention; with rope, mha_np."""
    d = x.shape[-1]

    def call(cls):
        torch = import_torch()
        kwargs = {} if "bq" in p else {"bias": False}
        if rope is not None:
            kwargs.update(rope=True, rope_base=rope)
        module = cls(d, p["H"], **kwargs)
        load_mha(module, p)
        kwargs = {}
        if context is not None:
            kwargs["context"] = tensor(context)
        if mask is not None:
            kwargs["mask"] = tensor(mask)
        if q_start is not None:
            kwargs["q_start"] = q_start
        with torch.no_grad():
            return module(tensor(x), **kwargs)

    messages = dict(MHA_MESSAGES)
    rope_kw = {}
    if rope is not None:
        messages.update(ROPE_MESSAGES)
        rope_kw = dict(rope=True, q_start=q_start or 0, base=rope)
    variants = {n: (lambda n=n: mha_np(p, x, context, mask, n, **rope_kw)) for n in messages
                if (mask is not None or n != "inverted_mask") and (context is not None or n != "keys_from_x")
                and (rope is not None or not n.startswith("rope"))}
    if rope is None:
        want = lambda: torch_mha(p, x, context, mask)
    else:
        want = lambda: tensor(mha_np(p, x, context, mask, **rope_kw))
    return Case(label, call, want, close_or_inverted(**TOL), hints=[diagnose(variants, messages)])


AMBIGUOUS_MASK = ("a mask of shape (B, T_q, T_k) is ambiguous: broadcast against the scores (B, n_heads, T_q, "
                  "T_k), its first axis would be read as the heads; give (T_q, T_k), or (B, 1, T_q, T_k) for one "
                  "mask per example")


def _ambiguous_mask_case(label, p, x, mask):
    """A 3-D mask: the contract is a ValueError, because broadcasting would apply example b's mask to head b."""
    def call(cls):
        torch = import_torch()
        module = cls(x.shape[-1], p["H"], **({} if "bq" in p else {"bias": False}))
        load_mha(module, p)
        with torch.no_grad():
            return module(tensor(x), mask=tensor(mask))

    return Case(label, call, raises(AMBIGUOUS_MASK), close(**TOL))


def cache_mask(q_start, Tq, Tk):
    """(T_q, T_k): query i, at position q_start + i, may read the keys at positions <= q_start + i."""
    return np.arange(Tk)[None, :] <= q_start + np.arange(Tq)[:, None]


@check
def MultiHeadAttention(hidden, rng):
    if not hidden:
        p = mha_params(rng, 8, 2)
        x = normal(rng, 2, 5, 8)
        return [
            _mha_case("MultiHeadAttention(8, 2) on x (2, 5, 8), self-attention", p, x),
            _mha_case("MultiHeadAttention(8, 2) on x (2, 5, 8) with the causal mask (5, 5), True = allowed",
                      p, x, mask=causal(5)),
            _mha_case("MultiHeadAttention(8, 2), cross-attention: x (2, 5, 8) reads context (2, 7, 8)",
                      p, x, context=normal(rng, 2, 7, 8)),
            _mha_case("MultiHeadAttention(8, 2, rope=True) on x (2, 5, 8) with the causal mask (5, 5): the tokens "
                      "at positions 0 .. 4", p, x, mask=causal(5), rope=10000.0),
            _mha_case("MultiHeadAttention(8, 2, rope=True, rope_base=100.0), q_start=3: x (2, 2, 8) holds the "
                      "tokens at positions 3, 4, context (2, 5, 8) the tokens at 0 .. 4 (as with a KV cache), "
                      "mask (2, 5) keeping keys <= the query's position", p, normal(rng, 2, 2, 8),
                      context=normal(rng, 2, 5, 8), mask=cache_mask(3, 2, 5), rope=100.0, q_start=3),
            _ambiguous_mask_case("MultiHeadAttention(8, 2) on x (2, 5, 8) with a mask of shape (2, 5, 5), one per "
                                 "example: refuse it with a ValueError (broadcasting would apply example 1's mask "
                                 "to head 1 of every example); mask[:, None], (2, 1, 5, 5), says what is meant",
                                 p, x, np.stack([causal(5), causal(5) & (np.arange(5) < 3)])),
        ]
    lengths = np.array([9, 4, 1])
    padding = (np.arange(9) < lengths[:, None])[:, None, None, :]  # (3, 1, 1, 9)
    per_example = causal(6)[None, None] & (np.arange(6) < np.array([6, 3])[:, None])[:, None, None, :]  # (2, 1, 6, 6)
    return [
        _mha_case("MultiHeadAttention(12, 3, bias=False) on x (3, 4, 12)", mha_params(rng, 12, 3, bias=False),
                  normal(rng, 3, 4, 12)),
        _mha_case("MultiHeadAttention(16, 4), cross-attention x (3, 6, 16), context (3, 9, 16), padding mask "
                  "(3, 1, 1, 9)", mha_params(rng, 16, 4), normal(rng, 3, 6, 16), normal(rng, 3, 9, 16), padding),
        _mha_case("MultiHeadAttention(8, 4) on x (2, 6, 8), a causal and padding mask per example (2, 1, 6, 6)",
                  mha_params(rng, 8, 4), normal(rng, 2, 6, 8), mask=per_example),
        _mha_case("MultiHeadAttention(6, 1): one head, x (1, 3, 6), context (1, 2, 6)", mha_params(rng, 6, 1),
                  normal(rng, 1, 3, 6), normal(rng, 1, 2, 6)),
        _mha_case("MultiHeadAttention(16, 4, rope=True, rope_base=500.0) on x (2, 6, 16), causal mask",
                  mha_params(rng, 16, 4), normal(rng, 2, 6, 16), mask=causal(6), rope=500.0),
        _mha_case("MultiHeadAttention(12, 3, bias=False, rope=True), q_start=4: one new token x (1, 1, 12) reads "
                  "context (1, 5, 12), the tokens at 0 .. 4", mha_params(rng, 12, 3, bias=False),
                  normal(rng, 1, 1, 12), normal(rng, 1, 5, 12), rope=10000.0, q_start=4),
        _mha_case("MultiHeadAttention(8, 2, rope=True), cross-attention x (2, 3, 8), context (2, 6, 8), q_start=2",
                  mha_params(rng, 8, 2), normal(rng, 2, 3, 8, scale=2.0), normal(rng, 2, 6, 8, scale=2.0),
                  rope=10000.0, q_start=2),
        _mha_case("MultiHeadAttention(8, 2) (rope=False) with q_start=5: without RoPE q_start changes nothing",
                  mha_params(rng, 8, 2), normal(rng, 2, 4, 8), mask=causal(4), q_start=5),
        # fixed shapes, whatever the seed: a 3-D mask broadcasts silently when B equals n_heads or B is 1
        _ambiguous_mask_case("MultiHeadAttention(12, 3) on x (3, 4, 12) with a mask (3, 4, 4)", mha_params(rng, 12, 3),
                             normal(rng, 3, 4, 12), np.broadcast_to(causal(4), (3, 4, 4)).copy()),
        _ambiguous_mask_case("MultiHeadAttention(8, 2) on x (1, 4, 8) with a mask (1, 4, 4)", mha_params(rng, 8, 2),
                             normal(rng, 1, 4, 8), causal(4)[None]),
    ]


# ------------------------------------------------------------------ bug hunt: heads_self_attention


def _heads_case(label, x, n_heads, mask=None):
    def call(fn):
        torch = import_torch()
        with torch.no_grad():
            return fn(tensor(x), n_heads) if mask is None else fn(tensor(x), n_heads, tensor(mask))

    variants = {n: (lambda n=n: heads_np(x, n_heads, mask, n)) for n in HEADS_VARIANTS}
    return Case(label, call, lambda: tensor(heads_np(x, n_heads, mask)), close(**TOL),
                hints=[diagnose(variants, HEADS_MESSAGES)])


@check
def heads_self_attention(hidden, rng):
    if not hidden:
        return [
            _heads_case("heads_self_attention(x, 2, causal mask (4, 4)) with x (1, 4, 4) = 0 .. 15 / 8: two heads of "
                        "width 2, position t reads positions 0 .. t only",
                        (np.arange(16, dtype=np.float32) / 8).reshape(1, 4, 4), 2, causal(4)),
            _heads_case("heads_self_attention(x, 1) with x (2, 3, 4): one head, no mask", normal(rng, 2, 3, 4), 1),
            _heads_case("heads_self_attention(x, 2) with x (2, 5, 8), no mask", normal(rng, 2, 5, 8), 2),
        ]
    return [
        _heads_case("heads_self_attention(x, 4, causal mask (6, 6)) with x (3, 6, 16)", normal(rng, 3, 6, 16), 4,
                    causal(6)),
        _heads_case("heads_self_attention(x, 3) with x (2, 4, 12), no mask", normal(rng, 2, 4, 12), 3),
        _heads_case("heads_self_attention(x, 2, causal mask (5, 5)) with x (1, 5, 32): wide heads",
                    normal(rng, 1, 5, 32), 2, causal(5)),
    ]


# ------------------------------------------------------------------- manual backward: head_backward

GRADS = ("grad_E", "grad_W_q", "grad_W_k", "grad_W_v")


def _autograd(ids, E, W_q, W_k, W_v, grad_out):
    """The referee: torch.autograd on float64 tensors, with the causal mask filled with -inf before the softmax."""
    torch = import_torch()
    leaves = [torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=True) for a in (E, W_q, W_k, W_v)]
    t_E, t_q, t_k, t_v = leaves
    x = t_E[torch.as_tensor(np.asarray(ids))]  # (T, d)
    q, k, v = x @ t_q, x @ t_k, x @ t_v
    T = q.shape[0]
    scores = (q @ k.T / math.sqrt(q.shape[1])).masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)),
                                                           float("-inf"))
    (torch.softmax(scores, dim=-1) @ v).backward(torch.tensor(np.asarray(grad_out, dtype=np.float64)))
    return tuple(t.grad.numpy().copy() for t in leaves)


def _which_advice(names):
    if names == ["grad_E"]:
        return ("Every weight gradient is right, so the mistake comes after them: x = E[ids] feeds three products, so "
                "its gradient is the sum of the three grad_x, and embedding_backward turns it into rows of E.")
    if "grad_W_v" not in names:
        return ("grad_W_v is right, so out = weights @ v is undone well; the mistake is on the path through the "
                "softmax and the scores: one Jacobian per row of the weights, the 1/sqrt(D) of the scores, and "
                "scores = q @ k.T, a product whose second factor is k.T.")
    return ("Start from the last line of the forward pass: out = weights @ v is a product y = x W with x = weights "
            "and W = v, and linear_backward returns (grad_x, grad_W) in that order.")


def _grads_test(got, want):
    if not isinstance(got, (tuple, list)) or len(got) != 4:
        return f"expected a tuple of 4 arrays ({', '.join(GRADS)}), got {describe(got)}."
    values = close(atol=1e-8, rtol=1e-6, dtype="f")
    wrong = [(name, message) for name, g, w in zip(GRADS, got, want) if (message := values.mismatch(g, w))]
    if not wrong:
        return None
    names = [name for name, _ in wrong]
    return (f"{', '.join(names)} {'is' if len(names) == 1 else 'are'} wrong, the rest right. {_which_advice(names)} "
            f"{wrong[0][0]}: {wrong[0][1]}")


def _head_case(label, ids, E, W_q, W_k, W_v, grad_out):
    args = (np.asarray(ids), *(np.asarray(a, dtype=np.float64) for a in (E, W_q, W_k, W_v, grad_out)))
    hint = known_mistakes(*((lambda n=n: head_np(*args, n), HEAD_MESSAGES[n]) for n in HEAD_VARIANTS), **MATCH)
    return Case(label, call_with(*args), lambda: _autograd(*args), predicate(_grads_test), hints=[hint])


def _random_head(rng, T, V, d, D, D_v):
    ids = rng.integers(0, V, size=T)
    ids[-1] = ids[0]  # one id repeated, whatever the seed: its rows' gradients must add up
    return (ids, rng.normal(size=(V, d)), rng.normal(size=(d, D)), rng.normal(size=(d, D)), rng.normal(size=(d, D_v)),
            rng.normal(size=(T, D_v)))


@check
def head_backward(hidden, rng):
    if not hidden:
        return [
            _head_case("head_backward with ids [1, 0, 1] (id 1 twice), E (3, 2), W_q, W_k, W_v (2, 2), grad_out of ones",
                       np.array([1, 0, 1]), [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], [[1.0, 0.0], [0.0, 2.0]],
                       [[0.0, 1.0], [1.0, 1.0]], [[1.0, -1.0], [2.0, 0.0]], np.ones((3, 2))),
            _head_case("head_backward with T = 5 ids of a vocabulary of 6, d = 4, D = 3, D_v = 2",
                       *_random_head(rng, 5, 6, 4, 3, 2)),
            _head_case("head_backward with one token: it reads only itself, its weight is 1 whatever its score, so no "
                       "gradient reaches W_q or W_k", *_random_head(rng, 1, 4, 3, 2, 2)),
        ]
    return [
        _head_case("head_backward with T = 8 ids of a vocabulary of 10, d = 6, D = 4, D_v = 5",
                   *_random_head(rng, 8, 10, 6, 4, 5)),
        _head_case("head_backward with T = 4 ids of a vocabulary of 3, d = 2, D = 8, D_v = 1",
                   *_random_head(rng, 4, 3, 2, 8, 1)),
    ]


# ------------------------------------------------------------------ questions (predictions)

ask = partial(question, A, wording=NB09)


predict_weight_total = ask("predict_weight_total", reason=True, form=a_number, compare=close(atol=1e-4, rtol=0.0),
                           atol=1e-4, rtol=0.0, mistakes=WEIGHT_TOTAL_MISTAKES, otherwise=WEIGHT_TOTAL_TRUTH)
predict_table_gib = ask("predict_table_gib", reason=True, form=a_number, compare=close(atol=0.5, rtol=0.0), atol=0.01,
                        rtol=1e-3, mistakes=TABLE_MISTAKES, otherwise=TABLE_TRUTH)
predict_jacobian_shrink = ask("predict_jacobian_shrink", reason=True, form=a_number, compare=close(atol=0.4, rtol=0.0),
                              mistakes=JACOBIAN_MISTAKES, otherwise=JACOBIAN_TRUTH)
predict_causal_shuffles = ask("predict_causal_shuffles", reason=True, compare=equal(), normalize=as_tuple,
                              mistakes=SHUFFLE_MISTAKES, otherwise=SHUFFLE_TRUTH, form=described("a pair of True/False",
                              lambda v: isinstance(v, (tuple, list)) and len(v) == 2 and all(type(x) is bool for x in v)))


predict_empty_row = ask("predict_empty_row", reason=True, compare=equal(), normalize=as_tuple, mistakes=EMPTY_ROW_MISTAKES,
                        otherwise=EMPTY_ROW_TRUTH, form=described('a pair, each "nan", "zeros", "uniform" or "error"',
                                                                  empty_row_pair))
predict_rope_order = ask("predict_rope_order", reason=True, compare=equal(), normalize=as_tuple, mistakes=ROPE_ORDER_MISTAKES,
                         otherwise=ROPE_ORDER_TRUTH, form=described("a pair of True/False", lambda v: isinstance(
                             v, (tuple, list)) and len(v) == 2 and all(type(x) is bool for x in v)))

predict_sharp_weight = ask(
    "predict_sharp_weight", reason=True, form=a_number, compare=close(atol=0.005, rtol=0.0),
    atol=0.005, rtol=0.0, mistakes=[
        (math.e / (math.e + math.exp(0.85) + 1), "Multiplying the scores is not adding to them: softmax ignores a "
                                                 "constant added to every score, but scaling them by 10 makes every "
                                                 "gap 10 times wider."),
        (1 / 3, "Scaling up makes the weights sharper, not flatter: every gap between the scores grows tenfold."),
        (0.5, "The top two do not share equally: after scaling the top score leads the runner-up by 1.5, not by 0, "
              "so its exponential is e^1.5 (about 4.5) times the runner-up's."),
        (1 / (1 + math.exp(-1)), "0.731 is the top weight for a lead of 1 (a pair of scores one apart, as in "
                                 "[10, 9, 0]). Here the runner-up was 0.15 behind, so 1.5 behind after scaling: "
                                 "it keeps e^-1.5, not e^-1."),
        (lambda g: g >= 0.99, "Not one key taking everything: the last key, 10 behind now, drops out, but the "
                              "runner-up, 0.15 behind, is only 1.5 behind after scaling: its e^-1.5 still counts."),
        (0.1, "Not the score divided by 10: softmax([10, 8.5, 0]) = [e^10, e^8.5, 1] / (e^10 + e^8.5 + 1)."),
        (10 / 18.5, "Softmax exponentiates: the first weight is e^10 / (e^10 + e^8.5 + 1), not 10 / (10 + 8.5 + 0).")],
    otherwise="softmax([10, 8.5, 0]) = [e^10, e^8.5, 1] / (e^10 + e^8.5 + 1): the first key takes 0.818. The gap to "
              "the runner-up, 1.5 after scaling, decides; the last key, 10 behind, drops out.")


predict_path_steps = ask("predict_path_steps", reason=True, form=numbers_tuple(2), compare=close(atol=0.0, rtol=0.0),
                         atol=0.0, rtol=0.0, mistakes=PATH_STEP_MISTAKES, otherwise=PATH_STEP_TRUTH)


predict_dependent_steps = ask(
    "predict_dependent_steps", reason=True, form=numbers_tuple(2), compare=close(atol=0.1, rtol=0.0), atol=0.1,
    rtol=0.0, mistakes=STEP_MISTAKES, otherwise=STEP_TRUTH)


# ------------------------------------------------------- read_context: a fixed vector against attention

MATCH_F32 = dict(atol=1e-4, rtol=1e-3)  # a float32 answer against a float64 NumPy variant


def _read_case(label, query, H, attend):
    def call(fn):
        return fn(tensor(query), tensor(H), attend)

    def want():
        torch = import_torch()
        if not attend:
            return tensor(H)[:, -1]
        out = torch.nn.functional.scaled_dot_product_attention(tensor(query)[:, None, :], tensor(H), tensor(H))
        return out[:, 0]

    hint = known_mistakes(*((lambda v=v: read_context_np(query, H, attend, v), m) for v, m in READ_MESSAGES.items()),
                          **MATCH_F32)
    return Case(label, call, want, close(**TOL), hints=[hint])


@check
def read_context(hidden, rng):
    if not hidden:
        H = np.array([[[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]]], dtype=np.float32)  # (B, n, d) = (1, 3, 2)
        query = np.array([[0.0, 3.0]], dtype=np.float32)  # (B, d) = (1, 2)
        Hb, qb = normal(rng, 2, 5, 4), normal(rng, 2, 4)
        return [
            _read_case("read_context(query, H, attend=False) with H (1, 3, 2) is the last state, [[2, 2]]", query, H,
                       False),
            _read_case("read_context(query [[0, 3]], H = [[[1, 0], [0, 1], [2, 2]]], attend=True) weighs the states "
                       "by softmax([0, 3, 6] / sqrt(2))", query, H, True),
            _read_case("read_context of a batch, query (2, 4), H (2, 5, 4), attend=True", qb, Hb, True),
            _read_case("read_context of a batch, query (2, 4), H (2, 5, 4), attend=False", qb, Hb, False),
        ]
    Hb, qb = normal(rng, 3, 7, 6), normal(rng, 3, 6, scale=2.0)
    return [_read_case("read_context, query (3, 6), H (3, 7, 6), attend=True", qb, Hb, True),
            _read_case("read_context, query (3, 6), H (3, 7, 6), attend=False", qb, Hb, False)]


@check
def accuracy_by_length(hidden, rng):
    return length_cases(hidden, rng)


predict_copy_accuracy = ask("predict_copy_accuracy", reason=True, form=numbers_tuple(2),
                            compare=close(atol=0.15, rtol=0.0), atol=0.05, rtol=0.0, mistakes=COPY_MISTAKES,
                            otherwise=COPY_TRUTH)


predict_first_token = ask("predict_first_token", reason=True, form=one_of(FIRST_TOKEN_CHOICES), compare=equal(),
                          normalize=plain, mistakes=FIRST_TOKEN_MISTAKES, otherwise=FIRST_TOKEN_TRUTH)


@check
def match_fixes(hidden, rng):
    """The cure of each measured symptom: one case, the same hidden (the answer is a fact, not a function)."""
    return [Case("match_fixes() names the fix that cures each of the 5 symptoms A to E", lambda fn: fn(),
                 lambda: dict(FIXES), predicate(lambda got, want: fixes_problem(got)))]


# ------------------------------------------------------- one backbone, two heads: TaskHeads

@check
def TaskHeads(hidden, rng):
    return task_heads_cases(hidden, rng)


predict_label_counts = ask(
    "predict_label_counts", reason=True, form=numbers_tuple(2), compare=close(atol=0.0, rtol=0.0), atol=0.0, rtol=0.0,
    mistakes=LABEL_COUNT_MISTAKES, otherwise=LABEL_COUNT_TRUTH)


predict_language_id = ask(
    "predict_language_id", reason=True, compare=equal(), mistakes=LANGUAGE_MISTAKES, otherwise=LANGUAGE_TRUTH,
    normalize=as_tuple, form=described("a pair (\"classifier\" or \"tagger\", a whole number)", lambda v: isinstance(
        v, (tuple, list)) and len(v) == 2 and plain(v[0]) in JOBS and is_int(v[1])))


@check
def task_accuracies(hidden, rng):
    return accuracy_cases(hidden, rng)


# ------------------------------------------------ extension: attention_in_blocks, the keys a block at a time

@check
def attention_in_blocks(hidden, rng):
    return blocks_cases(hidden, rng)
