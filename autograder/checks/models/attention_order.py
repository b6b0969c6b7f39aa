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

# predict_rope_order: (is MultiHeadAttention(rope=True) under the causal mask causal?, with no mask and rope=True, are the
# outputs of six copies of one token all equal?)
ROPE_ORDER_MISTAKES = [
    (_pair(False, True), "RoPE turns the queries and keys by their positions, but it adds no score the mask did not "
                         "allow: a query still reads no later key, so changing the future moves no earlier output."),
    (_pair(True, False), "The scores do change with the position: each of the six queries sees its keys at other "
                         "offsets, so the weights differ. But RoPE turns queries and keys only, never the values, and "
                         "here the six values are one vector: weights that add up to 1 mix it back into itself."),
    (_pair(False, False), "Both: RoPE adds no score the mask did not allow, so the layer stays causal; and with six "
                          "copies of one token the weights differ by position, but they mix six equal values, which "
                          "RoPE never turns, so every output is the same.")]
ROPE_ORDER_TRUTH = ("(True, True): the rotation changes the scores, not which keys a query may read, so the layer stays "
                    "causal; with six copies of one token the scores differ by position, but the six values are one "
                    "vector, and weights that add up to 1 give it back at every position.")
