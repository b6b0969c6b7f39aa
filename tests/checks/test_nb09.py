"""Does every check of 09_attention reject the mistakes students make, and accept other correct code?"""
import numpy as np
import pytest

from autograder.checks import nb09
from autograder.checks.models import numpy_attention
from autograder.checks.models import attention_blocks, numpy_heads, numpy_tasks, two_tasks
from tests.checks import test_nb09_recurrence as recurrence
from tests.harness import Mistake, answer, exercise_suite, indent, returns, run_exercise, stub_of
from tests.variants import variant

pytestmark = pytest.mark.nb09
A = "09_attention"

MHA = '''
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, bias=True):
        super().__init__()
        self.n_heads = n_heads
        self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d_model, d_model, bias=bias) for _ in range(4))

    def forward(self, x, context=None, mask=None):
{body}
'''
SPLIT = '''
c = x if context is None else context
B, Tq, d = x.shape
H = self.n_heads
q = self.w_q(x).view(B, Tq, H, d // H).transpose(1, 2)
k = self.w_k(c).view(B, -1, H, d // H).transpose(1, 2)
v = self.w_v(c).view(B, -1, H, d // H).transpose(1, 2)
'''


def mha(forward):
    """The given MultiHeadAttention with ``forward``'s body in place (SPLIT: the usual projections and split)."""
    return MHA.format(body=indent(forward, 8))


MISTAKES = [
    Mistake("scaled_dot_product_attention", "no_scale", '''
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
''', "not scaled"),
    Mistake("scaled_dot_product_attention", "scale_by_d", '''
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
''', "look shrunk by D"),
    Mistake("scaled_dot_product_attention", "softmax_over_queries", '''
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.softmax(scores, dim=-2)
    return w @ v, w
''', "instead of each row"),
    Mistake("scaled_dot_product_attention", "inverted_mask", '''
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
''', "mask looks inverted"),
    Mistake("scaled_dot_product_attention", "mask_after_softmax", '''
def scaled_dot_product_attention(q, k, v, mask=None):
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
    if mask is not None:
        w = w * mask
    return w @ v, w
''', "looks applied after the softmax"),
    Mistake("scaled_dot_product_attention", "masked_scores_zero", '''
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores * mask
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
''', "Blocked keys still get a weight"),
    Mistake("scaled_dot_product_attention", "returns_output_only", '''
def scaled_dot_product_attention(q, k, v, mask=None):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
''', "expected 2 values"),
    Mistake("scaled_dot_product_attention", "k_T_reverses_every_axis", '''
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.T / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
''', "3 queries, 5 keys, no mask: raised RuntimeError"),
    Mistake("scaled_dot_product_attention", "returns_the_scores_not_the_weights", '''
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v, scores
''', "item 1 of the result: wrong values"),
    Mistake("scaled_dot_product_attention", "mask_always_spread_over_heads", '''
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask.unsqueeze(1), float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
''', "wrong shape: expected (1, 4, 8), got (4, 4, 8)"),
    Mistake("MultiHeadAttention", "merge_without_transpose", mha(SPLIT + '''
out, _ = scaled_dot_product_attention(q, k, v, mask)
return self.w_o(out.reshape(B, Tq, d))
'''), "merged without the transpose back"),
    Mistake("MultiHeadAttention", "split_without_transpose", mha('''
c = x if context is None else context
B, Tq, d = x.shape
Tk, H = c.shape[1], self.n_heads
q = self.w_q(x).reshape(B, H, Tq, d // H)
k = self.w_k(c).reshape(B, H, Tk, d // H)
v = self.w_v(c).reshape(B, H, Tk, d // H)
out, _ = scaled_dot_product_attention(q, k, v, mask)
return self.w_o(out.transpose(1, 2).reshape(B, Tq, d))
'''), "reshaping straight to (B, H, T, D)"),
    Mistake("MultiHeadAttention", "ignores_context", mha('''
B, T, d = x.shape
H = self.n_heads
q, k, v = (w(x).view(B, T, H, d // H).transpose(1, 2) for w in (self.w_q, self.w_k, self.w_v))
out, _ = scaled_dot_product_attention(q, k, v, mask)
return self.w_o(out.transpose(1, 2).reshape(B, T, d))
'''), "for cross-attention they must be projections of context"),
    Mistake("MultiHeadAttention", "w_q_for_keys", mha(SPLIT.replace("self.w_k(c)", "self.w_q(c)") + '''
out, _ = scaled_dot_product_attention(q, k, v, mask)
return self.w_o(out.transpose(1, 2).reshape(B, Tq, d))
'''), "keys look projected with w_q"),
    Mistake("MultiHeadAttention", "scaled_by_d_model", mha(SPLIT + '''
scores = q @ k.transpose(-2, -1) / math.sqrt(d)
if mask is not None:
    scores = scores.masked_fill(~mask, float("-inf"))
out = torch.softmax(scores, dim=-1) @ v
return self.w_o(out.transpose(1, 2).reshape(B, Tq, d))
'''), "square root of the head width"),
    Mistake("MultiHeadAttention", "pytorch_mask_convention", mha(SPLIT + '''
out, _ = scaled_dot_product_attention(q, k, v, None if mask is None else ~mask)
return self.w_o(out.transpose(1, 2).reshape(B, Tq, d))
'''), "mask looks inverted"),
    Mistake("MultiHeadAttention", "no_output_projection", mha(SPLIT + '''
out, _ = scaled_dot_product_attention(q, k, v, mask)
return out.transpose(1, 2).reshape(B, Tq, d)
'''), "output projection is missing"),
]

SDPA_TEMPLATE = '''
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        mask = torch.broadcast_to(mask, scores.shape)
        CHECK
        scores = scores.masked_fill(~mask, float("-inf"))
    w = torch.softmax(scores, dim=-1)
    return w @ v, w
'''


def sdpa_mistake(label, expect, check):
    return Mistake("scaled_dot_product_attention", label, SDPA_TEMPLATE.replace("CHECK", check), expect)


MISTAKES += [
    sdpa_mistake("empty_row_gives_nan", "it holds NaN: the softmax of a row of -inf is 0/0", "pass"),
    sdpa_mistake("empty_row_gives_zeros_like_pytorch", "with no NaN: the empty row was filled",
                 "scores = torch.where(mask.any(-1, keepdim=True), scores, torch.zeros_like(scores))\n"
                 "        mask = mask | ~mask.any(-1, keepdim=True)"),
    sdpa_mistake("empty_row_error_does_not_name_the_row", "name the row that keeps no key",
                 'if not mask.any(-1).all():\n            raise ValueError("the mask keeps no key somewhere")'),
    sdpa_mistake("empty_columns_checked_instead_of_rows", "not each column",
                 'if not mask.any(-2).all():\n            raise ValueError(f"column {int((~mask.any(-2)).nonzero()[0][-1])} keeps no query")'),
    sdpa_mistake("assert_instead_of_value_error", "should raise ValueError",
                 'assert mask.any(-1).all(), "a row keeps no key"'),
    sdpa_mistake("only_an_all_false_mask_is_caught", "keeps no key: its softmax would be 0/0 = NaN",
                 'if not mask.any():\n            raise ValueError("the mask allows nothing: row 0")'),
    returns("predict_weight_total", "column_as_a_distribution", "1.0", "if each column were a distribution"),
    returns("predict_weight_total", "counts_the_source_tokens", "7", "counts the source tokens"),
    returns("predict_weight_total", "counts_the_weights", "35", "counts the weights of the whole table"),
    returns("predict_weight_total", "the_average_column", "5 / 7", "the average column"),
    returns("predict_weight_total", "unrecognised", "2.5", "up to 5, reached when every target token"),
    returns("predict_weight_total", "the_shape", "(5, 7)", "answer with a number"),
    returns("predict_sharp_weight", "scaling_like_a_shift", "0.449",
            "Multiplying the scores is not adding to them"),
    returns("predict_sharp_weight", "flatter_not_sharper", "1 / 3",
            "sharper, not flatter"),
    returns("predict_sharp_weight", "top_two_share", "0.5", "do not share equally"),
    returns("predict_sharp_weight", "old_pair_one_apart", "0.731", "a lead of 1"),
    returns("predict_sharp_weight", "runner_up_one_behind", "2.71828 / (2.71828 + 1)", "it keeps e^-1.5, not e^-1"),
    returns("predict_sharp_weight", "one_key_takes_all", "0.9999", "Not one key taking everything"),
    returns("predict_sharp_weight", "score_over_ten", "1 / 10", "Not the score divided by 10"),
    returns("predict_sharp_weight", "no_exponential", "10 / 18.5",
            "Softmax exponentiates"),
    returns("predict_sharp_weight", "unrecognised", "0.6",
            "the runner-up, 1.5 after scaling, decides"),
    returns("predict_path_steps", "rounds_up", "(44, 3)", "rounds down, not up"),
    returns("predict_path_steps", "a_gradient_not_a_distance", "(0.387, 3)", "a distance in positions"),
    returns("predict_path_steps", "the_sequence_bounds_it", "(9, 3)", "not bounded by this sequence"),
    returns("predict_path_steps", "one_layer_reads_everything", "(43, 1)", "position 9 sees 6 .. 9"),
    returns("predict_path_steps", "window_size_counts_the_query", "(43, 4)", "3 positions further, not 4"),
    returns("predict_path_steps", "swapped", "(3, 43)", "swapped"),
    returns("predict_path_steps", "not_a_pair", "12", "tuple of 2 numbers"),
]

ROPE_TEMPLATE = '''
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, bias=True, rope=False, rope_base=10000.0):
        super().__init__()
        self.n_heads, self.rope, self.rope_base = n_heads, rope, rope_base
        self.w_q, self.w_k, self.w_v, self.w_o = (nn.Linear(d_model, d_model, bias=bias) for _ in range(4))

    def forward(self, x, context=None, mask=None, q_start=0):
        c = x if context is None else context
        B, Tq, d = x.shape
        Tk, H = c.shape[1], self.n_heads
        q, k, v = self.w_q(x), self.w_k(c), self.w_v(c)
        BEFORE
        q = q.view(B, Tq, H, d // H).transpose(1, 2)
        k = k.view(B, Tk, H, d // H).transpose(1, 2)
        v = v.view(B, Tk, H, d // H).transpose(1, 2)
        AFTER
        out, _ = scaled_dot_product_attention(q, k, v, mask)
        return self.w_o(out.transpose(1, 2).reshape(B, Tq, d))
'''


def rope_mistake(label, expect, after="", before="pass"):
    source = ROPE_TEMPLATE.replace("BEFORE", before).replace("AFTER", after or "pass")
    return Mistake("MultiHeadAttention", label, source, expect)


MISTAKES += [
    rope_mistake("rope_rotates_v_too", "something besides the scores", after="""if self.rope:
            q = apply_rope_torch(q, q_start + np.arange(Tq), self.rope_base)
            k = apply_rope_torch(k, np.arange(Tk), self.rope_base)
            v = apply_rope_torch(v, np.arange(Tk), self.rope_base)"""),
    rope_mistake("rope_before_head_split", "do not turn their pairs at the same speeds", before="""if self.rope:
            q = apply_rope_torch(q, q_start + np.arange(Tq), self.rope_base)
            k = apply_rope_torch(k, np.arange(Tk), self.rope_base)"""),
    rope_mistake("rope_q_start_forgotten", "q_start positions too close", after="""if self.rope:
            q = apply_rope_torch(q, np.arange(Tq), self.rope_base)
            k = apply_rope_torch(k, np.arange(Tk), self.rope_base)"""),
    rope_mistake("rope_keys_shifted_by_q_start", "moving both by q_start", after="""if self.rope:
            q = apply_rope_torch(q, q_start + np.arange(Tq), self.rope_base)
            k = apply_rope_torch(k, q_start + np.arange(Tk), self.rope_base)"""),
    rope_mistake("rope_ignored", "rope=True changed nothing"),
    rope_mistake("three_d_mask_read_per_head", "should raise ValueError", after="""if self.rope:
            q = apply_rope_torch(q, q_start + np.arange(Tq), self.rope_base)
            k = apply_rope_torch(k, np.arange(Tk), self.rope_base)"""),
    rope_mistake("rope_default_base", "ignore rope_base", after="""if self.rope:
            q = apply_rope_torch(q, q_start + np.arange(Tq))
            k = apply_rope_torch(k, np.arange(Tk))"""),
    rope_mistake("rope_rotate_half_layout", "rotate-half layout", after="""if self.rope:
            def half(t, pos):
                D = t.shape[-1]
                ang = torch.as_tensor(np.asarray(pos, dtype=float)[:, None] * self.rope_base ** (-2.0 * np.arange(D // 2) / D), dtype=t.dtype)
                a, b = t[..., : D // 2], t[..., D // 2:]
                return torch.cat([a * ang.cos() - b * ang.sin(), a * ang.sin() + b * ang.cos()], dim=-1)
            q = half(q, q_start + np.arange(Tq))
            k = half(k, np.arange(Tk))"""),
]

# ------------------------------------------- the bug hunt: heads_self_attention (the bug, its half-fixes)
SPLIT_FIXED = "heads = x.view(B, T, n_heads, D).transpose(1, 2)"
SCALE_FIXED = "scores = heads @ heads.transpose(-2, -1) / math.sqrt(D)"
SCALE_GIVEN = "scores = heads @ heads.transpose(-2, -1) / math.sqrt(d_model)"  # the released line: the wrong width
MISTAKES += [
    Mistake("heads_self_attention", "the_bug_as_given", variant(
        A, "heads_self_attention", replace=(SCALE_FIXED, SCALE_GIVEN),
        name="the scale of the whole width") .replace(SPLIT_FIXED, "heads = x.reshape(B, n_heads, T, D)"), "code as given"),
    Mistake("heads_self_attention", "half_fix_split_only", variant(
        A, "heads_self_attention", replace=(SCALE_FIXED, SCALE_GIVEN),
        name="the split fixed, not the scale"), "causal now"),
    Mistake("heads_self_attention", "half_fix_scale_only", variant(
        A, "heads_self_attention", replace=(SPLIT_FIXED, "heads = x.reshape(B, n_heads, T, D)"),
        name="the scale fixed, not the split"), "still reads the future"),
    Mistake("heads_self_attention", "scale_dropped", variant(
        A, "heads_self_attention", replace=(SCALE_FIXED, "scores = heads @ heads.transpose(-2, -1)"),
        name="the split fixed, the scale dropped"), "not shrunk at all"),
    Mistake("heads_self_attention", "merge_by_reshape_too", variant(
        A, "heads_self_attention", replace=("return torch.cat(out.unbind(dim=1), dim=-1)",
                                            "return out.reshape(B, T, d_model)"),
        name="the merge changed to a reshape alone"), "that line was right"),
]

# -------------------------------------------------------------- the manual backward pass: head_backward
BACKWARD = '''
def head_backward(ids, E, W_q, W_k, W_v, grad_out):
    _, c = head_forward(ids, E, W_q, W_k, W_v)
    grad_w, grad_v = linear_backward(c.weights, c.v, grad_out)
{scores}
    grad_q, grad_kT = linear_backward(c.q, c.k.T, grad_s{scale})
    gq, grad_W_q = linear_backward(c.x, W_q, grad_q)
    gk, grad_W_k = linear_backward(c.x, W_k, grad_kT.T)
    gv, grad_W_v = linear_backward(c.x, W_v, grad_v)
{embed}
    return grad_E, grad_W_q, grad_W_k, grad_W_v
'''
JACOBIAN = "    grad_s = np.stack([softmax_jacobian(p) @ g for p, g in zip(c.weights, grad_w)])"
EMBED = "    grad_E = embedding_backward(ids, gq + gk + gv, len(E))"
SCALED = " / np.sqrt(c.q.shape[1])"
MISTAKES += [
    Mistake("head_backward", "scale_forgotten_on_the_way_back",
            BACKWARD.format(scores=JACOBIAN, scale="", embed=EMBED), "misses the 1/sqrt(D)"),
    Mistake("head_backward", "diagonal_of_the_jacobian_only",
            BACKWARD.format(scores="    grad_s = c.weights * (1 - c.weights) * grad_w", scale=SCALED, embed=EMBED),
            "p * (1 - p)"),
    Mistake("head_backward", "softmax_skipped", BACKWARD.format(scores="    grad_s = grad_w", scale=SCALED, embed=EMBED),
            "softmax lies between them"),
    Mistake("head_backward", "x_gradient_from_v_only",
            BACKWARD.format(scores=JACOBIAN, scale=SCALED, embed="    grad_E = embedding_backward(ids, gv, len(E))"),
            "only the path through v"),
    Mistake("head_backward", "repeated_ids_overwrite", BACKWARD.format(
        scores=JACOBIAN, scale=SCALED, embed="    grad_E = np.zeros_like(E)\n    grad_E[ids] = gq + gk + gv"),
        "add up"),
    Mistake("head_backward", "k_gradient_not_transposed_back", BACKWARD.format(
        scores=JACOBIAN, scale=SCALED, embed=EMBED).replace("grad_kT.T)", "grad_kT)"), "mismatch"),
]

ALTERNATIVES = {
    "scaled_dot_product_attention": '''
def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q * q.shape[-1] ** -0.5, k)
    if mask is not None:
        blocked = (~mask).expand_as(scores).all(dim=-1)  # (..., T_q)
        if blocked.any():
            where = blocked.nonzero().tolist()[0]
            raise ValueError(f"query {where[-1]} (index {where}) has every key masked")
        scores = torch.where(mask, scores, torch.tensor(float("-inf")))
    scores = scores - scores.amax(dim=-1, keepdim=True)
    e = scores.exp()
    weights = e / e.sum(dim=-1, keepdim=True)
    return torch.einsum("...qk,...kv->...qv", weights, v), weights
''',
    "MultiHeadAttention": '''
class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, n_heads, bias=True, rope=False, rope_base=10000.0):
        super().__init__()
        self.h, self.rope, self.base = n_heads, rope, rope_base
        self.w_q = nn.Linear(d_model, d_model, bias=bias)
        self.w_k = nn.Linear(d_model, d_model, bias=bias)
        self.w_v = nn.Linear(d_model, d_model, bias=bias)
        self.w_o = nn.Linear(d_model, d_model, bias=bias)

    def turn(self, t, first):  # RoPE through complex numbers: pair (2k, 2k+1) -> one complex number
        T, D = t.shape[-2:]
        freqs = self.base ** (-torch.arange(0, D, 2, dtype=torch.float64) / D)  # (D/2,)
        angles = torch.outer(torch.arange(first, first + T, dtype=torch.float64), freqs)  # (T, D/2)
        z = torch.view_as_complex(t.double().unflatten(-1, (-1, 2)).contiguous()) * torch.polar(torch.ones_like(angles), angles)
        return torch.view_as_real(z).flatten(-2).to(t.dtype)

    def forward(self, x, context=None, mask=None, q_start=0):
        if mask is not None and mask.dim() == 3:
            raise ValueError("is the first axis of this 3-D mask the batch or the heads? Pass (B, 1, T_q, T_k)")
        src = context if context is not None else x
        split = lambda t: t.unflatten(-1, (self.h, -1)).permute(0, 2, 1, 3)  # (B, H, T, D)
        q, k = split(self.w_q(x)), split(self.w_k(src))
        if self.rope:
            q, k = self.turn(q, q_start), self.turn(k, 0)
        out = F.scaled_dot_product_attention(q, k, split(self.w_v(src)), attn_mask=mask)
        return self.w_o(out.permute(0, 2, 1, 3).flatten(-2))  # (B, T, d_model)
''',
}

ALTERNATIVES.update({
    "heads_self_attention": '''
def heads_self_attention(x, n_heads, mask=None):
    B, T, d_model = x.shape
    heads = x.unflatten(-1, (n_heads, -1)).permute(0, 2, 1, 3)  # (B, H, T, D): positions stay positions
    out = F.scaled_dot_product_attention(heads, heads, heads, attn_mask=mask)  # scaled by 1/sqrt(D)
    return out.permute(0, 2, 1, 3).flatten(-2)  # (B, T, d_model)
''',
    "head_backward": '''
def head_backward(ids, E, W_q, W_k, W_v, grad_out):
    _, cache = head_forward(ids, E, W_q, W_k, W_v)
    x, q, k, v, P = cache.x, cache.q, cache.k, cache.v, cache.weights
    dP, dv = linear_backward(P, v, grad_out)
    dS = np.zeros_like(dP)
    for t in range(len(P)):  # one softmax per row
        dS[t] = dP[t] @ softmax_jacobian(P[t])
    dS = dS / math.sqrt(q.shape[-1])
    dq = linear_backward(q, k.T, dS)[0]
    dk = linear_backward(k, q.T, dS.T)[0]  # scores.T = k @ q.T
    dx = np.zeros_like(x)
    grads = []
    for W, d_out in ((W_q, dq), (W_k, dk), (W_v, dv)):
        dx_part, dW = linear_backward(x, W, d_out)
        dx += dx_part
        grads.append(dW)
    return (embedding_backward(ids, dx, E.shape[0]), *grads)
''',
    "predict_weight_total": answer("predict_weight_total", '5 * 1.0, "every query may put all its weight on one key"'),  # with a reason
    "predict_sharp_weight": "import math\ndef predict_sharp_weight():\n    return 1 / (1 + math.exp(-1.5) + math.exp(-10))\n",
    "predict_path_steps": answer("predict_path_steps", "max(k for k in range(200) if 0.9 ** k >= 0.01), 9 // 3"),
})

HEADS = '''
class TaskHeads(nn.Module):
    def __init__(self, d_model, n_classes, n_tags):
        super().__init__()
        self.classifier = nn.Linear(d_model, n_classes)
        self.tagger = nn.Linear(d_model, n_tags)

    def forward(self, h, lengths):
{body}
'''
REAL = "real = (torch.arange(h.shape[1])[None, :] < lengths[:, None]).float()  # (B, T)\n"


def task_heads(forward):
    """The given TaskHeads with ``forward``'s body in place."""
    return HEADS.format(body=indent(forward, 8))


MISTAKES += [  # one backbone, two heads: the shapes of the two jobs and the padding
    Mistake("TaskHeads", "pools_the_padding", task_heads("return self.classifier(h.mean(dim=1)), self.tagger(h)"),
            "change with the padding"),
    Mistake("TaskHeads", "divides_by_T", task_heads(REAL + "return self.classifier((h * real[..., None]).sum(1) / "
                                                        "h.shape[1]), self.tagger(h)"), "too small"),
    Mistake("TaskHeads", "sums_the_tokens", task_heads(REAL + "return self.classifier((h * real[..., None]).sum(1)), "
                                                           "self.tagger(h)"), "grow with the sequence's length"),
    Mistake("TaskHeads", "first_token", task_heads("return self.classifier(h[:, 0]), self.tagger(h)"),
            "first token alone"),
    Mistake("TaskHeads", "last_position", task_heads("return self.classifier(h[:, -1]), self.tagger(h)"),
            "which is padding"),
    Mistake("TaskHeads", "pools_over_the_batch", task_heads(REAL + "return self.classifier((h * real[..., None]).mean(0)), "
                                                                "self.tagger(h)"), "batch axis"),
    Mistake("TaskHeads", "a_class_per_token", task_heads("return self.classifier(h), self.tagger(h)"),
            "for every token"),
    Mistake("TaskHeads", "tags_the_summary", task_heads(REAL + "summary = (h * real[..., None]).sum(1) / real.sum(1, keepdim=True)\n"
                                                            "return self.classifier(summary), self.tagger(summary)"),
            "one row per sequence"),
    returns("predict_label_counts", "tags_the_padding", '(4, 28), "every position"', "padded positions have no tag"),
    returns("predict_label_counts", "a_class_per_position", '(28, 28), "one per position"', "one label per sequence"),
    returns("predict_label_counts", "not_a_pair", '17, "tokens"', "tuple of 2 numbers"),
]

ALTERNATIVES.update({
    "TaskHeads": task_heads("""
summaries = torch.stack([h[b, :n].mean(dim=0) for b, n in enumerate(lengths.tolist())])  # (B, d_model)
tags = torch.einsum("btd,kd->btk", h, self.tagger.weight) + self.tagger.bias
return self.classifier(summaries), tags
"""),
    "predict_label_counts": answer("predict_label_counts", '[4, 7 + 5 + 3 + 2], "one per sentence, one per word"'),
})

ACCURACIES = """
def task_accuracies(class_scores, tag_scores, classes, tags):
{body}
"""


def task_accuracies(body):
    """task_accuracies with ``body`` in place."""
    return ACCURACIES.format(body=indent(body, 4))


MISTAKES += [  # what the two-task training reports: the shares, and the padding left out of the tagger's
    Mistake("task_accuracies", "counts_padding", task_accuracies(
        "return ((class_scores.argmax(-1) == classes).float().mean().item(),\n"
        "        (tag_scores.argmax(-1) == tags).float().mean().item())"), "drops when the same sentences are padded"),
    Mistake("task_accuracies", "padding_right", task_accuracies(
        "ok = (tag_scores.argmax(-1) == tags) | (tags == -100)\n"
        "return (class_scores.argmax(-1) == classes).float().mean().item(), ok.float().mean().item()"),
        "rises when the same sentences are padded"),
    Mistake("task_accuracies", "per_sentence", task_accuracies(
        "real = tags != -100\n"
        "ok = ((tag_scores.argmax(-1) == tags) & real).float().sum(1) / real.float().sum(1)\n"
        "return (class_scores.argmax(-1) == classes).float().mean().item(), ok.mean().item()"), "weighs as much"),
    Mistake("task_accuracies", "counts", task_accuracies(
        "real = tags != -100\n"
        "return (int((class_scores.argmax(-1) == classes).sum()),\n"
        "        int((tag_scores.argmax(-1)[real] == tags[real]).sum()))"), "between 0 and 1"),
    Mistake("task_accuracies", "swapped", task_accuracies(
        "real = tags != -100\n"
        "return ((tag_scores.argmax(-1)[real] == tags[real]).float().mean().item(),\n"
        "        (class_scores.argmax(-1) == classes).float().mean().item())"), "other order"),
]

ALTERNATIVES["task_accuracies"] = task_accuracies("""
right = sum(int(c.argmax()) == int(y) for c, y in zip(class_scores, classes))
words = tagged = 0
for scores, labels in zip(tag_scores, tags):
    for s, y in zip(scores, labels.tolist()):
        if y != -100:
            words += 1
            tagged += int(torch.argmax(s)) == y
return right / len(classes), tagged / words
""")

RIGHT_FIXES = {"A": "cross-attention", "B": "self-attention", "C": "embedding", "D": "self-attention",
               "E": "positions"}


def fixes(**changed):
    """match_fixes returning the right pairing with ``changed`` pairs (symptom letters) put in."""
    pairs = dict(RIGHT_FIXES, **changed)
    return answer("match_fixes", repr(pairs))


MISTAKES += [  # what limits a recurrence, and what fixed it
    returns("predict_dependent_steps", "work_not_steps", '(8.0, 8.0), "8 times the multiplications"',
            "a product is one operation of the graph"),
    returns("predict_dependent_steps", "work_squared", '(64, 64), "d^2 products"', "how the multiplications"),
    returns("predict_dependent_steps", "the_length_answer", '(4, 1), "as notebook 05 said"',
            "four times as many tokens"),
    returns("predict_dependent_steps", "attention_grows", '(1, 8), "longer dot products"', "The recurrence is right"),
    returns("predict_dependent_steps", "rnn_grows", '(8, 1), "wider updates"', "Attention is right"),
    returns("predict_dependent_steps", "not_a_pair", '4, "linear"', "tuple of 2 numbers"),
    returns("predict_first_token", "the_pool_dilutes_too", '"both", "1/n"', "The pool does not"),
    returns("predict_first_token", "the_other_way_round", '"mean pool", "the mean drowns it"', "The other way round"),
    returns("predict_first_token", "neither_falls", '"neither", "both read the marker"', "one fixed vector of 16"),
    returns("predict_first_token", "not_a_choice", '"the rnn", "memory"', "answer with one of"),
    returns("predict_language_id", "a_language_per_word", '("tagger", 17), "each word"', "one answer per sequence"),
    returns("predict_language_id", "counts_the_words", '("classifier", 17), "7 + 5 + 3 + 2"', "one label per sequence"),
    returns("predict_language_id", "tags_the_padding_too", '("tagger", 28), "every position"', "4 labels"),
    returns("predict_language_id", "no_job_named", '(1, 4), "one per text"', '"classifier" or "tagger"'),
    Mistake("match_fixes", "the_two_attentions_swapped", fixes(A="self-attention", B="cross-attention"),
            "2 of the 5 pairs are wrong. Symptom A"),
    Mistake("match_fixes", "order_and_identity_swapped", fixes(C="positions", E="embedding"),
            "nothing about what it is like"),
    Mistake("match_fixes", "gates_for_the_vanishing_gradient", fixes(D="gates"), "still 299 steps long"),
    Mistake("match_fixes", "gates_for_the_fixed_vector", fixes(A="gates"), "fixed size"),
    Mistake("match_fixes", "cross_attention_for_the_long_path", fixes(D="cross-attention"), "as long as the distance"),
    Mistake("match_fixes", "the_old_limitation_names_as_keys",
            "def match_fixes():\n    return {'fixed vector': 'cross-attention', 'bag without order': 'positions'}\n",
            "five letters of SYMPTOMS"),
    Mistake("match_fixes", "a_letter_left_out",
            "def match_fixes():\n    return {'A': 'cross-attention', 'C': 'embedding', 'E': 'positions'}\n",
            "missing ['B', 'D']"),
    Mistake("match_fixes", "a_misspelt_fix", fixes(D="residual"), "must be one of FIXES"),
    Mistake("match_fixes", "a_list_of_pairs", "def match_fixes():\n    return [('A', 'cross-attention')]\n",
            "expected a dict"),
]

ALTERNATIVES.update({
    "predict_dependent_steps": answer("predict_dependent_steps", '[64 / 64, 8 // 8], "a product is one operation"'),
    "predict_first_token": answer("predict_first_token", '"last state", "16 numbers rewritten by every word"'),
    "predict_language_id": answer("predict_language_id", '["classifier", 2 + 2], "one language per text"'),
    "match_fixes": """
def match_fixes():
    cures = {"embedding": "C", "positions": "E", "cross-attention": "A"}
    answer = {letter: fix for fix, letter in cures.items()}
    answer.update(dict.fromkeys("BD", "self-attention"))  # the chain's length, in time and in gradient
    return answer
""",
})

BLOCKS = """
def attention_in_blocks(q, k, v, block):
    scale = SCALE
    top = torch.full(q.shape[:-1] + (1,), float("-inf"))
    total = torch.zeros(q.shape[:-1] + (1,))
    acc = torch.zeros(q.shape[:-1] + (v.shape[-1],))
    for start in range(0, STOP, block):
        scores = q @ k[..., start:start + block, :].transpose(-2, -1) * scale
        new_top = torch.maximum(top, scores.amax(dim=-1, keepdim=True))
        shrink = SHRINK
        p = torch.exp(scores - new_top)
        total = total * shrink + p.sum(dim=-1, keepdim=True)
        acc = acc * shrink + p @ v[..., start:start + block, :]
        top = new_top
    return acc / total
"""


def blocks(scale="1 / math.sqrt(q.shape[-1])", stop="k.shape[-2]", shrink="torch.exp(top - new_top)", **_):
    """The block-wise attention with one of its parts put in."""
    return BLOCKS.replace("SCALE", scale).replace("STOP", stop).replace("SHRINK", shrink)


MISTAKES += [  # the extension: attention a block of keys at a time
    Mistake("attention_in_blocks", "the_whole_table_with_a_library_call", """
def attention_in_blocks(q, k, v, block):
    return F.scaled_dot_product_attention(q, k, v)
""", "keys was built, with block"),
    Mistake("attention_in_blocks", "the_whole_table_by_hand", """
def attention_in_blocks(q, k, v, block):
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v
""", "keys was built, with block"),
    Mistake("attention_in_blocks", "no_running_max", """
def attention_in_blocks(q, k, v, block):
    total, acc = 0, 0
    for start in range(0, k.shape[-2], block):
        p = torch.exp(q @ k[..., start:start + block, :].transpose(-2, -1) / math.sqrt(q.shape[-1]))
        total = total + p.sum(dim=-1, keepdim=True)
        acc = acc + p @ v[..., start:start + block, :]
    return acc / total
""", "inf or NaN on large scores"),
    Mistake("attention_in_blocks", "old_sums_not_corrected", blocks(shrink="1.0"), "counted against the old largest"),
    Mistake("attention_in_blocks", "last_short_block_dropped", blocks(stop="k.shape[-2] - block + 1"),
            "last, shorter block"),
    Mistake("attention_in_blocks", "not_scaled", blocks(scale="1.0"), "not divided by sqrt(D)"),
    Mistake("attention_in_blocks", "a_softmax_per_block", """
def attention_in_blocks(q, k, v, block):
    parts = [torch.softmax(q @ k[..., s:s + block, :].transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1)
             @ v[..., s:s + block, :] for s in range(0, k.shape[-2], block)]
    return torch.stack(parts).mean(dim=0)
""", "share out a weight of 1 among themselves"),
]

ALTERNATIVES["attention_in_blocks"] = """
def attention_in_blocks(q, k, v, block):
    lse, out = None, None  # the log of the softmax's denominator so far, and the output of the keys so far
    for s in range(0, k.shape[-2], block):
        scores = torch.einsum("...qd,...kd->...qk", q, k[..., s:s + block, :]) * q.shape[-1] ** -0.5
        block_lse = torch.logsumexp(scores, dim=-1, keepdim=True)
        block_out = torch.softmax(scores, dim=-1) @ v[..., s:s + block, :]
        if out is None:
            lse, out = block_lse, block_out
        else:
            both = torch.logaddexp(lse, block_lse)
            out = out * torch.exp(lse - both) + block_out * torch.exp(block_lse - both)
            lse = both
    return out
"""

MISTAKES += [  # the causal mask and order; the price of the table
    returns("predict_causal_shuffles", "the_mask_keeps_the_symmetry", '(True, True), "attention ignores order"',
            "The mask breaks part of the symmetry"),
    returns("predict_causal_shuffles", "the_swap_shows", '(False, False), "order matters now"',
            "whichever comes first"),
    returns("predict_causal_shuffles", "the_other_way_round", '(True, False), "only the first two move"',
            "other way round"),
    returns("predict_causal_shuffles", "numbers_not_booleans", '(0, 1), "no, yes"', "a pair of True/False"),
    returns("predict_empty_row", "both_nan", '("nan", "nan"), "0/0 in both"', "a rule of its own"),
    returns("predict_empty_row", "both_fill_zeros", '("zeros", "zeros"), "nothing read, nothing out"',
            "no rule for a row"),
    returns("predict_empty_row", "swapped", '("zeros", "nan"), "the module is the careful one"', "other way round"),
    returns("predict_empty_row", "both_raise", '("error", "error"), "a bad mask"', "Neither checks the mask"),
    returns("predict_empty_row", "not_a_choice", '("NaN", 0), "0/0"', 'each "nan", "zeros"'),
    returns("predict_rope_order", "rope_reads_the_future", '(False, True), "positions leak"',
            "adds no score the mask did not allow"),
    returns("predict_rope_order", "positions_tell_the_copies_apart", '(True, False), "each copy has its own angle"',
            "never the values"),
    returns("predict_rope_order", "both_wrong", '(False, False), "rotations mix positions"', "Both: RoPE"),
    returns("predict_rope_order", "numbers_not_booleans", '(1, 0), "yes, no"', "a pair of True/False"),
    returns("predict_width_sweep", "the_scale_saturates_too", '0.9, "wider is sharper"',
            "far from one key taking everything"),
    returns("predict_width_sweep", "the_scale_flattens", '1 / 64, "scaled means even"', "not at 0"),
    returns("predict_width_sweep", "eight_keys_numbers", '0.291, "as with 8 keys"', "shares with 63 others"),
    returns("predict_width_sweep", "the_old_pair", '(0.95, 0.11), "unscaled, scaled"', "a number between 1/64 and 1"),
    returns("predict_width_sweep", "not_numbers", '"stays", "the trend"', "a number between 1/64 and 1"),
    returns("predict_table_gib", "one_head", '16, "T x T x 4 bytes"', "one head's table"),
    returns("predict_table_gib", "one_byte_a_score", '48, "12 x T x T"', "one byte per score"),
    returns("predict_table_gib", "one_row", '12 * 65536 * 4 / 2 ** 30, "a score per token"', "one row of the table"),
    returns("predict_table_gib", "gigabytes", '206, "2e11 bytes"', "GB (10^9 bytes)"),
    returns("predict_table_gib", "float64", '384, "8 bytes"', "8 bytes a score"),
    returns("predict_jacobian_shrink", "one_over_the_factor", '4, "4 times the scores, 4 times smaller"',
            "shrinking like 1 / factor"),
    returns("predict_jacobian_shrink", "the_wrong_way_round", '0.5, "sharper means steeper"', "the ratio asked for is above 1"),
    returns("predict_jacobian_shrink", "e_to_the_gap", '7.4, "the runner-up keeps e^-2"', "holds only when the gap is many"),
    returns("predict_jacobian_shrink", "the_wide_gap_answer", '750, "e^-8 as at [16, 8, 0]"', "no weight is tiny yet"),
    returns("predict_jacobian_shrink", "not_a_number", '"twice", "e^-2"', "answer with a number"),
]

ALTERNATIVES.update({
    "predict_causal_shuffles": answer("predict_causal_shuffles", '[1 > 2, 2 > 1], "who reads whom changes; order within does not"'),
    "predict_empty_row": answer("predict_empty_row", '["nan", "zeros"], "softmax of all -inf; the fused kernel fills in"'),
    "predict_rope_order": answer("predict_rope_order", '[2 > 1, 2 > 1], "the mask still decides; six equal values"'),
    "predict_width_sweep": answer("predict_width_sweep", '0.09, "e^2.2 / (64 e^0.5)"'),
    "predict_table_gib": answer("predict_table_gib", '192, "12 * 2^32 * 4 bytes"'),
    "predict_jacobian_shrink": answer("predict_jacobian_shrink", '0.25 / 0.12, "top weight 0.87: p(1 - p) = 0.12"'),
})

LARGEST = '''
def largest_weight(d_k, scaled, draws=500, n_keys=8, gen=None):
    q = torch.randn(draws, 1, d_k, generator=gen)
    k = torch.randn(draws, KEYS, d_k, generator=gen)
    scores = q @ k.transpose(-2, -1) SCALE
    weights = torch.softmax(scores, dim=AXIS)
    return REDUCE
'''


def largest(label, expect, keys="n_keys", scale="/ (math.sqrt(d_k) if scaled else 1)", axis="-1",
            reduce="weights.max(dim=-1).values.mean().item()"):
    source = (LARGEST.replace("KEYS", keys).replace("SCALE", scale).replace("AXIS", axis)
              .replace("REDUCE", reduce))
    return Mistake("largest_weight", label, source, expect)


MISTAKES += [  # the scale, measured: largest_weight
    largest("always_scaled", "That is the scaled value", scale="/ math.sqrt(d_k)"),
    largest("never_scaled", "That is the unscaled value", scale=""),
    largest("scaled_by_d_k", "divided by d_k", scale="/ (d_k if scaled else 1)"),
    largest("softmax_over_the_query_axis", "softmax looks taken over an axis with one entry", axis="-2"),
    largest("mean_of_every_weight", "That is 1 / n_keys", reduce="weights.mean().item()"),
    largest("eight_keys_always", "the value for 8 keys", keys="8"),
    largest("returns_a_tensor_per_draw", "should return one number",
            reduce="weights.max(dim=-1).values.squeeze(-1)"),
]

ALTERNATIVES["largest_weight"] = '''
def largest_weight(d_k, scaled, draws=500, n_keys=8, gen=None):
    total = 0.0
    queries = torch.randn(draws, d_k, generator=gen)
    keys = torch.randn(draws, n_keys, d_k, generator=gen)
    scores = torch.einsum("nd,nkd->nk", queries, keys)
    if scaled:
        scores = scores * d_k ** -0.5
    top = torch.exp(scores - scores.logsumexp(dim=1, keepdim=True)).amax(dim=1)
    return float(top.sum() / draws)
'''

MISTAKES += recurrence.MISTAKES  # read_context and its prediction: see that module
ALTERNATIVES.update(recurrence.ALTERNATIVES)

globals().update(exercise_suite(A, MISTAKES, ALTERNATIVES).tests())  # the standard tests, collected here


def _first_message(exercise, source):
    """What the visible check says first about ``source``: the message a learner reads."""
    local = run_exercise(A, exercise, source)[0].local
    assert local is not None, f"{exercise} passed its visible check:\n{source}"
    return str(local).split("\n")[0]


def test_bug_hunt_shows_progress_with_symptoms():
    """The bug hunt hunts: the code as released and each half-fix get different messages, and none says which
    line to write (no reshape order, no transpose, no sqrt(D) to divide by)."""
    mistakes = {m.label: m.source for m in MISTAKES if m.exercise == "heads_self_attention"}
    said = {"released": _first_message("heads_self_attention", stub_of(A, "heads_self_attention")),
            **{label: _first_message("heads_self_attention", mistakes[label])
               for label in ("half_fix_split_only", "half_fix_scale_only")}}
    assert len(set(said.values())) == len(said), said
    assert "code as given" in said["released"] and "Progress" not in said["released"], said["released"]
    for message in said.values():
        for fix in ("(B, T, H, D)", "(H, D)", "transpose", "view", "Fix both", "divide", "1/sqrt", "reshape"):
            assert fix not in message, (fix, message)


def test_known_wrong_variants_come_from_a_closed_set():
    """Is every named mistake a variant the NumPy models compute, and does a misspelled name raise?"""
    assert set(nb09.SDPA_MESSAGES) <= set(numpy_attention.SDPA_VARIANTS)
    assert set(nb09.MHA_MESSAGES) | set(nb09.ROPE_MESSAGES) <= set(numpy_attention.MHA_VARIANTS)
    q = np.zeros((1, 2, 4))
    with pytest.raises(ValueError, match="sdpa_np has no variant 'no_scaling'; the choices are .*no_scale"):
        numpy_attention.sdpa_np(q, q, q, variant="no_scaling")
    with pytest.raises(ValueError, match="rope_np's layout has no variant 'halves'"):
        numpy_attention.rope_np(q, np.arange(2), layout="halves")


def test_the_new_known_wrong_versions_come_from_a_closed_set():
    """Are the bug hunt's and the backward pass's named mistakes versions the NumPy models compute?"""
    assert set(nb09.HEADS_MESSAGES) == set(numpy_heads.HEADS_VARIANTS)
    assert set(nb09.HEAD_MESSAGES) == set(numpy_heads.HEAD_VARIANTS)
    with pytest.raises(ValueError, match="head_np has no variant 'no_scaling'"):
        numpy_heads.head_np([0], np.zeros((1, 2)), np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((2, 2)),
                            np.zeros((1, 2)), variant="no_scaling")


def test_the_task_heads_mistakes_come_from_a_closed_set_and_each_differs_from_the_right_heads():
    """Does every named mistake of TaskHeads compute something else than the right heads on a padded batch, and does
    a misspelled name raise instead of quietly giving the right heads?"""
    rng = np.random.default_rng(3)
    lengths = [4, 2, 1]
    h = numpy_tasks.padded_outputs(rng, lengths, 4, 6)
    weights = [rng.normal(size=s) for s in [(2, 6), (2,), (3, 6), (3,)]]
    right = numpy_tasks.task_heads_np(h, lengths, *weights)
    assert right[0].shape == (3, 2) and right[1].shape == (3, 4, 3)
    for variant in numpy_tasks.TASK_MESSAGES:
        wrong = numpy_tasks.task_heads_np(h, lengths, *weights, variant=variant)
        assert any(w.shape != r.shape or not np.allclose(w, r) for w, r in zip(wrong, right)), variant
    with pytest.raises(ValueError, match="task_heads_np has no variant 'mean'"):
        numpy_tasks.task_heads_np(h, lengths, *weights, variant="mean")


def test_the_accuracy_mistakes_come_from_a_closed_set_and_each_differs_from_the_right_shares():
    """Does every named mistake of task_accuracies give other shares than the right ones on a batch of uneven lengths,
    do the right shares stay put when the batch is padded further, and does a misspelled name raise?"""
    rng = np.random.default_rng(5)
    batch = two_tasks.task_batch(rng, [1, 4, 2, 3], 4)
    right = two_tasks.task_accuracies_np(*batch)
    assert right == two_tasks.task_accuracies_np(*two_tasks.padded_further(batch, 3, rng))
    for variant in two_tasks.ACCURACY_MESSAGES:
        assert not np.allclose(two_tasks.task_accuracies_np(*batch, variant=variant), right), variant
    with pytest.raises(ValueError, match="task_accuracies_np has no variant 'padding'"):
        two_tasks.task_accuracies_np(*batch, variant="padding")


def test_the_block_mistakes_come_from_a_closed_set_and_each_differs_from_the_right_blocks():
    """Does every named mistake of attention_in_blocks compute something else than attention when the largest score is
    not in the first block and the last block is shorter, and does a misspelled name raise?"""
    rng = np.random.default_rng(4)
    q, k, v = rng.normal(size=(3, 2)), rng.normal(size=(7, 2)), rng.normal(size=(7, 3))
    k[-1] = 5 * q.mean(axis=0)  # the best match of every query comes last, in a block of its own
    scores = q @ k.T / np.sqrt(2)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    right = weights / weights.sum(axis=-1, keepdims=True) @ v
    assert np.allclose(attention_blocks.blocks_np(q, k, v, 3), right)
    for name in attention_blocks.BLOCK_MESSAGES:
        assert not np.allclose(attention_blocks.blocks_np(q, k, v, 3, name), right, atol=1e-3), name
    with pytest.raises(ValueError, match="blocks_np has no variant 'no_max'"):
        attention_blocks.blocks_np(q, k, v, 3, variant="no_max")
