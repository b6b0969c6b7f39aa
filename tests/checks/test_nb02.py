"""Does every check of 02_shapes_and_matmul reject the mistakes students make, and accept other correct code?"""
import pytest

from tests.harness import Mistake, answer, exercise_suite, returns, run_exercise, stub_of

pytestmark = pytest.mark.nb02
A = "02_shapes_and_matmul"

MISTAKES = [
    Mistake("matmul_shape", "ignores_broadcasting", '''
def matmul_shape(a_shape, b_shape):
    if a_shape[-1] != b_shape[-2]:
        raise ValueError("inner dims differ")
    return tuple(a_shape[:-1]) + (b_shape[-1],)
''', "batch dims"),
    Mistake("matmul_shape", "never_raises", '''
def matmul_shape(a_shape, b_shape):
    batch = np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
    return (*batch, a_shape[-2], b_shape[-1])
''', "should raise ValueError"),
    Mistake("matmul_shape", "max_of_batch_dims", '''
from itertools import zip_longest
def matmul_shape(a_shape, b_shape):
    if a_shape[-1] != b_shape[-2]:
        raise ValueError("inner dims differ")
    pairs = zip_longest(reversed(a_shape[:-2]), reversed(b_shape[:-2]), fillvalue=1)
    batch = tuple(reversed([max(p, q) for p, q in pairs]))
    return batch + (a_shape[-2], b_shape[-1])
''', "should raise ValueError"),
    Mistake("matmul_shape", "batch_aligned_from_the_left", '''
from itertools import zip_longest
def matmul_shape(a_shape, b_shape):
    if a_shape[-1] != b_shape[-2]:
        raise ValueError("inner dims differ")
    batch = []
    for p, q in zip_longest(a_shape[:-2], b_shape[:-2], fillvalue=1):
        if p != q and 1 not in (p, q):
            raise ValueError("batch dims cannot broadcast")
        batch.append(max(p, q))
    return (*batch, a_shape[-2], b_shape[-1])
''', "line them up from the right"),
    Mistake("matmul_shape", "inner_and_outer_swapped", '''
def matmul_shape(a_shape, b_shape):
    if a_shape[-1] != b_shape[-2]:
        raise ValueError("inner dims differ")
    batch = np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
    return (*batch, a_shape[-1], b_shape[-2])
''', "(rows of a, columns of b)"),
    Mistake("matmul_shape", "returns_a_list", '''
def matmul_shape(a_shape, b_shape):
    if a_shape[-1] != b_shape[-2]:
        raise ValueError("inner dims differ")
    batch = np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
    return [*batch, a_shape[-2], b_shape[-1]]
''', "expected a tuple"),
    Mistake("linear", "ignores_bias", '''
def linear(x, W, b=None):
    return x @ W
''', "without the bias"),
    Mistake("linear", "uses_W_transposed", '''
def linear(x, W, b=None):
    y = x @ W.T
    return y if b is None else y + b
''', "x @ W.T + b"),
    Mistake("linear", "flattens_batch", '''
def linear(x, W, b=None):
    y = x.reshape(-1, W.shape[0]) @ W
    return y if b is None else y + b
''', "were flattened"),
    Mistake("linear", "bias_truthiness", '''
def linear(x, W, b=None):
    y = x @ W
    if b:
        y = y + b
    return y
''', "raised ValueError"),
    # bug hunt: this is the code as released (the suite checks the released cell too); then half-fixes
    Mistake("split_heads", "reshape_without_transpose", '''
def split_heads(x, n_heads):
    B, T, d = x.shape
    if d % n_heads:
        raise ValueError("heads must divide d")
    return x.reshape(B, n_heads, T, d // n_heads)
''', "nothing in head 0 changes"),
    # the half-fix: the right first cut, then a second reshape, which puts every number where one reshape did;
    # its numbers equal the untouched bug's, so its own message proves the check tells the two apart
    Mistake("split_heads", "half_fix_two_reshapes", '''
def split_heads(x, n_heads):
    B, T, d = x.shape
    if d % n_heads:
        raise ValueError("heads must divide d")
    return x.reshape(B, T, n_heads, d // n_heads).reshape(B, n_heads, T, d // n_heads)
''', "Progress in the first step"),
    Mistake("split_heads", "half_fix_two_reshapes_with_np_reshape", '''
def split_heads(x, n_heads):
    B, T, d = x.shape
    if d % n_heads:
        raise ValueError("heads must divide d")
    cut = np.reshape(x, (B, T, n_heads, d // n_heads))  # (B, T, H, D)
    return np.reshape(cut, (B, n_heads, T, d // n_heads))
''', "Progress in the first step"),
    # a swap written as the attribute .T (or .mT), undone by a second one: _Traced sees attributes as well as calls
    Mistake("split_heads", "half_fix_swaps_cancel_with_T", '''
def split_heads(x, n_heads):
    B, T, d = x.shape
    if d % n_heads:
        raise ValueError("heads must divide d")
    cut = x.reshape(B, T, n_heads, d // n_heads).T  # (D, H, T, B)
    return cut.T.reshape(B, n_heads, T, d // n_heads)
''', "Progress: your code swaps axes now"),
    Mistake("split_heads", "half_fix_swaps_cancel_with_mT", '''
def split_heads(x, n_heads):
    B, T, d = x.shape
    if d % n_heads:
        raise ValueError("heads must divide d")
    return x.reshape(B, n_heads, T, d // n_heads).mT.mT
''', "two swaps of the same axes cancel"),
    Mistake("split_heads", "half_fix_transpose_before_the_cut", '''
def split_heads(x, n_heads):
    B, T, d = x.shape
    if d % n_heads:
        raise ValueError("heads must divide d")
    return x.transpose(0, 2, 1).reshape(B, n_heads, T, d // n_heads)
''', "one feature of several tokens"),
    Mistake("split_heads", "heads_left_on_axis_2", '''
def split_heads(x, n_heads):
    B, T, d = x.shape
    if d % n_heads:
        raise ValueError("heads must divide d")
    return x.reshape(B, T, n_heads, d // n_heads)
''', "axis 1 should count the"),
    Mistake("split_heads", "interleaved_heads", '''
def split_heads(x, n_heads):
    B, T, d = x.shape
    if d % n_heads:
        raise ValueError("heads must divide d")
    return x.reshape(B, T, d // n_heads, n_heads).transpose(0, 3, 1, 2)
''', "every H-th feature"),
    Mistake("split_heads", "no_divisibility_check", '''
def split_heads(x, n_heads):
    B, T, d = x.shape
    return x.reshape(B, -1, n_heads, d // n_heads).transpose(0, 2, 1, 3)
''', "should raise ValueError"),
    Mistake("merge_heads", "reshape_without_transposing_back", '''
def merge_heads(x):
    B, H, T, D = x.shape
    return x.reshape(B, T, H * D)
''', "head 0's vectors of several tokens in a row"),
    Mistake("merge_heads", "heads_summed", '''
def merge_heads(x):
    return x.sum(axis=1)
''', "side by side"),
    Mistake("merge_heads", "interleaved_features", '''
def merge_heads(x):
    B, H, T, D = x.shape
    return x.transpose(0, 2, 3, 1).reshape(B, T, H * D)
''', "alternates between the heads"),
    Mistake("merge_heads", "transpose_on_wrong_axes", '''
def merge_heads(x):
    B, H, T, D = x.shape
    return x.swapaxes(1, 3).reshape(B, T, H * D)
'''),
    Mistake("count_mlp_params", "forgets_bias", '''
def count_mlp_params(widths, bias=True):
    if len(widths) < 2:
        raise ValueError("a stack needs at least two widths")
    return sum(a * b for a, b in zip(widths, widths[1:]))
''', "the weights alone"),
    Mistake("count_mlp_params", "bias_per_input", '''
def count_mlp_params(widths, bias=True):
    if len(widths) < 2:
        raise ValueError("a stack needs at least two widths")
    return sum(a * b + (a if bias else 0) for a, b in zip(widths, widths[1:]))
''', "one per input feature"),
    Mistake("count_mlp_params", "bias_flag_added", '''
def count_mlp_params(widths, bias=True):
    if len(widths) < 2:
        raise ValueError("a stack needs at least two widths")
    return sum(a * b + bias for a, b in zip(widths, widths[1:]))
''', "a vector, one entry per output"),
    Mistake("count_mlp_params", "bias_always_counted", '''
def count_mlp_params(widths, bias=True):
    if len(widths) < 2:
        raise ValueError("a stack needs at least two widths")
    return sum(a * b + b for a, b in zip(widths, widths[1:]))
''', "bias=False"),
    Mistake("count_mlp_params", "only_the_first_layer", '''
def count_mlp_params(widths, bias=True):
    if len(widths) < 2:
        raise ValueError("a stack needs at least two widths")
    d_in, d_out = widths[0], widths[1]
    return d_in * d_out + (d_out if bias else 0)
''', "Only the first layer"),
    Mistake("count_mlp_params", "one_layer_short", '''
def count_mlp_params(widths, bias=True):
    if len(widths) < 2:
        raise ValueError("a stack needs at least two widths")
    return sum(widths[i] * widths[i + 1] + (widths[i + 1] if bias else 0) for i in range(max(1, len(widths) - 2)))
''', "One layer short"),
    Mistake("count_mlp_params", "wraps_round_to_the_first_width", '''
def count_mlp_params(widths, bias=True):
    if len(widths) < 2:
        raise ValueError("a stack needs at least two widths")
    return sum(a * b + (b if bias else 0) for a, b in zip(widths, widths[1:] + widths[:1]))
''', "One layer too many"),
    Mistake("count_mlp_params", "no_check_for_one_width", '''
def count_mlp_params(widths, bias=True):
    return sum(a * b + (b if bias else 0) for a, b in zip(widths, widths[1:]))
''', "should raise ValueError"),
    Mistake("low_rank_approx", "keeps_smallest", '''
def low_rank_approx(X, r):
    if not 1 <= r <= min(X.shape):
        raise ValueError("bad r")
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    return (U[:, -r:] * s[-r:]) @ Vt[-r:]
''', "smallest singular values"),
    Mistake("low_rank_approx", "no_r_check", '''
def low_rank_approx(X, r):
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    return (U[:, :r] * s[:r]) @ Vt[:r]
''', "should raise ValueError"),
    Mistake("low_rank_approx", "checks_rows_only", '''
def low_rank_approx(X, r):
    if not 1 <= r <= X.shape[0]:
        raise ValueError("bad r")
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    return (U[:, :r] * s[:r]) @ Vt[:r]
''', "should raise ValueError"),
    Mistake("low_rank_approx", "forgets_singular_values", '''
def low_rank_approx(X, r):
    if not 1 <= r <= min(X.shape):
        raise ValueError("bad r")
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    return U[:, :r] @ Vt[:r]
''', "singular values are missing"),
    Mistake("low_rank_approx", "keeps_one_too_many", '''
def low_rank_approx(X, r):
    if not 1 <= r <= min(X.shape):
        raise ValueError("bad r")
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    return (U[:, :r + 1] * s[:r + 1]) @ Vt[:r + 1]
''', "r + 1 singular values"),
    Mistake("low_rank_approx", "columns_of_Vt", '''
def low_rank_approx(X, r):
    if not 1 <= r <= min(X.shape):
        raise ValueError("bad r")
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    return (U[:, :r] * s[:r]) @ Vt[:, :r].T
'''),
    returns("predict_score_multiplications", "counts_entries", "35, 'one per score'", "each entry is a dot product"),
    returns("predict_score_multiplications", "adds_the_sizes", "20 + 28", "counts the numbers in Q and K"),
    returns("predict_score_multiplications", "every_pair_of_numbers", "20 * 28", "only meets a key's feature i"),
    returns("predict_score_multiplications", "one_entry", "4", "35 entries"),
    returns("predict_score_multiplications", "the_shape", "(5, 7)", "an int"),
    Mistake("predict_merge_by_reshape", "thinks_reshape_undoes_the_split",
            "def predict_merge_by_reshape():\n    return [0, 1, 2, 3], 'reshape undoes it'\n", "does not undo the split"),
    returns("predict_merge_by_reshape", "memory_order_skips", "[0, 1, 8, 9]", "reads every number once"),
    returns("predict_merge_by_reshape", "skips_numbers", "[0, 2, 4, 6]", "never skips"),
    returns("predict_merge_by_reshape", "wrong_shape", "[[0, 1], [4, 5]]", "a row of 4 numbers"),
    returns("predict_shear_stretch", "the_columns_are_the_farthest", '"same", "the columns are the farthest"',
            "circle has points between them"),
    returns("predict_shear_stretch", "shorter", '"shorter"', "can only be at least that"),
    returns("predict_shear_stretch", "not_a_choice", '"2.41"', "answer with one of"),
    returns("predict_smallest_stretch", "big_entries_big_radii", '"1 or more", "every entry is at least 1"',
            "lets them cancel"),
    returns("predict_smallest_stretch", "thinks_it_can_vanish", '"zero", "the columns nearly agree"',
            "Only a map of rank 1 or 0"),
    returns("predict_smallest_stretch", "a_number", '0.72, "the smaller singular value"', "answer with one of"),
    returns("predict_embedding_vs_mlp", "wide_layers_are_big", '"the MLP", "3072 is a wide layer"',
            "far wider than any hidden layer"),
    returns("predict_embedding_vs_mlp", "same_order", '"about the same", "both are millions"',
            "eight times as many"),
    returns("predict_embedding_vs_mlp", "a_count", '38_597_376, "V * d"', "answer with one of"),
    Mistake("stretch_of", "column_lengths", '''
def stretch_of(A, n_points=720):
    cols = np.linalg.norm(A, axis=0)
    return float(cols.max()), float(cols.min())
''', "lengths of A's columns"),
    Mistake("stretch_of", "row_lengths", '''
def stretch_of(A, n_points=720):
    t = np.linspace(0, 2 * np.pi, n_points, endpoint=False)
    rows = np.linalg.norm(A, axis=1)
    return float(rows.max()), float(rows.min())
''', "lengths of A's rows"),
    Mistake("stretch_of", "eigenvalues", '''
def stretch_of(A, n_points=720):
    e = np.abs(np.linalg.eigvals(A))
    return float(e.max()), float(e.min())
''', "eigenvalues"),
    Mistake("stretch_of", "squared_lengths", '''
def stretch_of(A, n_points=720):
    t = np.linspace(0, 2 * np.pi, n_points, endpoint=False)
    image = A @ np.stack([np.cos(t), np.sin(t)])
    r2 = (image ** 2).sum(axis=0)
    return float(r2.max()), float(r2.min())
''', "squares of the image's radii"),
    Mistake("stretch_of", "shortest_first", '''
def stretch_of(A, n_points=720):
    t = np.linspace(0, 2 * np.pi, n_points, endpoint=False)
    radii = np.linalg.norm(A @ np.stack([np.cos(t), np.sin(t)]), axis=0)
    return float(radii.min()), float(radii.max())
''', "wrong order"),
    Mistake("stretch_of", "quarter_circle", '''
def stretch_of(A, n_points=720):
    t = np.linspace(0, np.pi / 2, n_points)  # only the points between the two basis vectors
    radii = np.linalg.norm(A @ np.stack([np.cos(t), np.sin(t)]), axis=0)
    return float(radii.max()), float(radii.min())
''', "spread around all of it"),
    Mistake("stretch_of", "one_number", '''
def stretch_of(A, n_points=720):
    t = np.linspace(0, 2 * np.pi, n_points, endpoint=False)
    return float(np.linalg.norm(A @ np.stack([np.cos(t), np.sin(t)]), axis=0).max())
''', "return two numbers"),
    returns("predict_rank", "counts_nonzero_rows", "3, 'no row is zero'", "row 2 = row 0 + row 1"),
    returns("predict_rank", "one_direction", "1", "two independent rows"),
    returns("predict_rank", "a_float", "2.0", "an int"),
    # ------------------------------------------- near misses: within 1e-2 of the answer, outside close()'s
    # default tolerance (1e-8 absolute, 1e-6 relative); loosening that default lets these through
    Mistake("linear", "float32", '''
def linear(x, W, b=None):
    y = np.asarray(x, dtype=np.float32) @ np.asarray(W, dtype=np.float32)  # float32 where float64 is due
    if b is not None:
        y = y + b
    return y
''', "wrong values"),
    returns("predict_lsa_rank", "one_piece", "1, 'the biggest singular value'", "each needing a direction"),
    returns("predict_lsa_rank", "the_full_rank", "8, 'rank 8'", "the table's rank"),
    returns("predict_lsa_rank", "three_pieces", "3, 'a bit more to be safe'", "already bring the error to 0.44"),
    returns("predict_lsa_rank", "a_float", "0.44, 'the error'", "an int"),
    returns("predict_dog_neighbour", "the_royal_document", "'king', 'dog stands beside king once'",
            "left to the later pieces"),
    returns("predict_dog_neighbour", "another_term", "'pet', 'they always go together'", "answer with one of"),
    returns("predict_dog_neighbour", "a_cosine", "0.99, 'the cosine with cat'", "answer with one of"),
    returns("predict_untransposed_copy", "an_error", "'error', 'the layouts differ'", "nothing complains"),
    returns("predict_untransposed_copy", "the_same", "'same', 'same numbers copied'", "x @ weight.T + bias"),
    returns("predict_untransposed_copy", "not_a_choice", "'wrong', 'bad layout'", "one of"),
]

ALTERNATIVES = {
    "matmul_shape": '''
def matmul_shape(a_shape, b_shape):
    if a_shape[-1] != b_shape[-2]:
        raise ValueError(f"inner dims {a_shape[-1]} and {b_shape[-2]} differ")
    try:
        batch = np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
    except ValueError:
        raise ValueError(f"batch dims {a_shape[:-2]} and {b_shape[:-2]} cannot broadcast") from None
    return tuple(int(n) for n in batch) + (a_shape[-2], b_shape[-1])
''',
    "linear": '''
def linear(x, W, b=None):
    y = np.einsum("...i,io->...o", x, W)
    return y + (0.0 if b is None else b)
''',
    "split_heads": '''
def split_heads(x, n_heads):
    d = x.shape[-1]
    if d % n_heads:
        raise ValueError(f"n_heads={n_heads} does not divide d={d}")
    D = d // n_heads
    return np.stack([x[:, :, h * D:(h + 1) * D] for h in range(n_heads)], axis=1)
''',
    "merge_heads": '''
def merge_heads(x):
    return np.concatenate(list(np.moveaxis(x, 1, 0)), axis=-1)
''',
    "count_mlp_params": '''
def count_mlp_params(widths, bias=True):
    # differently written: a loop over the layers, the two arrays' sizes from their shapes
    widths = list(widths)
    if len(widths) < 2:
        raise ValueError(f"a stack needs at least two widths, got {widths}")
    total = 0
    for i in range(len(widths) - 1):
        total += int(np.prod((widths[i], widths[i + 1])))
        total += widths[i + 1] if bias else 0
    return total
''',
    "low_rank_approx": '''
def low_rank_approx(X, r):
    if r < 1 or r > min(X.shape):
        raise ValueError(f"r={r} outside 1..{min(X.shape)}")
    U, s, Vt = np.linalg.svd(X)
    out = np.zeros_like(X, dtype=float)
    for i in range(r):
        out += s[i] * np.outer(U[:, i], Vt[i])
    return out
''',
    "predict_score_multiplications": answer("predict_score_multiplications", "5 * 7 * 4, 'rows x columns x length'"),
    "predict_merge_by_reshape": answer("predict_merge_by_reshape", "(0.0, 1.0, 4.0, 5.0), 'index order, head 0 first'"),
    "predict_shear_stretch": answer("predict_shear_stretch", "'longer', 'between the columns both add up'"),
    "stretch_of": '''
def stretch_of(A, n_points=720):
    # a differently written measurement: complex numbers for the circle, a loop over the points
    best, worst = 0.0, np.inf
    for z in np.exp(2j * np.pi * np.arange(n_points) / n_points):
        x, y = A @ np.array([z.real, z.imag])
        r = float(np.hypot(x, y))
        best, worst = max(best, r), min(worst, r)
    return best, worst
''',
    "predict_untransposed_copy": answer("predict_untransposed_copy", "['different', 'x W^T is not x W']"),
    "predict_lsa_rank": answer("predict_lsa_rank", "[len({'pets', 'royalty'}), 'one direction per topic']"),
    "predict_dog_neighbour": answer("predict_dog_neighbour", "' cat '.strip(), 'four pet documents against one'"),
    "predict_smallest_stretch": answer("predict_smallest_stretch", "['below ' + str(1), 'the columns can cancel']"),
    "predict_embedding_vs_mlp": answer("predict_embedding_vs_mlp", "' the table'.lstrip(), '50,257 rows of 768'"),
    "predict_rank": "def predict_rank():\n    import numpy as np\n    return np.linalg.matrix_rank(np.array([[1, 2, 3], [0, 1, 1], [1, 3, 4]]))\n",
}

globals().update(exercise_suite(A, MISTAKES, ALTERNATIVES).tests())  # the standard tests, collected here


def _first_message(source):
    """What split_heads' visible check says first about ``source``: the line a learner reads."""
    local = run_exercise(A, "split_heads", source)[0].local
    assert local is not None, f"split_heads passed its visible check:\n{source}"
    return str(local).split("\n")[0]


def test_a_swap_written_as_dot_T_is_seen_and_gets_its_own_message():
    """The untouched bug, the two-reshape half-fix and a half-fix whose swaps (written `.T`) cancel each get a
    different message: `.T` is an attribute, not a call of transpose, and used to go unseen, so this half-fix
    read the untouched bug's words."""
    mistakes = {m.label: m.source for m in MISTAKES if m.exercise == "split_heads"}
    said = {"released": _first_message(stub_of(A, "split_heads")),
            **{label: _first_message(mistakes[label])
               for label in ("half_fix_two_reshapes", "half_fix_swaps_cancel_with_T", "half_fix_swaps_cancel_with_mT")}}
    assert said["released"].startswith("Right shape, wrong numbers, and attention would notice"), said
    assert said["half_fix_two_reshapes"].startswith("Progress in the first step"), said
    for label in ("half_fix_swaps_cancel_with_T", "half_fix_swaps_cancel_with_mT"):
        assert said[label].startswith("Progress: your code swaps axes now"), said
        assert said[label] != said["released"] and said[label] != said["half_fix_two_reshapes"], said
    for message in said.values():
        for fix in ("transpose(0, 2, 1, 3)", "swapaxes(1, 2)", "reshape(B, T, H, D)"):
            assert fix not in message, (fix, message)
