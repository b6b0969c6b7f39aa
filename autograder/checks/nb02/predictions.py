"""Notebook 02's predictions: how many multiplications a table of scores takes, what a reshape makes of heads,
the rank of a matrix, how far a shear stretches the circle and how near the origin a rank-2 map brings it, what
an untransposed weight does in nn.Linear, GPT-2's MLP against its embedding table, and the rank LSA needs."""
from __future__ import annotations

from functools import partial

import numpy as np

from ..hints import numbers
from ..compare import close
from ..questions import NB01, NB04, as_tuple, described, is_int, is_scalar, one_of, plain, question
from .common import A


ask = partial(question, A, wording=NB01, atol=1e-3, rtol=1e-3, normalize=as_tuple, reason=True)


predict_score_multiplications = ask(
    "predict_score_multiplications", form=described("an int", is_int), mistakes=[
     (35, "35 is the number of entries of the (5, 7) table; each entry is a dot product of a query row and a key "
          "row, 4 products each: 35 * 4 = 140."),
     (48, "48 counts the numbers in Q and K (20 + 28). Each of the 5 * 7 = 35 query-key pairs multiplies its own 4 "
          "pairs of features: 140."),
     (560, "560 multiplies every number of Q with every number of K (20 * 28), but a query's feature i only meets "
           "a key's feature i: 35 pairs of rows, 4 products each, 140."),
     (4, "4 products make one entry, and the (5, 7) table has 35 entries: 140."),
     (20, "20 is the size of Q; the products are 4 per (query, key) pair, and there are 5 * 7 = 35 pairs: 140.")],
    otherwise="Q K^T is (5, 4) @ (4, 7) -> (5, 7): 35 entries, each the dot product of two 4-vectors, 4 products "
              "each: 5 * 7 * 4 = 140.")


def _table(v):
    """A small table as a float array (a nested list of ints is fine); anything else as its repr."""
    try:
        return np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        return repr(v)[:200]


predict_merge_by_reshape = ask(
    "predict_merge_by_reshape",
    form=described("a row of 4 numbers", lambda v: numbers(v) is not None and numbers(v).shape == (4,)),
    normalize=_table, compare=close(), mistakes=[
     ([0, 1, 2, 3], "A reshape does not undo the split. It reads the heads in their index order, last axis "
                    "fastest: all of head 0 first (0, 1, 4, 5, 8, 9), then head 1, whatever order the numbers have "
                    "in memory. Cut into rows of 4, token 0 gets [0, 1, 4, 5]: head 0's vectors of tokens 0 and 1."),
     ([0, 1, 8, 9], "A reshape reads every number once, in index order: head 0's table row by row, 0, 1, then 4, "
                    "5, then 8, 9. The first 4 of them, [0, 1, 4, 5], make token 0."),
     ([0, 2, 4, 6], "A reshape never skips numbers: it reads the heads in index order, head 0's rows first "
                    "(0, 1, 4, 5, 8, 9), and token 0 gets the first 4, [0, 1, 4, 5].")])


predict_rank = ask(
    "predict_rank", form=described("an int", is_scalar), mistakes=[
     (3, "No row is zero and no row is a multiple of another, but row 2 = row 0 + row 1: the rows span only 2 "
         "directions, so every output A p lies in a plane and the rank is 2."),
     (1, "Rows 0 and 1, [1, 2, 3] and [0, 1, 1], are not parallel: two independent rows (row 2 is their sum), "
         "rank 2."),
     (0, "Only the zero matrix has rank 0.")])


# ------------------------------------------------------------ the circle's image: predict, then measure

predict_shear_stretch = ask(
    "predict_shear_stretch", form=one_of(("shorter", "same", "longer")), normalize=plain,
    wording=NB04, mistakes=[  # its reveal is not the cell after next: the measurement comes between
     ("same", "The columns are where the two basis vectors land, but the circle has points between them: "
              "p = (cos t, sin t) with t near 67.5 degrees mixes both columns and lands further out."),
     ("shorter", "The point (0, 1) of the circle lands on column 1, of length sqrt(5) = 2.24: the longest radius "
                 "of the image can only be at least that.")])

predict_untransposed_copy = ask(  # its reveal follows the exercise's test cells at once: the cell after next
    "predict_untransposed_copy", form=one_of(("error", "same", "different")), normalize=plain, mistakes=[
     ("error", "A square W has shape (4, 4) either way round, so nothing complains: the layer runs and computes "
               "x W^T + b, another map, with other numbers (the same only for a symmetric W)."),
     ("same", "nn.Linear computes x @ weight.T + bias: with weight = W that is x W^T, not x W, and the numbers "
              "differ unless W is symmetric. Only the shapes agree, which is why nothing complains.")])


# ------------------------------------------------------------ LSA: how few pieces hold most of a count table

_TWO = "two pieces already bring the error to 0.44"
predict_lsa_rank = ask("predict_lsa_rank", form=described("an int", is_int), rtol=0, mistakes=[
     (1, "One piece leaves a relative error of 0.75: the table holds two topics, pets and royalty, each needing "
         f"a direction of its own; {_TWO}."),
     (3, f"Below 0.5 needs fewer: {_TWO}; the third piece only describes quirks of single documents."),
     (8, f"8 is the table's rank, where the error is 0. The question asks for the smallest rank below 0.5: {_TWO}."),
     (12, f"12 is the number of documents; the table has rank 8, and {_TWO}.")])

predict_dog_neighbour = ask(  # which rank-2 term vector is nearest 'dog' by cosine; its reveal measures both
    "predict_dog_neighbour", form=one_of(("cat", "king")), normalize=plain, mistakes=[
     ("king", "'dog' stands beside 'king' in one document, beside 'food' in four and 'pet' in three: two pieces "
              "keep what many documents share, and that one document's quirk is left to the later pieces.")])


# ------------------------------------------------------------ two more: sizes and the nearest point of an ellipse

predict_embedding_vs_mlp = ask(  # a choice of three: its reveal counts both with PyTorch and the table's shape
    "predict_embedding_vs_mlp", form=one_of(("the MLP", "the table", "about the same")), normalize=plain,
    mistakes=[
     ("the MLP", "The MLP's two matrices hold 2 * 768 * 3072, about 4.7 million numbers; the table holds a row of "
                 "768 for each of 50,257 tokens, about 38.6 million, more than eight MLPs. A vocabulary is far "
                 "wider than any hidden layer."),
     ("about the same", "Write both as 768 times a number: the MLP is 768 * (3072 + 3072) plus its biases, the "
                        "table 768 * 50,257, eight times as many.")])

predict_smallest_stretch = ask(  # a choice of three: its reveal reads F's smallest singular value
    "predict_smallest_stretch", form=one_of(("zero", "below 1", "1 or more")), normalize=plain,
    wording=NB04, mistakes=[  # its reveal follows a line of prose and the plot's set-up: "a cell below"
     ("1 or more", "Every entry and both columns are large, but a point that takes one column minus the other "
                   "lets them cancel: p = (1, -1) / sqrt(2) lands at (1, -0.5) / sqrt(2), 0.79 from the origin, "
                   "inside the unit circle."),
     ("zero", "Only a map of rank 1 or 0 sends a point of the circle to the origin: F has rank 2, its columns "
              "point different ways, and no mix of them with weights of length 1 cancels to zero.")])
