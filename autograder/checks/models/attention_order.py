"""Notebook 09's predictions about order and empty rows: what PyTorch's attentions give a query that reads nothing
(predict_empty_row), and what RoPE changes about causality and shuffling (predict_rope_order)."""
from __future__ import annotations

from ..questions import plain
from .attention_blocks import _pair

EMPTY_ROW_CHOICES = ("nan", "zeros", "uniform", "error")


def empty_row_pair(v):
    """Is the answer a pair of the four choices (nn.MultiheadAttention's, F.scaled_dot_product_attention's)?"""
    return isinstance(v, (tuple, list)) and len(v) == 2 and all(plain(x) in EMPTY_ROW_CHOICES for x in v)


# predict_empty_row: (nn.MultiheadAttention's output, F.scaled_dot_product_attention's) for a query whose row keeps no key
EMPTY_ROW_MISTAKES = [
    (("nan", "nan"), "nn.MultiheadAttention computes the plain softmax over -inf, NaN as in notebook 08; "
                     "F.scaled_dot_product_attention does something else here: a fused kernel with a rule of its own "
                     "for a row with nothing to read."),
    (("zeros", "zeros"), "nn.MultiheadAttention has no rule for a row with nothing to read: it turns the mask into -inf "
                         "and takes the plain softmax, 0/0 = NaN."),
    (("zeros", "nan"), "The other way round: nn.MultiheadAttention takes the plain softmax (NaN) and "
                       "F.scaled_dot_product_attention fills the empty row in."),
    (("error", "error"), "Neither checks the mask: PyTorch raises nothing for a row that keeps no key, which is why "
                         "this course's attention does."),
    (("uniform", "uniform"), "Neither reads every key evenly: a masked key scores -inf, and its weight is never 1/3.")]
EMPTY_ROW_TRUTH = ("(nan, zeros): nn.MultiheadAttention takes the plain softmax of a row of -inf, 0/0 = NaN; "
                   "F.scaled_dot_product_attention in the installed version of PyTorch returns zeros for a query that "
                   "reads nothing.")

# predict_rope_order: (is MultiHeadAttention(rope=True) under the causal mask causal?, with no mask and rope=True, does
# reversing the tokens only reverse the outputs?)
ROPE_ORDER_MISTAKES = [
    (_pair(False, False), "RoPE turns the queries and keys by their positions, but it adds no score the mask did not "
                          "allow: a query still reads no later key, so changing the future moves no earlier output."),
    (_pair(True, True), "Reversed, every two tokens stand as far apart as before, but in the other order: a key that "
                        "stood 2 before its query now stands 2 after it. A RoPE score depends on m - n with its sign, "
                        "and turning by -theta is not turning by theta, so the scores, and the outputs, change."),
    (_pair(False, True), "Both are the other way round: the mask still keeps every later key out with RoPE, and RoPE's "
                         "scores change when m - n changes sign, as it does for every pair of reversed tokens.")]
ROPE_ORDER_TRUTH = ("(True, False): the rotation changes the scores, not which keys a query may read, so the layer stays "
                    "causal; but the scores depend on m - n with its sign, so reversing the tokens changes them.")
